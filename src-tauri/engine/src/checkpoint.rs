//! Checkpoints (ARCHITECTURE.md: Checkpoints): a commit in `store.git` of the whole session working copy
//! (minus ignored files and attachment copies), parented on the previous one, under
//! `refs/kiln/<session>/<sequence>`. One is taken after every turn that changed files;
//! `restore` puts the working copy back to any of them.

use std::collections::BTreeSet;

use git2::{Oid, Repository};

use crate::events::EventBus;
use crate::ids::SessionId;
use crate::session::{self, publish, record};
use crate::workspace::{Context, Workspace};
use kiln_records::snapshot;
use kiln_records::store::checkpoints::{self, NewCheckpoint};
use kiln_records::store::sessions as records;
use kiln_records::store::transcript_entries::{self as transcript, NewEntry};
use kiln_runtime::clock::now;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

/// Records `tree` as the session's next checkpoint and says so (a `checkpoint` event);
/// returns its sequence.
pub async fn take(
    ws: &Workspace,
    events: &EventBus,
    id: &SessionId,
    tree: Oid,
    label: &str,
    role: Option<&str>,
    module: Option<&str>,
) -> Result<i64> {
    let (last, parent) = checkpoints::latest(&ws.pool, id.as_str()).await?;
    let sequence = last + 1;
    // Three writes, each whole on its own: the commit object, the ref naming it, the
    // record. Kiln stopping between them leaves what `recover::reconcile_checkpoints`
    // puts right at the next start.
    let commit = {
        let _guard = ws.store_lock.lock().await;
        let store = ws.open_store()?;
        let parent = Oid::from_str(&parent).map_err(|e| ApiError::internal("checkpoint id", e))?;
        let commit = snapshot::write_commit(&store, tree, Some(parent), label)?;
        crate::pause::pause_point("checkpoint.after-objects");
        store.reference(&format!("refs/kiln/{id}/{sequence}"), commit, true, label)?;
        crate::pause::pause_point("checkpoint.after-ref");
        // Commits made in the session's checkout are kept with the files; a checkout
        // Kiln cannot read costs only them, never the checkpoint.
        if let Err(e) = kiln_records::checkout::keep(&store, &ws.session_workdir(id), id.as_str(), sequence) {
            tracing::warn!("keeping the commits of {id}'s checkout at checkpoint {sequence}: {}", e.message);
        }
        commit
    };
    // In the bucket before the record names it, when the bucket answers.
    keep_or_say(ws, id, sequence).await?;
    let commit = commit.to_string();
    let at = now();
    let row = NewCheckpoint { session: id.as_str(), sequence, commit: &commit, label, role, module, at: &at };
    checkpoints::insert(&ws.pool, row).await?;
    // The working copy is the newest checkpoint again.
    records::set_current_checkpoint(&ws.pool, id.as_str(), None).await?;
    if prune(ws, id).await? {
        // The kept checkpoints are new commits now: the bucket's manifest follows them.
        keep_or_say(ws, id, sequence).await?;
    }
    made(events, id, sequence, false);
    Ok(sequence)
}

/// The `checkpoint` event: the session's files are those of checkpoint `sequence` now.
fn made(events: &EventBus, id: &SessionId, sequence: i64, restored: bool) {
    events.emit(EventBody::Checkpoint { session_id: id.to_string(), sequence, restored });
}

/// Sends the session's checkpoints the bucket lacks to it (`objects::packs::push`); a
/// workspace without a bucket has nothing to do.
pub async fn upload(ws: &Workspace, id: &SessionId) -> Result<Option<kiln_records::objects::packs::Pushed>> {
    let Some(bucket) = &ws.objects else { return Ok(None) };
    let started = std::time::Instant::now();
    let pushed = kiln_records::objects::packs::push(bucket, &ws.store_path(), &ws.store_lock, id.as_str()).await?;
    tracing::debug!("checkpoint objects of {id} to the bucket: {} bytes in {:?}", pushed.bytes, started.elapsed());
    Ok(Some(pushed))
}

