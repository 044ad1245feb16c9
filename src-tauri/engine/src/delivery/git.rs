//! The git layer of the `git-pr` delivery target (SPEC §12): fetch, a temporary
//! worktree, the changed paths, a commit, a push that never overwrites a branch that
//! moved, and the clean-up. It runs the real `git` CLI rather than libgit2 so SSH
//! remotes, credential helpers and the user's agent behave as they do in a terminal,
//! with an allowlisted environment. A token reaches git only through the environment of
//! the one git process that needs it, never an argument or a URL, and every command
//! line, output and message is redacted before it leaves this module.

use std::ffi::OsString;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use crate::error::{ApiError, ErrorCode};
use crate::process::{Capture, HEAD_BYTES, TAIL_BYTES};

/// The variable that carries a token to the credential helper. It is set only in the
/// environment of a git process that talks to a remote, and only when a token was given.
pub const TOKEN_ENV: &str = "KILN_GIT_TOKEN";

/// The committer (and author) used when git has no identity configured at all: a commit
/// must not fail on a fresh machine, and must not invent a name when the user has one.
pub const DEFAULT_NAME: &str = "Kiln";
pub const DEFAULT_EMAIL: &str = "kiln@localhost";

/// How long one git command may run before its process group is killed. Long enough
/// for a large push on a slow link; a hung SSH or HTTP connection still ends.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The credential helper given on the command line when a token is set. Its text holds
/// only the variable's *name*: the shell git starts expands it inside the process, so the
/// token never appears in any argv (which every local user can read in
/// `/proc/<pid>/cmdline`; `/proc/<pid>/environ` is readable only by the owner). It answers
/// `get` only, so no `store` or `erase` ever sees the token, and drains git's request.
const HELPER: &str = "!f() { test \"$1\" = get || exit 0; while read -r line && test -n \"$line\"; do :; done; \
echo username=x-access-token; echo \"password=${KILN_GIT_TOKEN}\"; }; f";

/// What the command line shows instead of the helper's text.
const HELPER_SHOWN: &str = "<kiln token helper>";

/// What a secret is replaced with.
const MASK: &str = "***";

/// One git command as the user may see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GitOutput {
    /// The command line, redacted (`git fetch --no-tags -- origin …`). When an operation
    /// ran several commands that matter, they are joined with ` && `.
    pub command: String,
    /// The exit code; `None` when git was killed (a timeout).
    pub status: Option<i32>,
    /// stdout and stderr as they interleaved, redacted, with only the first and last
    /// `process::HEAD_BYTES`/`TAIL_BYTES` kept of a long run.
    pub output: String,
}

impl GitOutput {
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }

    /// This command followed by `next`: the step list shows both as one.
    fn then(self, next: GitOutput) -> GitOutput {
        let output = match (self.output.is_empty(), next.output.is_empty()) {
            (true, _) => next.output,
            (false, true) => self.output,
            (false, false) => {
                format!("{}{}{}", self.output, if self.output.ends_with('\n') { "" } else { "\n" }, next.output)
            }
        };
        GitOutput { command: format!("{} && {}", self.command, next.command), status: next.status, output }
    }
}

/// Why a git operation failed, so the delivery target can tell the cases apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum GitErrorKind {
    /// A branch name, ref, SHA or path that is not acceptable; nothing was run.
    InvalidInput,
    /// `git` could not be started.
    NotInstalled,
    /// The remote does not exist or cannot be read.
    RemoteUnreachable,
    /// The remote wants credentials it did not get, or refused them.
    AuthenticationFailed,
    /// A branch or ref that does not exist (a missing base branch).
    RefNotFound,
    /// A push or delete refused because the remote branch is not where it was expected:
    /// someone else moved (or created, or deleted) it. Nothing was changed remotely.
    RemoteMoved,
    /// A push the remote refused for another reason (a hook, a protected branch).
    PushRejected,
    /// A commit with nothing staged.
    NothingToCommit,
    /// A directory that worktree clean-up will not delete: it is not this repository's.
    NotAWorktree,
    /// A command that ran past its timeout and was killed.
    TimedOut,
    /// Any other failure; the message carries git's own words.
    Failed,
}

/// A failed git operation: its kind, a message for the person reading it (redacted), and
/// the output of the command that failed, when one ran.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct GitError {
    pub kind: GitErrorKind,
    pub message: String,
    pub output: Option<GitOutput>,
}

impl From<GitError> for ApiError {
    // ErrorCode has no git codes yet; the delivery target may add stable ones (e.g. for
    // RemoteMoved). Until then the message, already redacted, says what happened.
    fn from(err: GitError) -> Self {
        let code = match err.kind {
            GitErrorKind::InvalidInput => ErrorCode::InvalidInput,
            GitErrorKind::NotAWorktree => ErrorCode::PathNotAllowed,
            _ => ErrorCode::Internal,
        };
        ApiError::new(code, err.message)
    }
}

pub type GitResult<T> = std::result::Result<T, GitError>;

// ---------------------------------------------------------------------------------------
// Redaction

/// The secrets to keep out of everything this module returns. Each is replaced with
/// `***` in its raw form, base64 (standard and URL-safe, at any alignment, so an HTTP
/// `Authorization: Basic` header in a trace is covered whatever the user name) and
/// percent-encoded forms. URL userinfo (`https://user:pass@host`) is always hidden.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Every spelling to mask, longest first so a longer form is not left half-masked.
    forms: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} forms)", self.forms.len())
    }
}

impl Redactor {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with(mut self, secret: &str) -> Self {
        self.add(secret);
        self
    }

