//! OS confinement for the commands agents run (ARCHITECTURE.md: Drivers and turns): the agent CLIs Kiln starts
//! (claude, codex, and so everything they start in turn) run inside a Landlock domain
//! that lets them write only to the session's working copy, temporary directories, a
//! few devices, the agents' own state and the package caches that builds and tests
//! write to. Everything else stays readable and executable, but not writable. The
//! commands Kiln itself runs on code the agent may have written (setup, gates,
//! `run_command`, the preview, delivery hooks) get a narrower domain and a cleared
//! environment: see `Scope`.
//!
//! Why Landlock rather than bubblewrap or a container: it is part of the kernel (Linux
//! 5.13 and later), so it needs no extra package, no user namespaces and no setuid
//! helper; it works when Kiln itself runs inside a namespace or a container; and a
//! domain is inherited across fork and exec, so nothing an agent starts can leave it.
//! The ruleset is built in Kiln (where paths can be opened and errors reported) and
//! applied in the child between fork and exec (`pre_exec`), with two raw system calls.
//!
//! Landlock handles the write rights of the highest ABI the running kernel offers, in
//! best-effort mode: on ABI 3 and later every way of changing a file (write, truncate,
//! create, remove, rename, link) is covered ("full"); ABI 1 and 2 cannot stop a file
//! elsewhere being truncated ("partial"). Ioctls on devices and connecting to UNIX
//! sockets by path are not writes to the filesystem and stay allowed. Reads are limited
//! only around Kiln's own state (`hidden`). On ABI 6 and later the domain is also scoped:
//! nothing in it can signal a process outside it (Kiln, the user's programs) or connect to
//! an abstract UNIX socket made outside it. Where the kernel has no Landlock (or
//! `KILN_NO_LANDLOCK=1`), commands run with the permission policy alone, and Settings and
//! `kiln health` say so.

use std::path::{Path, PathBuf};

pub mod hidden;
pub mod own_environment;
pub mod passing;
mod scope;
pub use passing::EnvironmentConfig;
pub use scope::Scope;

/// Set to `1` to run without Landlock, as on a kernel that lacks it.
pub const DISABLE_ENV: &str = "KILN_NO_LANDLOCK";

/// How much of the confinement the kernel enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcement {
    /// Every write outside the writable paths is refused.
    Full,
    /// Landlock ABI 1 or 2: truncating a file elsewhere is not refused.
    Partial,
    /// No Landlock: the permission policy alone.
    None,
}

impl Enforcement {
    pub fn as_str(self) -> &'static str {
        match self {
            Enforcement::Full => "full",
            Enforcement::Partial => "partial",
            Enforcement::None => "none",
        }
    }
}

/// Whether commands can be confined here, for Settings and `kiln health`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    pub available: bool,
    /// `landlock`, or `none`.
    pub mechanism: &'static str,
    /// The kernel's Landlock ABI version, when it has Landlock.
    pub abi: Option<u32>,
    pub enforcement: Enforcement,
    /// One sentence for people.
    pub detail: String,
}

/// A variable's value as a path, when it is an absolute one.
fn absolute(value: Option<String>) -> Option<PathBuf> {
    value.filter(|v| !v.is_empty()).map(PathBuf::from).filter(|p| p.is_absolute())
}

/// The kernel's Landlock ABI version; `None` without Landlock, or when `KILN_NO_LANDLOCK`
/// turns it off.
pub fn kernel_abi() -> Option<u32> {
    if disabled() {
        return None;
    }
    imp::kernel_abi()
}

fn disabled() -> bool {
    std::env::var(DISABLE_ENV).is_ok_and(|v| !v.is_empty() && v != "0")
}

fn enforcement(abi: Option<u32>) -> Enforcement {
    match abi {
        Some(abi) if abi >= 3 => Enforcement::Full,
        Some(abi) if abi >= 1 => Enforcement::Partial,
        _ => Enforcement::None,
    }
}

