//! Disk use and clean-up. `usage` measures `.kiln/`: the store and each session's
//! directory (working copy, attachments, the rest). `clean_up` removes the working copies
//! of archived and rejected sessions, keeping their checkpoints, attachments and records:
//! the working copy is rebuilt from the newest checkpoint when the session is used again
//! (recovery), so a copy with changes no checkpoint holds gets one first.
//!
//! Sizes are allocated bytes (blocks on disk, as `du` counts them), since that is what
//! removing a file frees: a `node_modules` of many small files uses far more than the sum
//! of its lengths. A hard-linked file is counted once per session; links are never
//! followed. Walks run on the blocking pool, a few at a time.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use git2::Oid;

use crate::checkpoint;
use crate::events::EventBus;
use crate::ids::SessionId;
use crate::session::{self, publish, record};
use crate::workspace::{Context, Workspace};
use kiln_records::store::checkpoints;
use kiln_runtime::clock::now;
use kiln_types::error::{ApiError, Result};
use kiln_types::*;

/// How many directory walks run at once: enough to overlap I/O waits, few enough to
/// leave the blocking pool (and the machine's cores) to the sessions' own work.
const CONCURRENT_WALKS: usize = 4;

/// The label of the checkpoint clean-up takes of a working copy with unsaved changes.
pub(crate) const CHECKPOINT_LABEL: &str = "Before clean-up";

/// Measures `.kiln/store.git` and every session directory in `.kiln/sessions`.
pub(crate) async fn usage(cx: &Context, _: EmptyArgs) -> Result<DiskUsageView> {
    let ws = &cx.ws;
    let sessions_dir = ws.sessions_dir();
    let store = ws.store_path();
    let (root_bytes, children) = blocking(move || -> std::io::Result<(u64, Vec<PathBuf>)> {
        // The directory's own blocks, then each entry measured on its own.
        let meta = match std::fs::symlink_metadata(&sessions_dir) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((0, Vec::new())),
            Err(e) => return Err(e),
        };
        let mut children: Vec<PathBuf> = std::fs::read_dir(&sessions_dir)?.flatten().map(|e| e.path()).collect();
        children.sort();
        Ok((allocated(&meta), children))
    })
    .await?
    .map_err(|e| ApiError::internal("reading .kiln/sessions", e))?;

    let limit = Arc::new(tokio::sync::Semaphore::new(CONCURRENT_WALKS));
    let mut walks = tokio::task::JoinSet::new();
    {
        let limit = limit.clone();
        walks.spawn(async move {
            let _permit = limit.acquire_owned().await;
            (None, blocking(move || Measured::Plain(size_of(&store).unwrap_or(0))).await)
        });
    }
    for child in children {
        let limit = limit.clone();
        walks.spawn(async move {
            let _permit = limit.acquire_owned().await;
            let name = child.file_name().map(|n| n.to_string_lossy().into_owned());
            (name, blocking(move || measure_child(&child)).await)
        });
    }
    let (mut store_bytes, mut sessions_bytes, mut sessions) = (0, root_bytes, Vec::new());
    while let Some(joined) = walks.join_next().await {
        let (name, measured) = joined.map_err(|e| ApiError::internal("measuring the disk", e))?;
        match (name, measured?) {
            (None, Measured::Plain(bytes)) => store_bytes = bytes,
            (Some(_), Measured::Plain(bytes)) => sessions_bytes += bytes,
            (Some(name), Measured::Session(parts)) => {
                sessions_bytes += parts.total();
                // Only a directory named by a session id is a session's; anything else
                // counts in the total alone.
                match SessionId::parse(&name) {
                    Ok(id) => sessions.push(parts.view(id.to_string())),
                    Err(_) => continue,
                }
            }
            // The store is measured whole, as one size.
            (None, Measured::Session(parts)) => store_bytes = parts.total(),
        }
    }
    sessions.sort_by(|a, b| a.session_id.cmp(&b.session_id));
    Ok(DiskUsageView { store_bytes, sessions_bytes, sessions, measured_at: now() })
}

