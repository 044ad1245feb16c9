//! Recovery of a session's working copy (README: Recovery). Before a session is worked
//! on, its working copy is checked whole: the directory is there, its stat cache
//! (`sessions/<id>/index`) reads, and the checkpoint it stands on reads from `store.git`
//! (whose refs and records `checkpoints::reconcile` first makes agree). A missing or
//! damaged copy is rebuilt from that checkpoint (or the newest older one that reads)
//! into a new sibling directory, which is renamed into place; a damaged copy is moved
//! aside first, never removed, and the transcript says where it is, which checkpoint the
//! new one holds and what was lost since it.
//!
//! A session directory or working copy that is a symbolic link is left alone: Kiln never
//! follows or moves one (the operations refuse it, `PATH_NOT_ALLOWED`), the operator
//! sorts it out.

pub(crate) mod bucket;
pub(crate) mod checkpoints;
pub(crate) mod interrupted;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use git2::Oid;
use serde::{Deserialize, Serialize};

use crate::events::EventBus;
use crate::ids::SessionId;
use crate::session::{publish, record};
use crate::workspace::Workspace;
use kiln_records::snapshot::{self, Source};
use kiln_records::store::checkpoints as checkpoint_records;
use kiln_records::store::sessions as records;
use kiln_runtime::clock::now;
use kiln_types::error::{ApiError, Result};
use kiln_types::*;

/// The most differing files a rebuild's transcript entry names one by one.
const LISTED: usize = 20;

/// The marker the disk clean-up leaves when it removes a working copy on purpose.
const REMOVED_MARKER: &str = "removed.json";

/// What a rebuild put in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rebuilt {
    /// The checkpoint the new working copy holds.
    pub sequence: i64,
    /// The repository has a setup step (dependencies are in no checkpoint).
    pub setup_needed: bool,
}

/// The per-session lock every check takes, so the check at workspace open and the one
/// before an operation never run at once, and an operation waits for the first.
/// Keyed by the session's directory, so two engines of one process (tests) stay apart.
pub(crate) fn lock(ws: &Workspace, id: &SessionId) -> Arc<tokio::sync::Mutex<()>> {
    static LOCKS: Mutex<Option<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>> = Mutex::new(None);
    let mut locks = LOCKS.lock().unwrap();
    locks.get_or_insert_with(HashMap::new).entry(ws.session_dir(id)).or_default().clone()
}

/// What the clean-up records when it removes an archived session's working copy right
/// after checkpointing it.
#[derive(Serialize, Deserialize)]
struct Removed {
    sequence: i64,
    at: String,
}

/// Records that the disk clean-up removed the session's working copy at checkpoint
/// `sequence` (taken just before), so its rebuild can say nothing was lost. Call it
/// after removing `sessions/<id>/workspace`.
pub(crate) fn mark_removed(ws: &Workspace, id: &SessionId, sequence: i64) -> Result<()> {
    let text = serde_json::to_string(&Removed { sequence, at: now() }).map_err(|e| ApiError::internal("marker", e))?;
    std::fs::create_dir_all(ws.session_dir(id))?;
    std::fs::write(ws.session_dir(id).join(REMOVED_MARKER), text)?;
    Ok(())
}

/// Why a working copy is rebuilt.
enum Problem {
    Missing,
    Damaged(String),
}