/// Whether the commands agents run are confined here, and a sentence saying how.
pub fn support() -> Support {
    let abi = kernel_abi();
    let enforcement = enforcement(abi);
    const WHERE: &str = "the working copy, temporary directories, the agents' own state and the package caches";
    let detail = match (abi, enforcement) {
        (Some(abi), Enforcement::Full) => format!("Commands run under Landlock (ABI {abi}): they may write only to {WHERE}."),
        (Some(abi), _) => format!(
            "Commands run under Landlock (ABI {abi}), partly: they may write only to {WHERE}, \
             but this kernel cannot stop them truncating files elsewhere (ABI 3 can)."
        ),
        (None, _) if disabled() => format!("Landlock is turned off ({DISABLE_ENV}=1): commands run with the policy alone."),
        (None, _) if cfg!(target_os = "linux") => {
            "This kernel has no Landlock (Linux 5.13 or later, with Landlock enabled, has it): commands run with the policy alone."
                .to_string()
        }
        (None, _) => "Landlock is Linux only: commands run with the policy alone.".to_string(),
    };
    Support {
        available: abi.is_some(),
        mechanism: if abi.is_some() { "landlock" } else { "none" },
        abi,
        enforcement,
        detail,
    }
}

/// What of an agent CLI's own state a turn may write, beneath its state directory: its
/// conversations (to resume them), its login, history and logs. Never its configuration
/// (settings with their hooks, MCP servers, instructions, commands: `settings.json`,
/// `CLAUDE.md`, `~/.claude.json`), which would run, or speak to the agent, the next time the
/// user starts it by hand, outside Kiln.
pub struct AgentState {
    pub dirs: &'static [&'static str],
    pub files: &'static [&'static str],
}

impl AgentState {
    /// Where an agent run with `env` over Kiln's environment keeps this state: `variable`
    /// when set (absolute), else `default` under the home.
    pub fn dir(variable: &str, default: &str, env: &[(String, String)]) -> Option<PathBuf> {
        let set = match env.iter().rev().find(|(k, _)| k == variable) {
            Some((_, v)) => Some(PathBuf::from(v)),
            None => std::env::var_os(variable).map(PathBuf::from),
        };
        set.or_else(|| home_of(env).map(|h| h.join(default))).filter(|d| d.is_absolute())
    }
}

/// The home directory a program run with `env` over Kiln's environment sees: `HOME` in
/// `env`, else Kiln's.
pub fn home_of(env: &[(String, String)]) -> Option<PathBuf> {
    let home = match env.iter().rev().find(|(k, _)| k == "HOME") {
        Some((_, v)) => Some(v.clone()),
        None => std::env::var("HOME").ok(),
    };
    home.filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// Claude Code's, in `~/.claude` (or `$CLAUDE_CONFIG_DIR`).
pub const CLAUDE_STATE: &AgentState = &AgentState {
    dirs: &["projects", "todos", "shell-snapshots", "statsig", "session-env", "file-history", "plans", "debug", "ide"],
    files: &["history.jsonl", ".credentials.json"],
};

/// The paths a turn's commands may write to; everything else is read-only to them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Confinement {
    writable: Vec<PathBuf>,
    /// Directories created before the rules are made, so a rule exists for them (an
    /// agent's state directory on its first run).
    create: Vec<PathBuf>,
    /// Paths not even readable (`hidden`), and paths inside them readable again.
    hidden: Vec<PathBuf>,
    shown: Vec<PathBuf>,
}

impl Confinement {
    /// Nothing writable at all.
    pub fn new() -> Confinement {
        Confinement::default()
    }