    pub fn add(&mut self, secret: &str) {
        for s in [secret, secret.trim()] {
            if s.is_empty() {
                continue;
            }
            self.forms.push(s.to_string());
            self.forms.extend(base64_forms(s.as_bytes()));
            self.forms.extend(percent_forms(s));
        }
        self.forms.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        self.forms.dedup();
    }

    fn merge(&mut self, other: &Redactor) {
        self.forms.extend(other.forms.iter().cloned());
        self.forms.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        self.forms.dedup();
    }

    /// `text` with every secret and every URL's userinfo masked.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for form in &self.forms {
            if out.contains(form.as_str()) {
                out = out.replace(form.as_str(), MASK);
            }
        }
        userinfo_pattern().replace_all(&out, "${1}***@").into_owned()
    }

    /// A capped output: `head` and `tail` were cut out of one stream, so a secret may
    /// straddle a cut. A piece of a secret left dangling at a cut is masked too.
    fn redact_capped(&self, head: &str, tail: &str) -> String {
        if tail.is_empty() {
            return self.redact(head);
        }
        let mut head = self.redact(head);
        let mut tail = self.redact(tail);
        for form in &self.forms {
            mask_dangling_end(&mut head, form);
            mask_dangling_start(&mut tail, form);
        }
        format!(
            "{head}\n[… output cut: only the first {} KiB and the last {} KiB are kept …]\n{tail}",
            HEAD_BYTES / 1024,
            TAIL_BYTES / 1024
        )
    }
}

/// The shortest piece of a secret that is still masked at a cut: shorter ones say nothing.
const MIN_PIECE: usize = 4;

fn mask_dangling_end(text: &mut String, form: &str) {
    let longest = form.len().saturating_sub(1).min(text.len());
    for len in (MIN_PIECE..=longest).rev() {
        if form.is_char_boundary(len) && text.ends_with(&form[..len]) {
            text.truncate(text.len() - len);
            text.push_str(MASK);
            return;
        }
    }
}

fn mask_dangling_start(text: &mut String, form: &str) {
    let longest = form.len().saturating_sub(1).min(text.len());
    for len in (MIN_PIECE..=longest).rev() {
        let start = form.len() - len;
        if form.is_char_boundary(start) && text.starts_with(&form[start..]) {
            text.replace_range(..len, MASK);
            return;
        }
    }
}

/// `scheme://userinfo@` → `scheme://***@`.
fn userinfo_pattern() -> &'static regex::Regex {
    static PATTERN: OnceLock<regex::Regex> = OnceLock::new();
    PATTERN.get_or_init(|| regex::Regex::new(r#"(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#\s@'"<>]+@"#).unwrap())
}

/// The base64 spellings of a secret: whole (padded), and the characters that depend
/// only on the secret at each of the three byte alignments it can have inside a longer
/// encoded value (`user:secret` in a Basic header).
fn base64_forms(secret: &[u8]) -> Vec<String> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let mut forms = vec![STANDARD.encode(secret), URL_SAFE.encode(secret)];
    for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
        for offset in 0..3usize {
            let mut bytes = vec![0u8; offset];
            bytes.extend_from_slice(secret);
            let encoded = engine.encode(&bytes);
            // Character i covers bits [6i, 6i+6); keep those wholly inside the secret.
            let start = (8 * offset).div_ceil(6);
            let end = (8 * (offset + secret.len())) / 6;
            // A short fragment would mask unrelated text for no gain.
            if end >= start + 8 {
                forms.push(encoded[start..end].to_string());
            }
        }
    }
    forms
}