/// Checks the session's working copy and rebuilds it when it is missing or damaged;
/// `Some` when it did. Nothing happens to a deleted session, to one that runs (its turn,
/// setup or gates use the copy; the next operation after them checks again), or to a
/// session directory or working copy that is a link.
pub(crate) async fn ensure_working_copy(ws: &Workspace, events: &EventBus, id: &SessionId) -> Result<Option<Rebuilt>> {
    let session = records::load(&ws.pool, id.as_str(), false).await?;
    if session.deleted_at.is_some() || ws.is_running(id.as_str()) {
        return Ok(None);
    }
    if !is_dir_or_missing(&ws.session_dir(id))? {
        return Ok(None);
    }
    let workdir = ws.session_workdir(id);
    let present = match std::fs::symlink_metadata(&workdir) {
        Ok(meta) if meta.is_dir() => true,
        Ok(_) => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(e.into()),
    };
    let notes = checkpoints::reconcile(ws, id).await?;
    for note in &notes {
        record(ws, events, id, EntryKind::System, None, note).await?;
    }

    // The checkpoint the working copy stands on: the one restored last, else the newest.
    let rows = checkpoint_records::list(&ws.pool, id.as_str()).await?;
    let current = records::current_checkpoint(&ws.pool, id.as_str()).await?.flatten();
    let wanted = current.or(rows.last().map(|r| r.0)).unwrap_or(0);
    let (source, unreadable) = {
        let _guard = ws.store_lock.lock().await;
        let store = ws.open_store()?;
        let mut unreadable = Vec::new();
        let mut source = None;
        for (sequence, commit, _) in rows.iter().rev().filter(|r| r.0 <= wanted) {
            let readable =
                Oid::from_str(commit).ok().and_then(|oid| store.find_commit(oid).ok()).and_then(|c| c.tree().ok());
            match readable {
                Some(_) => {
                    source = Some((*sequence, Oid::from_str(commit).expect("read above")));
                    break;
                }
                None => unreadable.push(*sequence),
            }
        }
        (source, unreadable)
    };

    let problem = if !present {
        Some(Problem::Missing)
    } else if let Some(why) = stat_cache_problem(&ws.session_dir(id).join("index")) {
        Some(Problem::Damaged(why))
    } else {
        unreadable.first().map(|first| Problem::Damaged(format!("checkpoint {first} could not be read from the store")))
    };
    let Some(problem) = problem else { return Ok(None) };
    let Some((sequence, commit)) = source else {
        if present {
            // The copy is all there is: better kept than replaced by nothing.
            tracing::error!("session {id}: no checkpoint reads from the store; the working copy is kept as it is");
            return Ok(None);
        }
        return Err(ApiError::internal(
            "recovery",
            format!("the working copy of session {id} is missing and none of its checkpoints could be read"),
        ));
    };
    let rebuilt = rebuild(ws, events, id, &session, problem, sequence, commit, &unreadable).await?;
    Ok(Some(rebuilt))
}

/// Whether `path` is a real directory or nothing (a link or a file is neither).
fn is_dir_or_missing(path: &Path) -> Result<bool> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => Ok(meta.is_dir()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(e.into()),
    }
}

/// Why the stat cache at `index` cannot be used, if it cannot. None at all is fine: it
/// is made again by the next snapshot (the store's collection removes other sessions'
/// caches on purpose).
fn stat_cache_problem(index: &Path) -> Option<String> {
    match std::fs::symlink_metadata(index) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(format!("its stat cache could not be read: {e}")),
        Ok(meta) if !meta.is_file() => return Some("its stat cache is not a file".into()),
        Ok(_) => {}
    }
    git2::Index::open(index).err().map(|e| format!("its stat cache could not be read: {}", e.message()))
}

