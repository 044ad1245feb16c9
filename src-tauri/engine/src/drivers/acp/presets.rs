//! The ACP agents Kiln knows by name (README: "ACP agents"): Gemini CLI, OpenCode, Goose,
//! and Claude Code and Codex through their ACP adapters, each with its command line, how to
//! install it and how to ask its version; plus one custom command line set in Settings with
//! its environment. A preset's binary is found like any agent's (`super::super::discover`:
//! a path set in Settings, else PATH and the usual places), and its version is asked the
//! way `health` asks every local CLI (`<binary> --version`, which every preset answers).
//!
//! The custom command line is split into words as a shell would read it (quotes,
//! backslashes) but never run through a shell. Its environment lines may carry an API key,
//! so they are stored sealed and only their names are shown back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{AcpCommand, AcpDriver};
use crate::drivers::{discover, health};
use crate::workspace::Workspace;
use kiln_records::store::settings::{get_setting, set_setting};
use kiln_runtime::secrets::Sealer;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::{AcpAgentView, DriverStatus, ServeMode, UpdateSettingsArgs};

/// One agent Kiln can start in ACP mode by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// The driver id (`acp:gemini`): what the composer, Settings and resume ids use.
    pub id: &'static str,
    /// As the pickers show it.
    pub name: &'static str,
    /// The binary searched for.
    pub binary: &'static str,
    /// What puts it in ACP mode.
    pub args: &'static [&'static str],
    /// The command a user runs to install it.
    pub install_hint: &'static str,
    /// Where it keeps its own state (sessions, logins, logs): writable to it beside the
    /// working copy (`AcpDriver::state_dirs`). `~/.claude`, `~/.codex` and `~/.cache`
    /// already are, for every agent (`kiln_runtime::sandbox::Confinement::for_turn`).
    pub state: &'static [(Base, &'static str)],
    /// Its configuration files in that state (settings with hooks, extensions or MCP
    /// servers, instructions): put back after each turn that changes them
    /// (`drivers::agent_config`), since they run outside Kiln the next time the user starts
    /// the agent by hand.
    pub config: &'static [(Base, &'static str)],
}

/// What a state directory is relative to: the home, or an XDG base directory (its
/// variable when set, else its default under the home).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    Home,
    Config,
    Data,
    State,
}

/// The custom command line's driver id.
pub(crate) const CUSTOM: &str = "acp:custom";
pub(crate) const CUSTOM_NAME: &str = "Custom ACP agent";

/// The presets, in the order Settings list them.
pub const PRESETS: &[Preset] = &[
    Preset {
        id: "acp:gemini",
        name: "Gemini CLI (ACP)",
        binary: "gemini",
        // `--acp` since Gemini CLI 0.33 (`--experimental-acp` before, now deprecated).
        args: &["--acp"],
        install_hint: "npm install -g @google/gemini-cli",
        state: &[(Base::Home, ".gemini")],
        config: &[(Base::Home, ".gemini/settings.json"), (Base::Home, ".gemini/GEMINI.md")],
    },
    Preset {
        id: "acp:opencode",
        name: "OpenCode (ACP)",
        binary: "opencode",
        args: &["acp"],
        install_hint: "npm install -g opencode-ai",
        state: &[(Base::Data, "opencode"), (Base::State, "opencode"), (Base::Config, "opencode")],
        config: &[
            (Base::Config, "opencode/opencode.json"),
            (Base::Config, "opencode/opencode.jsonc"),
            (Base::Config, "opencode/config.json"),
            (Base::Config, "opencode/AGENTS.md"),
        ],
    },
    Preset {
        id: "acp:goose",
        name: "Goose (ACP)",
        binary: "goose",
        args: &["acp"],
        install_hint: "brew install block-goose-cli (or: curl -fsSL https://github.com/block/goose/releases/download/stable/download_cli.sh | CONFIGURE=false bash)",
        state: &[(Base::Config, "goose"), (Base::Data, "goose"), (Base::State, "goose")],
        config: &[(Base::Config, "goose/config.yaml"), (Base::Config, "goose/.goosehints")],
    },
    Preset {
        id: "acp:claude",
        name: "Claude Code (ACP)",
        binary: "claude-agent-acp",
        args: &[],
        install_hint: "npm install -g @agentclientprotocol/claude-agent-acp",
        state: &[],
        // Claude's configuration is not writable at all (`kiln_runtime::sandbox::CLAUDE_STATE`).
        config: &[],
    },
    Preset {
        id: "acp:codex",
        name: "Codex (ACP)",
        binary: "codex-acp",
        args: &[],
        install_hint: "npm install -g @agentclientprotocol/codex-acp",
        state: &[],
        // Codex's, in `$CODEX_HOME` (`AcpDriver::guard_config`).
        config: &[],
    },
];