    /// The usual writable paths of a turn in `workdir` (left out for a read-only turn),
    /// for a child whose environment is Kiln's own with `env` set over it: HOME,
    /// TMPDIR, CODEX_HOME, CARGO_HOME… are read from `env` first.
    ///
    /// - the working copy;
    /// - `/tmp`, `/var/tmp`, `$TMPDIR` and `/dev/shm`;
    /// - the devices a shell writes to: `/dev/null`, `zero`, `full`, `random`,
    ///   `urandom`, `tty`, `ptmx` and `/dev/pts`;
    /// - the agents' own state: Claude's but not its configuration (`CLAUDE_STATE` in
    ///   `~/.claude` or `$CLAUDE_CONFIG_DIR`), Codex's whole home (`~/.codex`, `$CODEX_HOME`);
    /// - the caches builds and tests write to: `~/.cache` (`$XDG_CACHE_HOME`), `~/.npm`
    ///   (`$npm_config_cache`), `~/.local/share/pnpm`, `~/.cargo/registry` and `git`
    ///   and Cargo's package-cache lock (also under `$CARGO_HOME`), `~/go/pkg/mod`
    ///   (`$GOPATH/pkg/mod`, `$GOMODCACHE`), `$GOCACHE`.
    ///
    /// Paths that do not exist when the turn starts get no rule, so they stay
    /// unwritable; `~/.cache` and `~/.npm` are created first when missing, as npm and
    /// most tools fail without them. Not writable: the rest of the home directory (its
    /// shell start-up files, `~/.config` with Kiln's own state, `~/.cargo/bin` and
    /// `~/.local/bin` on PATH), the repository the session came from and its `.kiln`.
    /// Not even readable: Kiln's own state (`hide_kiln_state`), but for the working copy,
    /// unless it lies in a writable directory (a workspace under `/tmp`).
    pub fn for_turn(workdir: &Path, read_only: bool, env: &[(String, String)]) -> Confinement {
        let var = |key: &str| -> Option<PathBuf> {
            let value = match env.iter().rev().find(|(k, _)| k == key) {
                Some((_, v)) => Some(v.clone()),
                None => std::env::var(key).ok(),
            };
            absolute(value)
        };
        let mut c = Confinement::new();
        if !read_only {
            c.allow(workdir);
        }
        for dir in ["/tmp", "/var/tmp", "/dev/shm"] {
            c.allow(dir);
        }
        c.allow_opt(var("TMPDIR"));
        c.allow_devices();
        let home = var("HOME");
        for dir in [var("CLAUDE_CONFIG_DIR"), home.as_ref().map(|h| h.join(".claude"))].into_iter().flatten() {
            c.allow_state(&dir, CLAUDE_STATE);
        }
        // Codex writes all over its home (a database, path aliases, caches), so all of it
        // stays writable, `config.toml` included: see SECURITY.md.
        c.allow_opt(var("CODEX_HOME"));
        if let Some(home) = &home {
            c.allow(home.join(".codex"));
        }
        c.allow_caches(&var);
        if let Some(home) = home {
            c.create(home.join(".cache"));
            c.create(home.join(".npm"));
        }
        // The agent reads anything the user can but Kiln's own state: the access store, a
        // loopback server's token, the other sessions and the workspace's keys.
        c.hide_kiln_state(&[workdir]);
        c
    }

