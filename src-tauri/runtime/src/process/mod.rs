//! The one process runner. Every program Kiln starts goes through here: a session's
//! commands (setup, gates, the tool loop's `run_command`, the preview, delivery hooks),
//! the agent CLIs, git and gh, a session's terminals (`pty`), and the two synchronous checks (toolchain versions during
//! detection, the store's `git prune`). Here, and nowhere else, a command gets its environment
//! (`env`), its own process group, its output kept as head and tail in bounded memory
//! (`capture`), its timeout, a reaper that outlives it to kill whatever it left behind
//! (`reaper`), and the kill of its whole group and what left it (`Running::kill`, `tree`).
//!
//! Session commands run `sh -c` in the session's working copy. They run on code the agent
//! may have written, so they run scoped (`run_scoped`): a cleared environment, a session
//! home, Landlock (`crate::sandbox`).

mod capture;
mod command;
mod env;
mod pty;
mod reaper;
mod tree;

use std::path::Path;
use std::time::{Duration, Instant};

pub use capture::{collect, collect_watched, Watch, HEAD_BYTES, TAIL_BYTES};
pub use command::{Child, Command};
pub use env::{allowlisted_env, operator_var, project_scope, Env, KEPT_VARIABLES};
pub use pty::{kill_session, spawn_pty, Pty, PtyMaster};
pub use reaper::supervision;

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

/// How many times a kill reads the stopped tree for strays it has not stopped yet.
const STOP_ROUNDS: usize = 32;

/// A started command: its process group id, to stop it from elsewhere.
#[derive(Debug)]
pub struct Running {
    pub pgid: i32,
}

impl Running {
    /// Kills the whole process group.
    pub fn kill(&self) {
        self.signal(libc::SIGKILL);
    }

