//! Update from the workspace (SPEC §4): a session takes in what changed in the workspace
//! since its base (the user's own edits, a sibling session delivered first) as a
//! three-way merge into its working copy.
//!
//! The merge's ancestor is the session's base, "ours" the working copy as it is, "theirs"
//! the workspace now. Two checkpoints record it: the workspace as taken in (the session's
//! new base, so its diff and its delivery hold only its own change again), then the merged
//! working copy. A file both sides changed where the merge cannot choose keeps both sides
//! between conflict markers, as git writes them; the session lists it until no marker is
//! left, and nothing is delivered before (`ConflictsUnresolved`). The session's git
//! checkout moves onto the new base too, so `git diff` there agrees with Kiln's.

pub(crate) mod resolve;

use std::path::Path;

use git2::{IndexEntry, MergeFileOptions, MergeOptions, Oid, Repository};

use crate::session::{publish, record};
use crate::workspace::{Context, Workspace};
use kiln_records::snapshot::{self, Source};
use kiln_records::store::sessions as records;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

/// The labels a conflict's two sides carry in the file.
const OURS: &str = "session";
const THEIRS: &str = "workspace";

/// What the merge did, for the transcript.
struct Merged {
    tree: Oid,
    /// Files the workspace changed that the merge brought in.
    taken: Vec<String>,
    /// Files written with conflict markers.
    conflicts: Vec<String>,
    /// Files one side deleted and the other changed: kept, changed.
    kept: Vec<String>,
}

pub(crate) async fn update_from_workspace(cx: &Context, args: SessionIdArgs) -> Result<SessionView> {
    let Context { ws, events } = cx;
    let (id, session) = crate::session::live(ws, &args.session_id).await?;
    crate::session::refuse_closed(&session)?;
    if ws.is_running(id.as_str()) {
        return Err(ApiError::new(ErrorCode::SessionRunning, "update from the workspace when the session stops"));
    }
    if !session.conflicts.is_empty() {
        return Err(ApiError::new(
            ErrorCode::ConflictsUnresolved,
            format!(
                "{} still hold{} the conflict markers of the last update; resolve them first",
                list(&session.conflicts),
                if session.conflicts.len() == 1 { "s" } else { "" }
            ),
        ));
    }
    let workdir = ws.session_workdir(&id);
    let base = kiln_records::store::checkpoints::commit(&ws.pool, id.as_str(), Some(session.base_sequence))
        .await?
        .ok_or_else(|| ApiError::internal("update from the workspace", "the session has no base checkpoint"))?;
    let (ours, theirs) = {
        let _guard = ws.store_lock.lock().await;
        let store = ws.open_store()?;
        (crate::working_copy::snapshot_workdir(&store, &workdir)?, workspace_tree(ws, &store)?)
    };
    let base_tree = {
        let store = ws.open_store()?;
        let oid = Oid::from_str(&base).map_err(|e| ApiError::internal("checkpoint id", e))?;
        let tree = store.find_commit(oid)?.tree_id();
        tree
    };
    if base_tree == theirs {
        return Err(ApiError::new(
            ErrorCode::NothingToUpdate,
            "the workspace has not changed since the session's base: there is nothing to take in",
        ));
    }
    // What is in the working copy now and in no checkpoint yet is one first, so the
    // update can always be undone by a restore.
    let latest = kiln_records::store::checkpoints::latest(&ws.pool, id.as_str()).await?.1;
    let latest_tree = {
        let store = ws.open_store()?;
        let tree =
            store.find_commit(Oid::from_str(&latest).map_err(|e| ApiError::internal("checkpoint id", e))?)?.tree_id();
        tree
    };
    if latest_tree != ours {
        crate::checkpoint::take(ws, events, &id, ours, "before the update from the workspace", None, None).await?;
    }

    let merged = {
        let _guard = ws.store_lock.lock().await;
        let store = ws.open_store()?;
        let merged = merge(&store, base_tree, ours, theirs)?;
        let (from, to) = (store.find_tree(ours)?, store.find_tree(merged.tree)?);
        for path in crate::checkpoint::differing(&store, &from, &to)? {
            snapshot::put_path(&store, &to, &workdir, &path)?;
        }
        merged
    };
    let new_base = crate::checkpoint::take(ws, events, &id, theirs, "the workspace, taken in", None, None).await?;
    crate::checkpoint::take(ws, events, &id, merged.tree, "updated from the workspace", None, None).await?;
    records::set_base(&ws.pool, id.as_str(), new_base, &merged.conflicts).await?;
    ws.diffs.forget(id.as_str());
    move_checkout(ws, &id, new_base).await;
    record(ws, events, &id, EntryKind::System, None, &summary(&merged)).await?;
    publish(ws, events, &id).await
}

/// The workspace as a snapshot now (as the session's start was taken).
fn workspace_tree(ws: &Workspace, store: &Repository) -> Result<Oid> {
    match &ws.git {
        Some(git) => {
            let host = Repository::open(&git.workdir)?;
            snapshot::snapshot(store, Source::Git { repo: &host, prefix: &git.prefix })
        }
        None => snapshot::snapshot(store, Source::Plain { root: &ws.root, skip: &[] }),
    }
}