    /// The writable paths of a command Kiln runs for a session (setup, gates,
    /// `run_command`, the preview, delivery hooks; see `Scope`), whose whole environment
    /// is `env`: the devices a shell writes to and the package caches `env` names, and
    /// nothing else until the caller adds its directories. Neither `/tmp` nor the agents'
    /// state: the command has a temporary directory of its own.
    pub fn for_commands(env: &[(String, String)]) -> Confinement {
        let var = |key: &str| absolute(env.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.clone()));
        let mut c = Confinement::new();
        c.allow_devices();
        c.allow_caches(&var);
        c
    }

    /// Allows `state`'s parts beneath an agent's state directory `dir`.
    fn allow_state(&mut self, dir: &Path, state: &AgentState) {
        for part in state.dirs.iter().chain(state.files) {
            self.allow(dir.join(part));
        }
    }

    /// Makes `state`'s directories beneath an agent's state directory `dir` before the
    /// turn, so a first run has them (a path missing when the rules are made stays
    /// unwritable).
    pub fn create_state(&mut self, dir: &Path, state: &AgentState) -> &mut Self {
        for part in state.dirs {
            self.create(dir.join(part));
        }
        self
    }

    fn allow_devices(&mut self) {
        for device in ["null", "zero", "full", "random", "urandom", "tty", "ptmx", "pts"] {
            self.allow(Path::new("/dev").join(device));
        }
    }

    /// The caches builds and tests write to, where `var` says they are (or under HOME).
    fn allow_caches(&mut self, var: &dyn Fn(&str) -> Option<PathBuf>) {
        self.allow_opt(var("XDG_CACHE_HOME"));
        // The caches the user's own environment names (the same variable in either case
        // for npm), which passed to the command (`passing`).
        for key in ["npm_config_cache", "NPM_CONFIG_CACHE", "PIP_CACHE_DIR", "UV_CACHE_DIR", "YARN_CACHE_FOLDER"] {
            self.allow_opt(var(key));
        }
        self.allow_opt(var("COREPACK_HOME"));
        self.allow_opt(var("GOMODCACHE"));
        self.allow_opt(var("GOCACHE"));
        self.allow_opt(var("GOPATH").map(|p| p.join("pkg/mod")));
        self.allow_opt(var("XDG_DATA_HOME").map(|p| p.join("pnpm")));
        if let Some(cargo) = var("CARGO_HOME") {
            self.allow_cargo(&cargo);
        }
        if let Some(home) = var("HOME") {
            for cache in [".cache", ".npm", ".local/share/pnpm", "go/pkg/mod"] {
                self.allow(home.join(cache));
            }
            self.allow_cargo(&home.join(".cargo"));
        }
    }

    fn allow_cargo(&mut self, cargo_home: &Path) {
        for part in ["registry", "git", ".package-cache", ".package-cache-mutate", ".global-cache"] {
            self.allow(cargo_home.join(part));
        }
    }

    fn allow_opt(&mut self, path: Option<PathBuf>) {
        if let Some(path) = path {
            self.allow(path);
        }
    }

    /// Adds a writable path (a directory and everything under it, or one file).
    pub fn allow(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        let path = path.into();
        if !self.writable.contains(&path) {
            self.writable.push(path);
        }
        self
    }

    /// Adds a writable directory, created before the rules are made when it is missing.
    pub fn create(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        let dir = dir.into();
        self.allow(dir.clone());
        if !self.create.contains(&dir) {
            self.create.push(dir);
        }
        self
    }

    /// Makes Kiln's own state (`hidden::hidden`: the config directory with the access store
    /// and a loopback server's token, every open workspace's `.kiln`) unreadable, except
    /// `shown` inside it. What lies inside a writable path cannot be hidden (a delivery hook
    /// writes the workspace, `.kiln` included), so it is not.
    pub fn hide_kiln_state(&mut self, shown: &[&Path]) -> &mut Self {
        let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let writable: Vec<PathBuf> = self.writable.iter().map(|p| real(p)).collect();
        let hidden: Vec<PathBuf> =
            hidden::hidden().into_iter().filter(|h| !writable.iter().any(|w| h.starts_with(w))).collect();
        self.hide(&hidden, shown)
    }

    /// Makes `hidden` unreadable too, except `shown` inside them (see `hidden`). Paths
    /// that do not exist are left out.
    pub fn hide(&mut self, hidden: &[PathBuf], shown: &[&Path]) -> &mut Self {
        self.hidden.extend(hidden.iter().filter_map(|p| p.canonicalize().ok()));
        self.shown.extend(shown.iter().filter_map(|p| p.canonicalize().ok()));
        self
    }

    /// The writable paths, as described (some may not exist).
    #[cfg(any(test, feature = "test-support"))]
    pub fn writable(&self) -> &[PathBuf] {
        &self.writable
    }

    /// Builds the ruleset, in Kiln, for one child. Without Landlock this confines
    /// nothing (`Enforcement::None`). An error means Landlock is there but the ruleset
    /// could not be made: the caller must not start the command unconfined.
    pub fn prepare(&self) -> std::io::Result<Prepared> {
        let Some(abi) = kernel_abi() else {
            return Ok(Prepared { inner: None, enforcement: Enforcement::None });
        };
        for dir in &self.create {
            let _ = std::fs::create_dir_all(dir);
        }
        let readable = (!self.hidden.is_empty()).then(|| hidden::readable_roots(&self.hidden, &self.shown));
        let inner = imp::ruleset(abi, &self.writable, readable.as_deref())?;
        Ok(Prepared { enforcement: if inner.is_some() { enforcement(Some(abi)) } else { Enforcement::None }, inner })
    }
}

/// A ruleset ready to be applied to children. Keep it until they are spawned.
#[derive(Debug)]
pub struct Prepared {
    inner: Option<imp::Ruleset>,
    enforcement: Enforcement,
}

impl Prepared {
    /// What the children spawned with it get.
    pub fn enforcement(&self) -> Enforcement {
        self.enforcement
    }

