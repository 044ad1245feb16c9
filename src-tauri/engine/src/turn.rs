//! Turns (ARCHITECTURE.md: Drivers and turns): one role working in one module through one driver run. The engine
//! owns every turn: its events are written to `kiln.db` as they arrive and then
//! broadcast, so a view that goes away loses nothing and a view that comes back
//! attaches to the live stream. Stop kills the driver's process group; a new turn on
//! a running session stops the old one and waits for it first.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch, Notify};

use crate::drivers::events::{DriverEvent, Usage};
use crate::drivers::{Driver, TurnRequest, TurnSink};
use crate::events::EventBus;
use crate::ids::SessionId;
use crate::roles::Role;
use crate::session::{publish, record_as};
use crate::workspace::Workspace;
use kiln_records::store::turns::{self, NewTurn};
use kiln_runtime::clock::now;
use kiln_runtime::process::Running;
use kiln_types::*;

/// A running turn, to stop it and wait until it is gone.
#[derive(Clone)]
pub(crate) struct TurnHandle {
    inner: Arc<HandleInner>,
}

struct HandleInner {
    pgid: AtomicI32,
    stopped: AtomicBool,
    /// The running driver ends its turn by itself when asked (`Driver::stops_politely`):
    /// Stop asks first and the turn kills after a grace period.
    polite: AtomicBool,
    stop: Notify,
    done: watch::Sender<bool>,
}

impl crate::busy::Work for TurnHandle {
    fn stop(&self) -> futures_util::future::BoxFuture<'_, ()> {
        Box::pin(TurnHandle::stop(self))
    }

    fn ended(&self) -> futures_util::future::BoxFuture<'_, ()> {
        Box::pin(self.until_done())
    }
}

impl TurnHandle {
    fn new() -> TurnHandle {
        TurnHandle {
            inner: Arc::new(HandleInner {
                pgid: AtomicI32::new(0),
                stopped: AtomicBool::new(false),
                polite: AtomicBool::new(false),
                stop: Notify::new(),
                done: watch::channel(false).0,
            }),
        }
    }

    /// Stops the turn: kills its process group (or asks a polite driver to end, then
    /// kills), then waits until the turn has ended and recorded its end.
    pub(crate) async fn stop(&self) {
        self.inner.stopped.store(true, Ordering::SeqCst);
        if !self.inner.polite.load(Ordering::SeqCst) {
            Running { pgid: self.inner.pgid.load(Ordering::SeqCst) }.kill();
        }
        self.inner.stop.notify_one();
        self.until_done().await;
    }

    /// Returns once the turn has ended and recorded its end.
    async fn until_done(&self) {
        let mut done = self.inner.done.subscribe();
        while !*done.borrow_and_update() {
            if done.changed().await.is_err() {
                break;
            }
        }
    }
}

/// Everything one turn runs with.
pub struct TurnPlan {
    pub session: SessionId,
    pub module: SessionModule,
    pub role: Role,
    pub driver: Arc<dyn Driver>,
    pub model: Option<String>,
    pub prompt: String,
    pub instructions: String,
    pub resume_id: Option<String>,
    pub chain_index: i64,
    /// A read-only auto-review turn (its role has no allowed paths).
    pub review: bool,
}

/// How a turn ended, for the chain to decide what comes next.
pub(crate) struct TurnEnd {
    pub stopped: bool,
    pub error: Option<String>,
    pub final_text: String,
    pub changed: Vec<String>,
    /// The checkpoint taken after the turn, when it changed files.
    pub checkpoint: Option<i64>,
}

/// A turn registered for its session and recorded as started, not yet run: the chain runs
/// it (`run_to_end`) and decides what follows.
pub(crate) struct Started {
    handle: TurnHandle,
    turn_id: i64,
    plan: TurnPlan,
}

/// A turn that has run: what the chain decides from.
pub(crate) struct Finished {
    pub turn: TurnPlanSummary,
    pub end: TurnEnd,
    pub ended: Ended,
}

/// Held while the chain records what follows a turn: a `stop` of the turn returns once it is
/// dropped, so that the stop waits for the turn's last entry too (and a chain that fails
/// midway still lets it return).
pub(crate) struct Ended(TurnHandle);

