//! `run_command`: a shell command in the working copy, through the same runner as setup
//! and gates (`sh -c`, stdin closed, its own process group, head and tail of the output
//! kept). A timeout kills the whole group, and so does a stopped turn: the runner's
//! child, dropped with the turn, takes its whole group with it. The command is the
//! model's: it runs scoped (`kiln_runtime::sandbox::Scope`), with a cleared environment and the
//! session's own home, able to write only to the working copy, its temporary directory
//! and the package caches. Its output is heard as it arrives (`watch`), so the chat shows
//! a long command's progress before it ends.

use std::path::Path;
use std::time::Duration;

use super::ToolOutcome;
use kiln_runtime::process;

pub(super) async fn run(
    workdir: &Path,
    session_dir: &Path,
    command: &str,
    timeout: Duration,
    environment: &kiln_runtime::sandbox::EnvironmentConfig,
    watch: Option<process::Watch>,
) -> ToolOutcome {
    let scope = match kiln_runtime::sandbox::Scope::new(session_dir, &[workdir], &[], &[], environment) {
        Ok(scope) => scope,
        Err(e) => return ToolOutcome::failed(format!("could not prepare the command's home: {e}")),
    };
    let outcome = process::run_scoped_watched(command, workdir, &scope, timeout, |_| {}, watch).await;
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(e) => return ToolOutcome::failed(format!("could not start the command: {e}")),
    };
    let mut answer = if outcome.timed_out {
        format!("timed out after {} s; the command and everything it started were killed\n", timeout.as_secs())
    } else {
        match outcome.exit_code {
            Some(code) => format!("exit code {code}\n"),
            None => "killed by a signal\n".to_string(),
        }
    };
    answer.push_str(&outcome.head);
    if !outcome.tail.is_empty() {
        answer.push_str(&format!(
            "\n[… output cut: the first {} KiB and the last {} KiB are shown …]\n",
            process::HEAD_BYTES / 1024,
            process::TAIL_BYTES / 1024
        ));
        answer.push_str(&outcome.tail);
    }
    if outcome.passed() {
        ToolOutcome::completed(answer)
    } else {
        ToolOutcome::failed(answer)
    }
}