/// What clean-up would remove (a dry run) or removes (`apply`): the working copies of
/// archived and rejected sessions that still have one. A session something runs for is
/// skipped, as is one whose copy cannot be kept in a checkpoint first.
pub(crate) async fn clean_up(cx: &Context, args: CleanUpArgs) -> Result<CleanUpView> {
    let Context { ws, events } = cx;
    let apply = args.apply.unwrap_or(false);
    let mut view = CleanUpView { applied: apply, sessions: Vec::new(), skipped: Vec::new(), freed_bytes: 0 };
    for (id, title) in candidates(ws).await? {
        let skip = |reason: String| SkippedSession { session_id: id.to_string(), title: title.clone(), reason };
        if let Some(reason) = busy(ws, &id) {
            view.skipped.push(skip(reason));
            continue;
        }
        let outcome = if apply { remove(ws, events, &id).await } else { would_remove(ws, &id).await };
        match outcome {
            Ok(Some((bytes, checkpoint, checkpoint_taken))) => {
                view.freed_bytes += bytes;
                let cleaned = CleanedSession { session_id: id.to_string(), title, bytes, checkpoint, checkpoint_taken };
                view.sessions.push(cleaned);
            }
            // The copy went meanwhile: nothing to do.
            Ok(None) => {}
            Err(e) => view.skipped.push(skip(e.message)),
        }
    }
    Ok(view)
}

/// Archived and rejected sessions (not deleted ones) whose directory holds a working
/// copy, oldest first, with their titles.
async fn candidates(ws: &Workspace) -> Result<Vec<(SessionId, String)>> {
    let active: HashSet<String> =
        kiln_records::store::sessions::list_ids(&ws.pool, false).await?.into_iter().collect::<HashSet<_>>();
    let mut out = Vec::new();
    for raw in kiln_records::store::sessions::list_ids(&ws.pool, true).await?.into_iter().rev() {
        if active.contains(&raw) {
            continue;
        }
        let id = SessionId::parse(&raw)?;
        // Read before the record, so sessions without a copy cost no more than this.
        if std::fs::symlink_metadata(ws.session_workdir(&id)).is_err() {
            continue;
        }
        // The record alone: a session's full view would hash its modules for its reviews.
        let s = kiln_records::store::sessions::load(&ws.pool, id.as_str(), false).await?;
        let shelved = s.archived_at.is_some() || s.rejected_at.is_some();
        if shelved && s.deleted_at.is_none() {
            out.push((id, s.title));
        }
    }
    Ok(out)
}

/// Why clean-up must leave the session's working copy alone now, if it must.
fn busy(ws: &Workspace, id: &SessionId) -> Option<String> {
    if ws.is_running(id.as_str()) {
        return Some("it is running (a turn, the planner or its setup); stop it first".into());
    }
    if ws.previews.contains(id.as_str()) {
        return Some("its preview runs from the working copy; stop the preview first".into());
    }
    None
}

/// A dry run's line: the copy's size and the newest checkpoint. Nothing is read but
/// sizes, so a dry run writes nothing (no snapshot, no stat cache).
async fn would_remove(ws: &Workspace, id: &SessionId) -> Result<Option<(u64, i64, bool)>> {
    let session_dir = ws.session_dir(id);
    let bytes = blocking(move || copy_bytes(&session_dir)).await?;
    let Some(bytes) = bytes else { return Ok(None) };
    let (latest, _) = checkpoints::latest(&ws.pool, id.as_str()).await?;
    Ok(Some((bytes, latest, false)))
}

