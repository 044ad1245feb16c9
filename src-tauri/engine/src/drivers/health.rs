//! A local agent's health as far as it can be told without the network: its version,
//! from `<binary> --version` run as turns run it (without Kiln's own variables), cached
//! per binary (path, modified time, size) so Settings do not start node on each read;
//! and whether it is signed in, from the keys in the environment Kiln gives it and the
//! credentials file the CLI keeps. Where the CLI could be signed in some other way Kiln
//! cannot see (the macOS keychain, a cloud provider's credentials), it says `None`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use kiln_runtime::process;

/// How long `--version` may take: a cold node start on a loaded machine takes seconds.
const VERSION_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest version kept: it is shown on one line beside the driver.
const VERSION_CHARS: usize = 60;

type BinaryKey = (PathBuf, Option<SystemTime>, u64);

/// One cell per binary: callers at the same moment (the dashboard and the composer both
/// read Settings) wait for one run instead of each starting node.
type Cell = Arc<tokio::sync::OnceCell<Option<String>>>;

static VERSIONS: Mutex<Option<HashMap<BinaryKey, Cell>>> = Mutex::new(None);

fn binary_key(binary: &Path) -> Option<BinaryKey> {
    let meta = std::fs::metadata(binary).ok()?;
    Some((binary.to_path_buf(), meta.modified().ok(), meta.len()))
}

/// The first line of what `--version` printed, trimmed and cut to one short line.
pub fn first_line(out: &str) -> Option<String> {
    let line = out.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(line.chars().take(VERSION_CHARS).collect::<String>().trim_end().to_string())
}

/// The binary's version, or `None` when it would not say. A run that timed out is not
/// remembered (the machine may just have been busy); any other answer is, until the
/// binary changes.
pub async fn version(binary: &Path) -> Option<String> {
    let key = binary_key(binary)?;
    let cell = VERSIONS.lock().unwrap().get_or_insert_with(HashMap::new).entry(key).or_default().clone();
    // A timeout leaves the cell empty, so the next read asks again.
    cell.get_or_try_init(|| async { run_version(binary).await.ok_or(()) }).await.ok().cloned().flatten()
}

/// `Some(answer)` when the binary ran to its end (or could not start), `None` on a timeout.
async fn run_version(binary: &Path) -> Option<Option<String>> {
    // As a turn runs it: nothing but the answer, no telemetry, no self-update.
    let env: Vec<(String, String)> =
        [("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"), ("DISABLE_TELEMETRY", "1"), ("DISABLE_AUTOUPDATER", "1")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    let cmd = process::Command::new(binary, &std::env::temp_dir(), process::Env::Operator(&env))
        .arg("--version")
        .without_stderr();
    let Ok(mut child) = cmd.spawn(None) else { return Some(None) };
    match process::collect(&mut child, VERSION_TIMEOUT, true).await {
        Ok(out) if out.timed_out => {
            tracing::warn!("`{} --version` gave no answer within {}s", binary.display(), VERSION_TIMEOUT.as_secs());
            None
        }
        Ok(out) if out.status.is_some_and(|s| s.success()) => Some(first_line(&String::from_utf8_lossy(&out.stdout))),
        _ => Some(None),
    }
}

/// A variable the CLI will see, set and not empty.
fn set(env: &dyn Fn(&str) -> Option<String>, key: &str) -> bool {
    env(key).is_some_and(|v| !v.trim().is_empty())
}

/// Whether Claude Code is signed in: an API key or token in its environment, or the
/// credentials file its login writes (`$CLAUDE_CONFIG_DIR` or `~/.claude`). On macOS the
/// login lives in the keychain, so there no file says nothing.
pub fn claude_signed_in(env: &dyn Fn(&str) -> Option<String>, home: Option<&Path>) -> Option<bool> {
    if set(env, "ANTHROPIC_API_KEY") || set(env, "ANTHROPIC_AUTH_TOKEN") {
        return Some(true);
    }
    // Bedrock and Vertex sign in with the cloud's own credentials.
    if set(env, "CLAUDE_CODE_USE_BEDROCK") || set(env, "CLAUDE_CODE_USE_VERTEX") {
        return None;
    }
    let dir = env("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".claude")));
    if dir.is_some_and(|d| d.join(".credentials.json").is_file()) {
        return Some(true);
    }
    if cfg!(target_os = "macos") {
        None
    } else {
        Some(false)
    }
}

/// Whether Codex is signed in: an API key in its environment, or the `auth.json` that
/// `codex login` writes (`$CODEX_HOME`, by default `~/.codex`).
pub fn codex_signed_in(env: &dyn Fn(&str) -> Option<String>, home: Option<&Path>) -> Option<bool> {
    if set(env, "OPENAI_API_KEY") || set(env, "CODEX_API_KEY") {
        return Some(true);
    }
    let dir = env("CODEX_HOME").filter(|d| !d.is_empty()).map(PathBuf::from).or_else(|| home.map(|h| h.join(".codex")));
    Some(dir.is_some_and(|d| d.join("auth.json").is_file()))
}

/// The environment Kiln gives a CLI: its own, without Kiln's variables.
pub fn cli_env(key: &str) -> Option<String> {
    process::operator_var(key)
}

/// Whether the local CLI `name` is signed in, told from Kiln's environment and home.
pub(crate) fn signed_in(name: &str) -> Option<bool> {
    let home = super::runner::home(&[]);
    match name {
        "claude" => claude_signed_in(&cli_env, home.as_deref()),
        "codex" => codex_signed_in(&cli_env, home.as_deref()),
        _ => None,
    }
}