impl Drop for Ended {
    fn drop(&mut self) {
        self.0.inner.done.send_replace(true);
    }
}

/// Registers the session's turn and records its start; `SESSION_RUNNING` when the session
/// runs one already. The caller runs it with `run_to_end`.
pub(crate) async fn begin(
    ws: &Arc<Workspace>,
    events: &EventBus,
    plan: TurnPlan,
) -> kiln_types::error::Result<Started> {
    let handle = TurnHandle::new();
    if !ws.busy.begin_turn(plan.session.as_str(), Arc::new(handle.clone())) {
        return Err(kiln_types::error::ApiError::new(
            kiln_types::error::ErrorCode::SessionRunning,
            format!("session {} already runs a turn", plan.session),
        ));
    }
    let turn_id = turns::start(
        &ws.pool,
        NewTurn {
            session: plan.session.as_str(),
            module: &plan.module.id,
            role: &plan.role.id,
            driver: plan.driver.id(),
            model: plan.model.as_deref(),
            chain_index: plan.chain_index,
            at: &now(),
            prompt: &plan.prompt,
            review: plan.review,
        },
    )
    .await;
    let turn_id = match turn_id {
        Ok(id) => id,
        Err(e) => {
            ws.busy.end_turn(plan.session.as_str());
            return Err(e);
        }
    };
    let text = format!("**{}** takes the turn in `{}`.", plan.role.name, plan.module.id);
    let _ = record_as(ws, events, &plan.session, EntryKind::System, Some(&plan.module.id), Some(&plan.role.id), &text)
        .await;
    let _ = publish(ws, events, &plan.session).await;
    Ok(Started { handle, turn_id, plan })
}

/// Runs a started turn to its end, after a slot under the engine's turn limit (or not at all
/// when it is stopped while it waits for one).
pub(crate) async fn run_to_end(ws: &Arc<Workspace>, events: &Arc<EventBus>, started: Started) -> Finished {
    let Started { handle, turn_id, plan } = started;
    let turn = TurnPlanSummary {
        turn_id,
        session: plan.session.clone(),
        module: plan.module.clone(),
        role: plan.role.clone(),
        driver_id: plan.driver.id(),
        model: plan.model.clone(),
        chain_index: plan.chain_index,
        review: plan.review,
    };
    let end = match take_slot(ws, events, &handle, &plan).await {
        Some(slot) => {
            let end = run(ws, events, &handle, turn_id, plan).await;
            drop(slot);
            end
        }
        None => {
            let _ = turns::finish(&ws.pool, turn_id, "stopped", &now()).await;
            TurnEnd { stopped: true, error: None, final_text: String::new(), changed: Vec::new(), checkpoint: None }
        }
    };
    ws.busy.end_turn(turn.session.as_str());
    Finished { turn, end, ended: Ended(handle) }
}

/// The turn's slot under `[session] max_parallel_turns` (`crate::slots`): at once when one
/// is free, else after the turns queued before it; `None` when the turn was stopped first
/// (its ticket leaves the queue with it). While it waits its session says so.
async fn take_slot(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    handle: &TurnHandle,
    plan: &TurnPlan,
) -> Option<crate::slots::Slot> {
    let ticket = ws.slots.ticket(plan.session.as_str());
    if !ticket.waits() {
        return Some(ticket.slot().await);
    }
    let text = format!(
        "Waiting for a free slot: {} agent turns run at once (`[session] max_parallel_turns`).",
        ws.slots.limit()
    );
    let _ = record_as(ws, events, &plan.session, EntryKind::System, Some(&plan.module.id), None, &text).await;
    let _ = publish(ws, events, &plan.session).await;
    let slot = tokio::select! {
        slot = ticket.slot() => Some(slot),
        _ = handle.inner.stop.notified() => None,
    };
    // Stopped while it waited, whichever came first: it does not run.
    let slot = slot.filter(|_| !handle.inner.stopped.load(Ordering::SeqCst));
    let _ = publish(ws, events, &plan.session).await;
    slot
}

