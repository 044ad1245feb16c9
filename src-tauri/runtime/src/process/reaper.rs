//! Nothing a command starts outlives it (SECURITY.md: Processes). Killing a command's
//! process group misses what left the group, and a descendant that double-forks after
//! `setsid` is no longer anybody's descendant once its parent exits: the kernel hands it
//! to init. So each command Kiln starts runs under a *reaper*: a copy of the forked child
//! that never executes anything, made the child subreaper of the command's tree
//! (`PR_SET_CHILD_SUBREAPER`), so every orphan of the tree becomes its child instead of
//! init's. When the command's own process ends, the reaper kills its children, round
//! after round (the orphans of those killed come to it next), until it has none, and only
//! then exits, as the command did. Kiln waits for the reaper, so a command has ended
//! only when all it started is gone; Kiln's own stop (`super::Running::kill`) finds the
//! whole tree below the living reaper by parent ids.
//!
//! The reaper runs between `fork` and `exec` of a multi-threaded program: only
//! async-signal-safe calls, no allocation, fixed buffers on the stack.

use std::io;

/// The kernel's list of the calling thread's children.
const CHILDREN: &[u8] = b"/proc/thread-self/children\0";

/// How the commands Kiln starts are supervised on this machine, as `kiln health` says it.
pub fn supervision() -> &'static str {
    // SAFETY: an open and a close of a fixed path, outside any fork.
    if unsafe { children_listed() } {
        "each command under a reaper of its own (a child subreaper): what it starts, double forks after \
         setsid included, is killed when it ends; no cgroup. Terminals and git run in a session of \
         their own, killed with their process group"
    } else {
        "process groups only: this kernel does not list a process's children in /proc, so what a command \
         starts after setsid and a double fork can outlive it"
    }
}

/// Called in the forked child before `exec` (`pre_exec`): forks the command off and
/// turns this process into its reaper, which never returns. Where the kernel lists no
/// children (`/proc` without `CONFIG_PROC_CHILDREN`) or refuses a subreaper, the command
/// runs as before, unreaped.
///
/// # Safety
/// Only in a `pre_exec` closure: it forks, and the reaper ends with `_exit`.
pub(super) unsafe fn supervise() -> io::Result<()> {
    if !children_listed() || libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
        return Ok(());
    }
    // Kiln's end, even a `kill -9`, is the command's end too: the kernel tells the reaper
    // (`PARENT_GONE`, never delivered, only waited for), which then ends the command and
    // everything it started. Read after the request, so a Kiln already gone is seen.
    // Every signal blocked first, so none (that one included) can end the reaper before
    // it waits; the command gets the mask back.
    let mut all = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    let mut before = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    libc::sigfillset(all.as_mut_ptr());
    libc::sigprocmask(libc::SIG_SETMASK, all.as_ptr(), before.as_mut_ptr());
    libc::prctl(libc::PR_SET_PDEATHSIG, PARENT_GONE, 0, 0, 0);
    let kiln = libc::getppid();
    let command = libc::fork();
    if command < 0 {
        let error = io::Error::last_os_error();
        libc::sigprocmask(libc::SIG_SETMASK, before.as_ptr(), std::ptr::null_mut());
        return Err(error);
    }
    if command == 0 {
        libc::sigprocmask(libc::SIG_SETMASK, before.as_ptr(), std::ptr::null_mut());
        // The command: it goes to `exec`, and dies with its reaper (a stop of Kiln's kills
        // the reaper first only when the whole group goes anyway).
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        return Ok(());
    }
    reap(command, kiln)
}

/// The signal the kernel sends the reaper when its parent goes. It stays blocked: the
/// reaper only waits for it.
const PARENT_GONE: libc::c_int = libc::SIGTERM;

/// The reaper's whole life: no descriptor of Kiln's held (the pipes Kiln reads to their
/// end, the exec-error pipe `spawn` waits on), no signal but those that cannot be caught,
/// the command waited for, then every child killed, then the command's end repeated.
///
/// It sleeps until a child changes (`SIGCHLD`) or its parent goes (`PARENT_GONE`; the
/// kernel also sends it when only the thread that started the command ends, so the
/// parent's id tells which). Kiln gone, the command is killed, and its end handled as
/// any other.
unsafe fn reap(command: libc::pid_t, kiln: libc::pid_t) -> ! {
    close_all();
    let mut wake = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    libc::sigemptyset(wake.as_mut_ptr());
    libc::sigaddset(wake.as_mut_ptr(), libc::SIGCHLD);
    libc::sigaddset(wake.as_mut_ptr(), PARENT_GONE);

    let mut status: libc::c_int = 0;
    loop {
        let waited = libc::waitpid(command, &mut status, libc::WNOHANG);
        if waited == command {
            break;
        }
        if waited < 0 && last_errno() != libc::EINTR {
            status = 127 << 8;
            break;
        }
        if libc::getppid() != kiln {
            libc::kill(command, libc::SIGKILL);
        }
        if waited == 0 {
            libc::sigwaitinfo(wake.as_ptr(), std::ptr::null_mut());
        }
    }
    kill_children();
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        libc::signal(signal, libc::SIG_DFL);
        let mut only = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(only.as_mut_ptr());
        libc::sigaddset(only.as_mut_ptr(), signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, only.as_ptr(), std::ptr::null_mut());
        libc::kill(libc::getpid(), signal);
    }
    libc::_exit(libc::WEXITSTATUS(status))
}

/// Kills every child until there is none: those killed leave their own children to the
/// reaper, which kills them in the next round.
unsafe fn kill_children() {
    let mut buffer = [0u8; 4096];
    loop {
        let mut read = read_children(&mut buffer);
        if read == buffer.len() {
            // A full buffer may end in the middle of a pid: only whole ones, the rest next round.
            read = buffer.iter().rposition(|&b| b == b' ').unwrap_or(0);
        }
        let mut pid: libc::pid_t = 0;
        let mut digits = false;
        for &byte in &buffer[..read] {
            if byte.is_ascii_digit() {
                pid = pid.saturating_mul(10).saturating_add((byte - b'0') as libc::pid_t);
                digits = true;
            } else {
                if digits && pid > 1 {
                    libc::kill(pid, libc::SIGKILL);
                }
                pid = 0;
                digits = false;
            }
        }
        if digits && pid > 1 {
            libc::kill(pid, libc::SIGKILL);
        }
        // One child's end (a killed one, or one that ended by itself); none left: done.
        if libc::waitpid(-1, std::ptr::null_mut(), libc::__WALL) < 0 && last_errno() == libc::ECHILD {
            return;
        }
    }
}

/// Reads the kernel's list of this process's children (pids separated by spaces) into
/// `buffer`; what does not fit is read in a later round.
unsafe fn read_children(buffer: &mut [u8]) -> usize {
    let fd = libc::open(CHILDREN.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return 0;
    }
    let mut filled = 0;
    while filled < buffer.len() {
        let n = libc::read(fd, buffer[filled..].as_mut_ptr().cast(), buffer.len() - filled);
        if n <= 0 {
            break;
        }
        filled += n as usize;
    }
    libc::close(fd);
    filled
}

unsafe fn children_listed() -> bool {
    let fd = libc::open(CHILDREN.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return false;
    }
    libc::close(fd);
    true
}

/// Closes every descriptor: `close_range` where the kernel has it, else one by one.
unsafe fn close_all() {
    if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) == 0 {
        return;
    }
    for fd in 0..65_536 {
        libc::close(fd);
    }
}

fn last_errno() -> libc::c_int {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}