/// The three-way merge of `ours` and `theirs` from `base`, with each conflict written as
/// one blob holding both sides between markers.
fn merge(store: &Repository, base: Oid, ours: Oid, theirs: Oid) -> Result<Merged> {
    let (base_t, ours_t, theirs_t) = (store.find_tree(base)?, store.find_tree(ours)?, store.find_tree(theirs)?);
    let mut index = store.merge_trees(&base_t, &ours_t, &theirs_t, Some(&MergeOptions::new()))?;
    let taken: Vec<String> = crate::checkpoint::differing(store, &base_t, &theirs_t)?.into_iter().collect();
    let mut conflicts = Vec::new();
    let mut kept = Vec::new();
    let found: Vec<git2::IndexConflict> = index.conflicts()?.collect::<std::result::Result<_, _>>()?;
    for conflict in found {
        let (our, their) = (conflict.our, conflict.their);
        let entry = match (our, their) {
            (Some(our), Some(their)) => {
                let ancestor = match conflict.ancestor {
                    Some(a) => a,
                    // Added on both sides: merged from an empty file.
                    None => entry_like(&our, store.blob(b"")?),
                };
                let mut options = MergeFileOptions::new();
                options.ancestor_label("base").our_label(OURS).their_label(THEIRS);
                let result = store.merge_file_from_index(&ancestor, &our, &their, Some(&mut options))?;
                let blob = store.blob(result.content())?;
                if !result.is_automergeable() {
                    conflicts.push(path_of(&our));
                }
                entry_like(&our, blob)
            }
            // One side deleted what the other changed: the change is kept.
            (Some(one), None) | (None, Some(one)) => {
                kept.push(path_of(&one));
                entry_like(&one, one.id)
            }
            (None, None) => continue,
        };
        index.conflict_remove(Path::new(&path_of(&entry)))?;
        index.add(&entry)?;
    }
    let tree = index.write_tree_to(store)?;
    Ok(Merged { tree, taken, conflicts, kept })
}

fn entry_like(entry: &IndexEntry, id: Oid) -> IndexEntry {
    IndexEntry {
        ctime: git2::IndexTime::new(0, 0),
        mtime: git2::IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode: entry.mode,
        uid: 0,
        gid: 0,
        file_size: 0,
        id,
        flags: entry.flags & 0x0fff,
        flags_extended: 0,
        path: entry.path.clone(),
    }
}

fn path_of(entry: &IndexEntry) -> String {
    String::from_utf8_lossy(&entry.path).into_owned()
}

/// The session's git checkout onto its new base; a checkout Kiln cannot move only
/// leaves `git` there a step behind (said in the log), never the update undone.
async fn move_checkout(ws: &Workspace, id: &crate::ids::SessionId, base_sequence: i64) {
    let commit = kiln_records::store::checkpoints::commit(&ws.pool, id.as_str(), Some(base_sequence)).await;
    let _guard = ws.store_lock.lock().await;
    let moved = commit.and_then(|commit| {
        let commit = commit.ok_or_else(|| ApiError::internal("update", "the new base has no checkpoint"))?;
        let commit = Oid::from_str(&commit).map_err(|e| ApiError::internal("checkpoint id", e))?;
        let store = ws.open_store()?;
        let repo = ws.git.as_ref().and_then(|git| Repository::open(&git.workdir).ok());
        let host = ws.git.as_ref().map(|git| {
            let head = git.prefix.is_empty().then(|| repo.as_ref()?.head().ok()?.target()).flatten();
            kiln_records::checkout::HostStart { objects: &git.objects, head, identity: None }
        });
        kiln_records::checkout::rebase(&store, &ws.session_workdir(id), id.as_str(), commit, host.as_ref())
    });
    if let Err(e) = moved {
        tracing::warn!("moving the checkout of {id} onto the workspace it took in: {}", e.message);
    }
}

/// The transcript's words for an update, the conflicts first.
fn summary(merged: &Merged) -> String {
    let mut text = format!(
        "Updated from the workspace: took in {} file{} the workspace changed since the session's base ({}).",
        merged.taken.len(),
        if merged.taken.len() == 1 { "" } else { "s" },
        list(&merged.taken)
    );
    if merged.conflicts.is_empty() {
        text.push_str(" No conflicts.");
    } else {
        text.push_str(&format!(
            " **{} conflict{}** in {}: both sides are in the file between `<<<<<<< {OURS}` and `>>>>>>> {THEIRS}`. Resolve them here or ask the agent; nothing is delivered until they are resolved.",
            merged.conflicts.len(),
            if merged.conflicts.len() == 1 { "" } else { "s" },
            list(&merged.conflicts)
        ));
    }
    if !merged.kept.is_empty() {
        text.push_str(&format!(" Kept {}, which one side changed and the other deleted.", list(&merged.kept)));
    }
    text
}

fn list(paths: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut shown: Vec<String> = paths.iter().take(SHOWN).map(|p| format!("`{p}`")).collect();
    if paths.len() > SHOWN {
        shown.push(format!("{} more", paths.len() - SHOWN));
    }
    shown.join(", ")
}