/// Every ACP driver id, the custom one last.
pub(crate) const IDS: &[&str] = &["acp:gemini", "acp:opencode", "acp:goose", "acp:claude", "acp:codex", CUSTOM];

pub(crate) fn by_id(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.id == id)
}

/// The preset whose binary is `binary`.
pub(crate) fn by_binary(binary: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.binary == binary)
}

/// An ACP agent's binary; when missing, the error says how to install it (a preset's own
/// hint for a preset's binary, named in a custom command line too).
pub fn find_binary(program: &str, configured: Option<&Path>) -> Result<PathBuf> {
    let hint = by_binary(program).map_or_else(|| discover::install_hint(program), |p| p.install_hint);
    discover::find_else(program, configured, hint)
}

/// The variables Kiln sets for a preset's agent: the same no-telemetry, no-self-update
/// variables as for Claude Code where the agent wraps it (and, as root, `IS_SANDBOX`),
/// OpenCode's own switches for the same, nothing for the others. The agent keeps the operator's environment otherwise (its
/// login, its provider settings).
pub fn preset_env(preset: &Preset) -> Vec<(String, String)> {
    match preset.id {
        "acp:claude" => {
            let mut env = super::super::claude::cli_env(None, None);
            // As root, claude-agent-acp 0.101 fails `session/new` ("--dangerously-skip-permissions
            // cannot be used with root") unless told it runs in a sandbox. It still asks Kiln
            // before every edit and command; the commands run confined (`kiln_runtime::sandbox`).
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } == 0 {
                env.push(("IS_SANDBOX".into(), "1".into()));
            }
            env
        }
        "acp:opencode" => [("OPENCODE_DISABLE_AUTOUPDATE", "1"), ("OPENCODE_DISABLE_SHARE", "1")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .into(),
        _ => Vec::new(),
    }
}

/// The preset's state directories for an agent run with `env` over Kiln's environment.
pub fn state_dirs(preset: &Preset, env: &[(String, String)]) -> Vec<PathBuf> {
    resolve(preset.state, env)
}

/// The preset's configuration files (`Preset::config`), as `state_dirs` places them.
pub(crate) fn config_files(preset: &Preset, env: &[(String, String)]) -> Vec<PathBuf> {
    resolve(preset.config, env)
}

/// Paths relative to a base directory, for an agent run with `env` over Kiln's environment.
fn resolve(paths: &[(Base, &str)], env: &[(String, String)]) -> Vec<PathBuf> {
    let var = |key: &str| {
        let value = match env.iter().rev().find(|(k, _)| k == key) {
            Some((_, v)) => Some(v.clone()),
            None => std::env::var(key).ok(),
        };
        value.map(PathBuf::from).filter(|p| p.is_absolute())
    };
    let Some(home) = super::super::runner::home(env) else { return Vec::new() };
    paths
        .iter()
        .map(|(base, dir)| {
            let base = match base {
                Base::Home => home.clone(),
                Base::Config => var("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config")),
                Base::Data => var("XDG_DATA_HOME").unwrap_or_else(|| home.join(".local/share")),
                Base::State => var("XDG_STATE_HOME").unwrap_or_else(|| home.join(".local/state")),
            };
            base.join(dir)
        })
        .collect()
}

/// The ACP driver `id` as Settings make it: its command line (its binary found), the
/// command policy, and a preset's state directories writable.
pub(crate) async fn driver(ws: &Workspace, id: &'static str) -> Result<AcpDriver> {
    let command = command(ws, id).await?;
    let commands = crate::settings::command_policy(ws).await?;
    let state = by_id(id).map(|p| state_dirs(p, &command.env)).unwrap_or_default();
    let config = by_id(id).map(|p| config_files(p, &command.env)).unwrap_or_default();
    Ok(AcpDriver::new(id, command, commands).with_state_dirs(state).with_config_files(config))
}

