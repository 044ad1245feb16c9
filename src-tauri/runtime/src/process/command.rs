//! The one place Kiln builds and starts a process: its environment (`super::Env`), stdin
//! closed (or a pipe for input), stdout and stderr piped, its own process group (or its
//! own session, for git and gh, which must have no terminal to prompt on), an optional
//! Landlock confinement, and the group killed when the handle is dropped before the
//! process was waited for. Callers that stream (an agent's stdout line by line, the
//! preview's long-lived server) take the child from here; the rest run through
//! `super::capture`.

use std::ffi::OsStr;
use std::io;
use std::path::Path;
use std::process::Stdio;

use tokio::io::AsyncWriteExt;

use super::{Env, Running};

/// How the started process is separated from Kiln, so it and everything it starts can
/// be killed together.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Separation {
    /// A process group of its own.
    Group,
    /// A session of its own (so also a group): no controlling terminal, so ssh cannot
    /// open /dev/tty to ask for a passphrase or a host key.
    Session,
}

/// A process to start.
pub struct Command {
    cmd: tokio::process::Command,
    separation: Separation,
    stdin: Option<Vec<u8>>,
    /// Descriptors handed to the child (`pass_fds`), held open until it has started.
    keep: Vec<std::os::fd::OwnedFd>,
}

impl Command {
    /// `program` in `dir` with `env`; stdin closed, stdout and stderr piped.
    pub fn new(program: impl AsRef<OsStr>, dir: &Path, env: Env<'_>) -> Self {
        let mut cmd = tokio::process::Command::new(program);
        env.apply(&mut cmd);
        cmd.current_dir(dir).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        Command { cmd, separation: Separation::Group, stdin: None, keep: Vec::new() }
    }

    /// `sh -c <line>` in `dir` with `env`.
    pub fn shell(line: &str, dir: &Path, env: Env<'_>) -> Self {
        let mut command = Command::new("sh", dir, env);
        command.cmd.arg("-c").arg(line);
        command
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.cmd.arg(arg);
        self
    }

    pub fn args(mut self, args: impl IntoIterator<Item = impl AsRef<OsStr>>) -> Self {
        self.cmd.args(args);
        self
    }

    /// `input` written to the process's stdin, which is then closed.
    pub fn input(mut self, input: Option<Vec<u8>>) -> Self {
        if input.is_some() {
            self.cmd.stdin(Stdio::piped());
        }
        self.stdin = input;
        self
    }

    /// stdin left open as a pipe (`Child::inner.stdin`), for a program Kiln talks to
    /// while it runs (an ACP agent's JSON-RPC).
    pub fn piped_stdin(mut self) -> Self {
        self.cmd.stdin(Stdio::piped());
        self
    }

    /// stderr discarded (a `--version` probe reads stdout only).
    pub fn without_stderr(mut self) -> Self {
        self.cmd.stderr(Stdio::null());
        self
    }

    /// A session of its own instead of a group: no controlling terminal (git, gh).
    pub fn own_session(mut self) -> Self {
        self.separation = Separation::Session;
        self
    }

    /// The process gets SIGKILL when the Kiln thread that started it dies, so a crashed
    /// Kiln leaves no long-lived server behind (it survives an `execve`, not a `fork`).
    pub fn killed_with_kiln(mut self) -> Self {
        // SAFETY: prctl is async-signal-safe and touches no memory of ours.
        unsafe {
            self.cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        self
    }

    /// Gives the process `fds` as the descriptor numbers paired with them (Chromium's
    /// `--remote-debugging-pipe` reads on 3 and writes on 4). The parent's copies are closed
    /// when the command is dropped after spawning; only the child keeps them.
    pub fn pass_fds(mut self, fds: Vec<(std::os::fd::OwnedFd, i32)>) -> Self {
        use std::os::fd::AsRawFd;
        assert!(fds.len() <= 8, "at most 8 descriptors");
        let raw: Vec<(i32, i32)> = fds.iter().map(|(fd, to)| (fd.as_raw_fd(), *to)).collect();
        // SAFETY: dup2(2) is async-signal-safe; `raw` is moved in and only read.
        unsafe {
            self.cmd.pre_exec(move || {
                // First out of the way (one source may sit on another's target number), then
                // onto the wanted numbers: dup2 leaves close-on-exec off there.
                let mut moved = [0i32; 8];
                for (i, (from, _)) in raw.iter().enumerate().take(moved.len()) {
                    moved[i] = libc::fcntl(*from, libc::F_DUPFD_CLOEXEC, 64);
                    if moved[i] < 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                for (i, (_, to)) in raw.iter().enumerate().take(moved.len()) {
                    if libc::dup2(moved[i], *to) < 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        self.keep.extend(fds.into_iter().map(|(fd, _)| fd));
        self
    }

    /// Runs it to its end on the calling thread and returns its whole output, for the few
    /// synchronous callers (toolchain versions during detection, the store's `git prune`):
    /// the same environment and its own process group, no timeout.
    pub fn output_blocking(mut self) -> io::Result<std::process::Output> {
        let cmd = self.cmd.as_std_mut();
        std::os::unix::process::CommandExt::process_group(cmd, 0);
        cmd.output()
    }

    /// Starts the process, confined by `confinement` when given (made before the start;
    /// when it could not be made the process does not start).
    pub fn spawn(mut self, confinement: Option<&crate::sandbox::Prepared>) -> io::Result<Child> {
        match self.separation {
            Separation::Group => {
                self.cmd.process_group(0);
                // SAFETY: `supervise` is written for a `pre_exec` closure (see there).
                unsafe {
                    self.cmd.pre_exec(|| super::reaper::supervise());
                }
            }
            Separation::Session => {
                // SAFETY: setsid(2) is async-signal-safe and touches no memory of ours.
                unsafe {
                    self.cmd.pre_exec(|| if libc::setsid() < 0 { Err(io::Error::last_os_error()) } else { Ok(()) });
                }
            }
        }
        let mut child = match confinement {
            Some(prepared) => prepared.spawn(&mut self.cmd)?,
            None => self.cmd.spawn()?,
        };
        // Only an `input` is written here; a `piped_stdin` stays the caller's.
        if let Some((input, mut pipe)) = self.stdin.and_then(|input| Some((input, child.stdin.take()?))) {
            tokio::spawn(async move {
                let _ = pipe.write_all(&input).await;
                // Dropping the pipe closes it: the process reads to the end.
            });
        }
        let pgid = child.id().map(|p| p as i32).unwrap_or(0);
        Ok(Child { inner: child, pgid, armed: true })
    }
}

/// A started process. Dropped before it was reaped (a cancelled turn or delivery), it
/// takes its whole group with it, not only the child as `kill_on_drop` would.
pub struct Child {
    pub inner: tokio::process::Child,
    pgid: i32,
    armed: bool,
}

impl Child {
    /// Its process group, to stop it from elsewhere.
    pub fn group(&self) -> Running {
        Running { pgid: self.pgid }
    }

    /// Kills the whole group.
    pub fn kill(&self) {
        self.group().kill();
    }

    /// Waits for the process to exit. Once reaped its id may be reused, so the drop no
    /// longer signals it.
    pub async fn wait(&mut self) -> io::Result<std::process::ExitStatus> {
        let status = self.inner.wait().await;
        if status.is_ok() {
            self.armed = false;
        }
        status
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.armed {
            self.kill();
        }
    }
}
