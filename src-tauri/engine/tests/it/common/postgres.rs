//! A PostgreSQL server for the tests that need one (SPEC §21): Debian's `postgresql`
//! package (`scripts/deps`), one throwaway cluster per test binary, started on first use on
//! a free loopback port with a temporary data directory, trust auth and fsync off. Each test
//! takes a database of its own (`fresh_database`). The server dies with the test binary
//! (parent-death signal) and its directory is removed when the binary exits.

use std::fs::{self, File};
use std::io;
use std::net::TcpListener;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

/// The superuser initdb makes, whoever runs it.
const SUPERUSER: &str = "postgres";
/// Directories of clusters are named for the test binary's pid, so a later run can tell
/// which ones a killed binary left behind.
const DIR_PREFIX: &str = "kiln-pg-";

struct Cluster {
    /// Debian's `/usr/lib/postgresql/<version>/bin`, or `None` for the tools on PATH.
    bin: Option<PathBuf>,
    port: u16,
}

impl Cluster {
    fn tool(&self, name: &str) -> PathBuf {
        tool(&self.bin, name)
    }
}

static CLUSTER: OnceLock<Cluster> = OnceLock::new();
/// The running server's pid and the cluster's directory, for `stop_server` at exit.
static SERVER: OnceLock<(libc::pid_t, PathBuf)> = OnceLock::new();
static DATABASES: AtomicU64 = AtomicU64::new(0);

/// A new, empty database on the test cluster (started on first use): its `postgres://` URL.
pub(crate) fn fresh_database() -> String {
    let cluster = CLUSTER.get_or_init(start);
    let name = format!("kiln_{}", DATABASES.fetch_add(1, Ordering::Relaxed));
    let out = psql(cluster.tool("psql"), cluster.port, &format!("CREATE DATABASE {name}"));
    assert!(out.status.success(), "CREATE DATABASE {name}: {}", String::from_utf8_lossy(&out.stderr));
    format!("postgres://{SUPERUSER}@127.0.0.1:{}/{name}", cluster.port)
}

fn start() -> Cluster {
    let began = Instant::now();
    let bin = server_bin();
    let owner = owner();
    remove_stale_clusters();
    let root = std::env::temp_dir().join(format!("{DIR_PREFIX}{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    fs::DirBuilder::new().mode(0o700).create(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(&root, Some(uid), Some(gid)).unwrap();
    }
    let data = root.join("data");
    let mut initdb = Command::new(tool(&bin, "initdb"));
    initdb
        .arg("-D")
        .arg(&data)
        .args(["-U", SUPERUSER, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"])
        .current_dir(&root);
    as_owner(&mut initdb, owner);
    let out = initdb.output().unwrap_or_else(|e| {
        panic!("initdb ({}): {e}; scripts/deps installs postgresql", initdb.get_program().to_string_lossy())
    });
    assert!(out.status.success(), "initdb: {}", String::from_utf8_lossy(&out.stderr));
    let cluster = (0..3)
        .find_map(|_| {
            // Another process may take the port between our probe and the server's bind:
            // the server then exits, and the next attempt takes another port.
            let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let pid = spawn_server(tool(&bin, "postgres"), &root, &data, port, owner);
            if wait_ready(&tool(&bin, "psql"), pid, port, &data) {
                let _ = SERVER.set((pid, root.clone()));
                Some(Cluster { bin: bin.clone(), port })
            } else {
                None
            }
        })
        .unwrap_or_else(|| panic!("postgres did not start: {}", log_tail(&root)));
    // SAFETY: registers a plain function that only signals, reaps and removes files.
    unsafe { libc::atexit(stop_server) };
    eprintln!("postgres: test cluster on 127.0.0.1:{} ready in {:?}", cluster.port, began.elapsed());
    cluster
}

/// Starts the server from a thread that lives as long as the test binary: the kernel sends
/// the parent-death signal when the thread that forked the child ends, not the process.
fn spawn_server(program: PathBuf, root: &Path, data: &Path, port: u16, owner: Option<(u32, u32)>) -> libc::pid_t {
    let log = File::options().create(true).append(true).open(root.join("server.log")).unwrap();
    let mut cmd = Command::new(program);
    cmd.arg("-D")
        .arg(data)
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .arg("-k")
        .arg(root)
        // fsync off: a test cluster's data is thrown away.
        .args(["-F", "-c", "max_connections=300"])
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log);
    as_owner(&mut cmd, owner);
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls (prctl, getppid) between fork and exec. They run
    // after std has changed the uid, which would clear an earlier parent-death signal.
    unsafe {
        cmd.pre_exec(move || {
            // SIGQUIT is PostgreSQL's immediate shutdown: it takes its backends down with it.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGQUIT) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(io::Error::other("the test binary exited"));
            }
            Ok(())
        });
    }
    let (sent, received) = mpsc::channel();
    std::thread::Builder::new()
        .name("postgres".into())
        .spawn(move || {
            let _ = sent.send(cmd.spawn().map(|child| child.id() as libc::pid_t));
            loop {
                std::thread::park();
            }
        })
        .unwrap();
    received.recv().unwrap().unwrap_or_else(|e| panic!("postgres could not start: {e}"))
}

/// Waits until the server at `port` is this cluster's and accepts connections; false when
/// the server exited first (its port was taken).
fn wait_ready(psql_tool: &Path, pid: libc::pid_t, port: u16, data: &Path) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        // SAFETY: reaps only our own child, without blocking.
        if unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) } == pid {
            return false;
        }
        let out = psql(psql_tool.to_path_buf(), port, "SHOW data_directory");
        // The data directory tells our server from another one on the same port.
        if out.status.success() && Path::new(String::from_utf8_lossy(&out.stdout).trim()) == data {
            return true;
        }
        assert!(Instant::now() < deadline, "postgres did not accept connections on {port} within 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn psql(program: PathBuf, port: u16, sql: &str) -> Output {
    Command::new(program)
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", SUPERUSER, "-d", "postgres"])
        .args(["-X", "-v", "ON_ERROR_STOP=1", "-tAq", "-c", sql])
        .env("PGCONNECT_TIMEOUT", "5")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("psql: {e}"))
}