    /// Waits until no member of the group runs any more (each has exited or is a zombie
    /// awaiting its reaper), at most `within`: a killed command can still finish a write it
    /// was in the middle of. `false` when something of it still ran at the end.
    pub async fn gone(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            if self.pgid <= 1 || tree::running_in_group(self.pgid) == 0 {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Asks the group to exit (SIGTERM), for a server that should get to clean up.
    pub fn terminate(&self) {
        self.signal(libc::SIGTERM);
    }

    fn signal(&self, signal: libc::c_int) {
        // A pgid of 0 (not started yet) would signal Kiln's own group, 1 everything: never.
        if self.pgid <= 1 {
            return;
        }
        if signal != libc::SIGKILL {
            // Read before the group goes: a stray's parent link to it ends with its parent.
            let strays = tree::strays_of_group(self.pgid);
            // SAFETY: kill(2) with a negative pid signals the group we created.
            unsafe {
                libc::kill(-self.pgid, signal);
            }
            tree::signal_each(&strays, signal);
            return;
        }
        // A kill stops the whole tree first, so nothing in it forks or leaves while it is
        // read: the group (with the command's reaper, to which every orphan goes), then
        // the strays found below it, until no new one turns up; then kills them all.
        // SAFETY: kill(2) with a negative pid signals the group we created.
        unsafe {
            libc::kill(-self.pgid, libc::SIGSTOP);
        }
        let mut strays: Vec<i32> = Vec::new();
        for _ in 0..STOP_ROUNDS {
            let found: Vec<i32> =
                tree::strays_of_group(self.pgid).into_iter().filter(|pid| !strays.contains(pid)).collect();
            if found.is_empty() {
                break;
            }
            tree::signal_each(&found, libc::SIGSTOP);
            strays.extend(found);
        }
        // SAFETY: as above.
        unsafe {
            libc::kill(-self.pgid, libc::SIGKILL);
        }
        tree::signal_each(&strays, libc::SIGKILL);
    }
}

/// Runs `command` with `sh -c` in `dir`, with the operator's environment plus `env`;
/// `on_start` receives the group to allow a stop. Only for tests of the runner itself: a
/// session's commands run scoped.
#[cfg(test)]
async fn run(
    command: &str,
    dir: &Path,
    env: &[(String, String)],
    timeout: Duration,
    on_start: impl FnOnce(Running),
) -> std::io::Result<Outcome> {
    run_with(command, dir, Env::Operator(env), timeout, None, on_start, None).await
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
    run_scoped_watched(command, dir, scope, timeout, on_start, None).await
}

/// `run_scoped`, with `watch` hearing the output as it arrives (the tool loop's
/// `run_command`, whose output streams into its row in the chat).
pub async fn run_scoped_watched(
    command: &str,
    dir: &Path,
    scope: &crate::sandbox::Scope,
    timeout: Duration,
    on_start: impl FnOnce(Running),
    watch: Option<Watch>,
) -> std::io::Result<Outcome> {
    let prepared = scope.confinement().prepare()?;
    run_with(command, dir, Env::Only(scope.env()), timeout, Some(&prepared), on_start, watch).await
}

/// Like `run_scoped`, confined by `confinement` as an agent CLI is (`drivers::runner`):
/// the operator's environment plus `env`. The tests of the CLIs' confinement run shell
/// commands through it; a session's own commands run scoped instead.
#[cfg(any(test, feature = "test-support"))]
pub async fn run_confined(
    command: &str,
    dir: &Path,
    env: &[(String, String)],
    timeout: Duration,
    confinement: &crate::sandbox::Confinement,
    on_start: impl FnOnce(Running),
) -> std::io::Result<Outcome> {
    let prepared = confinement.prepare()?;
    run_with(command, dir, Env::Operator(env), timeout, Some(&prepared), on_start, None).await
}

async fn run_with(
    command: &str,
    dir: &Path,
    env: Env<'_>,
    timeout: Duration,
    confinement: Option<&crate::sandbox::Prepared>,
    on_start: impl FnOnce(Running),
    watch: Option<Watch>,
) -> std::io::Result<Outcome> {
    let started = Instant::now();
    let mut child = Command::shell(command, dir, env).spawn(confinement)?;
    on_start(child.group());
    let captured = collect_watched(&mut child, timeout, false, watch).await?;
    // Whatever the command left behind in its group goes with it.
    child.kill();

    use std::os::unix::process::ExitStatusExt;
    let killed = captured.status.map(|s| s.signal().is_some()).unwrap_or(true);
    Ok(Outcome {
        exit_code: captured.status.and_then(|s| s.code()),
        timed_out: captured.timed_out,
        killed: killed && !captured.timed_out,
        duration: started.elapsed(),
        head: String::from_utf8_lossy(&captured.head).into_owned(),
        tail: String::from_utf8_lossy(&captured.tail).into_owned(),
    })
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

    /// The pid a command wrote to `file`, once it is there.
    fn pid_in(file: &Path) -> i32 {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        text.trim().parse().unwrap_or_else(|_| panic!("not a pid: {text:?}"))
    }

    /// Whether `pid` still runs (a zombie has ended).
    fn alive(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| !stat.contains(") Z "))
    }

    /// A daemon the way the review's test made one: `setsid` and a double fork, so it is
    /// nobody's descendant once its parent exits. The command ending is its end too: Kiln
    /// waits for the command's reaper, which waits until everything it adopted is gone.
    #[tokio::test]
    async fn a_double_forked_daemon_ends_with_its_command() {
        let dir = tempfile::tempdir().unwrap();
        let pid = dir.path().join("daemon.pid");
        let cmd =
            format!("setsid sh -c 'sleep 300 </dev/null >/dev/null 2>&1 & echo $! > {}' ; echo started", pid.display());
        let out = run(&cmd, dir.path(), &[], Duration::from_secs(20), |_| {}).await.unwrap();
        assert!(out.passed() && out.head.contains("started"), "{out:?}");
        let daemon = pid_in(&pid);
        assert!(!alive(daemon), "the daemon {daemon} outlived its command");
    }

    /// The same daemon left by a command that is stopped (a gate's timeout, Stop): the
    /// kill reads the stopped tree below the reaper, where the daemon went.
    #[tokio::test]
    async fn a_double_forked_daemon_goes_with_a_killed_command() {
        let dir = tempfile::tempdir().unwrap();
        let pid = dir.path().join("daemon.pid");
        let cmd =
            format!("setsid sh -c 'sleep 300 </dev/null >/dev/null 2>&1 & echo $! > {}'; sleep 60", pid.display());
        let out = run(&cmd, dir.path(), &[], Duration::from_millis(1500), |_| {}).await.unwrap();
        assert!(out.timed_out, "{out:?}");
        let daemon = pid_in(&pid);
        let deadline = Instant::now() + Duration::from_secs(10);
        while alive(daemon) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(!alive(daemon), "the daemon {daemon} outlived its stopped command");
    }

    /// Kiln killed outright (`kill -9`, a crash): nothing can run its stop, and the
    /// command, its children and the daemon they left all go with it all the same. The
    /// "Kiln" here is this test binary run again as `kiln_stand_in`, killed with SIGKILL.
    #[test]
    fn a_command_and_all_it_started_end_when_kiln_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let mut kiln = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "process::tests::kiln_stand_in", "--ignored", "--nocapture"])
            .env("KILN_STAND_IN_DIR", dir.path())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let (command, daemon) = (dir.path().join("command.pid"), dir.path().join("daemon.pid"));
        let deadline = Instant::now() + Duration::from_secs(20);
        while !(command.exists() && daemon.exists()) {
            assert!(Instant::now() < deadline, "the stand-in never started its command");
            std::thread::sleep(Duration::from_millis(20));
        }
        let (command, daemon) = (pid_in(&command), pid_in(&daemon));
        assert!(alive(command) && alive(daemon));
        kiln.kill().unwrap();
        kiln.wait().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while (alive(command) || alive(daemon)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(command), "the command {command} outlived Kiln");
        assert!(!alive(daemon), "the daemon {daemon} outlived Kiln");
    }

    /// Kiln for the test above: starts a command that leaves a daemon, then waits.
    #[tokio::test]
    #[ignore = "run by a_command_and_all_it_started_end_when_kiln_is_killed"]
    async fn kiln_stand_in() {
        let Some(dir) = std::env::var_os("KILN_STAND_IN_DIR") else { return };
        let dir = std::path::PathBuf::from(dir);
        let cmd =
            "setsid sh -c 'sleep 300 </dev/null >/dev/null 2>&1 & echo $! > daemon.tmp && mv daemon.tmp daemon.pid'; \
             echo $$ > command.tmp && mv command.tmp command.pid; sleep 300";
        let _ = run(cmd, &dir, &[], Duration::from_secs(300), |_| {}).await;
    }

    /// The command's own end is what Kiln reports: its exit code, or the signal it died of.
    #[tokio::test]
    async fn the_reaper_ends_as_its_command_did() {
        let dir = tempfile::tempdir().unwrap();
        let code = run("exit 7", dir.path(), &[], Duration::from_secs(20), |_| {}).await.unwrap();
        assert_eq!(code.exit_code, Some(7));
        let signalled = run("kill -TERM $$", dir.path(), &[], Duration::from_secs(20), |_| {}).await.unwrap();
        assert!(signalled.killed && signalled.exit_code.is_none(), "{signalled:?}");
    }

    /// `gone` says a killed group has stopped running, and not before: what a stop waits for
    /// before it touches the files the command was writing.
    #[tokio::test]
    async fn a_killed_group_is_gone_and_a_running_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let cmd = "sleep 30 & sleep 30 & echo started > started; wait";
        let running = tokio::spawn({
            let dir = dir.path().to_path_buf();
            async move { run(cmd, &dir, &[], Duration::from_secs(60), move |r| tx.send(r).unwrap()).await }
        });
        let group = tokio::time::timeout(Duration::from_secs(20), rx).await.unwrap().unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !dir.path().join("started").exists() {
            assert!(Instant::now() < deadline, "the command never started");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(!group.gone(Duration::from_millis(200)).await, "a running group was called gone");
        group.kill();
        assert!(group.gone(Duration::from_secs(20)).await, "the killed group still ran");
        assert!(running.await.unwrap().unwrap().killed);
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

    #[tokio::test]
    async fn a_dropped_run_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("survived");
        let cmd = format!("(sleep 2; touch {}) & sleep 30", marker.display());
        let running = run(&cmd, dir.path(), &[], Duration::from_secs(60), |_| {});
        // A stopped turn drops the run while it waits.
        assert!(tokio::time::timeout(Duration::from_millis(300), running).await.is_err());
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(!marker.exists(), "a process of the group outlived the dropped run");
    }
}