/// `upload`, where a failure loses nothing: the checkpoint stays in `store.git`, the
/// transcript says so, and the next checkpoint's upload sends it along (it sends all the
/// bucket lacks). The turn's work is never thrown away for a bucket that is down.
async fn keep_or_say(ws: &Workspace, id: &SessionId, sequence: i64) -> Result<()> {
    if let Err(e) = upload(ws, id).await {
        tracing::warn!("checkpoint {sequence} of {id} not in the bucket: {}", e.message);
        let text = format!(
            "Checkpoint {sequence} is kept on this host but could not be copied to the bucket ({}); it is sent with the next checkpoint.",
            e.message
        );
        let entry = NewEntry {
            session: id.as_str(),
            kind: EntryKind::System,
            module: None,
            role: None,
            text: &text,
            at: &now(),
            context: None,
        };
        transcript::append(&ws.pool, entry).await?;
    }
    Ok(())
}

/// An autosave during a running turn: a checkpoint only when the working copy differs
/// from the latest one.
pub(crate) async fn autosave(
    ws: &Workspace,
    events: &EventBus,
    id: &SessionId,
    label: &str,
    role: &str,
    module: &str,
) -> Result<Option<i64>> {
    let (_, latest) = checkpoints::latest(&ws.pool, id.as_str()).await?;
    let tree = {
        let _guard = ws.store_lock.lock().await;
        let store = ws.open_store()?;
        let tree = crate::working_copy::snapshot_workdir(&store, &ws.session_workdir(id))?;
        let latest = store.find_commit(Oid::from_str(&latest).map_err(|e| ApiError::internal("checkpoint id", e))?)?;
        if latest.tree_id() == tree {
            return Ok(None);
        }
        tree
    };
    take(ws, events, id, tree, label, Some(role), Some(module)).await.map(Some)
}

/// Keeps at most `[session] max_checkpoints`, dropping the oldest but never the start,
/// and collects what only they held: the kept checkpoints are re-parented onto the
/// start (same trees, same order) so nothing reaches the dropped ones any more. Whether
/// it dropped any.
async fn prune(ws: &Workspace, id: &SessionId) -> Result<bool> {
    let cap = ws.config.session.max_checkpoints.max(2) as i64;
    let rows = checkpoints::list(&ws.pool, id.as_str()).await?;
    let excess = (rows.len() as i64 - cap).max(0) as usize;
    if excess == 0 {
        return Ok(false);
    }
    let _guard = ws.store_lock.lock().await;
    let (dropped, kept) = rows[1..].split_at(excess);
    // The store's handle is not `Send`: every git step happens here, between awaits.
    let rewritten: Vec<(i64, Oid)> = {
        let store = ws.open_store()?;
        for (sequence, _, _) in dropped {
            if let Ok(mut r) = store.find_reference(&format!("refs/kiln/{id}/{sequence}")) {
                r.delete()?;
            }
        }
        let mut parent = Oid::from_str(&rows[0].1).map_err(|e| ApiError::internal("checkpoint id", e))?;
        let mut out = Vec::new();
        for (sequence, commit, label) in kept {
            let old = store.find_commit(Oid::from_str(commit).map_err(|e| ApiError::internal("checkpoint id", e))?)?;
            parent =
                snapshot::commit(&store, old.tree_id(), Some(parent), label, &format!("refs/kiln/{id}/{sequence}"))?;
            out.push((*sequence, parent));
        }
        out
    };
    for (sequence, _, _) in dropped {
        checkpoints::remove(&ws.pool, id.as_str(), *sequence).await?;
    }
    for (sequence, commit) in rewritten {
        checkpoints::set_commit(&ws.pool, id.as_str(), sequence, &commit.to_string()).await?;
    }
    collect(ws, id);
    Ok(true)
}