/// Percent-encoded spellings of a secret (as in a URL or a form body).
fn percent_forms(secret: &str) -> Vec<String> {
    let encode = |keep: &dyn Fn(u8) -> bool, space_plus: bool| -> String {
        let mut out = String::new();
        for &b in secret.as_bytes() {
            if keep(b) {
                out.push(b as char);
            } else if space_plus && b == b' ' {
                out.push('+');
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    };
    let unreserved = |b: u8| b.is_ascii_alphanumeric() || b"-._~".contains(&b);
    let alphanumeric = |b: u8| b.is_ascii_alphanumeric();
    let forms = [
        encode(&unreserved, false),
        encode(&alphanumeric, false),
        encode(&|b: u8| b.is_ascii_alphanumeric() || b"*-._".contains(&b), true),
    ];
    let mut forms: Vec<String> = forms.into_iter().filter(|f| f != secret).collect();
    let lower: Vec<String> = forms.iter().map(|f| lowercase_escapes(f)).filter(|f| f != secret).collect();
    forms.extend(lower);
    forms
}

/// `%2F` → `%2f`: some encoders write lower-case hex.
fn lowercase_escapes(encoded: &str) -> String {
    let bytes = encoded.as_bytes();
    let mut out = String::with_capacity(encoded.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            out.push('%');
            out.push((bytes[i + 1] as char).to_ascii_lowercase());
            out.push((bytes[i + 2] as char).to_ascii_lowercase());
            i += 3;
        } else {
            out.push(bytes[i] as char);
            i += 1;
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Environment

/// The variables a git process keeps from Kiln's environment; everything else is dropped.
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
/// is set: git must fail at once rather than wait for a password nobody will type (it
/// also runs in its own session, without a controlling terminal, so ssh cannot prompt).
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

/// The part of `vars` a git process may see: `KEPT_VARIABLES` and `LC_*`.
pub fn allowlisted_env(vars: impl IntoIterator<Item = (OsString, OsString)>) -> Vec<(OsString, OsString)> {
    vars.into_iter()
        .filter(|(key, _)| {
            let key = key.to_string_lossy();
            KEPT_VARIABLES.contains(&key.as_ref()) || key.starts_with("LC_")
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Running git

/// What a command does, which decides its environment.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
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
    dir: PathBuf,
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
struct Ran {
    out: GitOutput,
    stdout: Vec<u8>,
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

    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    fn fail(&self, kind: GitErrorKind, message: String, output: Option<GitOutput>) -> GitError {
        GitError { kind, message: self.redactor.redact(&message), output }
    }

    fn invalid(&self, message: String) -> GitError {
        self.fail(GitErrorKind::InvalidInput, message, None)
    }

    /// The environment of one git process.
    fn environment(&self, access: Access) -> Vec<(OsString, OsString)> {
        let mut env = allowlisted_env(std::env::vars_os());
        env.extend(self.env.iter().cloned());
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
    async fn run(&self, access: Access, args: &[OsString], stdin: Option<Vec<u8>>) -> GitResult<Ran> {
        if !self.dir.is_dir() {
            return Err(self.invalid(format!("the repository directory {} does not exist", self.dir.display())));
        }
        let mut argv = self.global_args(access);
        argv.extend(args.iter().cloned());
        let command = self.display(&argv);

        let mut cmd = Command::new(&self.program);
        cmd.args(&argv)
            .current_dir(&self.dir)
            .env_clear()
            .envs(self.environment(access))
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // SAFETY: setsid(2) is async-signal-safe and touches no memory of ours. A session
        // of its own leaves git without a controlling terminal, so ssh cannot open
        // /dev/tty to ask for a passphrase or a host key, and gives the group to kill.
        unsafe {
            cmd.pre_exec(|| if libc::setsid() < 0 { Err(io::Error::last_os_error()) } else { Ok(()) });
        }
        let mut child = match cmd.spawn() {
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
        let pid = child.id().map(|p| p as i32).unwrap_or(0);
        // If this future is dropped mid-run (a cancelled delivery), git and everything it
        // started (ssh, a helper) go with it, not only git as kill_on_drop would do.
        let mut guard = GroupGuard { pgid: pid, armed: true };

        if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
            tokio::spawn(async move {
                let _ = pipe.write_all(&input).await;
                // Dropping the pipe closes it: git reads to the end.
            });
        }
        let capture = Arc::new(Mutex::new(Capture::default()));
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let out_task = tokio::spawn(pump(child.stdout.take(), capture.clone(), Some(stdout.clone())));
        let err_task = tokio::spawn(pump(child.stderr.take(), capture.clone(), None));

        let status = match tokio::time::timeout(self.timeout, child.wait()).await {
            Ok(Ok(status)) => Some(status),
            Ok(Err(e)) => return Err(self.fail(GitErrorKind::Failed, format!("waiting for git failed: {e}"), None)),
            Err(_) => {
                kill_group(pid);
                let _ = child.wait().await;
                None
            }
        };
        // Reaped: the id may be reused from now on, so it must never be signalled again.
        guard.armed = false;
        // Something git started (an ssh ControlMaster) may keep the pipes open: never
        // wait on it for more than a moment.
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            let _ = out_task.await;
            let _ = err_task.await;
        })
        .await;

        let output = {
            let capture = capture.lock().unwrap();
            let head = String::from_utf8_lossy(&capture.head).replace('\0', "\n");
            let tail = if capture.overflowed {
                String::from_utf8_lossy(&capture.tail.iter().copied().collect::<Vec<u8>>()).replace('\0', "\n")
            } else {
                String::new()
            };
            self.redactor.redact_capped(&head, &tail)
        };
        let stdout = std::mem::take(&mut *stdout.lock().unwrap());
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
    fn absolute(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.dir.join(path)
        }
    }

    // -----------------------------------------------------------------------------------
    // Reading

    /// The commit `rev` names, if it names one.
    pub async fn rev_parse(&self, rev: &str) -> GitResult<Option<String>> {
        check_rev(rev).map_err(|m| self.invalid(m))?;
        let ran = self
            .run(
                Access::Read,
                &args(["rev-parse", "--verify", "--quiet", "--end-of-options", &format!("{rev}^{{commit}}")]),
                None,
            )
            .await?;
        Ok(ran.out.success().then(|| String::from_utf8_lossy(&ran.stdout).trim().to_string()))
    }

    /// Fetches `branch` from `remote` (a configured remote's name) into
    /// `refs/remotes/<remote>/<branch>`, forced: it mirrors the remote.
    pub async fn fetch(&self, remote: &str, branch: &str) -> GitResult<GitOutput> {
        check_ref_name(remote).map_err(|m| self.invalid(format!("the remote name: {m}")))?;
        check_ref_name(branch).map_err(|m| self.invalid(format!("the branch name: {m}")))?;
        let refspec = format!("+refs/heads/{branch}:refs/remotes/{remote}/{branch}");
        let ran = self.run(Access::Remote, &args(["fetch", "--no-tags", "--", remote, &refspec]), None).await?;
        if ran.out.success() {
            return Ok(ran.out);
        }
        // ls-remote tells a missing branch from an unreadable remote without reading
        // git's (translated) wording.
        match self.remote_branch_sha(remote, branch).await {
            Ok((None, _)) => Err(self.fail(
                GitErrorKind::RefNotFound,
                format!("the remote '{remote}' has no branch '{branch}'"),
                Some(ran.out),
            )),
            Err(e) => Err(GitError { output: Some(ran.out), ..e }),
            Ok((Some(_), _)) => {
                let message = format!("fetching '{branch}' from '{remote}' failed: {}", summary(&ran.out));
                Err(self.fail(GitErrorKind::Failed, message, Some(ran.out)))
            }
        }
    }

    /// The SHA of `branch` on `remote` (a name, URL or path), or `None` when the remote has
    /// no such branch. Asks the remote itself (`ls-remote`), not a local copy.
    pub async fn remote_branch_sha(&self, remote: &str, branch: &str) -> GitResult<(Option<String>, GitOutput)> {
        check_remote(remote).map_err(|m| self.invalid(m))?;
        check_ref_name(branch).map_err(|m| self.invalid(format!("the branch name: {m}")))?;
        let wanted = format!("refs/heads/{branch}");
        let ran = self.run(Access::Remote, &args(["ls-remote", "--", remote, &wanted]), None).await?;
        if !ran.out.success() {
            return Err(self.network_error(format!("cannot read the remote '{remote}'"), ran.out));
        }
        // ls-remote matches patterns by their tail: keep the exact ref only.
        let sha = String::from_utf8_lossy(&ran.stdout).lines().find_map(|line| {
            let (sha, name) = line.split_once('\t')?;
            (name == wanted).then(|| sha.to_string())
        });
        Ok((sha, ran.out))
    }

    /// `git status --porcelain`: `(XY, path)` for every changed or untracked file (a rename
    /// lists its new path).
    pub async fn status_porcelain(&self) -> GitResult<(Vec<(String, String)>, GitOutput)> {
        let ran =
            self.run(Access::Read, &args(["status", "--porcelain=v1", "-z", "--untracked-files=all"]), None).await?;
        if !ran.out.success() {
            let message = format!("git status failed in {}: {}", self.dir.display(), summary(&ran.out));
            return Err(self.fail(GitErrorKind::Failed, message, Some(ran.out)));
        }
        let mut entries = Vec::new();
        let mut records = ran.stdout.split(|&b| b == 0).filter(|r| !r.is_empty());
        while let Some(record) = records.next() {
            if record.len() < 4 {
                continue;
            }
            let code = String::from_utf8_lossy(&record[..2]).into_owned();
            let path = String::from_utf8_lossy(&record[3..]).into_owned();
            // A rename or copy is followed by its original path, as a record of its own.
            if code.starts_with('R') || code.starts_with('C') {
                records.next();
            }
            entries.push((code, path));
        }
        Ok((entries, ran.out))
    }

    /// Every path this worktree changes relative to its merge base with `base_ref`: `git
    /// add -A` first, so untracked files count, then the index against the merge base.
    /// `(status, path)` with status `A`, `M`, `D` or `T`; a rename is a `D` and an `A`, so
    /// a guardrail sees both paths. Committed and staged changes both count.
    pub async fn changed_paths(&self, base_ref: &str) -> GitResult<(Vec<(String, String)>, GitOutput)> {
        check_rev(base_ref).map_err(|m| self.invalid(m))?;
        let Some(base) = self.rev_parse(base_ref).await? else {
            return Err(self.fail(
                GitErrorKind::RefNotFound,
                format!("there is no commit '{base_ref}' in {}", self.dir.display()),
                None,
            ));
        };
        let added = self.add_all().await?;
        let merge_base = self.run(Access::Read, &args(["merge-base", "HEAD", &base]), None).await?;
        if !merge_base.out.success() {
            let out = added.then(merge_base.out);
            return Err(self.fail(
                GitErrorKind::Failed,
                format!("HEAD and '{base_ref}' have no commit in common"),
                Some(out),
            ));
        }
        let merge_base_sha = String::from_utf8_lossy(&merge_base.stdout).trim().to_string();
        let diff = self
            .run(
                Access::Read,
                &args(["diff", "--cached", "--name-status", "--no-renames", "-z", &merge_base_sha]),
                None,
            )
            .await?;
        let out = added.then(merge_base.out).then(diff.out.clone());
        if !diff.out.success() {
            return Err(self.fail(GitErrorKind::Failed, format!("git diff failed: {}", summary(&diff.out)), Some(out)));
        }
        let mut fields = diff.stdout.split(|&b| b == 0).filter(|f| !f.is_empty());
        let mut paths = Vec::new();
        while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
            paths.push((String::from_utf8_lossy(status).into_owned(), String::from_utf8_lossy(path).into_owned()));
        }
        Ok((paths, out))
    }

    // -----------------------------------------------------------------------------------
    // Worktrees

    /// A new worktree at `path` with `new_branch` checked out at `start_ref` (reset to it
    /// if the branch exists, as a second delivery needs). No upstream is set: every push
    /// here names its target.
    pub async fn worktree_add(&self, path: &Path, start_ref: &str, new_branch: &str) -> GitResult<GitOutput> {
        check_ref_name(new_branch).map_err(|m| self.invalid(format!("the branch name: {m}")))?;
        check_rev(start_ref).map_err(|m| self.invalid(m))?;
        let path = self.absolute(path);
        if path.symlink_metadata().is_ok() {
            return Err(self.invalid(format!(
                "{} already exists: remove it first (worktree_remove also cleans one left behind by a crash)",
                path.display()
            )));
        }
        if self.rev_parse(start_ref).await?.is_none() {
            return Err(self.fail(
                GitErrorKind::RefNotFound,
                format!("there is no commit '{start_ref}' in {} (is the base branch fetched?)", self.dir.display()),
                None,
            ));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                self.fail(GitErrorKind::Failed, format!("cannot create {}: {e}", parent.display()), None)
            })?;
        }
        let mut a = args(["worktree", "add", "--no-track", "-B", new_branch, "--"]);
        a.push(path.clone().into_os_string());
        a.push(start_ref.into());
        let ran = self.run(Access::Write, &a, None).await?;
        if !ran.out.success() {
            let message = format!("git could not create the worktree at {}: {}", path.display(), summary(&ran.out));
            return Err(self.fail(GitErrorKind::Failed, message, Some(ran.out)));
        }
        Ok(ran.out)
    }

    /// Removes the worktree at `path`, whatever state a crash left it in: known to git and
    /// present (removed with `--force`, uncommitted changes and all); known but its
    /// directory gone (pruned); a directory git no longer knows (deleted, when it is
    /// plainly one of this repository's: its `.git` file names this repository's
    /// worktrees, or it has no `.git` and lies inside the repository, like
    /// `.kiln/worktrees/<session>`). Anything else is refused with `NotAWorktree`, never
    /// deleted. Ends with `git worktree prune`. Removing nothing is not an error.
    pub async fn worktree_remove(&self, path: &Path) -> GitResult<GitOutput> {
        let path = self.absolute(path);
        let target = normalize(&path);
        let toplevel = self.repo_path("--show-toplevel").await?;
        if toplevel.starts_with(&target) {
            return Err(self.fail(
                GitErrorKind::NotAWorktree,
                format!("refusing to remove {}: it holds the repository itself", path.display()),
                None,
            ));
        }
        // The listing is how Kiln decides, not a step worth showing: it is left out.
        let (known, _) = self.worktree_known(&target).await?;
        let exists = path.symlink_metadata().is_ok();
        let mut note = String::new();

        let out = if known && exists {
            let mut a = args(["worktree", "remove", "--force", "--force", "--"]);
            a.push(path.clone().into_os_string());
            let ran = self.run(Access::Write, &a, None).await?;
            let removed = ran.out.success();
            let out = ran.out;
            if !removed && path.symlink_metadata().is_ok() {
                // A worktree too damaged for git to remove: fall back to what a stray
                // directory gets, with the same checks.
                self.remove_stray(&path, &toplevel).await.map_err(|e| GitError { output: Some(out.clone()), ..e })?;
                note = format!("git could not remove {}; removed its directory\n", path.display());
            }
            Some(out)
        } else if exists {
            self.remove_stray(&path, &toplevel).await?;
            note = format!("removed {}, a worktree directory git no longer knew\n", path.display());
            None
        } else {
            None
        };

        let prune = self.run(Access::Write, &args(["worktree", "prune"]), None).await?;
        let mut out = match out {
            Some(removed) => removed.then(prune.out),
            None => prune.out,
        };
        out.output.insert_str(0, &self.redactor.redact(&note));
        if !out.success() {
            let message = format!("git worktree prune failed: {}", summary(&out));
            return Err(self.fail(GitErrorKind::Failed, message, Some(out)));
        }
        let (still_known, _) = self.worktree_known(&target).await?;
        if still_known || path.symlink_metadata().is_ok() {
            return Err(self.fail(
                GitErrorKind::Failed,
                format!("the worktree at {} could not be removed", path.display()),
                Some(out),
            ));
        }
        Ok(out)
    }

    /// Whether git lists `target` (normalized) as a worktree other than the main one.
    async fn worktree_known(&self, target: &Path) -> GitResult<(bool, GitOutput)> {
        let ran = self.run(Access::Read, &args(["worktree", "list", "--porcelain", "-z"]), None).await?;
        if !ran.out.success() {
            let message = format!("git worktree list failed: {}", summary(&ran.out));
            return Err(self.fail(GitErrorKind::Failed, message, Some(ran.out)));
        }
        let known = String::from_utf8_lossy(&ran.stdout)
            .split('\0')
            .filter_map(|field| field.strip_prefix("worktree "))
            .skip(1) // the main worktree
            .any(|listed| normalize(Path::new(listed)) == target);
        Ok((known, ran.out))
    }

    /// An absolute path from `git rev-parse <flag>`.
    async fn repo_path(&self, flag: &str) -> GitResult<PathBuf> {
        let ran = self.run(Access::Read, &args(["rev-parse", "--path-format=absolute", flag]), None).await?;
        if !ran.out.success() {
            let message = format!("{} is not a git repository: {}", self.dir.display(), summary(&ran.out));
            return Err(self.fail(GitErrorKind::Failed, message, Some(ran.out)));
        }
        Ok(normalize(Path::new(String::from_utf8_lossy(&ran.stdout).trim())))
    }

    /// Deletes a worktree directory git does not know, if it is plainly this repository's.
    async fn remove_stray(&self, path: &Path, toplevel: &Path) -> GitResult<()> {
        let refuse = |why: String| {
            self.fail(GitErrorKind::NotAWorktree, format!("not removing {}: {why}", path.display()), None)
        };
        let meta = path.symlink_metadata().map_err(|e| refuse(e.to_string()))?;
        let removal = if meta.file_type().is_symlink() {
            // A link where the worktree was: remove the link, never what it points to.
            std::fs::remove_file(path)
        } else if !meta.is_dir() {
            return Err(refuse("it is not a directory".into()));
        } else {
            let dot_git = path.join(".git");
            match dot_git.symlink_metadata() {
                Ok(m) if m.is_file() => {
                    let worktrees = self.repo_path("--git-common-dir").await?.join("worktrees");
                    let named =
                        read_gitdir(&dot_git, path).ok_or_else(|| refuse("its .git file cannot be read".into()))?;
                    if !(named.starts_with(&worktrees) || normalize(&named).starts_with(&worktrees)) {
                        return Err(refuse(format!("its .git file names another repository ({})", named.display())));
                    }
                }
                Ok(_) => return Err(refuse("it has a .git of its own: it is a repository, not a worktree".into())),
                Err(_) => {
                    let target = normalize(path);
                    if !(target.starts_with(toplevel) && target != toplevel) {
                        return Err(refuse(
                            "it lies outside the repository and no .git file names this repository".into(),
                        ));
                    }
                }
            }
            // remove_dir_all removes links inside the tree, never what they point to.
            std::fs::remove_dir_all(path)
        };
        removal.map_err(|e| self.fail(GitErrorKind::Failed, format!("could not remove {}: {e}", path.display()), None))
    }

    // -----------------------------------------------------------------------------------
    // Changing

    /// `git add -A`: every change in the worktree, untracked files included, staged.
    pub async fn add_all(&self) -> GitResult<GitOutput> {
        let ran = self.run(Access::Write, &args(["add", "-A"]), None).await?;
        if !ran.out.success() {
            let message = format!("git add failed: {}", summary(&ran.out));
            return Err(self.fail(GitErrorKind::Failed, message, Some(ran.out)));
        }
        Ok(ran.out)
    }

    /// Commits what is staged with `message` (kept as written: lines starting with `#`
    /// stay) and returns the new commit's SHA. `author` is `(name, email)`; without it
    /// git's configured identity is used, and where git has none, Kiln's.
    pub async fn commit(&self, message: &str, author: Option<(&str, &str)>) -> GitResult<(String, GitOutput)> {
        if let Some((name, email)) = author {
            for part in [name, email] {
                if part.trim().is_empty() || part.chars().any(|c| c.is_control() || c == '<' || c == '>') {
                    return Err(self.invalid(format!("the author '{name} <{email}>' is not a valid identity")));
                }
            }
        }
        if message.trim().is_empty() {
            return Err(self.invalid("a commit needs a message".into()));
        }
        // Exit codes, not wording: 0 means nothing staged, 1 means something is.
        let staged = self.run(Access::Read, &args(["diff", "--cached", "--quiet"]), None).await?;
        match staged.out.status {
            Some(0) => {
                return Err(self.fail(
                    GitErrorKind::NothingToCommit,
                    "there is nothing staged to commit".into(),
                    Some(staged.out),
                ))
            }
            Some(1) => {}
            _ => {
                let message = format!("git could not compare the index: {}", summary(&staged.out));
                return Err(self.fail(GitErrorKind::Failed, message, Some(staged.out)));
            }
        }
        let mut a: Vec<OsString> = Vec::new();
        for (key, default) in [("user.name", DEFAULT_NAME), ("user.email", DEFAULT_EMAIL)] {
            if !self.has_config(key).await? {
                a.extend(["-c".into(), format!("{key}={default}").into()]);
            }
        }
        a.extend(args(["commit", "--cleanup=whitespace", "-F", "-"]));
        if let Some((name, email)) = author {
            a.push(format!("--author={name} <{email}>").into());
        }
        let ran = self.run(Access::Write, &a, Some(message.as_bytes().to_vec())).await?;
        if !ran.out.success() {
            let message = format!("git could not commit: {}", summary(&ran.out));
            return Err(self.fail(GitErrorKind::Failed, message, Some(ran.out)));
        }
        let sha = self
            .rev_parse("HEAD")
            .await?
            .ok_or_else(|| self.fail(GitErrorKind::Failed, "the new commit cannot be read back".into(), None))?;
        Ok((sha, ran.out))
    }

    /// Whether git has a non-empty value for `key` (any level: repository, user, system).
    async fn has_config(&self, key: &str) -> GitResult<bool> {
        let ran = self.run(Access::Read, &args(["config", "--get", key]), None).await?;
        Ok(ran.out.success() && !String::from_utf8_lossy(&ran.stdout).trim().is_empty())
    }

    /// Pushes `local_branch` to `remote_branch` on `remote`, replacing it only if it is
    /// still at `expected_remote_sha` (`None`: only if it does not exist). The check and
    /// the update are one step on the remote (`--force-with-lease` with an explicit
    /// expectation), so a branch someone else moved is never overwritten: the push is
    /// refused with `RemoteMoved` and the remote keeps what it had. Pushing exactly what
    /// the remote already has succeeds without changing anything.
    pub async fn push(
        &self,
        remote: &str,
        local_branch: &str,
        remote_branch: &str,
        expected_remote_sha: Option<&str>,
    ) -> GitResult<GitOutput> {
        check_remote(remote).map_err(|m| self.invalid(m))?;
        check_ref_name(local_branch).map_err(|m| self.invalid(format!("the branch name: {m}")))?;
        check_ref_name(remote_branch).map_err(|m| self.invalid(format!("the remote branch name: {m}")))?;
        if let Some(sha) = expected_remote_sha {
            check_sha(sha).map_err(|m| self.invalid(m))?;
        }
        let destination = format!("refs/heads/{remote_branch}");
        let lease = format!("--force-with-lease={destination}:{}", expected_remote_sha.unwrap_or(""));
        let refspec = format!("refs/heads/{local_branch}:{destination}");
        let ran =
            self.run(Access::Remote, &args(["push", "--porcelain", &lease, "--", remote, &refspec]), None).await?;
        if ran.out.success() {
            return Ok(ran.out);
        }
        Err(self.push_failure(remote, remote_branch, expected_remote_sha, ran).await)
    }

    /// Deletes `branch` on `remote` only if it is still at `expected_sha` (a lease, as for
    /// a push): a branch someone else moved since is left alone, with `RemoteMoved`.
    pub async fn delete_remote_branch(&self, remote: &str, branch: &str, expected_sha: &str) -> GitResult<GitOutput> {
        check_remote(remote).map_err(|m| self.invalid(m))?;
        check_ref_name(branch).map_err(|m| self.invalid(format!("the branch name: {m}")))?;
        check_sha(expected_sha).map_err(|m| self.invalid(m))?;
        let destination = format!("refs/heads/{branch}");
        let lease = format!("--force-with-lease={destination}:{expected_sha}");
        let refspec = format!(":{destination}");
        let ran =
            self.run(Access::Remote, &args(["push", "--porcelain", &lease, "--", remote, &refspec]), None).await?;
        if ran.out.success() {
            return Ok(ran.out);
        }
        Err(self.push_failure(remote, branch, Some(expected_sha), ran).await)
    }

    /// Why a push (or remote delete) failed.
    async fn push_failure(&self, remote: &str, branch: &str, expected: Option<&str>, ran: Ran) -> GitError {
        // `--porcelain` marks each refused ref with `!`; these lines are not translated.
        let stdout = String::from_utf8_lossy(&ran.stdout).into_owned();
        let refused: Vec<&str> = stdout.lines().filter(|l| l.starts_with('!')).collect();
        if refused.is_empty() {
            return self.network_error(format!("cannot push to '{remote}'"), ran.out);
        }
        let stale = refused.iter().any(|l| l.contains("(stale info)"));
        // Where the branch really is now, for the message (and to tell a move from a hook).
        let actual = self.remote_branch_sha(remote, branch).await.ok().map(|(sha, _)| sha);
        let moved = stale || matches!(&actual, Some(now) if now.as_deref() != expected);
        if moved {
            let found = match &actual {
                Some(Some(sha)) => format!("it is at {}", short(sha)),
                Some(None) => "it does not exist".into(),
                None => "it has moved".into(),
            };
            let wanted = expected.map(|s| format!("at {}", short(s))).unwrap_or_else(|| "not to exist".into());
            return self.fail(
                GitErrorKind::RemoteMoved,
                format!(
                    "the branch '{branch}' on '{remote}' changed since Kiln last saw it (expected {wanted}; {found}): nothing was pushed, so that work is kept"
                ),
                Some(ran.out),
            );
        }
        let reason = refused.iter().map(|l| l.rsplit('\t').next().unwrap_or(l).trim()).collect::<Vec<_>>().join("; ");
        let message = format!("the remote '{remote}' refused the push to '{branch}': {reason} ({})", summary(&ran.out));
        self.fail(GitErrorKind::PushRejected, message, Some(ran.out))
    }

    /// Deletes the local branch `branch`, merged or not.
    pub async fn delete_local_branch(&self, branch: &str) -> GitResult<GitOutput> {
        check_ref_name(branch).map_err(|m| self.invalid(format!("the branch name: {m}")))?;
        let ran = self.run(Access::Write, &args(["branch", "-D", "--", branch]), None).await?;
        if ran.out.success() {
            return Ok(ran.out);
        }
        let exists = self.rev_parse(&format!("refs/heads/{branch}")).await?.is_some();
        let (kind, message) = if exists {
            (GitErrorKind::Failed, format!("git could not delete the branch '{branch}': {}", summary(&ran.out)))
        } else {
            (GitErrorKind::RefNotFound, format!("there is no local branch '{branch}'"))
        };
        Err(self.fail(kind, message, Some(ran.out)))
    }

    /// A failure to reach or read a remote: credentials refused or missing, or anything else.
    fn network_error(&self, what: String, out: GitOutput) -> GitError {
        let text = out.output.to_ascii_lowercase();
        // Only the kind depends on these (English) phrases; the message always quotes git.
        let auth = [
            "authentication failed",
            "could not read username",
            "could not read password",
            "terminal prompts disabled",
            "permission denied (publickey",
            "returned error: 401",
            "returned error: 403",
            "invalid username or password",
        ];
        let kind = if auth.iter().any(|p| text.contains(p)) {
            GitErrorKind::AuthenticationFailed
        } else {
            GitErrorKind::RemoteUnreachable
        };
        let message = format!("{what}: {}", summary(&out));
        self.fail(kind, message, Some(out))
    }
}

async fn pump(
    stream: Option<impl AsyncRead + Unpin>,
    capture: Arc<Mutex<Capture>>,
    whole: Option<Arc<Mutex<Vec<u8>>>>,
) {
    let Some(mut stream) = stream else { return };
    let mut buf = [0u8; 8192];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        capture.lock().unwrap().push(&buf[..n]);
        if let Some(whole) = &whole {
            whole.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    }
}

/// Kills a running git's session when dropped while armed.
struct GroupGuard {
    pgid: i32,
    armed: bool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            kill_group(self.pgid);
        }
    }
}

fn kill_group(pgid: i32) {
    // A pgid of 0 or 1 would signal Kiln's own group or everything: never.
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid signals the session/group git leads.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

fn args<const N: usize>(list: [&str; N]) -> Vec<OsString> {
    list.iter().map(OsString::from).collect()
}

/// The last lines of git's output that say what went wrong, for a one-line message.
fn summary(out: &GitOutput) -> String {
    let lines: Vec<&str> = out.output.lines().map(str::trim).filter(|l| !l.is_empty() && *l != "Done").collect();
    let telling: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("fatal:") || l.starts_with("error:") || l.starts_with("remote:"))
        .collect();
    let chosen = if telling.is_empty() {
        lines.iter().rev().take(1).copied().collect::<Vec<_>>()
    } else {
        telling.into_iter().rev().take(3).rev().collect()
    };
    if chosen.is_empty() {
        format!("git exited with {}", out.status.map(|c| c.to_string()).unwrap_or_else(|| "a signal".into()))
    } else {
        chosen.join(" / ")
    }
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty() && arg.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,^{}".contains(&b));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// `path` with links resolved as far as it exists (its parent, when it does not), so two
/// spellings of one place compare equal.
fn normalize(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    let lexical: PathBuf = path.components().filter(|c| !matches!(c, Component::CurDir)).collect();
    match (lexical.parent(), lexical.file_name()) {
        (Some(parent), Some(name)) => parent.canonicalize().map(|p| p.join(name)).unwrap_or(lexical),
        _ => lexical,
    }
}

/// The directory a worktree's `.git` file names (`gitdir: <path>`), absolute.
fn read_gitdir(dot_git: &Path, worktree: &Path) -> Option<PathBuf> {
    let mut text = String::new();
    std::fs::File::open(dot_git).ok()?.take(4096).read_to_string(&mut text).ok()?;
    let named = Path::new(text.lines().next()?.strip_prefix("gitdir:")?.trim());
    Some(if named.is_absolute() { named.to_path_buf() } else { worktree.join(named) })
}

/// `scheme://host[:port]` of an http(s) URL, lower-cased; `None` for anything else.
fn http_origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?.to_ascii_lowercase();
    let valid = !host.is_empty() && host.bytes().all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b));
    valid.then(|| format!("{scheme}://{host}"))
}

