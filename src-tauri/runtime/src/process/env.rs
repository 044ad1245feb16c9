//! The environments of the programs Kiln starts, each built here and nowhere else. There
//! are three, by how far the program is trusted with Kiln's own variables:
//!
//! - a session's commands (setup, gates, `run_command`, the preview, delivery hooks) get
//!   only a scope's allowlisted environment (`crate::sandbox::Scope` builds it: they run
//!   code the agent may have written);
//! - git and gh get `KEPT_VARIABLES` of Kiln's environment, what they need to work as in
//!   the user's terminal and no more;
//! - an agent CLI keeps the operator's environment (its login, its provider settings) but
//!   not Kiln's own `KILN_*` variables.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// The environment a command starts with.
pub enum Env<'a> {
    /// Only these variables (a scope's allowlisted environment).
    Only(&'a [(String, String)]),
    /// The operator's environment without Kiln's variables, plus these (an agent CLI).
    Operator(&'a [(String, String)]),
    /// `KEPT_VARIABLES` of Kiln's environment, then these (git, gh).
    Tool(Vec<(OsString, OsString)>),
}

impl Env<'_> {
    /// The whole environment, for a spawner that starts from an empty one (the
    /// pseudo-terminal's): the same variables `apply` leaves a command with.
    pub(super) fn resolved(&self) -> Vec<(OsString, OsString)> {
        let own = |vars: &[(String, String)]| -> Vec<(OsString, OsString)> {
            vars.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
        };
        let mut out: Vec<(OsString, OsString)> = match self {
            Env::Only(vars) => own(vars),
            Env::Operator(vars) => {
                let mut out: Vec<(OsString, OsString)> =
                    std::env::vars_os().filter(|(key, _)| !is_kiln_variable(key)).collect();
                out.extend(own(vars));
                out
            }
            Env::Tool(extra) => {
                let mut out = allowlisted_env(std::env::vars_os());
                out.extend(extra.iter().cloned());
                out
            }
        };
        // A variable set twice keeps its last value, as `Command::env` would.
        let mut seen = std::collections::HashSet::new();
        out.reverse();
        out.retain(|(key, _)| seen.insert(key.clone()));
        out.reverse();
        out
    }

    /// Applies the environment to `cmd`: the one place a spawned command's environment
    /// is decided.
    pub(super) fn apply(&self, cmd: &mut tokio::process::Command) {
        match self {
            Env::Only(vars) => {
                cmd.env_clear();
                cmd.envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            }
            Env::Operator(vars) => {
                for (key, _) in std::env::vars_os() {
                    if is_kiln_variable(&key) {
                        cmd.env_remove(&key);
                    }
                }
                cmd.envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            }
            Env::Tool(extra) => {
                cmd.env_clear();
                cmd.envs(allowlisted_env(std::env::vars_os()));
                cmd.envs(extra.iter().map(|(k, v)| (k, v)));
            }
        }
    }
}

/// The scope of a command on a project's code (gates, delivery hooks and commands, the
/// preview): the session's cleared environment and home (`crate::sandbox::Scope`),
/// writing only to `writable`, with each of `projects`' own binaries (`node_modules/.bin`,
/// `.venv/bin`) first on PATH, in that order, and the first virtual environment setup made
/// as `VIRTUAL_ENV`; `extra` is set on top.
pub fn project_scope(
    session_dir: &Path,
    writable: &[&Path],
    projects: &[&Path],
    extra: &[(String, String)],
    environment: &crate::sandbox::EnvironmentConfig,
) -> std::io::Result<crate::sandbox::Scope> {
    let node: Vec<PathBuf> = projects.iter().map(|p| p.join("node_modules/.bin")).collect();
    let python: Vec<PathBuf> = projects.iter().map(|p| p.join(".venv/bin")).collect();
    let bins: Vec<PathBuf> = node.into_iter().chain(python).collect();
    let venv = projects.iter().map(|p| p.join(".venv")).find(|v| v.join("bin/python").exists());
    let mut vars: Vec<(String, String)> =
        venv.map(|v| ("VIRTUAL_ENV".to_string(), v.display().to_string())).into_iter().collect();
    vars.extend(extra.iter().cloned());
    crate::sandbox::Scope::new(session_dir, writable, &bins, &vars, environment)
}

/// Kiln's own variables: `KILN_CONFIG_DIR` would lead a command to the access tokens,
/// and the rest is no business of the programs Kiln starts.
pub(super) fn is_kiln_variable(key: &OsStr) -> bool {
    key.to_string_lossy().starts_with("KILN_")
}

/// The value of `key` in the operator's environment as an agent CLI sees it (`None` for
/// Kiln's own variables).
pub fn operator_var(key: &str) -> Option<String> {
    if is_kiln_variable(OsStr::new(key)) {
        return None;
    }
    std::env::var(key).ok()
}

/// The variables git and gh keep from Kiln's environment; everything else is dropped.
/// Kiln's own environment can hold provider keys, tokens and `GIT_*` variables (`GIT_DIR`,
/// `GIT_CONFIG_PARAMETERS`, `GIT_TRACE*`, `GIT_ASKPASS`) that would redirect, reconfigure
/// or trace git. What is kept is what git needs to work as in the user's terminal:
/// - `HOME`, `XDG_CONFIG_HOME`: the user's git config, credential helpers, `~/.ssh`;
/// - `PATH`: git's helpers, `ssh`, the user's credential helper programs;
/// - `LANG`, `LC_*`, `TZ`: messages and dates as the user reads them (nothing here
///   depends on the wording of a message to decide what happened);
/// - `USER`, `LOGNAME`: ssh and some helpers look the user up by them;
/// - `SSH_AUTH_SOCK`, `SSH_AGENT_PID`: the user's ssh agent, so SSH remotes authenticate;
/// - `GIT_SSH`, `GIT_SSH_COMMAND`: the user's deliberate choice of ssh program;
/// - `GNUPGHOME`: signed commits when the user's config asks for them;
/// - the proxy variables: a remote reachable only through the user's proxy stays so.
///
/// `GIT_ASKPASS`, `SSH_ASKPASS` and `DISPLAY` are not kept, and `GIT_TERMINAL_PROMPT=0`
/// is set by the git transport: git must fail at once rather than wait for a password
/// nobody will type (it also runs in its own session, without a controlling terminal, so
/// ssh cannot prompt).
pub const KEPT_VARIABLES: &[&str] = &[
    "HOME",
    "PATH",
    "LANG",
    "TZ",
    "USER",
    "LOGNAME",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "XDG_CONFIG_HOME",
    "GNUPGHOME",
    "http_proxy",
    "https_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
    "no_proxy",
    "NO_PROXY",
];

/// The part of `vars` git and gh may see: `KEPT_VARIABLES` and `LC_*`.
pub fn allowlisted_env(vars: impl IntoIterator<Item = (OsString, OsString)>) -> Vec<(OsString, OsString)> {
    vars.into_iter()
        .filter(|(key, _)| {
            let key = key.to_string_lossy();
            KEPT_VARIABLES.contains(&key.as_ref()) || key.starts_with("LC_")
        })
        .collect()
}
