//! Recovery as the engine runs it (README: Recovery): when a process opens a workspace,
//! each session's interrupted work is explained and its working copy checked, in the
//! background so opening stays fast; and before an operation works on a session, the
//! same check (`ready`). Both hold the session's recovery lock, so an operation waits
//! for the check at open rather than racing it. What needs the layers above sessions
//! (a delivery cut short, running the setup again) is done here.

use std::sync::Arc;

use crate::events::EventBus;
use crate::ids::SessionId;
use crate::recover::{self, interrupted::Interrupted};
use crate::workspace::Workspace;
use kiln_records::store::sessions as records;
use kiln_types::error::Result;

/// Starts the checks of a freshly opened workspace. Every session's lock is taken now,
/// before this returns, so an operation arriving at once waits for its session's check.
/// The sessions in `elsewhere` are another host's, and left alone.
pub(super) async fn at_open(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    cut: Interrupted,
    elsewhere: &std::collections::HashSet<String>,
) -> Result<()> {
    let mut held = Vec::new();
    for (raw, closed) in records::not_deleted(&ws.pool).await? {
        if elsewhere.contains(&raw) {
            continue;
        }
        let Ok(id) = SessionId::parse(&raw) else { continue };
        let guard = recover::lock(ws, &id).lock_owned().await;
        held.push((id, closed, guard));
    }
    let (owner, ws, events) = (ws.clone(), ws.clone(), events.clone());
    owner.background.spawn(async move {
        for (id, closed, guard) in held {
            if let Err(e) = recover_one(&ws, &events, &id, closed, &cut).await {
                tracing::error!("recovering session {id}: {e}");
            }
            drop(guard);
        }
    });
    Ok(())
}

/// One session's recovery: at open, and when a host takes the session over from another.
pub(super) async fn recover_one(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    id: &SessionId,
    closed: bool,
    cut: &Interrupted,
) -> Result<()> {
    // What the bucket holds and the store lacks first: reconciling without it would drop
    // the records of checkpoints only the bucket has (so a failure here stops the rest).
    recover::bucket::present(ws, id).await?;
    // The records first, so what follows knows the newest checkpoint.
    for note in recover::checkpoints::reconcile(ws, id).await? {
        crate::session::record(ws, events, id, kiln_types::EntryKind::System, None, &note).await?;
    }
    recover::interrupted::explain_turn(ws, events, id, cut).await?;
    crate::delivery::run::explain_cut_short(ws, events, id).await?;
    let setup_cut = recover::interrupted::settle_setup(ws, events, id, !closed).await?;
    // A closed session's copy is checked when it is used: the clean-up may have removed
    // it on purpose.
    let rebuilt = if closed { None } else { recover::ensure_working_copy(ws, events, id).await? };
    if !closed && (setup_cut || rebuilt.is_some_and(|r| r.setup_needed)) {
        crate::chain::start::setup_again(ws, events, id).await?;
    }
    crate::session::publish(ws, events, id).await?;
    Ok(())
}

/// Checks the session's working copy before an operation on it, rebuilding it when it
/// is missing or damaged (and running the setup again for an open session). An id
/// that does not parse or names no session is left to the operation to refuse.
pub(super) async fn ready(ws: &Arc<Workspace>, events: &Arc<EventBus>, raw_id: &str) -> Result<()> {
    let Ok(id) = SessionId::parse(raw_id) else { return Ok(()) };
    let lock = recover::lock(ws, &id);
    let _guard = lock.lock().await;
    let Ok(session) = records::load(&ws.pool, id.as_str(), false).await else { return Ok(()) };
    let rebuilt = recover::ensure_working_copy(ws, events, &id).await?;
    let closed = session.archived_at.is_some() || session.rejected_at.is_some();
    if !closed && rebuilt.is_some_and(|r| r.setup_needed) {
        crate::chain::start::setup_again(ws, events, &id).await?;
    }
    Ok(())
}