/// What the chain needs to know about the turn that ended.
#[derive(Clone)]
pub(crate) struct TurnPlanSummary {
    /// The turn's record (`store::turns`).
    pub turn_id: i64,
    pub session: SessionId,
    pub module: SessionModule,
    pub role: Role,
    pub driver_id: &'static str,
    pub model: Option<String>,
    pub chain_index: i64,
    pub review: bool,
}

async fn run(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    handle: &TurnHandle,
    turn_id: i64,
    plan: TurnPlan,
) -> TurnEnd {
    let workdir = ws.session_workdir(&plan.session);
    let before = snapshot(ws, &workdir).await;
    // The starting state is held by a ref while the turn runs, so collecting the store
    // (after a prune) never takes what the put-back needs.
    let hold = format!("refs/kiln-turns/{}", plan.session);
    if let Some(tree) = before {
        let _guard = ws.store_lock.lock().await;
        if let Err(e) = ws
            .open_store()
            .and_then(|store| kiln_records::snapshot::commit(&store, tree, None, "a turn's starting state", &hold))
        {
            tracing::error!("holding the turn's starting state: {e}");
        }
    }

    let live = crate::live::Live::new(&plan.session, LivePhase::Turn, Some(&plan.role.id), Some(&plan.module.id));
    let (operator, mut said) =
        crate::operator::ChatOperator::new(ws.clone(), events.clone(), plan.session.clone(), turn_id);
    let mut log = TurnLog {
        ws,
        events,
        plan: &plan,
        turn_id,
        text: String::new(),
        partial: String::new(),
        live,
        refused: false,
        last_text: String::new(),
        ended: None,
        operator: Arc::new(operator),
    };
    let mut error = attempt(handle, &mut log, &mut said, plan.resume_id.clone(), plan.prompt.clone()).await;
    let stopped = handle.inner.stopped.load(Ordering::SeqCst);
    // A conversation the agent no longer holds: continue on a fresh one, with the
    // transcript so far replayed, and say so.
    if !stopped && plan.resume_id.is_some() && error.as_deref().is_some_and(lost_resume) {
        let note = format!(
            "The agent no longer holds this session's conversation ({}); continuing on a fresh one with the conversation replayed.",
            error.as_deref().unwrap_or_default().lines().next().unwrap_or_default()
        );
        let _ = record_as(ws, events, &plan.session, EntryKind::System, Some(&plan.module.id), None, &note).await;
        let replay = replay(ws, &plan.session, &plan.prompt).await;
        log.ended = None;
        error = attempt(handle, &mut log, &mut said, None, replay).await;
    }
    // The live line ends with the turn; what failed is said once, by the turn's end.
    log.live.end(events);
    let stopped = handle.inner.stopped.load(Ordering::SeqCst);
    let error = if stopped { None } else { error };
    let final_text = std::mem::take(&mut log.last_text);
    let status = if stopped {
        "stopped"
    } else if error.is_some() {
        "failed"
    } else {
        "completed"
    };
    let _ = turns::finish(&ws.pool, turn_id, status, &now()).await;

    let mut changed = Vec::new();
    let mut checkpoint = None;
    if let (Some(before), Some(after)) = (before, snapshot(ws, &workdir).await) {
        let confined = {
            let _guard = ws.store_lock.lock().await;
            ws.open_store().and_then(|store| {
                // A repository-wide role's paths are relative to the working copy's root.
                let scope = match plan.role.scope {
                    crate::roles::Scope::Repository => ".",
                    crate::roles::Scope::Module => plan.module.directory.as_str(),
                };
                crate::working_copy::put_back_outside(&store, &workdir, before, after, scope, &plan.role.allowed_paths)
            })
        };
        match confined {
            Ok(c) => {
                changed = c.changed;
                if !c.put_back.is_empty() {
                    let list: Vec<String> = c.put_back.iter().map(|p| format!("- `{p}`")).collect();
                    let text = format!(
                        "Put back {} change(s) outside what **{}** may change in `{}`:\n{}",
                        c.put_back.len(),
                        plan.role.name,
                        plan.module.directory,
                        list.join("\n")
                    );
                    let _ = record_as(ws, events, &plan.session, EntryKind::System, Some(&plan.module.id), None, &text)
                        .await;
                    changed.retain(|p| !c.put_back.contains(p));
                }
            }
            Err(e) => tracing::error!("checking the turn's writes: {e}"),
        }
        // A turn that changed files leaves a restore point.
        if !changed.is_empty() {
            if let Some(tree) = snapshot(ws, &workdir).await {
                let label = format!("{} in {}", plan.role.name, plan.module.id);
                match crate::checkpoint::take(
                    ws,
                    events,
                    &plan.session,
                    tree,
                    &label,
                    Some(&plan.role.id),
                    Some(&plan.module.id),
                )
                .await
                {
                    Ok(sequence) => checkpoint = Some(sequence),
                    Err(e) => tracing::error!("taking the turn's checkpoint: {e}"),
                }
            }
        }
    }
    {
        let _guard = ws.store_lock.lock().await;
        if let Ok(store) = ws.open_store() {
            if let Ok(mut r) = store.find_reference(&hold) {
                let _ = r.delete();
            }
        }
    }
    TurnEnd { stopped, error, final_text, changed, checkpoint }
}