/// Keeps the working copy in a checkpoint when it changed since the newest one, removes
/// it and its stat cache, says so in the transcript and tells every view.
async fn remove(ws: &Workspace, events: &EventBus, id: &SessionId) -> Result<Option<(u64, i64, bool)>> {
    // A plain directory inside `.kiln/sessions`, never a link followed out of it.
    let Some(session_dir) = session::removable_session_dir(ws, id)? else { return Ok(None) };
    let workdir = session_dir.join("workspace");
    match std::fs::symlink_metadata(&workdir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(ApiError::new(
                kiln_types::error::ErrorCode::PathNotAllowed,
                "its working copy is not a plain directory; nothing was removed",
            ))
        }
        Err(_) => return Ok(None),
    }
    let (checkpoint, taken) = keep_in_checkpoint(ws, events, id).await?;
    // Taking the checkpoint awaited: the session may have been restored, or started work,
    // meanwhile. Then the copy stays (the checkpoint taken is harmless).
    let s = kiln_records::store::sessions::load(&ws.pool, id.as_str(), false).await?;
    if s.archived_at.is_none() && s.rejected_at.is_none() {
        return Err(ApiError::new(
            kiln_types::error::ErrorCode::SessionNotArchived,
            "it was restored meanwhile; nothing was removed",
        ));
    }
    if let Some(reason) = busy(ws, id) {
        return Err(ApiError::new(kiln_types::error::ErrorCode::SessionRunning, reason));
    }
    crate::watch::stop(&ws.session_workdir(id));
    let bytes = blocking(move || -> std::io::Result<u64> {
        let bytes = copy_bytes(&session_dir).unwrap_or(0);
        // `remove_dir_all` removes a link inside, never what it points to.
        std::fs::remove_dir_all(session_dir.join("workspace"))?;
        // The copy of the session's base its failing gates were compared on (`gates::baseline`).
        match std::fs::remove_dir_all(session_dir.join(crate::workspace::BASELINE_DIR)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        match std::fs::remove_file(session_dir.join("index")) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        Ok(bytes)
    })
    .await?
    .map_err(|e| ApiError::internal("removing the working copy", e))?;
    // So the rebuild on the session's next use says nothing was lost.
    crate::recover::mark_removed(ws, id, checkpoint)?;
    let text = format!(
        "Working copy removed by clean-up ({}); it will be rebuilt from checkpoint {checkpoint} when the session is used again.",
        human_bytes(bytes)
    );
    record(ws, events, id, EntryKind::System, None, &text).await?;
    publish(ws, events, id).await?;
    Ok(Some((bytes, checkpoint, taken)))
}

/// The newest checkpoint once it holds the working copy as it is: a new one
/// (`CHECKPOINT_LABEL`) when the copy differs from the newest (also when the copy was
/// restored to an older one, since the rebuild starts from the newest). `true` when taken.
async fn keep_in_checkpoint(ws: &Workspace, events: &EventBus, id: &SessionId) -> Result<(i64, bool)> {
    let (latest, commit) = checkpoints::latest(&ws.pool, id.as_str()).await?;
    let tree = {
        let _guard = ws.store_lock.lock().await;
        let store = ws.open_store()?;
        let tree = crate::working_copy::snapshot_workdir(&store, &ws.session_workdir(id))?;
        let newest = Oid::from_str(&commit).map_err(|e| ApiError::internal("checkpoint id", e))?;
        if store.find_commit(newest)?.tree_id() == tree {
            return Ok((latest, false));
        }
        tree
    };
    let sequence = checkpoint::take(ws, events, id, tree, CHECKPOINT_LABEL, None, None).await?;
    Ok((sequence, true))
}

/// "950 B", "12.3 MB", "1.2 GB": decimal units, as the UI shows them (`ui/src/lib/bytes.ts`).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KB", "MB", "GB", "TB", "PB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1000.0;
    let mut unit = 0;
    // 999.95 would print as "1000.0": move up a unit first.
    while value >= 999.95 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    let text = format!("{value:.1}");
    format!("{} {}", text.strip_suffix(".0").unwrap_or(&text), UNITS[unit])
}

