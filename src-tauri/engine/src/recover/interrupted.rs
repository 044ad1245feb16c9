//! Work Kiln stopping cut short (a kill, a crash, a power cut), as the next start finds
//! it: a turn or its checkpoint and gates (the session stored as running; the records
//! block it, `store::turns::close_orphans`), a planner agent at work, and a setup stored
//! as running with no process. Each gets a transcript entry saying what happened and what to do; a
//! delivery's is `delivery::run`'s own.

use crate::events::EventBus;
use crate::ids::SessionId;
use crate::session::record;
use crate::workspace::Workspace;
use kiln_records::store::sessions as records;
use kiln_runtime::clock::now;
use kiln_types::error::Result;
use kiln_types::*;

/// What was running when Kiln stopped, read before the records settle it.
#[derive(Debug, Default, Clone)]
pub(crate) struct Interrupted {
    /// Sessions stored as running.
    sessions: Vec<String>,
    /// Turns stored as running: (session, role, module).
    turns: Vec<(String, String, String)>,
    /// Sessions whose planner agent was at work.
    planning: Vec<String>,
}

impl Interrupted {
    /// Reads it; call before `store::turns::close_orphans`.
    pub(crate) async fn read(pool: &kiln_records::store::Db) -> Result<Interrupted> {
        Ok(Interrupted {
            sessions: records::ids_in_state(pool, SessionState::Running).await?,
            turns: kiln_records::store::turns::running(pool).await?,
            planning: records::ids_in_state(pool, SessionState::Planning).await?,
        })
    }
}

/// Says in the session's transcript that its turn (or the work after it) was cut short,
/// and drops the ref that held the turn's starting state (no turn runs any more). What
/// the turn changed until then is kept as a checkpoint of its own when the working copy
/// differs from the newest one, so it can be restored and nothing more is at stake. Call
/// after `checkpoints::reconcile`, so the newest checkpoint is known.
pub(crate) async fn explain_turn(ws: &Workspace, events: &EventBus, id: &SessionId, cut: &Interrupted) -> Result<()> {
    {
        let _guard = ws.store_lock.lock().await;
        let store = ws.open_store()?;
        let hold = store.find_reference(&format!("refs/kiln-turns/{id}"));
        if let Ok(mut hold) = hold {
            hold.delete()?;
        }
    }
    if cut.planning.iter().any(|s| s == id.as_str()) {
        let text = "Kiln stopped while the planner agent was at work; the modules the planner's rules chose stand. A message that was waiting for the planner was not started: send it again.";
        record(ws, events, id, EntryKind::System, None, text).await?;
    }
    let turn = cut.turns.iter().rev().find(|(session, _, _)| session == id.as_str()).cloned();
    if turn.is_none() && !cut.sessions.iter().any(|s| s == id.as_str()) {
        return Ok(());
    }
    let role_name = |role: &str| {
        ws.roles()
            .ok()
            .and_then(|roles| roles.into_iter().find(|r| r.id == role).map(|r| r.name))
            .unwrap_or_else(|| role.to_string())
    };
    let what = match &turn {
        Some((_, role, module)) => format!("the **{}** turn in `{module}` was running", role_name(role)),
        None => "a turn was ending (its checkpoint or gates)".to_string(),
    };
    // Whose work it was: the cut turn's, else the session's latest turn's.
    let whose = match turn {
        Some((_, role, module)) => Some((role, module)),
        None => kiln_records::store::turns::latest(&ws.pool, id.as_str()).await?.map(|t| (t.role, t.module_id)),
    };
    let kept = match whose {
        Some((role, module)) if ws.session_workdir(id).is_dir() => {
            match crate::checkpoint::autosave(ws, events, id, CUT_SHORT, &role, &module).await {
                Ok(kept) => kept,
                Err(e) => {
                    tracing::error!("keeping the cut-short work of {id}: {e}");
                    None
                }
            }
        }
        _ => None,
    };
    let changes = match kept {
        Some(sequence) => {
            format!("What it changed until then is kept as checkpoint {sequence} (restore an earlier one to drop it).")
        }
        None => "The working copy is as the newest checkpoint left it.".to_string(),
    };
    let text = format!(
        "Kiln stopped while {what}, so it was cut short. {changes} Every checkpoint taken before is kept. Retry the turn to run it again, or send a message to go on."
    );
    record(ws, events, id, EntryKind::System, None, &text).await?;
    Ok(())
}

/// The label of the checkpoint that keeps what a cut-short turn changed.
const CUT_SHORT: &str = "autosave of work cut short when Kiln stopped";

/// A setup stored as running that no process runs (Kiln stopped during it): marked
/// failed, with an entry saying whether it runs again now. `true` when it was cut.
pub(crate) async fn settle_setup(ws: &Workspace, events: &EventBus, id: &SessionId, again: bool) -> Result<bool> {
    let session = records::load(&ws.pool, id.as_str(), false).await?;
    if session.setup != SetupState::Running || ws.busy.runs_command(id.as_str()) {
        return Ok(false);
    }
    records::set_setup(&ws.pool, id.as_str(), SetupState::Failed, &now()).await?;
    let next = if again { "it runs again now" } else { "it did not run again, as the session is closed" };
    let text = format!("Kiln stopped while the setup was installing dependencies, so it was cut short; {next}.");
    record(ws, events, id, EntryKind::System, None, &text).await?;
    Ok(true)
}
