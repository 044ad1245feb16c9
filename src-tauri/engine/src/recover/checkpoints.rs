//! Makes a session's checkpoint refs in `store.git` and its `checkpoints` records agree
//! again after Kiln stopped in the middle of writing them. A checkpoint is written in
//! three whole steps (the commit object, the ref naming it, the record); stopped after
//! the first, nothing names the commit and nothing is to be done (the working copy still
//! holds the files); stopped after the second, the ref names a whole checkpoint the
//! records lack, which is kept as the newest one. Pruning, stopped half-way, leaves
//! records without refs or refs and records naming different commits of one tree: the
//! ref is made again, or the record follows the rewritten ref. Nothing that reads from
//! the store is dropped.

use std::collections::BTreeMap;

use git2::{Oid, Repository};

use crate::ids::SessionId;
use crate::workspace::Workspace;
use kiln_records::store::checkpoints::{self as records, NewCheckpoint};
use kiln_runtime::clock::now;
use kiln_types::error::Result;

/// A change to the records the store's state calls for.
enum Fix {
    /// A whole checkpoint the records lack: kept as the newest one.
    Adopt { sequence: i64, commit: String, label: String },
    /// The record follows the ref (a rewrite by pruning, with the same tree).
    Follow { sequence: i64, commit: String },
    /// A record whose commit the store no longer has.
    Drop { sequence: i64 },
}

/// Reconciles the session's refs and records; returns what the transcript should say
/// (only what the operator can see: a checkpoint kept or dropped).
pub(crate) async fn reconcile(ws: &Workspace, id: &SessionId) -> Result<Vec<String>> {
    let rows = records::list(&ws.pool, id.as_str()).await?;
    let newest = rows.last().map(|r| r.0).unwrap_or(-1);
    let fixes = {
        let _guard = ws.store_lock.lock().await;
        let store = ws.open_store()?;
        compare(&store, id, &rows, newest)?
    };
    let mut notes = Vec::new();
    for fix in fixes {
        match fix {
            Fix::Adopt { sequence, commit, label } => {
                let at = now();
                let row = NewCheckpoint {
                    session: id.as_str(),
                    sequence,
                    commit: &commit,
                    label: &label,
                    role: None,
                    module: None,
                    at: &at,
                };
                records::insert(&ws.pool, row).await?;
                kiln_records::store::sessions::set_current_checkpoint(&ws.pool, id.as_str(), None).await?;
                notes.push(format!(
                    "Kiln stopped while recording checkpoint {sequence} (“{label}”); its snapshot was whole, so it was kept."
                ));
            }
            Fix::Follow { sequence, commit } => records::set_commit(&ws.pool, id.as_str(), sequence, &commit).await?,
            Fix::Drop { sequence } => {
                records::remove(&ws.pool, id.as_str(), sequence).await?;
                notes.push(format!(
                    "Checkpoint {sequence} could not be read from the store any more and was taken off the list."
                ));
            }
        }
    }
    Ok(notes)
}

/// What the records need, with the store's own fixes (refs made again or removed)
/// already done.
fn compare(store: &Repository, id: &SessionId, rows: &[(i64, String, String)], newest: i64) -> Result<Vec<Fix>> {
    let mut refs: BTreeMap<i64, Oid> = BTreeMap::new();
    for reference in store.references_glob(&format!("refs/kiln/{id}/*"))?.flatten() {
        let sequence = reference.name().and_then(|n| n.rsplit('/').next()).and_then(|s| s.parse::<i64>().ok());
        if let (Some(sequence), Some(target)) = (sequence, reference.target()) {
            refs.insert(sequence, target);
        }
    }
    let tree = |oid: Oid| store.find_commit(oid).ok().and_then(|c| c.tree().ok()).map(|t| t.id());
    let name = |sequence: i64| format!("refs/kiln/{id}/{sequence}");
    let mut fixes = Vec::new();
    for (sequence, commit, _) in rows {
        let recorded = Oid::from_str(commit).ok();
        let recorded_tree = recorded.and_then(tree);
        match refs.remove(sequence) {
            Some(named) if Some(named) == recorded => {}
            Some(named) => match (tree(named), recorded_tree) {
                // Pruning rewrote the ref and stopped before the record followed.
                (Some(a), b) if b.is_none() || b == Some(a) => {
                    fixes.push(Fix::Follow { sequence: *sequence, commit: named.to_string() })
                }
                _ if recorded_tree.is_some() => {
                    store.reference(&name(*sequence), recorded.expect("has a tree"), true, "recovered")?;
                }
                _ => fixes.push(Fix::Drop { sequence: *sequence }),
            },
            None if recorded_tree.is_some() => {
                tracing::warn!("checkpoint {sequence} of {id} had no ref; made again");
                store.reference(&name(*sequence), recorded.expect("has a tree"), true, "recovered")?;
            }
            // The start is never dropped: without it there is no session to rebuild.
            None if *sequence != 0 => fixes.push(Fix::Drop { sequence: *sequence }),
            None => {}
        }
    }
    // Refs no record names: the newest ones were written just before Kiln stopped (kept);
    // older ones were left by pruning that stopped half-way (removed, as pruning meant).
    for (sequence, oid) in refs {
        match store.find_commit(oid) {
            Ok(commit) if sequence > newest && commit.tree().is_ok() => {
                let label = commit.summary().unwrap_or("a checkpoint").to_string();
                fixes.push(Fix::Adopt { sequence, commit: oid.to_string(), label });
            }
            _ => {
                if let Ok(mut r) = store.find_reference(&name(sequence)) {
                    r.delete()?;
                }
            }
        }
    }
    Ok(fixes)
}