/// Removes objects nothing reaches any more (`git prune`), under the store lock the
/// caller holds. Other sessions' stat caches may name removed blobs, so they are dropped
/// and their next snapshot reads their files once; the pruning session's own cache
/// names exactly the tree it just committed, all of it still reachable, so it stays.
fn collect(ws: &Workspace, pruning: &SessionId) {
    let store = ws.store_path();
    let env = vec![("GIT_DIR".into(), store.clone().into_os_string()), ("GIT_CONFIG_NOSYSTEM".into(), "1".into())];
    let pruned = kiln_runtime::process::Command::new("git", &store, kiln_runtime::process::Env::Tool(env))
        .args(["prune", "--expire=now"])
        .output_blocking();
    match pruned {
        Ok(out) if out.status.success() => {}
        Ok(out) => tracing::warn!("git prune in the store: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => tracing::warn!("git prune in the store could not run: {e}"),
    }
    if let Ok(sessions) = std::fs::read_dir(ws.sessions_dir()) {
        for session in sessions.flatten() {
            // Only real session directories: through a link in `sessions/` this would
            // remove an `index` wherever the link points.
            let real_dir = session.file_type().is_ok_and(|t| t.is_dir());
            if real_dir && session.file_name().to_str() != Some(pruning.as_str()) {
                let _ = std::fs::remove_file(session.path().join("index"));
            }
        }
    }
}

/// Ties a checkpoint to the transcript entry that closes its turn.
pub(crate) async fn link_entry(ws: &Workspace, id: &SessionId, sequence: i64, entry: i64) -> Result<()> {
    checkpoints::link_entry(&ws.pool, id.as_str(), sequence, entry).await
}

pub(crate) async fn restore(cx: &Context, args: RestoreCheckpointArgs) -> Result<SessionView> {
    let Context { ws, events } = cx;
    let (id, session) = session::live(ws, &args.session_id).await?;
    if args.sequence < 0 {
        return Err(ApiError::invalid(format!("`{}` is not a checkpoint sequence", args.sequence)));
    }
    let row = checkpoints::get(&ws.pool, id.as_str(), args.sequence).await?;
    let (commit, label) = row.ok_or_else(|| {
        ApiError::new(ErrorCode::CheckpointNotFound, format!("session {id} has no checkpoint {}", args.sequence))
    })?;
    session::refuse_closed(&session)?;
    if ws.is_running(id.as_str()) {
        return Err(ApiError::new(
            ErrorCode::SessionRunning,
            format!("session {id} is running; restore when it stops"),
        ));
    }
    // Modules that joined after this checkpoint keep their files.
    let joined_later: Vec<String> = session
        .modules
        .iter()
        .filter(|m| m.base_sequence > args.sequence)
        .map(|m| format!("{}/", m.directory))
        .collect();
    let workdir = ws.session_workdir(&id);
    // A working copy replaced by a link is neither read nor written through.
    if std::fs::symlink_metadata(&workdir).is_ok_and(|m| !m.is_dir()) {
        return Err(ApiError::new(
            ErrorCode::PathNotAllowed,
            format!("the working copy of session {id} is not a plain directory; nothing was restored"),
        ));
    }
    {
        let _guard = ws.store_lock.lock().await;
        let store = ws.open_store()?;
        let target =
            store.find_commit(Oid::from_str(&commit).map_err(|e| ApiError::internal("checkpoint id", e))?)?.tree()?;
        let current = store.find_tree(crate::working_copy::snapshot_workdir(&store, &workdir)?)?;
        for path in differing(&store, &current, &target)? {
            let keep = joined_later.iter().any(|d| path.starts_with(d.as_str()));
            if !keep {
                snapshot::put_path(&store, &target, &workdir, &path)?;
            }
        }
        // git in the session follows: its branch at what that checkpoint kept.
        let host_objects = ws.git.as_ref().map(|g| g.objects.as_path());
        if let Err(e) = kiln_records::checkout::move_to(&store, &workdir, id.as_str(), args.sequence, host_objects) {
            tracing::warn!("moving {id}'s checkout to checkpoint {}: {}", args.sequence, e.message);
        }
    }
    let text = format!("Restored the session's working copy to the state after {label} (turn {}).", args.sequence);
    record(ws, events, &id, EntryKind::System, None, &text).await?;
    records::set_state(&ws.pool, id.as_str(), SessionState::Editing, &now()).await?;
    records::set_current_checkpoint(&ws.pool, id.as_str(), Some(args.sequence)).await?;
    made(events, &id, args.sequence, true);
    publish(ws, events, &id).await
}

/// Every path whose content, mode or presence differs between two trees, sorted.
pub(crate) fn differing(store: &Repository, a: &git2::Tree<'_>, b: &git2::Tree<'_>) -> Result<BTreeSet<String>> {
    let diff = store.diff_tree_to_tree(Some(a), Some(b), None)?;
    let mut paths = BTreeSet::new();
    for delta in diff.deltas() {
        for file in [delta.old_file(), delta.new_file()] {
            if let Some(p) = file.path() {
                paths.insert(p.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    Ok(paths)
}
