//! One engine per workspace: opening a workspace takes an exclusive lock on
//! `.kiln/engine.lock` and keeps it while the workspace is open in this process. Two
//! engines on one `kiln.db` and `store.git` would each keep their own view of the running
//! turns (and, started together, race on the migrations). The lock is the kernel's
//! (`flock`, `LockFileEx` on Windows), so it goes with the process however that ends; the
//! file only says who holds it, for the error another process shows.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use kiln_types::error::{ApiError, ErrorCode, Result};

pub const LOCK_FILE: &str = "engine.lock";

/// How long a refused opening waits for the holder to write who it is: it takes the lock
/// first and writes just after, so two processes started together may see it empty.
const HOLDER_WAIT: Duration = Duration::from_secs(2);

/// The kind of Kiln process holding a workspace, as its error names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HolderKind {
    Desktop,
    Serve,
    Cli,
}

impl HolderKind {
    fn described(self) -> &'static str {
        match self {
            HolderKind::Desktop => "the Kiln desktop app",
            HolderKind::Serve => "`kiln serve`",
            HolderKind::Cli => "a `kiln` command",
        }
    }
}

/// What the lock file says about its holder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    pub kind: HolderKind,
    pub pid: u32,
    /// When it took the lock (RFC 3339).
    pub since: String,
}

/// The held lock: closing the file (dropping this) lets the next process in.
#[derive(Debug)]
pub struct WorkspaceLock {
    /// The workspace's `.kiln` directory.
    kiln_dir: PathBuf,
    _file: File,
}

impl WorkspaceLock {
    /// Takes the lock of the workspace whose state is in `kiln_dir`, or answers
    /// `WORKSPACE_IN_USE` naming the process that holds it. Never waits for the lock:
    /// the holder may run for days.
    pub async fn take(kiln_dir: &Path, kind: HolderKind) -> Result<WorkspaceLock> {
        let path = kiln_dir.join(LOCK_FILE);
        // Not truncated on open: that would wipe the holder's name before we know we hold it.
        let mut file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Err(in_use(kiln_dir, &path).await),
            Err(std::fs::TryLockError::Error(e)) => return Err(ApiError::internal("locking the workspace", e)),
        }
        let holder = Holder { kind, pid: std::process::id(), since: kiln_runtime::clock::now() };
        let write = |file: &mut File| -> std::io::Result<()> {
            file.set_len(0)?;
            file.seek(SeekFrom::Start(0))?;
            file.write_all(&serde_json::to_vec(&holder).expect("a holder serializes"))?;
            file.flush()
        };
        // The lock is what counts; a holder that cannot say who it is still holds it.
        if let Err(e) = write(&mut file) {
            tracing::warn!("writing the workspace lock's holder: {e}");
        }
        Ok(WorkspaceLock { kiln_dir: kiln_dir.to_path_buf(), _file: file })
    }

    /// Whether this is the lock of the workspace whose state is in `kiln_dir`.
    pub fn guards(&self, kiln_dir: &Path) -> bool {
        self.kiln_dir == kiln_dir
    }
}

/// The refusal, naming the holder once it has written who it is.
async fn in_use(kiln_dir: &Path, path: &Path) -> ApiError {
    let deadline = tokio::time::Instant::now() + HOLDER_WAIT;
    let holder = loop {
        if let Some(holder) = read_holder(path) {
            break Some(holder);
        }
        if tokio::time::Instant::now() >= deadline {
            break None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let workspace = kiln_dir.parent().unwrap_or(kiln_dir).display();
    let who = match holder {
        Some(h) => format!("{} (pid {}, since {})", h.kind.described(), h.pid, h.since),
        None => "another Kiln process".to_string(),
    };
    ApiError::new(
        ErrorCode::WorkspaceInUse,
        format!("`{workspace}` is open in {who}: one Kiln process works on a workspace at a time; use that one, or close it first"),
    )
}

fn read_holder(path: &Path) -> Option<Holder> {
    let mut text = String::new();
    File::open(path).ok()?.read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

/// Waits for an exclusive lock on `path` (created when missing) and holds it until the
/// returned file is dropped: for short steps several processes must not do at once, such
/// as bringing a shared database's schema up to date.
pub async fn wait_exclusive(path: &Path) -> Result<File> {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path)?;
        file.lock()?;
        Ok::<File, std::io::Error>(file)
    })
    .await
    .map_err(|e| ApiError::internal("waiting for a lock", e))?
    .map_err(|e| ApiError::internal("waiting for a lock", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_second_take_is_refused_naming_the_holder_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let kiln = dir.path().join(".kiln");
        std::fs::create_dir_all(&kiln).unwrap();
        let first = WorkspaceLock::take(&kiln, HolderKind::Serve).await.unwrap();
        let refused = WorkspaceLock::take(&kiln, HolderKind::Desktop).await.unwrap_err();
        assert_eq!(refused.code, ErrorCode::WorkspaceInUse);
        assert!(refused.message.contains(&format!("`kiln serve` (pid {}", std::process::id())), "{}", refused.message);
        drop(first);
        let second = WorkspaceLock::take(&kiln, HolderKind::Desktop).await.unwrap();
        assert!(second.guards(&kiln));
        assert_eq!(read_holder(&kiln.join(LOCK_FILE)).unwrap().kind, HolderKind::Desktop);
        let refused = WorkspaceLock::take(&kiln, HolderKind::Cli).await.unwrap_err();
        assert!(
            refused.message.contains(&format!("the Kiln desktop app (pid {}", std::process::id())),
            "{}",
            refused.message
        );
    }
}