// ---------------------------------------------------------------------------------------
// Settings

/// The custom command line, as typed (plain: it holds no secret).
pub(crate) const CUSTOM_COMMAND: &str = "driver.acp.custom.command";
/// The custom command's environment lines, sealed.
pub(crate) const CUSTOM_ENV: &str = "driver.acp.custom.env";
/// A JSON object of preset id → the binary's absolute path, for presets not on PATH.
pub(crate) const PATHS: &str = "driver.acp.paths";

/// `gemini --acp` → (`gemini`, [`--acp`]): words as a shell would read them, never a shell.
pub(crate) fn split_command(line: &str) -> Result<(String, Vec<String>)> {
    let words = shell_words::split(line)
        .map_err(|_| ApiError::invalid("the custom ACP command has an unclosed quote: close it or remove it"))?;
    let mut words = words.into_iter();
    let program = words.next().filter(|p| !p.is_empty()).ok_or_else(|| {
        ApiError::invalid("the custom ACP command is empty: give the agent's program and its arguments")
    })?;
    if program.contains('/') && !Path::new(&program).is_absolute() {
        return Err(ApiError::invalid(format!(
            "the custom ACP command's program `{program}` must be a name found on PATH or an absolute path"
        )));
    }
    Ok((program, words.collect()))
}

/// `KEY=VALUE` lines; blank lines and `#` comments are skipped.
pub(crate) fn parse_env(lines: &str) -> Result<Vec<(String, String)>> {
    let mut env = Vec::new();
    for (n, line) in lines.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(ApiError::invalid(format!("environment line {} is not KEY=VALUE", n + 1)));
        };
        let key = key.trim();
        let valid = !key.is_empty()
            && !key.starts_with(|c: char| c.is_ascii_digit())
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(ApiError::invalid(format!(
                "environment line {}: `{}` is not a variable name (letters, digits and _)",
                n + 1,
                key.chars().take(40).collect::<String>()
            )));
        }
        if value.contains('\0') {
            return Err(ApiError::invalid(format!("environment line {} holds a NUL character", n + 1)));
        }
        env.push((key.to_string(), value.to_string()));
    }
    Ok(env)
}

/// Whether a variable's value is a secret to redact wherever it shows (an API key, a token).
fn secret_name(key: &str) -> bool {
    let key = key.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "AUTH"].iter().any(|w| key.contains(w))
}

/// The custom command's environment, opened; its secrets are held for redaction.
pub(crate) async fn custom_env(ws: &Workspace) -> Result<Vec<(String, String)>> {
    let Some(sealed) = get_setting(&ws.pool, CUSTOM_ENV).await? else { return Ok(Vec::new()) };
    let plain = Sealer::open_or_create(&ws.kiln_dir())?.open(&sealed)?;
    let env = parse_env(&String::from_utf8_lossy(&plain))?;
    for (_, value) in env.iter().filter(|(k, _)| secret_name(k)) {
        kiln_runtime::redact::hold(value);
    }
    Ok(env)
}

async fn paths(ws: &Workspace) -> Result<BTreeMap<String, String>> {
    Ok(get_setting(&ws.pool, PATHS).await?.and_then(|json| serde_json::from_str(&json).ok()).unwrap_or_default())
}

/// The command line for the ACP driver `id`, its binary found, or `DRIVER_NOT_FOUND` with
/// how to install it (or, for the custom one, to set it in Settings).
pub async fn command(ws: &Workspace, id: &str) -> Result<AcpCommand> {
    if id == CUSTOM {
        let Some(line) = get_setting(&ws.pool, CUSTOM_COMMAND).await? else {
            return Err(ApiError::new(
                ErrorCode::DriverNotFound,
                "the custom ACP agent has no command line: set it in Settings",
            ));
        };
        let (program, args) = split_command(&line)?;
        let binary = if Path::new(&program).is_absolute() {
            find_binary(&program, Some(Path::new(&program)))?
        } else {
            find_binary(&program, None)?
        };
        return Ok(AcpCommand { binary, args, env: custom_env(ws).await? });
    }
    let preset = by_id(id)
        .ok_or_else(|| ApiError::invalid(format!("there is no ACP agent `{id}`; they are {}", IDS.join(", "))))?;
    let configured = paths(ws).await?.remove(id).map(PathBuf::from);
    let binary = find_binary(preset.binary, configured.as_deref())?;
    Ok(AcpCommand { binary, args: preset.args.iter().map(|a| a.to_string()).collect(), env: preset_env(preset) })
}