/// After Stop, how long a driver that stops politely (`Driver::stops_politely`) has to end
/// its turn before its process group is killed.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// One run of the driver; returns the turn's error, if it failed.
async fn attempt(
    handle: &TurnHandle,
    log: &mut TurnLog<'_>,
    said: &mut mpsc::UnboundedReceiver<crate::operator::Said>,
    resume_id: Option<String>,
    prompt: String,
) -> Option<String> {
    let plan = log.plan;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let inner = handle.inner.clone();
    let mut sink = TurnSink::new(tx, Box::new(move |r: Running| inner.pgid.store(r.pgid, Ordering::SeqCst)));
    let polite_stop = sink.stop.clone();
    handle.inner.polite.store(plan.driver.stops_politely(), Ordering::SeqCst);
    sink.operator = log.operator();
    let request = TurnRequest {
        workdir: log.ws.session_workdir(&plan.session),
        session_dir: log.ws.session_dir(&plan.session),
        prompt,
        instructions: plan.instructions.clone(),
        resume_id,
        model: plan.model.clone(),
        read_only: plan.role.read_only,
        environment: log.ws.config.environment.clone(),
        // Settings that cannot be opened say so where they are shown; the turn goes on
        // without the user's servers rather than not at all.
        mcp: crate::mcp::for_turn(log.ws).await.unwrap_or_else(|e| {
            tracing::warn!("the MCP servers were left out of this turn: {}", e.message);
            Vec::new()
        }),
    };
    let config = plan.driver.guard_config();
    // Already boxed and pinned: owned here, so the `drop` below really ends the run.
    let mut driver_run = plan.driver.run(request, sink);
    let mut driver_done = false;
    // Autosaves while the turn runs: at most one in flight; the turn's own checkpoint
    // at its end is the final one.
    let every = Duration::from_secs(log.ws.config.session.autosave_seconds.max(1));
    let mut autosave = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    let mut saving: Option<tokio::task::JoinHandle<()>> = None;
    // After Stop, how long a driver that ends its turn politely gets before the kill.
    let mut grace: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    loop {
        tokio::select! {
            _ = autosave.tick() => {
                if saving.as_ref().is_none_or(|t| t.is_finished()) {
                    let (ws, events, session, label) = (log.ws.clone(), log.events.clone(), plan.session.clone(), format!("autosave during {}", plan.role.name));
                    let (role, module) = (plan.role.id.clone(), plan.module.id.clone());
                    saving = Some(tokio::spawn(async move {
                        if let Err(e) = crate::checkpoint::autosave(&ws, &events, &session, &label, &role, &module).await {
                            tracing::error!("autosave of {session}: {e}");
                        }
                    }));
                }
            }
            result = &mut driver_run, if !driver_done => {
                driver_done = true;
                if let Err(e) = result {
                    log.ended.get_or_insert(Some(e.message));
                }
            }
            event = rx.recv() => match event {
                Some(event) => {
                    log.take(event).await;
                    // Refused credentials are not worth the agent's own retries (Claude
                    // Code spends about two minutes on them): the turn fails now.
                    if log.refused {
                        break;
                    }
                }
                None => break,
            },
            // The operator's line (a permission asked): after what the driver sent before asking.
            Some(line) = said.recv() => {
                while let Ok(event) = rx.try_recv() {
                    log.take(event).await;
                }
                // Whole text is written first; a message still streaming stays live below.
                if !log.text.trim().is_empty() {
                    log.flush().await;
                }
                log.entry(EntryKind::System, &line.text).await;
                let _ = line.written.send(());
                if log.refused {
                    break;
                }
            }
            _ = handle.inner.stop.notified(), if grace.is_none() => {
                // Nobody will answer now: the driver hears so at once, even a polite one.
                log.operator.withdraw_all("the turn was stopped").await;
                if !handle.inner.polite.load(Ordering::SeqCst) {
                    break;
                }
                polite_stop.cancel();
                grace = Some(Box::pin(tokio::time::sleep(STOP_GRACE)));
            }
            _ = async { grace.as_mut().expect("guarded").await }, if grace.is_some() => break,
        }
    }
    // Requests still waiting are taken back before the driver goes, so they are said once.
    log.operator.withdraw_all("the turn ended").await;
    // Dropping the run kills a CLI it started; the group kill catches its children.
    #[allow(clippy::drop_non_drop)] // its fields hold the child, killed when dropped
    drop(driver_run);
    Running { pgid: handle.inner.pgid.load(Ordering::SeqCst) }.kill();
    if let Some(save) = saving {
        let _ = save.await; // the turn's own checkpoint comes after it
    }
    log.flush().await;
    // With everything the agent started gone, what it did to its own configuration goes too.
    if let Some(note) = tokio::task::spawn_blocking(move || config.put_back()).await.ok().flatten() {
        log.entry(EntryKind::System, &note).await;
    }
    match log.ended.take() {
        Some(error) => error,
        None => Some("the agent ended without finishing its turn".into()),
    }
}