// ---------------------------------------------------------------------------------------
// Input checks: every name reaches git as an argument, so none may look like an option,
// and branch names follow git's own rules (a subset, checked before anything runs).

fn check_ref_name(name: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("'{}' is not usable: {why}", name.escape_debug()));
    if name.is_empty() || name.len() > 200 {
        return bad("it must have 1 to 200 characters");
    }
    if name.starts_with('-') {
        return bad("it starts with '-'");
    }
    if name.chars().any(|c| c.is_control() || c.is_whitespace() || "~^:?*[\\".contains(c)) {
        return bad("it holds spaces, control characters or one of ~ ^ : ? * [ \\");
    }
    if name.contains("..")
        || name.contains("@{")
        || name == "@"
        || name.ends_with('.')
        || name.ends_with('/')
        || name.starts_with('/')
    {
        return bad("git does not allow it as a branch name");
    }
    if name.split('/').any(|part| part.is_empty() || part.starts_with('.') || part.ends_with(".lock")) {
        return bad("git does not allow it as a branch name");
    }
    Ok(())
}

/// A remote: a configured name, a URL or a path.
fn check_remote(remote: &str) -> Result<(), String> {
    if remote.is_empty() || remote.starts_with('-') || remote.chars().any(|c| c.is_control()) {
        return Err(format!("'{}' is not a usable remote", remote.escape_debug()));
    }
    Ok(())
}