/// Each ACP agent as Settings show it (name, command line, install hint, the path set for
/// it) and its status for the drivers list (found or not, its version). None on a
/// self-hosted server: it runs no local agents.
pub(crate) async fn view(ws: &Workspace) -> Result<(Vec<AcpAgentView>, Vec<DriverStatus>)> {
    if ws.mode != ServeMode::Loopback {
        return Ok((Vec::new(), Vec::new()));
    }
    let paths = paths(ws).await?;
    let custom = get_setting(&ws.pool, CUSTOM_COMMAND).await?;
    let mut agents: Vec<AcpAgentView> = PRESETS
        .iter()
        .map(|p| AcpAgentView {
            id: p.id.into(),
            name: p.name.into(),
            command: std::iter::once(p.binary).chain(p.args.iter().copied()).collect::<Vec<_>>().join(" "),
            install_hint: p.install_hint.into(),
            path: paths.get(p.id).cloned(),
        })
        .collect();
    agents.push(AcpAgentView {
        id: CUSTOM.into(),
        name: CUSTOM_NAME.into(),
        command: custom.clone().unwrap_or_default(),
        install_hint: "set the agent's command line (and its environment) in Settings".into(),
        path: None,
    });
    // Every found binary answers `--version` at once: a cold node start is the slow part.
    let statuses = futures_util::future::join_all(agents.iter().map(|a| status(ws, a))).await;
    Ok((agents, statuses))
}

async fn status(ws: &Workspace, agent: &AcpAgentView) -> DriverStatus {
    let found = command(ws, &agent.id).await;
    let version = match &found {
        Ok(command) => health::version(&command.binary).await,
        Err(_) => None,
    };
    let (available, detail) = match found {
        Ok(command) => (true, command.binary.display().to_string()),
        Err(e) => (false, e.message),
    };
    DriverStatus { id: agent.id.clone(), name: Some(agent.name.clone()), available, detail, version, signed_in: None }
}

/// The names of the custom command's variables (never their values).
pub(crate) async fn custom_env_names(ws: &Workspace) -> Result<Vec<String>> {
    Ok(custom_env(ws).await?.into_iter().map(|(k, _)| k).collect())
}

/// The ACP changes of one `update_settings`, checked: applied only once every other
/// setting has been checked too, so a refused request changes nothing.
#[derive(Default)]
pub(crate) struct Update {
    command: Option<String>,
    env: Option<String>,
    paths: Option<BTreeMap<String, String>>,
}

pub(crate) fn check(mode: ServeMode, workspace: &Path, args: &UpdateSettingsArgs) -> Result<Update> {
    let given = args.acp_custom_command.is_some() || args.acp_custom_env.is_some() || args.acp_paths.is_some();
    if given && mode != ServeMode::Loopback {
        return Err(ApiError::new(ErrorCode::NotAllowedInMode, "a self-hosted server runs no local ACP agents"));
    }
    let command = args.acp_custom_command.as_ref().map(|c| c.trim().to_string());
    if let Some(line) = command.as_deref().filter(|l| !l.is_empty()) {
        if line.contains(['\n', '\r', '\0']) {
            return Err(ApiError::invalid("the custom ACP command is one line"));
        }
        let (program, _) = split_command(line)?;
        kiln_runtime::paths::program_outside(workspace, &program)?;
    }
    if let Some(lines) = &args.acp_custom_env {
        parse_env(lines)?;
    }
    if let Some(paths) = &args.acp_paths {
        for (id, path) in paths {
            if by_id(id).is_none() {
                return Err(ApiError::invalid(format!(
                    "there is no ACP preset `{}` to set a path for; they are {}",
                    id.chars().take(40).collect::<String>(),
                    PRESETS.iter().map(|p| p.id).collect::<Vec<_>>().join(", ")
                )));
            }
            let path = path.trim();
            if !path.is_empty() && !Path::new(path).is_absolute() {
                return Err(ApiError::invalid(format!("the path for {id}, `{path}`, must be an absolute path")));
            }
            kiln_runtime::paths::program_outside(workspace, path)?;
        }
    }
    Ok(Update { command, env: args.acp_custom_env.clone(), paths: args.acp_paths.clone() })
}