/// How the agents say they no longer hold a conversation.
pub fn lost_resume(error: &str) -> bool {
    let error = error.to_ascii_lowercase();
    ["no conversation found", "no rollout found", "thread/resume failed"].iter().any(|p| error.contains(p))
}

/// The prompt for a fresh conversation: the session's transcript so far (what the
/// operator asked and the agents answered, most recent last, bounded), then the message.
async fn replay(ws: &Workspace, session: &SessionId, prompt: &str) -> String {
    const KEPT: usize = 24_000;
    let entries =
        kiln_records::store::transcript_entries::list(&ws.pool, session.as_str(), None).await.unwrap_or_default();
    let mut lines: Vec<String> = entries
        .iter()
        .filter_map(|e| match e.kind {
            EntryKind::User => Some(format!("Operator: {}", e.text)),
            EntryKind::Agent => Some(format!("{}: {}", e.role.as_deref().unwrap_or("agent"), e.text)),
            EntryKind::Handoff => Some(e.text.clone()),
            _ => None,
        })
        .collect();
    // The message being sent now is the last user entry; it goes after the replay.
    if lines.last().is_some_and(|l| l == &format!("Operator: {prompt}")) {
        lines.pop();
    }
    let mut history = lines.join("\n\n");
    if history.len() > KEPT {
        let mut cut = history.len() - KEPT;
        while !history.is_char_boundary(cut) {
            cut += 1;
        }
        history = format!("…{}", &history[cut..]);
    }
    format!(
        "This continues an earlier conversation that was lost. What was said so far:\n\n{history}\n\n---\n\n{prompt}"
    )
}

async fn snapshot(ws: &Arc<Workspace>, workdir: &std::path::Path) -> Option<git2::Oid> {
    let _guard = ws.store_lock.lock().await;
    let ws2 = ws.clone();
    let dir = workdir.to_path_buf();
    tokio::task::spawn_blocking(move || ws2.open_store().and_then(|s| crate::working_copy::snapshot_workdir(&s, &dir)))
        .await
        .ok()
        .and_then(|r| r.map_err(|e| tracing::error!("snapshotting the working copy: {e}")).ok())
}