    /// Confines the children `command` spawns while `self` lives: between fork and exec
    /// the child sets no-new-privileges (setuid programs gain nothing in it) and enters
    /// the Landlock domain. If that fails the child never runs: spawning fails instead.
    pub fn apply(&self, command: &mut std::process::Command) {
        if let Some(ruleset) = &self.inner {
            ruleset.apply(command);
        }
    }

    /// Spawns `command` confined.
    pub fn spawn(&self, command: &mut tokio::process::Command) -> std::io::Result<tokio::process::Child> {
        self.apply(command.as_std_mut());
        command.spawn()
    }

    /// Runs `spawn` on a thread of its own that enters the domain first (no-new-privileges,
    /// then Landlock), for a spawner that takes no hook between fork and exec (the
    /// pseudo-terminal's, `crate::process::pty`): a process forked there inherits the
    /// thread's domain, exactly as with `apply`. The thread ends with `spawn`, so Kiln's
    /// own threads stay unconfined. If the domain cannot be entered, `spawn` never runs.
    pub fn on_confined_thread<R: Send>(&self, spawn: impl FnOnce() -> R + Send) -> std::io::Result<R> {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    if let Some(ruleset) = &self.inner {
                        ruleset.restrict_current_thread()?;
                    }
                    Ok(spawn())
                })
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the confined spawner thread panicked")))
        })
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    use std::path::PathBuf;

    use landlock::{
        AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, RulesetAttr, RulesetCreatedAttr, Scope, ABI,
    };

    /// The ruleset's file descriptor (close-on-exec, as the kernel makes it).
    #[derive(Debug)]
    pub(super) struct Ruleset {
        fd: OwnedFd,
    }

    pub(super) fn kernel_abi() -> Option<u32> {
        // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) only
        // answers the ABI version (or fails with ENOSYS/EOPNOTSUPP).
        let version =
            unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<libc::c_void>(), 0usize, 1u32) };
        u32::try_from(version).ok().filter(|v| *v > 0)
    }

    fn landlock_error(e: impl std::fmt::Display) -> std::io::Error {
        std::io::Error::other(format!("could not make the Landlock ruleset: {e}"))
    }

    /// Every write right of `abi` except ioctls on devices and connecting to UNIX
    /// sockets, which change no file.
    fn handled(abi: ABI) -> BitFlags<AccessFs> {
        AccessFs::from_write(abi) & !(AccessFs::IoctlDev | AccessFs::ResolveUnix)
    }

    /// Writes are allowed only beneath `writable`; with `readable`, reads only beneath
    /// those paths too.
    pub(super) fn ruleset(
        kernel: u32,
        writable: &[PathBuf],
        readable: Option<&[PathBuf]>,
    ) -> std::io::Result<Option<Ruleset>> {
        let abi = ABI::from(i32::try_from(kernel).unwrap_or(i32::MAX));
        let reads = if readable.is_some() { AccessFs::ReadFile | AccessFs::ReadDir } else { BitFlags::empty() };
        let handled = handled(abi) | reads;
        let file_rights = handled & AccessFs::from_file(abi);
        // Scoped too (kernels with ABI 6 and later; ignored before): no signal to a process
        // outside the domain (Kiln itself, the user's programs), and no abstract UNIX socket
        // made outside it (a D-Bus or X11 server listening on one).
        let mut created = landlock::Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(handled)
            .and_then(|r| r.scope(Scope::AbstractUnixSocket | Scope::Signal))
            .and_then(|r| r.create())
            .map_err(landlock_error)?;
        for path in writable {
            // A path that does not exist (or cannot be opened) gets no rule: unwritable.
            let Ok(fd) = PathFd::new(path) else { continue };
            let is_dir = std::fs::metadata(path).map(|m| m.is_dir()).unwrap_or(false);
            let rights = if is_dir { handled } else { file_rights };
            created = created.add_rule(PathBeneath::new(fd, rights)).map_err(landlock_error)?;
        }
        for path in readable.unwrap_or_default() {
            let Ok(fd) = PathFd::new(path) else { continue };
            let is_dir = std::fs::metadata(path).map(|m| m.is_dir()).unwrap_or(false);
            let rights = if is_dir { reads } else { reads & AccessFs::from_file(abi) };
            created = created.add_rule(PathBeneath::new(fd, rights)).map_err(landlock_error)?;
        }
        let fd: Option<OwnedFd> = created.into();
        Ok(fd.map(|fd| Ruleset { fd }))
    }

    impl Ruleset {
        pub(super) fn apply(&self, command: &mut std::process::Command) {
            let fd = self.fd.as_raw_fd();
            // SAFETY: between fork and exec the closure makes two system calls and
            // allocates nothing; `fd` stays open in the parent until the spawn returns
            // (the caller keeps the ruleset), so the child's copy is valid.
            unsafe {
                command.pre_exec(move || {
                    if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }

        /// Enters the domain on the calling thread only (Landlock and no-new-privileges are
        /// per thread): for a thread that spawns and ends.
        pub(super) fn restrict_current_thread(&self) -> std::io::Result<()> {
            // SAFETY: two system calls on a descriptor this ruleset keeps open.
            unsafe {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::syscall(libc::SYS_landlock_restrict_self, self.fd.as_raw_fd(), 0u32) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::path::PathBuf;

    #[derive(Debug)]
    pub struct Ruleset;

    pub fn kernel_abi() -> Option<u32> {
        None
    }

    pub fn ruleset(
        _kernel: u32,
        _writable: &[PathBuf],
        _readable: Option<&[PathBuf]>,
    ) -> std::io::Result<Option<Ruleset>> {
        Ok(None)
    }

    impl Ruleset {
        pub fn apply(&self, _command: &mut std::process::Command) {}

        pub fn restrict_current_thread(&self) -> std::io::Result<()> {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_writes_to_its_working_copy_temp_state_and_caches_only() {
        let env =
            [("HOME".to_string(), "/home/agent".to_string()), ("CARGO_HOME".to_string(), "/opt/cargo".to_string())];
        let c = Confinement::for_turn(Path::new("/work/session"), false, &env);
        let has = |p: &str| c.writable().contains(&PathBuf::from(p));
        for path in [
            "/work/session",
            "/tmp",
            "/var/tmp",
            "/dev/null",
            "/dev/pts",
            "/home/agent/.claude/projects",
            "/home/agent/.claude/.credentials.json",
        ] {
            assert!(has(path), "{path} writable: {:?}", c.writable());
        }
        for path in [
            "/home/agent/.codex",
            "/home/agent/.cache",
            "/home/agent/.npm",
            "/opt/cargo/registry",
            "/home/agent/.cargo/git",
        ] {
            assert!(has(path), "{path} writable: {:?}", c.writable());
        }
        for path in
            ["/home/agent", "/home/agent/.config", "/home/agent/.cargo", "/opt/cargo", "/opt/cargo/bin", "/dev", "/"]
        {
            assert!(!has(path), "{path} not writable: {:?}", c.writable());
        }
        // The agents' configuration, which runs outside Kiln later, is not theirs to change.
        for path in [
            "/home/agent/.claude",
            "/home/agent/.claude.json",
            "/home/agent/.claude/settings.json",
            "/home/agent/.claude/CLAUDE.md",
        ] {
            assert!(!c.writable().iter().any(|w| Path::new(path).starts_with(w)), "{path}: {:?}", c.writable());
        }
        let read_only = Confinement::for_turn(Path::new("/work/session"), true, &env);
        assert!(!read_only.writable().contains(&PathBuf::from("/work/session")));
    }

    #[test]
    fn relative_and_empty_variables_are_ignored() {
        let env = [("TMPDIR".to_string(), "relative/tmp".to_string()), ("CODEX_HOME".to_string(), String::new())];
        let c = Confinement::for_turn(Path::new("/w"), false, &env);
        assert!(c.writable().iter().all(|p| p.is_absolute()), "{:?}", c.writable());
    }

    #[test]
    fn enforcement_follows_the_abi() {
        assert_eq!(enforcement(None), Enforcement::None);
        assert_eq!(enforcement(Some(2)), Enforcement::Partial);
        assert_eq!(enforcement(Some(3)), Enforcement::Full);
        assert_eq!(enforcement(Some(7)), Enforcement::Full);
    }
}
