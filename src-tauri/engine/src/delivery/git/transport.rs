//! Starting git: the global options and environment each kind of command gets (a token
//! only for a command that talks to a remote, only for its origin), the command line as
//! shown, and the run itself through the one process runner (`kiln_runtime::process`), in a
//! session of its own so ssh cannot prompt, killed with everything it started on its
//! timeout or when the delivery is dropped.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::policy::http_origin;
use super::{GitError, GitErrorKind, GitOutput, GitResult, Redactor, DEFAULT_TIMEOUT, TOKEN_ENV};
use kiln_runtime::process::{self, Command, Env};

/// The credential helper given on the command line when a token is set. Its text holds
/// only the variable's *name*: the shell git starts expands it inside the process, so the
/// token never appears in any argv (which every local user can read in
/// `/proc/<pid>/cmdline`; `/proc/<pid>/environ` is readable only by the owner). It answers
/// `get` only, so no `store` or `erase` ever sees the token, and drains git's request.
const HELPER: &str = "!f() { test \"$1\" = get || exit 0; while read -r line && test -n \"$line\"; do :; done; \
echo username=x-access-token; echo \"password=${KILN_GIT_TOKEN}\"; }; f";

/// What the command line shows instead of the helper's text.
const HELPER_SHOWN: &str = "<kiln token helper>";

// ---------------------------------------------------------------------------------------
// Running git

/// What a command does, which decides its environment.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    /// Reads the repository only: `GIT_OPTIONAL_LOCKS=0`, so a status never takes the
    /// index lock from under the user's own git.
    Read,
    /// Changes the local repository.
    Write,
    /// Talks to a remote: the only commands that get the token, when there is one.
    Remote,
}

/// A token and the origin (`https://host[:port]`) it may be sent to.
#[derive(Clone)]
struct Token {
    value: String,
    origin: String,
}

/// The git CLI on one repository (or one worktree of it).
#[derive(Clone)]
pub struct Git {
    pub(super) dir: PathBuf,
    program: OsString,
    redactor: Redactor,
    token: Option<Token>,
    env: Vec<(OsString, OsString)>,
    timeout: Duration,
}

impl std::fmt::Debug for Git {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Git")
            .field("dir", &self.dir)
            .field("program", &self.program)
            .field("token", &self.token.as_ref().map(|t| format!("<set, for {}>", t.origin)))
            .finish()
    }
}

/// A finished command: what the user sees, and its whole stdout for parsing (the shown
/// output is capped; a parse must not be).
pub(super) struct Ran {
    pub(super) out: GitOutput,
    pub(super) stdout: Vec<u8>,
}

impl Git {
    /// Git on the repository or worktree at `repo_dir`, with `git` from the (allowlisted) PATH.
    pub fn new(repo_dir: impl Into<PathBuf>) -> Self {
        Git {
            dir: repo_dir.into(),
            program: OsString::from("git"),
            redactor: Redactor::new(),
            token: None,
            env: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// Another git executable (a path set in Settings, or a test's recording wrapper).
    pub fn with_program(mut self, program: impl Into<OsString>) -> Self {
        self.program = program.into();
        self
    }

    /// Uses `token` for HTTPS remotes on `url`'s origin only (scheme, host and port; a
    /// path or userinfo in `url` is ignored), and redacts it everywhere.
    pub fn with_token(mut self, token: &str, url: &str) -> GitResult<Self> {
        let origin = http_origin(url).ok_or_else(|| {
            self.fail(
                GitErrorKind::InvalidInput,
                format!("a token can only be bound to an http(s) address, not '{url}'"),
                None,
            )
        })?;
        if token.is_empty() || token.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(self.fail(
                GitErrorKind::InvalidInput,
                "the token is empty or holds spaces or control characters".into(),
                None,
            ));
        }
        self.redactor.add(token);
        self.token = Some(Token { value: token.to_string(), origin });
        Ok(self)
    }

    /// More secrets to keep out of every output (the redactor's secrets are added to
    /// this one's, including a token's).
    pub fn with_redactor(mut self, redactor: &Redactor) -> Self {
        self.redactor.merge(redactor);
        self
    }

    /// A variable for every git process, on top of the allowlist (tests point `HOME` at
    /// an empty directory). The fixed settings (`GIT_TERMINAL_PROMPT=0`, the token) win.
    pub fn with_env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    #[cfg(feature = "test-support")]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    #[cfg(feature = "test-support")]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    pub(super) fn fail(&self, kind: GitErrorKind, message: String, output: Option<GitOutput>) -> GitError {
        GitError { kind, message: self.redactor.redact(&message), output }
    }