#[allow(clippy::too_many_arguments)]
async fn rebuild(
    ws: &Workspace,
    events: &EventBus,
    id: &SessionId,
    session: &SessionView,
    problem: Problem,
    sequence: i64,
    commit: Oid,
    unreadable: &[i64],
) -> Result<Rebuilt> {
    let session_dir = ws.session_dir(id);
    let workdir = ws.session_workdir(id);
    let stamp = now().replace([':', '.'], "-");
    // Built beside the working copy (the same file system, so the rename is atomic) and
    // swapped in whole: a process stopped half-way leaves the old state and a stray
    // directory, never half a working copy.
    let fresh = session_dir.join(format!("workspace.rebuild-{stamp}"));
    if std::fs::symlink_metadata(&fresh).is_ok() {
        std::fs::remove_dir_all(&fresh)?;
    }
    let made = {
        let _guard = ws.store_lock.lock().await;
        let store = ws.open_store()?;
        let host_files = ws.git.as_ref().and_then(|git| {
            let repo = git2::Repository::open(&git.workdir).ok()?;
            kiln_records::materialize::host_files(&git.workdir, repo.path(), &git.prefix)
        });
        let made = kiln_records::materialize::working_copy(&store, commit, &fresh, host_files.as_ref())?;
        // git in the session answers again, at what the checkpoint kept. A store from
        // before checkouts existed has no base for it: the copy is then without one.
        if let Some(at) = kiln_records::checkout::commit_at(&store, id.as_str(), sequence) {
            let objects = ws.git.as_ref().map(|g| g.objects.as_path());
            kiln_records::checkout::attach(&store, &fresh, id.as_str(), at, objects, &made.entries)?;
        }
        made
    };
    ws.copy_session_files(&fresh);
    crate::attachments::restore_copies(ws, id, &fresh).await?;
    let aside = match problem {
        Problem::Damaged(_) => {
            let aside = session_dir.join(format!("damaged-{stamp}"));
            std::fs::rename(&workdir, &aside)?;
            Some(aside)
        }
        Problem::Missing => None,
    };
    std::fs::rename(&fresh, &workdir)?;
    // The watches name the old copy's directories; the next snapshot watches the new one.
    crate::watch::stop(&workdir);
    // The cache described the old files; the new ones are read once by the next snapshot.
    match std::fs::remove_file(session_dir.join("index")) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
        _ => {}
    }
    ws.diffs.forget(id.as_str());
    // …and primed again from the files just written, so the next snapshot reads none
    // of them (the copies made since were written after their stamp, so they are read).
    {
        let _guard = ws.store_lock.lock().await;
        let primed = ws
            .open_store()
            .and_then(|store| kiln_records::prime::stat_cache(&store, &made, &session_dir.join("index")));
        if let Err(e) = primed {
            tracing::warn!("priming the stat cache of {id}: {}", e.message);
        }
    }

    let differing = match &aside {
        Some(aside) => differing_files(ws, aside, commit).await?,
        None => Vec::new(),
    };
    let marker = session_dir.join(REMOVED_MARKER);
    let removed: Option<Removed> =
        std::fs::read_to_string(&marker).ok().and_then(|text| serde_json::from_str(&text).ok());
    let _ = std::fs::remove_file(&marker);
    let setup_needed = crate::detect::setup(&workdir, &ws.config, &ws.modules).is_some();

    let label = session
        .checkpoints
        .iter()
        .find(|c| c.sequence == sequence)
        .map(|c| c.label.clone())
        .unwrap_or_else(|| "the starting point".into());
    let named = format!("checkpoint {sequence} (“{label}”)");
    let mut text = match (&problem, &aside) {
        (Problem::Missing, _) if removed.as_ref().is_some_and(|r| r.sequence == sequence) => format!(
            "The working copy was removed by clean-up right after {named} was taken; it was rebuilt from that checkpoint. Nothing was lost."
        ),
        (Problem::Missing, _) => format!(
            "The working copy was missing; it was rebuilt from {named}. Changes made after it, if any, were lost."
        ),
        (Problem::Damaged(why), Some(aside)) => {
            let rel = aside.strip_prefix(&ws.root).unwrap_or(aside).display().to_string();
            let mut text = format!(
                "The working copy was damaged ({why}); it was rebuilt from {named}. The damaged copy was moved aside to `{rel}`, nothing in it was removed."
            );
            if differing.is_empty() {
                text.push_str(" Its files are the same as the checkpoint's: nothing was lost.");
            } else {
                text.push_str(&format!(
                    " {} file{} there differ{} from the checkpoint (changes since it, not in the new working copy):\n{}",
                    differing.len(),
                    if differing.len() == 1 { "" } else { "s" },
                    if differing.len() == 1 { "s" } else { "" },
                    listed(&differing)
                ));
            }
            text
        }
        (Problem::Damaged(_), None) => unreachable!("a damaged copy is always moved aside"),
    };
    if !unreadable.is_empty() {
        let list: Vec<String> = unreadable.iter().map(|s| s.to_string()).collect();
        text.push_str(&format!(
            "\n\nCheckpoint{} {} could not be read from the store, so the working copy holds an earlier one.",
            if list.len() == 1 { "" } else { "s" },
            list.join(", ")
        ));
    }
    text.push_str(if setup_needed {
        "\n\nDependencies (node_modules and the like) are not part of checkpoints: the setup runs again."
    } else {
        "\n\nDependencies and build output are not part of checkpoints: whatever was installed in the working copy has to be made again."
    });
    record(ws, events, id, EntryKind::System, None, &text).await?;
    publish(ws, events, id).await?;
    Ok(Rebuilt { sequence, setup_needed })
}

/// The files of the moved-aside copy at `aside` that differ from the checkpoint
/// `commit` (content, mode or presence), sorted.
async fn differing_files(ws: &Workspace, aside: &Path, commit: Oid) -> Result<Vec<String>> {
    let _guard = ws.store_lock.lock().await;
    let store = ws.open_store()?;
    let tree = snapshot::snapshot(&store, Source::Plain { root: aside, skip: &crate::working_copy::NOT_SNAPSHOTTED })?;
    let ours = store.find_tree(tree)?;
    let theirs = store.find_commit(commit)?.tree()?;
    let diff = store.diff_tree_to_tree(Some(&theirs), Some(&ours), None)?;
    let mut paths: Vec<String> = diff
        .deltas()
        .filter_map(|d| d.new_file().path().or_else(|| d.old_file().path()).map(|p| p.to_string_lossy().into_owned()))
        .collect();
    paths.sort();
    paths.dedup();
    Ok(paths)
}

/// A bounded list: the first `LISTED` paths, then how many more.
fn listed(paths: &[String]) -> String {
    let mut lines: Vec<String> = paths.iter().take(LISTED).map(|p| format!("- `{p}`")).collect();
    if paths.len() > LISTED {
        lines.push(format!("- … and {} more", paths.len() - LISTED));
    }
    lines.join("\n")
}