/// What one entry of `.kiln/sessions` measured.
enum Measured {
    /// A file, a link, or the store: one size.
    Plain(u64),
    Session(Parts),
}

/// A session directory's sizes by part.
#[derive(Default)]
struct Parts {
    working_copy: Option<u64>,
    attachments: u64,
    other: u64,
}

impl Parts {
    fn total(&self) -> u64 {
        self.working_copy.unwrap_or(0) + self.attachments + self.other
    }

    fn view(self, session_id: String) -> SessionDiskUsage {
        SessionDiskUsage {
            session_id,
            working_copy_bytes: self.working_copy,
            attachments_bytes: self.attachments,
            other_bytes: self.other,
        }
    }
}

/// One entry of `.kiln/sessions`: a real directory by part, anything else (a link, a
/// stray file) by its own size.
fn measure_child(path: &Path) -> Measured {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return Measured::Plain(0) };
    if !meta.is_dir() {
        return Measured::Plain(allocated(&meta));
    }
    let mut seen = HashSet::new();
    let mut parts = Parts { other: allocated(&meta), ..Parts::default() };
    let Ok(entries) = std::fs::read_dir(path) else { return Measured::Session(parts) };
    for entry in entries.flatten() {
        let bytes = walk(&entry.path(), &mut seen);
        match entry.file_name().to_str() {
            // A working copy replaced by a link is no working copy.
            Some("workspace") if entry.file_type().is_ok_and(|t| t.is_dir()) => parts.working_copy = Some(bytes),
            Some("attachments") => parts.attachments += bytes,
            _ => parts.other += bytes,
        }
    }
    Measured::Session(parts)
}

/// The working copy and stat cache of the session directory `dir`; `None` without a copy.
fn copy_bytes(dir: &Path) -> Option<u64> {
    let workdir = dir.join("workspace");
    if !std::fs::symlink_metadata(&workdir).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let mut seen = HashSet::new();
    Some(walk(&workdir, &mut seen) + walk(&dir.join("index"), &mut seen))
}

/// The whole of `path` (0 when absent).
fn size_of(path: &Path) -> Option<u64> {
    std::fs::symlink_metadata(path).ok()?;
    Some(walk(path, &mut HashSet::new()))
}

/// The allocated bytes under `path`, itself included, never following a link. An entry
/// that vanishes or cannot be read while the walk runs (a turn may be writing) is left
/// out rather than failing the whole. `seen` holds the hard-linked files already counted.
fn walk(path: &Path, seen: &mut HashSet<(u64, u64)>) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return 0 };
    let mut total = counted(&meta, seen);
    if !meta.is_dir() {
        return total;
    }
    // Depth-first with an explicit stack: a deep tree cannot overflow the thread's.
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            // `DirEntry::metadata` does not follow a link.
            let Ok(meta) = entry.metadata() else { continue };
            total += counted(&meta, seen);
            if meta.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    total
}

/// An entry's allocated bytes, or 0 for a further link to a file already counted.
fn counted(meta: &std::fs::Metadata, seen: &mut HashSet<(u64, u64)>) -> u64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if !meta.is_dir() && meta.nlink() > 1 && !seen.insert((meta.dev(), meta.ino())) {
            return 0;
        }
    }
    #[cfg(not(unix))]
    let _ = seen;
    allocated(meta)
}

#[cfg(unix)]
fn allocated(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    // `st_blocks` is in 512-byte units whatever the file system's block size.
    meta.blocks() * 512
}

#[cfg(not(unix))]
fn allocated(meta: &std::fs::Metadata) -> u64 {
    meta.len()
}

/// Runs file system work on the blocking pool.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(work).await.map_err(|e| ApiError::internal("measuring the disk", e))
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(1000), "1 KB");
        assert_eq!(human_bytes(12_345_678), "12.3 MB");
        assert_eq!(human_bytes(1_200_000_000), "1.2 GB");
        assert_eq!(human_bytes(999_960), "1 MB");
    }
}