/// A revision (`origin/main`, a SHA, `HEAD`).
fn check_rev(rev: &str) -> Result<(), String> {
    if rev.is_empty()
        || rev.len() > 300
        || rev.starts_with('-')
        || rev.chars().any(|c| c.is_control() || c.is_whitespace())
    {
        return Err(format!("'{}' is not a usable revision", rev.escape_debug()));
    }
    Ok(())
}

fn check_sha(sha: &str) -> Result<(), String> {
    if (sha.len() == 40 || sha.len() == 64) && sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(format!("'{}' is not a full commit SHA", sha.escape_debug()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helper_names_the_variable_not_a_value() {
        assert!(HELPER.contains(&format!("${{{TOKEN_ENV}}}")));
    }

    #[test]
    fn base64_fragments_cover_a_basic_header_for_any_user() {
        let r = Redactor::new().with("ghp_secretvalue123");
        for user in ["x-access-token", "a", "ab", "abc"] {
            let header = base64::engine::general_purpose::STANDARD.encode(format!("{user}:ghp_secretvalue123"));
            let shown = r.redact(&format!("Authorization: Basic {header}"));
            assert!(!shown.contains(&header), "{shown}");
            assert!(shown.contains(MASK), "{shown}");
        }
    }

    #[test]
    fn dangling_pieces_at_a_cut_are_masked() {
        let r = Redactor::new().with("tok_ABCDEFGHIJ");
        let shown = r.redact_capped("lots of text tok_ABCDE", "FGHIJ and more");
        assert!(!shown.contains("tok_ABCDE") && !shown.contains("FGHIJ"), "{shown}");
    }

    #[test]
    fn origins() {
        assert_eq!(http_origin("https://u:p@GitHub.com/org/repo.git").as_deref(), Some("https://github.com"));
        assert_eq!(http_origin("http://127.0.0.1:8080/x").as_deref(), Some("http://127.0.0.1:8080"));
        assert_eq!(http_origin("ssh://git@github.com/x"), None);
        assert_eq!(http_origin("https://evil.com=x/"), None);
    }

    #[test]
    fn ref_names() {
        for ok in ["main", "kiln/shop-1234abcd", "release-1.2"] {
            assert!(check_ref_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-f", "a..b", "a b", "a:b", "x.lock", "a//b", "/a", "a/", ".a", "a/.b", "@", "a@{1}", "a\nb"] {
            assert!(check_ref_name(bad).is_err(), "{bad:?}");
        }
    }
}