/// At exit: the server stops (immediate shutdown), then its directory goes.
extern "C" fn stop_server() {
    let Some((pid, root)) = SERVER.get() else { return };
    // SAFETY: signals and reaps our own child.
    unsafe { libc::kill(*pid, libc::SIGQUIT) };
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        // SAFETY: as above.
        if unsafe { libc::waitpid(*pid, std::ptr::null_mut(), libc::WNOHANG) } != 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = fs::remove_dir_all(root);
}

/// Removes the directories of clusters whose test binary is gone (killed before its exit
/// handler ran; its server died with it).
fn remove_stale_clusters() {
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) =
            name.to_str().and_then(|n| n.strip_prefix(DIR_PREFIX)).and_then(|p| p.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        // SAFETY: signal 0 only asks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// The newest server of Debian's packages, or `None` to take the tools from PATH.
fn server_bin() -> Option<PathBuf> {
    let entries = fs::read_dir("/usr/lib/postgresql").ok()?;
    entries
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse::<u32>().ok()?, e.path().join("bin"))))
        .filter(|(_, bin)| bin.join("initdb").exists())
        .max_by_key(|(version, _)| *version)
        .map(|(_, bin)| bin)
}

fn tool(bin: &Option<PathBuf>, name: &str) -> PathBuf {
    bin.as_ref().map_or_else(|| PathBuf::from(name), |b| b.join(name))
}

/// PostgreSQL refuses to run as root: then it runs as the `postgres` user Debian's package
/// makes; otherwise as whoever runs the tests (`None`).
fn owner() -> Option<(u32, u32)> {
    // SAFETY: plain libc queries; getpwnam's static result is read at once.
    unsafe {
        if libc::geteuid() != 0 {
            return None;
        }
        let user = libc::getpwnam(c"postgres".as_ptr());
        assert!(!user.is_null(), "running as root needs the `postgres` user: scripts/deps installs postgresql");
        Some(((*user).pw_uid, (*user).pw_gid))
    }
}

fn as_owner(cmd: &mut Command, owner: Option<(u32, u32)>) {
    if let Some((uid, gid)) = owner {
        cmd.uid(uid).gid(gid);
    }
}

fn log_tail(root: &Path) -> String {
    let log = fs::read_to_string(root.join("server.log")).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}