pub(crate) async fn apply(ws: &Workspace, update: Update) -> Result<()> {
    if let Some(line) = update.command {
        set_setting(&ws.pool, CUSTOM_COMMAND, Some(&line).filter(|l| !l.is_empty()).map(|l| l.as_str())).await?;
    }
    if let Some(lines) = update.env {
        let env = parse_env(&lines)?;
        if env.is_empty() {
            set_setting(&ws.pool, CUSTOM_ENV, None).await?;
        } else {
            for (_, value) in env.iter().filter(|(k, _)| secret_name(k)) {
                kiln_runtime::redact::hold(value);
            }
            let text: String = env.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
            let sealed = Sealer::open_or_create(&ws.kiln_dir())?.seal(text.as_bytes());
            set_setting(&ws.pool, CUSTOM_ENV, Some(&sealed)).await?;
        }
    }
    if let Some(changes) = update.paths {
        let mut paths = paths(ws).await?;
        for (id, path) in changes {
            match path.trim() {
                "" => paths.remove(&id),
                path => paths.insert(id, path.to_string()),
            };
        }
        let json = serde_json::to_string(&paths).expect("strings serialize");
        set_setting(&ws.pool, PATHS, Some(&json).filter(|_| !paths.is_empty()).map(|j| j.as_str())).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_an_acp_driver_id_and_found_by_its_binary() {
        for preset in PRESETS {
            assert!(IDS.contains(&preset.id), "{}", preset.id);
            assert_eq!(by_binary(preset.binary), Some(preset));
            assert!(!preset.install_hint.is_empty());
        }
        assert_eq!(IDS.len(), PRESETS.len() + 1);
        // The registry's list, which the settings check a default driver against, ends with these.
        assert!(crate::drivers::registry::DRIVERS.ends_with(IDS));
        assert_eq!(by_id("acp:gemini").map(|p| p.args), Some(&["--acp"][..]));
    }

    #[test]
    fn state_directories_follow_the_home_and_the_xdg_variables_the_agent_gets() {
        let env = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        let gemini = by_id("acp:gemini").unwrap();
        assert_eq!(state_dirs(gemini, &env(&[("HOME", "/h")])), [PathBuf::from("/h/.gemini")]);
        let opencode = by_id("acp:opencode").unwrap();
        let dirs = state_dirs(
            opencode,
            &env(&[("HOME", "/h"), ("XDG_DATA_HOME", "/d"), ("XDG_STATE_HOME", "/s"), ("XDG_CONFIG_HOME", "/c")]),
        );
        assert_eq!(dirs, [PathBuf::from("/d/opencode"), PathBuf::from("/s/opencode"), PathBuf::from("/c/opencode")]);
        // A relative XDG variable is ignored, as the XDG spec says.
        let dirs = state_dirs(opencode, &env(&[("HOME", "/h"), ("XDG_DATA_HOME", "rel")]));
        assert_eq!(dirs[0], PathBuf::from("/h/.local/share/opencode"));
    }

    #[test]
    fn each_preset_with_state_names_its_configuration_inside_it() {
        let env = vec![("HOME".to_string(), "/h".to_string())];
        for preset in PRESETS {
            let (dirs, files) = (state_dirs(preset, &env), config_files(preset, &env));
            assert_eq!(dirs.is_empty(), files.is_empty(), "{}", preset.id);
            assert!(files.iter().all(|f| dirs.iter().any(|d| f.starts_with(d))), "{}: {files:?}", preset.id);
        }
        let gemini = by_id("acp:gemini").unwrap();
        assert!(config_files(gemini, &env).contains(&PathBuf::from("/h/.gemini/settings.json")));
    }

    #[test]
    fn a_command_line_splits_like_a_shell_reads_it_without_one() {
        let (program, args) = split_command(r#"my-agent --acp --name "two words" 'a;b' $HOME"#).unwrap();
        assert_eq!(program, "my-agent");
        assert_eq!(args, ["--acp", "--name", "two words", "a;b", "$HOME"]);
        assert_eq!(split_command("/opt/agent/bin/run acp").unwrap().0, "/opt/agent/bin/run");
        for bad in ["", "   ", "agent 'unclosed", "./agent acp", "bin/agent"] {
            assert_eq!(split_command(bad).unwrap_err().code, ErrorCode::InvalidInput, "{bad:?}");
        }
    }

    #[test]
    fn environment_lines_are_key_value_with_comments_and_blanks_skipped() {
        let env = parse_env("# the provider\nGEMINI_API_KEY=abc=def\n\n  DEBUG = 1\n").unwrap();
        assert_eq!(env, [("GEMINI_API_KEY".to_string(), "abc=def".to_string()), ("DEBUG".into(), " 1".into())]);
        for bad in ["NO_EQUALS", "1KEY=x", "BAD-NAME=x", "=x"] {
            let err = parse_env(bad).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidInput, "{bad:?}");
            assert!(err.message.contains("line 1"), "{}", err.message);
        }
    }

    #[test]
    fn a_self_hosted_server_takes_no_acp_settings_and_bad_ones_are_refused() {
        let args = UpdateSettingsArgs { acp_custom_command: Some("agent acp".into()), ..Default::default() };
        assert_eq!(
            check(ServeMode::SelfHosted, Path::new("/nonexistent-workspace"), &args).err().map(|e| e.code),
            Some(ErrorCode::NotAllowedInMode)
        );
        assert!(check(ServeMode::Loopback, Path::new("/nonexistent-workspace"), &args).is_ok());
        let paths = |id: &str, path: &str| UpdateSettingsArgs {
            acp_paths: Some([(id.to_string(), path.to_string())].into()),
            ..Default::default()
        };
        assert!(check(ServeMode::Loopback, Path::new("/nonexistent-workspace"), &paths("acp:gemini", "/opt/gemini"))
            .is_ok());
        assert!(check(ServeMode::Loopback, Path::new("/nonexistent-workspace"), &paths("acp:gemini", "")).is_ok());
        for (id, path) in [("acp:gemini", "gemini"), ("acp:custom", "/x"), ("claude", "/x")] {
            let err = check(ServeMode::Loopback, Path::new("/nonexistent-workspace"), &paths(id, path))
                .err()
                .expect("refused");
            assert_eq!(err.code, ErrorCode::InvalidInput, "{id} {path}");
        }
    }

    /// A program in the workspace (a working copy, `.kiln`, or a link into them) is
    /// something an agent may have written: it is never a program Kiln runs.
    #[test]
    fn a_program_inside_the_workspace_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(ws.join(".kiln/sessions/a/workspace")).unwrap();
        let inside = ws.join(".kiln/sessions/a/workspace/agent");
        std::fs::write(&inside, "#!/bin/sh\n").unwrap();
        std::os::unix::fs::symlink(&inside, tmp.path().join("innocent")).unwrap();
        let custom = |line: String| UpdateSettingsArgs { acp_custom_command: Some(line), ..Default::default() };
        for line in [
            format!("{} acp", inside.display()),
            format!("'{}' --stdio", tmp.path().join("innocent").display()),
            format!("{}/node_modules/.bin/agent", ws.display()),
        ] {
            let err = check(ServeMode::Loopback, &ws, &custom(line.clone())).err().expect("refused");
            assert_eq!(err.code, ErrorCode::PathNotAllowed, "{line}: {}", err.message);
        }
        let preset = UpdateSettingsArgs {
            acp_paths: Some([("acp:gemini".to_string(), inside.display().to_string())].into()),
            ..Default::default()
        };
        assert_eq!(check(ServeMode::Loopback, &ws, &preset).err().map(|e| e.code), Some(ErrorCode::PathNotAllowed));
        assert!(check(ServeMode::Loopback, &ws, &custom("gemini --experimental-acp".into())).is_ok());
        assert!(check(ServeMode::Loopback, &ws, &custom("/usr/bin/env gemini".into())).is_ok());
        // Beside the workspace, spelt through it, is outside; not there yet, inside, is not.
        let beside = format!("{}/../agent", ws.display());
        assert!(check(ServeMode::Loopback, &ws, &custom(beside)).is_ok());
        let inside_later = format!("{}/bin/../later/agent", ws.display());
        assert!(check(ServeMode::Loopback, &ws, &custom(inside_later)).is_err());
    }
}
