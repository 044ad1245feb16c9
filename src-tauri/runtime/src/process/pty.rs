//! Programs in a pseudo-terminal (a session's terminals): started here like every other
//! process, with their environment from `super::Env` and, when given, the confinement of
//! `crate::sandbox`. portable-pty makes the child the leader of a session of its own with
//! the terminal as its controlling one, so a shell's job control and `SIGWINCH` work, and
//! everything the program starts can be found again by that session to be killed.
//!
//! portable-pty's spawn takes no hook between fork and exec, so the Landlock domain is
//! entered by a short-lived thread that spawns and ends (`Prepared::on_confined_thread`):
//! the child inherits the domain from the thread that forked it.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::path::Path;

use portable_pty::{CommandBuilder, MasterPty, PtySize};

use super::Env;

/// A program started in a pseudo-terminal.
pub struct Pty {
    /// The program's process id, which is also its session's and its group's.
    pub pid: i32,
    /// The terminal's master side, to resize it.
    pub master: PtyMaster,
    /// What the program writes (blocking reads; they fail once the program and everything
    /// that held the terminal are gone).
    pub reader: Box<dyn Read + Send>,
    /// What the program reads as typed input (blocking writes).
    pub writer: Box<dyn Write + Send>,
    pub child: PtyChild,
}

/// The master side of a pseudo-terminal.
pub struct PtyMaster(Box<dyn MasterPty + Send>);

impl PtyMaster {
    /// Sets the terminal's size; its foreground programs get `SIGWINCH`.
    pub fn resize(&self, cols: u16, rows: u16) -> io::Result<()> {
        self.0.resize(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 }).map_err(io::Error::other)
    }
}

/// The program started in a pseudo-terminal, to wait for.
pub struct PtyChild(Box<dyn portable_pty::Child + Send + Sync>);

impl PtyChild {
    /// Blocks until the program exits; its exit code, or `None` when a signal ended it.
    pub fn wait(&mut self) -> io::Result<Option<i32>> {
        let status = self.0.wait()?;
        Ok(status.signal().is_none().then_some(status.exit_code() as i32))
    }
}

/// Starts `program` with `args` in `dir` in a new pseudo-terminal of `cols` × `rows`, with
/// `env` and, when given, confined.
pub fn spawn_pty(
    program: &OsStr,
    args: &[OsString],
    dir: &Path,
    env: Env<'_>,
    confinement: Option<&crate::sandbox::Prepared>,
    (cols, rows): (u16, u16),
) -> io::Result<Pty> {
    let pair = portable_pty::native_pty_system()
        .openpty(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 })
        .map_err(io::Error::other)?;
    let mut builder = CommandBuilder::new(program);
    builder.args(args);
    builder.cwd(dir);
    builder.env_clear();
    for (key, value) in env.resolved() {
        builder.env(key, value);
    }
    let slave = pair.slave;
    let spawn = move || slave.spawn_command(builder).map_err(io::Error::other);
    let child = match confinement {
        Some(prepared) => prepared.on_confined_thread(spawn)??,
        None => spawn()?,
    };
    // The slave side is the child's now (and closed in Kiln by the spawn above), so reads
    // of the master end once the child's session lets the terminal go.
    let pid = child.process_id().map(|p| p as i32).unwrap_or(0);
    let reader = pair.master.try_clone_reader().map_err(io::Error::other)?;
    let writer = pair.master.take_writer().map_err(io::Error::other)?;
    Ok(Pty { pid, master: PtyMaster(pair.master), reader, writer, child: PtyChild(child) })
}

/// Kills everything of the terminal session `sid`: its leader's process group, the other
/// groups a shell's job control made in the same session (background jobs), and what left it.
pub fn kill_session(sid: i32) {
    // 0 and 1 would signal Kiln's own group, or everything: never.
    if sid <= 1 {
        return;
    }
    let pids = super::tree::session_and_strays(sid);
    super::Running { pgid: sid }.kill();
    super::tree::signal_each(&pids, libc::SIGKILL);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_in_a_terminal_sees_a_terminal_and_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let args: Vec<OsString> = vec!["-c".into(), "test -t 0 && stty size && echo done-$((40+2))".into()];
        let env = [("PATH".to_string(), "/usr/bin:/bin".to_string())];
        let mut pty = spawn_pty(OsStr::new("sh"), &args, dir.path(), Env::Only(&env), None, (100, 30)).unwrap();
        assert!(pty.pid > 1);
        let mut out = Vec::new();
        let mut buf = [0u8; 1024];
        while let Ok(n) = pty.reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        let text = String::from_utf8_lossy(&out);
        assert!(text.contains("30 100") && text.contains("done-42"), "{text:?}");
        assert_eq!(pty.child.wait().unwrap(), Some(0));
    }
}