    pub(super) fn invalid(&self, message: String) -> GitError {
        self.fail(GitErrorKind::InvalidInput, message, None)
    }

    /// What one git process gets on top of the allowlist (`kiln_runtime::process::Env::Tool`).
    fn environment(&self, access: Access) -> Vec<(OsString, OsString)> {
        let mut env = self.env.clone();
        env.retain(|(k, _)| k != TOKEN_ENV);
        env.push(("GIT_TERMINAL_PROMPT".into(), "0".into()));
        if access == Access::Read {
            env.push(("GIT_OPTIONAL_LOCKS".into(), "0".into()));
        }
        if access == Access::Remote {
            if let Some(token) = &self.token {
                env.push((TOKEN_ENV.into(), token.value.clone().into()));
            }
        }
        env
    }

    /// The global options that come before every subcommand.
    fn global_args(&self, access: Access) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        if access == Access::Remote {
            // `ext::` runs an arbitrary command as a "transport"; git refuses it by default,
            // and a remote address that came through Kiln must never turn that back on.
            args.extend(["-c".into(), "protocol.ext.allow=never".into()]);
            if let Some(token) = &self.token {
                // Clear every configured helper first (an empty value resets the list), so
                // a `store` helper never writes the token to disk and no other helper is
                // asked; then one helper, for the token's origin only.
                args.extend(["-c".into(), "credential.helper=".into()]);
                args.extend(["-c".into(), format!("credential.{}.helper={HELPER}", token.origin).into()]);
            }
        }
        args
    }

    /// The command line as shown: quoted, the helper's text abbreviated, redacted.
    fn display(&self, args: &[OsString]) -> String {
        let program = Path::new(&self.program)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "git".into());
        let mut parts = vec![program];
        for arg in args {
            let arg = arg.to_string_lossy().replace(HELPER, HELPER_SHOWN);
            parts.push(shell_quote(&arg));
        }
        self.redactor.redact(&parts.join(" "))
    }

    /// Runs git with `args` in the repository directory. A non-zero exit is not an error
    /// here: each operation decides what it means.
    pub(super) async fn run(&self, access: Access, args: &[OsString], stdin: Option<Vec<u8>>) -> GitResult<Ran> {
        if !self.dir.is_dir() {
            return Err(self.invalid(format!("the repository directory {} does not exist", self.dir.display())));
        }
        let mut argv = self.global_args(access);
        argv.extend(args.iter().cloned());
        let command = self.display(&argv);

        let cmd = Command::new(&self.program, &self.dir, Env::Tool(self.environment(access)))
            .args(&argv)
            .input(stdin)
            .own_session();
        let mut child = match cmd.spawn(None) {
            Ok(child) => child,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(self.fail(
                    GitErrorKind::NotInstalled,
                    format!("git was not found ({}): install git, or set its path", Path::new(&self.program).display()),
                    None,
                ))
            }
            Err(e) => return Err(self.fail(GitErrorKind::Failed, format!("could not start git: {e}"), None)),
        };
        // If this future is dropped mid-run (a cancelled delivery), git and everything it
        // started (ssh, a helper) go with it: the child's drop kills its session.
        let captured = match process::collect(&mut child, self.timeout, true).await {
            Ok(captured) => captured,
            Err(e) => return Err(self.fail(GitErrorKind::Failed, format!("waiting for git failed: {e}"), None)),
        };
        let status = if captured.timed_out { None } else { captured.status };
        let output = {
            let head = String::from_utf8_lossy(&captured.head).replace('\0', "\n");
            let tail = String::from_utf8_lossy(&captured.tail).replace('\0', "\n");
            self.redactor.redact_capped(&head, &tail)
        };
        let stdout = captured.stdout;
        let out = GitOutput { command, status: status.and_then(|s| s.code()), output };
        if status.is_none() {
            return Err(self.fail(
                GitErrorKind::TimedOut,
                format!("`{}` did not finish within {} s and was stopped", out.command, self.timeout.as_secs_f64()),
                Some(out),
            ));
        }
        Ok(Ran { out, stdout })
    }

    /// A path given to an operation, absolute (relative ones are taken from the repository).
    pub(super) fn absolute(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.dir.join(path)
        }
    }
}

pub(super) fn args<const N: usize>(list: [&str; N]) -> Vec<OsString> {
    list.iter().map(OsString::from).collect()
}

fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty() && arg.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,^{}".contains(&b));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helper_names_the_variable_not_a_value() {
        assert!(HELPER.contains(&format!("${{{TOKEN_ENV}}}")));
    }
}