/// Writes a turn's events into the transcript as they come. Text is gathered into one
/// entry per stretch of prose, so a stream of fragments reads as paragraphs; until it is
/// written, the stretch so far (with the message still streaming) is the live view's, as
/// is the provider's retry line (`crate::live`), which never reaches the transcript.
struct TurnLog<'a> {
    ws: &'a Arc<Workspace>,
    events: &'a Arc<EventBus>,
    plan: &'a TurnPlan,
    turn_id: i64,
    text: String,
    /// The message still streaming (`TextDelta`s), replaced by its whole `Text`.
    partial: String,
    live: crate::live::Live,
    /// The provider refused the credentials: the turn ends at once.
    refused: bool,
    last_text: String,
    /// `Some(error)` once the driver said the turn ended (`None` inside: no error).
    ended: Option<Option<String>>,
    /// Answers, through cards in the chat, what the command policy cannot decide.
    operator: Arc<crate::operator::ChatOperator>,
}

impl TurnLog<'_> {
    /// Who answers the permissions the policy cannot decide during this turn.
    fn operator(&self) -> Option<Arc<dyn crate::drivers::permission::Operator>> {
        Some(self.operator.clone())
    }

    async fn entry(&self, kind: EntryKind, text: &str) {
        let _ = record_as(
            self.ws,
            self.events,
            &self.plan.session,
            kind,
            Some(&self.plan.module.id),
            Some(&self.plan.role.id),
            text,
        )
        .await;
    }

    async fn flush(&mut self) {
        if !self.text.trim().is_empty() {
            let text = std::mem::take(&mut self.text);
            self.entry(EntryKind::Agent, text.trim()).await;
            self.last_text = text;
        }
        self.text.clear();
        self.partial.clear();
        self.live.written(self.events);
    }

    async fn take(&mut self, event: DriverEvent) {
        match &event {
            DriverEvent::TextDelta { text } => {
                self.partial.push_str(text);
                let so_far = joined(&self.text, &self.partial);
                self.live.text(self.events, &so_far, false);
                return;
            }
            DriverEvent::Text { text } => {
                self.text = joined(&self.text, text);
                self.partial.clear();
                // The whole message: the end of what streamed, sent whatever the throttle says.
                self.live.text(self.events, &self.text, true);
                if self.text.len() > 4000 {
                    self.flush().await;
                }
                return;
            }
            // Into the running command's row, live only; the result carries the whole.
            DriverEvent::ToolOutput { output, .. } => {
                self.live.output(self.events, output);
                return;
            }
            // One updating line, no transcript entry per attempt; what streamed of the
            // failed request is asked for again.
            DriverEvent::Retry { attempt, message, max_attempts, http_status } => {
                self.partial.clear();
                let status = crate::live::retrying(*attempt, *max_attempts, *http_status, message);
                if status.reason == "auth" {
                    self.refused = true;
                    self.ended = Some(Some(message.clone()));
                }
                self.live.status(self.events, status);
                return;
            }
            DriverEvent::Error { message } if crate::live::reason(None, message) != "other" => {
                // A provider failure: said once in words by the turn's end, live until then.
                self.live.status(self.events, crate::live::failed(message));
                return;
            }
            _ => {}
        }
        self.flush().await;
        if !matches!(event, DriverEvent::Unknown { .. } | DriverEvent::TurnEnded { .. }) {
            self.live.recovered(self.events);
        }
        match event {
            DriverEvent::SessionStarted { resume_id, .. } => {
                let _ = kiln_records::store::resume_ids::set(
                    &self.ws.pool,
                    self.plan.session.as_str(),
                    self.plan.driver.id(),
                    &resume_id,
                )
                .await;
            }
            DriverEvent::Thought { text } => {
                self.entry(EntryKind::Agent, &format!("> _{}_", text.trim().replace('\n', " "))).await
            }
            DriverEvent::ToolCall { title, kind, .. } => {
                let kind =
                    serde_json::to_value(kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
                self.entry(EntryKind::Tool, &format!("**{kind}** `{}`", title.replace('`', "'"))).await
            }
            DriverEvent::ToolResult { status, output, .. } => {
                self.live.output_ended(self.events);
                let status = if status == crate::drivers::events::ToolStatus::Failed { "failed" } else { "done" };
                let shown = clip(&output, 2000);
                let text = if shown.trim().is_empty() {
                    format!("↳ {status}")
                } else {
                    format!("↳ {status}\n\n```\n{}\n```", shown.trim_end())
                };
                self.entry(EntryKind::Tool, &text).await;
                crate::pause::pause_point("turn.after-tool-result");
            }
            DriverEvent::FileChange { path, change } => {
                let change =
                    serde_json::to_value(change).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
                self.entry(EntryKind::Tool, &format!("**{change}** `{path}`")).await
            }
            // Asked of the operator: the card's own lines (operator.rs) said what was asked and answered.
            DriverEvent::PermissionRequest { input, .. } if input["decision"] == "asked" => {}
            DriverEvent::PermissionRequest { tool, input, .. } => {
                // The drivers answer by the command policy in Settings; say what it decided.
                let text = match (input["decision"].as_str(), input["reason"].as_str()) {
                    (Some(decision), Some(reason)) => {
                        format!("The agent asked to use `{tool}`: {decision} by the command policy ({reason}).")
                    }
                    (Some(decision), None) => {
                        format!("The agent asked to use `{tool}`: {decision} by the command policy.")
                    }
                    _ => format!("The agent asked to use `{tool}`; Kiln answers by the command policy in Settings."),
                };
                self.entry(EntryKind::System, &text).await
            }
            DriverEvent::Usage(usage) => self.usage(&usage).await,
            DriverEvent::Error { message } => {
                self.entry(EntryKind::System, &format!("The agent reported: {message}")).await
            }
            DriverEvent::Warning { message } => {
                tracing::warn!(session = %self.plan.session, driver = self.plan.driver.id(), "the agent warned: {message}");
                let first = message.trim().lines().next().unwrap_or_default();
                let short: String = first.chars().take(160).collect();
                let cut = if short.len() < message.trim().len() { " …" } else { "" };
                self.entry(EntryKind::System, &format!("The agent warned: {short}{cut} (whole in Kiln's log)")).await
            }
            DriverEvent::TurnEnded { is_error, final_text, error, .. } => {
                if let Some(text) = final_text.filter(|t| !t.trim().is_empty()) {
                    if self.last_text.trim() != text.trim() {
                        self.last_text = text;
                    }
                }
                let error =
                    if is_error { Some(error.unwrap_or_else(|| "the agent reported a failure".into())) } else { None };
                self.ended = Some(error);
            }
            DriverEvent::Text { .. }
            | DriverEvent::TextDelta { .. }
            | DriverEvent::ToolOutput { .. }
            | DriverEvent::Retry { .. }
            | DriverEvent::Unknown { .. } => {}
        }
    }

    async fn usage(&self, usage: &Usage) {
        let _ = turns::add_usage(&self.ws.pool, self.turn_id, usage).await;
    }
}

/// Two whole messages of the agent, one after the other: a line break between them
/// unless one is there, so the first's last line (a `HANDOFF:` line) never runs into the
/// second's first (a CLI's warning, a closing remark).
fn joined(before: &str, next: &str) -> String {
    if before.is_empty() || next.is_empty() || before.ends_with('\n') || next.starts_with('\n') {
        return format!("{before}{next}");
    }
    format!("{before}\n\n{next}")
}

fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}\n… ({} more bytes)", &text[..cut], text.len() - cut)
}

#[cfg(test)]
mod tests {
    use super::joined;

    #[test]
    fn whole_messages_never_run_into_each_other() {
        let text = joined("Done.\nHANDOFF: none - done", "Warning: the cache is cold");
        assert_eq!(text, "Done.\nHANDOFF: none - done\n\nWarning: the cache is cold");
        assert!(text.lines().any(|line| line == "HANDOFF: none - done"), "the handoff line stands alone: {text}");
        assert_eq!(joined("", "First"), "First");
        assert_eq!(joined("Line\n", "Next"), "Line\nNext");
    }
}
