//! The preview as evidence (ARCHITECTURE.md: Preview): after a turn that changed files, a
//! `turn` screenshot of the changed module's page bound to that turn's checkpoint, and the
//! "before" look at checkpoint 0, taken once before the first turn changes anything. Both run
//! off the chain's path: a failure is said once per session as a system line, never failing
//! the turn. A preview a capture started is left to the idle stop (a command preview stays
//! warm for the next turn's capture; a static one runs no process).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::capture::Frame;
use super::shots::{self, Take, DEFAULT_VIEWPORT};
use crate::events::EventBus;
use crate::ids::SessionId;
use crate::workspace::Workspace;
use kiln_records::store::{screenshots, turns};
use kiln_types::error::{ErrorCode, Result};
use kiln_types::{EntryKind, PreviewKind, ScreenshotKind};

/// How long the first turn waits for the "before" look: a preview slower than this is not
/// worth holding the operator's first message for.
const BEFORE_LIMIT: Duration = Duration::from_secs(25);

/// Whether the workspace has a preview (`[preview] command` or `root`).
pub(crate) fn configured(ws: &Workspace) -> bool {
    super::kind(ws) != PreviewKind::None
}

/// Whether turns are shot: a preview, and `[preview] screenshots` not turned off.
fn wanted(ws: &Workspace) -> bool {
    configured(ws) && ws.config.preview.screenshots != Some(false)
}

/// Whether the session still needs its "before" look: a preview, no turn yet, no `turn`
/// screenshot yet.
pub(crate) async fn before_due(ws: &Workspace, id: &SessionId) -> Result<bool> {
    if !wanted(ws) || turns::latest(&ws.pool, id.as_str()).await?.is_some() {
        return Ok(false);
    }
    Ok(screenshots::latest_for_session(&ws.pool, id.as_str()).await?.is_none())
}

/// Captures the look at checkpoint 0, within `BEFORE_LIMIT`; the caller starts the first
/// turn after it, so nothing has changed the working copy yet.
pub(crate) async fn before(ws: &Arc<Workspace>, events: &Arc<EventBus>, id: &SessionId) {
    let shot = tokio::time::timeout(BEFORE_LIMIT, shoot(ws, events, id, None, Some(0))).await;
    match shot {
        Ok(outcome) => settle(ws, events, id, outcome).await,
        Err(_) => {
            let why = format!("the preview was not ready within {} s", BEFORE_LIMIT.as_secs());
            say_once(ws, events, id, &why).await;
        }
    }
}

/// Starts the `turn` screenshot of `module`'s page at `checkpoint`, in the background.
pub(crate) fn after_turn(ws: &Arc<Workspace>, events: &Arc<EventBus>, id: &SessionId, module: String, checkpoint: i64) {
    if !wanted(ws) {
        return;
    }
    let (owner, ws, events, id) = (ws.clone(), ws.clone(), events.clone(), id.clone());
    owner.background.spawn(async move {
        let outcome = shoot(&ws, &events, &id, Some(&module), Some(checkpoint)).await;
        settle(&ws, &events, &id, outcome).await;
    });
}

async fn shoot(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    id: &SessionId,
    module: Option<&str>,
    checkpoint: Option<i64>,
) -> Result<()> {
    let take = Take { kind: ScreenshotKind::Turn, module, path: None, frame: Frame::Page, viewport: DEFAULT_VIEWPORT };
    shots::take_at(ws, events, id, take, checkpoint).await.map(|_| ())
}

/// Shows a new screenshot in the session's view, or says why there is none.
async fn settle(ws: &Arc<Workspace>, events: &Arc<EventBus>, id: &SessionId, outcome: Result<()>) {
    match outcome {
        Ok(()) => {
            let _ = crate::session::publish(ws, events, id).await;
        }
        // A session closed meanwhile has nothing to show it to.
        Err(e)
            if matches!(
                e.code,
                ErrorCode::SessionNotFound
                    | ErrorCode::SessionDeleted
                    | ErrorCode::SessionArchived
                    | ErrorCode::SessionDelivered
            ) => {}
        Err(e) => say_once(ws, events, id, &e.message).await,
    }
}

/// Sessions already told that their preview could not be captured (once per run of Kiln).
fn told() -> &'static Mutex<HashSet<String>> {
    static TOLD: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    TOLD.get_or_init(Mutex::default)
}

async fn say_once(ws: &Workspace, events: &EventBus, id: &SessionId, why: &str) {
    if !told().lock().unwrap().insert(id.to_string()) {
        return;
    }
    tracing::info!("no screenshot of the preview of {id}: {why}");
    let text = format!("No screenshot of the preview: {why}");
    let _ = crate::session::record(ws, events, id, EntryKind::System, None, &text).await;
}
