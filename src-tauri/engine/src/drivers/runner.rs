//! Running an agent CLI for one turn: spawned in the session's working copy with stdin
//! closed (Codex waits for EOF otherwise) and in its own process group (so Stop kills
//! everything it started), each stdout line parsed into driver events as it arrives.
//! A CLI that dies without a final line still ends its turn, with what it printed on
//! stderr as the reason. The CLI runs confined (`kiln_runtime::sandbox`): it and everything it
//! starts may write only to the working copy, temporary directories, its own state and
//! the package caches; when the ruleset cannot be made the turn does not start.

use std::path::{Path, PathBuf};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use super::events::DriverEvent;
use super::TurnSink;
use kiln_runtime::process::{Child, Command, Env, Running};
use kiln_types::error::{ApiError, Result};

/// Bytes of stderr kept to explain a failure.
const STDERR_KEPT: usize = 8 * 1024;

pub struct CliRun<'a> {
    pub binary: &'a Path,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub workdir: &'a Path,
    /// Where the CLI and its commands may write; `None` runs it unconfined.
    pub confinement: Option<kiln_runtime::sandbox::Confinement>,
}

/// An agent's CLI to run interactively, in a session's terminal (`crate::terminal`):
/// what a turn would run, less the turn's own flags.
pub struct Interactive {
    pub binary: PathBuf,
    pub args: Vec<String>,
    /// Set over the operator's environment, as for a turn.
    pub env: Vec<(String, String)>,
    pub confinement: kiln_runtime::sandbox::Confinement,
}

/// The home directory the CLI will see: `HOME` in its extra environment, else Kiln's.
pub(crate) fn home(env: &[(String, String)]) -> Option<PathBuf> {
    kiln_runtime::sandbox::home_of(env)
}

/// Starts the CLI as a turn does: the operator's environment without Kiln's variables
/// (`kiln_runtime::process::Env::Operator`), in the working copy, in its own process group,
/// confined when `cli.confinement` says so; `stdin` keeps its stdin open as a pipe (an
/// ACP agent is talked to). Its group is reported to `on_process` at once.
pub(crate) fn spawn(cli: &CliRun<'_>, stdin: bool, on_process: Box<dyn FnOnce(Running) + Send>) -> Result<Child> {
    let mut cmd = Command::new(cli.binary, cli.workdir, Env::Operator(&cli.env)).args(&cli.args);
    if stdin {
        cmd = cmd.piped_stdin();
    }
    let failed = |e: std::io::Error| {
        ApiError::new(
            kiln_types::error::ErrorCode::DriverFailed,
            format!("could not start `{}`: {e}", cli.binary.display()),
        )
    };
    let child = match &cli.confinement {
        Some(confinement) => {
            let prepared = confinement.prepare().map_err(failed)?;
            tracing::info!("{} runs with confinement: {}", cli.binary.display(), prepared.enforcement().as_str());
            cmd.spawn(Some(&prepared)).map_err(failed)?
        }
        None => cmd.spawn(None).map_err(failed)?,
    };
    on_process(child.group());
    Ok(child)
}

/// Keeps the last `STDERR_KEPT` bytes of what the CLI prints on stderr, to explain a
/// failure; the task ends with the stream.
pub(crate) fn keep_stderr(child: &mut Child) -> tokio::task::JoinHandle<String> {
    let stderr = child.inner.stderr.take();
    tokio::spawn(async move {
        let mut kept = Vec::new();
        if let Some(mut stderr) = stderr {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > STDERR_KEPT {
                    kept.drain(..kept.len() - STDERR_KEPT);
                }
            }
        }
        String::from_utf8_lossy(&kept).into_owned()
    })
}

/// What the stderr task kept, waiting for it a moment at most (a grandchild may hold the
/// pipe open).
pub(crate) async fn stderr_tail(task: tokio::task::JoinHandle<String>) -> String {
    tokio::time::timeout(std::time::Duration::from_secs(2), task).await.ok().and_then(|r| r.ok()).unwrap_or_default()
}

/// The turn's error when the agent exited without finishing it: its exit status and the
/// tail of its stderr, redacted (it may hold a key the agent was given or echoed).
pub(crate) fn died(status: &str, stderr: &str) -> String {
    let detail = stderr.trim();
    let error = if detail.is_empty() {
        format!("the agent exited ({status}) without finishing its turn")
    } else {
        format!("the agent exited ({status}) without finishing its turn: {detail}")
    };
    kiln_runtime::redact::redact_owned(error)
}

/// Runs the CLI to its end; `parse` turns one stdout line into events.
pub async fn run(cli: CliRun<'_>, sink: TurnSink, mut parse: impl FnMut(&str) -> Vec<DriverEvent>) -> Result<()> {
    let mut child = spawn(&cli, false, sink.on_process)?;
    let stderr_task = keep_stderr(&mut child);

    let mut ended = false;
    if let Some(stdout) = child.inner.stdout.take() {
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            for event in parse(&line) {
                ended |= matches!(event, DriverEvent::TurnEnded { .. });
                let _ = sink.events.send(event);
            }
        }
    }
    let status = child.wait().await.map_err(|e| ApiError::internal("waiting for the agent", e))?;
    let stderr = stderr_tail(stderr_task).await;
    // Whatever the agent left running in its group goes with it.
    child.kill();
    if !ended {
        let _ = sink.events.send(DriverEvent::TurnEnded {
            is_error: true,
            stop_reason: None,
            final_text: None,
            error: Some(died(&status.to_string(), &stderr)),
        });
    }
    Ok(())
}
