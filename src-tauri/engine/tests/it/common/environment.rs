//! The test process's own environment, set once before the first test starts.
//!
//! All engine tests share one process (`tests/it`). Several of them prove that something
//! in Kiln's environment never reaches a child process, so they need it planted there;
//! and the git-pr tests need a recording `git` first on PATH for the whole process.
//! Changing the environment while other tests run would let a test see it change under
//! it (and `setenv` racing a C library's `getenv` is undefined behaviour), so it is
//! changed exactly once, before `main`, and never again.

use std::path::PathBuf;
use std::sync::OnceLock;

/// Variables planted in the test process that no child may see (or, for `LC_`, that
/// the allowlist keeps), each named by the test that checks it.
const PLANTED: &[(&str, &str)] = &[
    // delivery_git: git sees only the allowlisted environment.
    ("KILN_SECRET_TEST", "1"),
    ("KILN_GIT_TOKEN", "from-kilns-own-environment"),
    ("GIT_ASKPASS", "/nonexistent/askpass"),
    ("LC_KILN_TEST", "kept"),
    // gates: gates see only the allowlisted environment.
    ("KILN_TEST_SECRET_TOKEN", "do-not-leak"),
    // scope: scoped gates, setup, preview and commands find no secret.
    ("KILN_SCOPE_TEST_SECRET", "do-not-leak"),
    // driver_health: an agent CLI is asked its version without Kiln's variables.
    ("KILN_CONFIG_DIR", "/secret/tokens"),
];

/// The recording `git` first on PATH: each run (of every test in the process) writes
/// its argv and environment to `record` (see `recorded_git_runs`). Its directory is
/// removed when the process exits (statics are never dropped).
pub(crate) struct GitRecorder {
    dir: PathBuf,
    pub record: PathBuf,
}

static GIT_RECORDER: OnceLock<GitRecorder> = OnceLock::new();

/// The recording git every test's `git` runs through.
pub(crate) fn git_recorder() -> &'static GitRecorder {
    GIT_RECORDER.get().expect("the test environment is set before main")
}

// SAFETY: runs before main, while the process has one thread; it uses only the file
// system, one `sh` to find git, `set_var` and `atexit`.
#[ctor::ctor(unsafe)]
fn set_test_environment() {
    for (key, value) in PLANTED.iter().chain(super::s3::CREDENTIALS) {
        std::env::set_var(key, value);
    }
    // In the system temp dir, which confined commands may write: their git records too.
    let dir = tempfile::tempdir().unwrap().keep();
    let bin = dir.join("bin");
    let record = dir.join("record");
    super::recording_git(&bin, &record);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut parts = vec![bin];
    parts.extend(std::env::split_paths(&path));
    std::env::set_var("PATH", std::env::join_paths(parts).unwrap());
    let _ = GIT_RECORDER.set(GitRecorder { dir, record });
    // SAFETY: registers a plain function; no other thread exists yet.
    unsafe { libc::atexit(remove_git_recorder) };
}

extern "C" fn remove_git_recorder() {
    if let Some(recorder) = GIT_RECORDER.get() {
        let _ = std::fs::remove_dir_all(&recorder.dir);
    }
}
