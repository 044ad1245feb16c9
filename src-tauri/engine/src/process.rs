//! Commands Kiln runs for a session (setup, gates, the tool loop's `run_command`,
//! delivery hooks): `sh -c` in the session's working copy, in their own process group so
//! a stop or a timeout kills everything they started, with their combined output kept as
//! head and tail. They run on code the agent may have written, so they run scoped
//! (`run_scoped`): a cleared environment, a session home, Landlock (`crate::sandbox`).

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::sync::Mutex;

/// Bytes of output kept from the start and from the end of a long run.
pub const HEAD_BYTES: usize = 16 * 1024;
pub const TAIL_BYTES: usize = 16 * 1024;

#[derive(Debug, Clone)]
pub struct Outcome {
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub killed: bool,
    pub duration: Duration,
    pub head: String,
    /// Empty when the whole output fit in `head`.
    pub tail: String,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out && !self.killed
    }
}

/// Output kept while a command runs: the first `HEAD_BYTES`, and a rolling tail.
/// Crate-visible so `delivery::git` keeps its git output the same way.
#[derive(Default)]
pub(crate) struct Capture {
    pub(crate) head: Vec<u8>,
    pub(crate) tail: std::collections::VecDeque<u8>,
    pub(crate) overflowed: bool,
}

impl Capture {
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.head.len() < HEAD_BYTES {
                self.head.push(b);
            } else {
                self.overflowed = true;
                if self.tail.len() == TAIL_BYTES {
                    self.tail.pop_front();
                }
                self.tail.push_back(b);
            }
        }
    }
}

/// A started command: its process group id, to stop it from elsewhere.
pub struct Running {
    pub pgid: i32,
}

impl Running {
    /// Kills the whole process group.
    pub fn kill(&self) {
        // A pgid of 0 (not started yet) would signal Kiln's own group: never.
        if self.pgid <= 0 {
            return;
        }
        // SAFETY: kill(2) with a negative pid signals the group we created.
        unsafe {
            libc::kill(-self.pgid, libc::SIGKILL);
        }
    }
}

/// Runs `command` with `sh -c` in `dir`, with Kiln's environment plus `env`; `on_start`
/// receives the group to allow a stop. Only for tests of the runner itself: a session's
/// commands run scoped.
#[cfg(test)]
async fn run(
    command: &str,
    dir: &Path,
    env: &[(String, String)],
    timeout: Duration,
    on_start: impl FnOnce(Running),
) -> std::io::Result<Outcome> {
    run_with(command, dir, Environment::Inherit(env), timeout, None, on_start).await
}

/// What a command's environment holds.
enum Environment<'a> {
    /// Kiln's own environment plus these.
    Inherit(&'a [(String, String)]),
    /// Only these (a scope's allowlisted environment).
    Only(&'a [(String, String)]),
}

/// Runs `command` in `dir` within `scope`: only its environment, confined to its
/// writable paths (a command of a session, on code the agent may have written: setup,
/// gates, `run_command`, delivery hooks). The ruleset is made before the command
/// starts; when it cannot be made the command does not run.
pub async fn run_scoped(
    command: &str,
    dir: &Path,
    scope: &crate::sandbox::Scope,
    timeout: Duration,
    on_start: impl FnOnce(Running),
) -> std::io::Result<Outcome> {
    let prepared = scope.confinement().prepare()?;
    run_with(command, dir, Environment::Only(scope.env()), timeout, Some(&prepared), on_start).await
}

/// Like `run`, confined by `confinement` as an agent CLI is (`drivers::runner`): Kiln's
/// environment plus `env`. The tests of the CLIs' confinement run shell commands
/// through it; a session's own commands run scoped instead.
pub async fn run_confined(
    command: &str,
    dir: &Path,
    env: &[(String, String)],
    timeout: Duration,
    confinement: &crate::sandbox::Confinement,
    on_start: impl FnOnce(Running),
) -> std::io::Result<Outcome> {
    let prepared = confinement.prepare()?;
    run_with(command, dir, Environment::Inherit(env), timeout, Some(&prepared), on_start).await
}

async fn run_with(
    command: &str,
    dir: &Path,
    env: Environment<'_>,
    timeout: Duration,
    confinement: Option<&crate::sandbox::Prepared>,
    on_start: impl FnOnce(Running),
) -> std::io::Result<Outcome> {
    let started = Instant::now();
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(command).current_dir(dir).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let vars = match env {
        Environment::Inherit(vars) => vars,
        Environment::Only(vars) => {
            cmd.env_clear();
            vars
        }
    };
    cmd.envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    cmd.process_group(0).kill_on_drop(true);
    let mut child = match confinement {
        Some(prepared) => prepared.spawn(&mut cmd)?,
        None => cmd.spawn()?,
    };
    let pgid = child.id().map(|p| p as i32).unwrap_or(0);
    on_start(Running { pgid });

    let capture = Arc::new(Mutex::new(Capture::default()));
    let out = tokio::spawn(pump(child.stdout.take(), capture.clone()));
    let err = tokio::spawn(pump(child.stderr.take(), capture.clone()));
    let (status, timed_out) = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => (Some(status?), false),
        Err(_) => {
            Running { pgid }.kill();
            (child.wait().await.ok(), true)
        }
    };
    // A grandchild may hold the pipes open; never wait on it for more than a moment.
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        let _ = out.await;
        let _ = err.await;
    })
    .await;
    // Whatever the command left behind in its group goes with it.
    Running { pgid }.kill();

    use std::os::unix::process::ExitStatusExt;
    let killed = status.map(|s| s.signal().is_some()).unwrap_or(true);
    let capture = capture.lock().await;
    Ok(Outcome {
        exit_code: status.and_then(|s| s.code()),
        timed_out,
        killed: killed && !timed_out,
        duration: started.elapsed(),
        head: String::from_utf8_lossy(&capture.head).into_owned(),
        tail: if capture.overflowed {
            String::from_utf8_lossy(capture.tail.iter().copied().collect::<Vec<_>>().as_slice()).into_owned()
        } else {
            String::new()
        },
    })
}

async fn pump(stream: Option<impl AsyncRead + Unpin>, capture: Arc<Mutex<Capture>>) {
    let Some(mut stream) = stream else { return };
    let mut buf = [0u8; 8192];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        capture.lock().await.push(&buf[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_head_and_tail_of_long_output() {
        let dir = tempfile::tempdir().unwrap();
        let out =
            run("yes kiln | head -c 100000; echo END", dir.path(), &[], Duration::from_secs(20), |_| {}).await.unwrap();
        assert!(out.passed());
        assert_eq!(out.head.len(), HEAD_BYTES);
        assert!(out.tail.ends_with("END\n"), "{:?}", &out.tail[out.tail.len() - 10..]);
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("survived");
        let cmd = format!("(sleep 3; touch {}) & sleep 30", marker.display());
        let out = run(&cmd, dir.path(), &[], Duration::from_millis(300), |_| {}).await.unwrap();
        assert!(out.timed_out && !out.passed());
        tokio::time::sleep(Duration::from_secs(4)).await;
        assert!(!marker.exists(), "a process of the group outlived the timeout");
    }
}
