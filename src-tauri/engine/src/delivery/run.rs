//! Delivery runs: `plan_delivery` builds the plan for a target, `deliver` checks the
//! blockers and that the confirmed plan is still the plan, then runs the target in the
//! background and answers at once with its pending steps. Every step change is kept on
//! the run, written to `deliveries` in order and sent as `EventBody::Delivery`; a
//! workspace run that passed every step marks the session delivered.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use super::plan::{self, StepSpec};
use super::pr::GitPrTarget;
use super::workspace::WorkspaceTarget;
use super::{Applied, Delivering, StepSink, Target, TargetPlan};
use crate::events::EventBus;
use crate::ids::SessionId;
use crate::workspace::{Context, Workspace};
use kiln_records::store::{deliveries, parse_enum};
use kiln_runtime::clock::now;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

/// The longest reason for delivering past failing gates.
const MAX_REASON: usize = 2000;

/// Sessions with a run going in this process: a row still `running` without one here
/// was cut short by a crash.
static ACTIVE: Mutex<Option<HashSet<String>>> = Mutex::new(None);
/// Held while a delivery starts (marked active, its run stored) and while a reader closes a
/// run nobody runs: otherwise a reader that found no active delivery could mark failed a
/// run stored just after it looked.
static STARTING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn active(session: &str) -> bool {
    ACTIVE.lock().unwrap().as_ref().is_some_and(|s| s.contains(session))
}

/// Marks the session's delivery running (false when one already was) or over.
fn set_active(session: &str, on: bool) -> bool {
    let mut guard = ACTIVE.lock().unwrap();
    let set = guard.get_or_insert_with(HashSet::new);
    if on {
        set.insert(session.to_string())
    } else {
        set.remove(session)
    }
}

/// The sessions whose delivery runs in this process now (`Engine::activity` counts them).
pub(crate) fn active_sessions() -> Vec<String> {
    ACTIVE.lock().unwrap().as_ref().map(|s| s.iter().cloned().collect()).unwrap_or_default()
}

/// A plan and what `deliver` needs to run it.
struct Planned {
    plan: DeliveryPlan,
    steps: Vec<StepSpec>,
    changes: Vec<plan::ModuleChanges>,
    settings: DeliverySettingsView,
}

pub(crate) async fn plan_delivery(cx: &Context, args: PlanDeliveryArgs) -> Result<DeliveryPlan> {
    let ws = &cx.ws;
    let (id, session) = crate::session::live(ws, &args.session_id).await?;
    Ok(build(ws, &id, &session, args.target).await?.plan)
}

async fn build(
    ws: &Arc<Workspace>,
    id: &SessionId,
    session: &SessionView,
    target: Option<DeliveryTarget>,
) -> Result<Planned> {
    let settings = crate::settings::delivery(ws).await?;
    let available_targets: Vec<TargetOption> = [DeliveryTarget::Workspace, DeliveryTarget::GitPr]
        .into_iter()
        .map(|t| {
            let result = match t {
                DeliveryTarget::Workspace => WorkspaceTarget.available(ws, &settings),
                DeliveryTarget::GitPr => GitPrTarget.available(ws, &settings),
            };
            TargetOption { target: t, available: result.is_ok(), reason: result.err() }
        })
        .collect();
    // The configured default when usable, else the first usable one, else the default.
    let default = parse_enum::<DeliveryTarget>(&ws.config.delivery.default).unwrap_or(DeliveryTarget::Workspace);
    let target = target.unwrap_or_else(|| {
        let usable = |t: DeliveryTarget| available_targets.iter().any(|o| o.target == t && o.available);
        if usable(default) {
            default
        } else {
            available_targets.iter().find(|o| o.available).map(|o| o.target).unwrap_or(default)
        }
    });

    let changes = plan::changes(ws, id, session).await?;
    let modules: Vec<PlannedModule> = changes.iter().map(|c| plan::planned(ws, id, c)).collect();
    let restart_needed = plan::restart_needed(ws, &modules, &changes);
    let latest = crate::gates::latest(ws, id).await?;
    let mut blockers = plan::change_blockers(&changes);
    blockers.extend(plan::session_file_blockers(&ws.session_workdir(id), &changes));
    blockers.extend(plan::common_blockers(ws, id, session, &latest).await?);
    let TargetPlan { blockers: own, steps, branch } = match target {
        DeliveryTarget::Workspace => WorkspaceTarget.plan(ws, id, &settings, &changes, &modules).await?,
        DeliveryTarget::GitPr => GitPrTarget.plan(ws, id, &settings, &changes, &modules).await?,
    };
    blockers.extend(own);
    let mut plan = DeliveryPlan {
        session_id: id.to_string(),
        target,
        available_targets,
        modules,
        gates: plan::gate_names(ws, session, &latest),
        steps: steps.iter().map(|s| s.title.clone()).collect(),
        restart_needed,
        blockers,
        branch,
        plan_id: String::new(),
    };
    plan.plan_id = plan::plan_id(ws, id, session, &plan, &changes)?;
    Ok(Planned { plan, steps, changes, settings })
}

pub(crate) async fn deliver(cx: &Context, args: DeliverArgs) -> Result<DeliveryRun> {
    let Context { ws, events } = cx;
    let (id, session) = crate::session::live(ws, &args.session_id).await?;
    if ws.is_running(id.as_str()) {
        return Err(ApiError::new(ErrorCode::SessionRunning, "deliver when the session stops"));
    }
    if active(id.as_str()) {
        return Err(ApiError::new(ErrorCode::SessionRunning, "a delivery of this session is running"));
    }
    close_orphan(ws, &id).await?;
    if args.target == DeliveryTarget::Workspace && session.delivered_at.is_some() {
        return Err(ApiError::new(
            ErrorCode::SessionDelivered,
            format!("session {id} was already delivered into the workspace"),
        ));
    }
    let reason = match args.anyway.as_deref().map(str::trim) {
        Some("") => return Err(ApiError::invalid("say why you deliver past the failing gates: the reason is empty")),
        Some(r) if r.chars().count() > MAX_REASON => {
            return Err(ApiError::invalid(format!("the reason is longer than {MAX_REASON} characters")))
        }
        other => other.map(str::to_string),
    };
    let Planned { plan, steps, changes, settings } = build(ws, &id, &session, Some(args.target)).await?;
    if let Some(option) = plan.available_targets.iter().find(|o| o.target == args.target && !o.available) {
        return Err(ApiError::new(
            ErrorCode::TargetUnavailable,
            option.reason.clone().unwrap_or_else(|| "the target cannot be used".into()),
        ));
    }
    // Gate blockers give way to the operator's written reason; nothing else does.
    let anyway = match &reason {
        Some(reason) if !plan.blockers.is_empty() && plan.blockers.iter().all(|b| b.overridable) => {
            Some(super::Anyway {
                reason: reason.clone(),
                blockers: plan.blockers.iter().map(|b| b.message.clone()).collect(),
            })
        }
        _ => None,
    };
    if !plan.blockers.is_empty() && anyway.is_none() {
        let code = if plan.blockers.iter().any(|b| b.code == ErrorCode::DeliveryConflict) {
            ErrorCode::DeliveryConflict
        } else {
            ErrorCode::DeliveryBlocked
        };
        let text: Vec<String> =
            plan.blockers
                .iter()
                .map(|b| {
                    if b.paths.is_empty() {
                        b.message.clone()
                    } else {
                        format!("{}: {}", b.message, b.paths.join(", "))
                    }
                })
                .collect();
        let hard: Vec<&Blocker> = plan.blockers.iter().filter(|b| !b.overridable).collect();
        let past = if reason.is_some() && !hard.is_empty() {
            " (a reason delivers past failing gates only; these are not gates)"
        } else {
            ""
        };
        return Err(ApiError::new(code, format!("{}{past}", text.join("; "))));
    }
    if plan.plan_id != args.plan_id {
        return Err(ApiError::new(
            ErrorCode::PlanStale,
            "the plan changed since it was shown: review the new plan and confirm again",
        ));
    }

    let run = DeliveryRun {
        id: uuid::Uuid::new_v4().to_string(),
        session_id: id.to_string(),
        target: args.target,
        state: DeliveryState::Running,
        steps: steps
            .iter()
            .map(|s| DeliveryStep {
                id: s.id.clone(),
                title: s.title.clone(),
                module_id: s.module.clone(),
                state: StepState::Pending,
                output: String::new(),
                started_at: None,
                ended_at: None,
            })
            .collect(),
        started_at: now(),
        ended_at: None,
        pull_request: None,
        landed: Vec::new(),
        error: None,
    };
    // Active before the run is stored, and both under `STARTING`: a reader seeing a running
    // run with no task behind it closes it as cut short (`close_orphan`), and the page reads
    // as soon as the transcript below is published (or earlier, on its own timer).
    let starting = STARTING.lock().await;
    if !set_active(id.as_str(), true) {
        return Err(ApiError::new(ErrorCode::SessionRunning, "a delivery of this session is running"));
    }
    let stored = async {
        deliveries::insert(&ws.pool, &run, &plan.plan_id).await?;
        drop(starting);
        if let Some(anyway) = &anyway {
            let list: Vec<String> = anyway.blockers.iter().map(|b| format!("- {b}")).collect();
            let text = format!(
                "**Delivering past the gate blockers**, as the operator decided: {}\n\n{}",
                anyway.reason,
                list.join("\n")
            );
            crate::session::record(ws, events, &id, EntryKind::System, None, &text).await?;
        }
        Ok::<(), ApiError>(())
    };
    if let Err(e) = stored.await {
        set_active(id.as_str(), false);
        return Err(e);
    }
    events.emit(EventBody::Delivery { run: run.clone() });

    let ctx = Delivering {
        ws: ws.clone(),
        events: events.clone(),
        id,
        session,
        run_id: run.id.clone(),
        changes,
        modules: plan.modules.clone(),
        restart_needed: plan.restart_needed,
        redactor: redactor(ws).await?,
        settings,
        anyway,
    };
    let first = run.clone();
    ws.background.spawn(async move {
        let session = ctx.id.to_string();
        if let Err(e) = execute(ctx, run).await {
            tracing::error!("delivery of {session}: {e}");
        }
        set_active(&session, false);
    });
    Ok(first)
}

/// Redacts the workspace's sealed secrets (provider keys, tokens) from every output.
async fn redactor(ws: &Workspace) -> Result<super::git::Redactor> {
    let mut r = super::git::Redactor::new();
    for secret in [
        crate::settings::delivery_token(ws).await,
        crate::settings::openai_key(ws).await,
        crate::settings::bridge_token(ws).await,
    ]
    .into_iter()
    .flatten()
    .flatten()
    {
        r.add(&secret);
    }
    Ok(r)
}

async fn execute(ctx: Delivering, run: DeliveryRun) -> Result<()> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<DeliveryRun>();
    // One writer keeps the stored run in step order, whatever the sink's callers do.
    let pool = ctx.ws.pool.clone();
    let writer = tokio::spawn(async move {
        while let Some(run) = rx.recv().await {
            if let Err(e) = deliveries::update(&pool, &run).await {
                tracing::error!("storing delivery run {}: {e}", run.id);
            }
        }
    });
    let recorder = Recorder { run: Mutex::new(run), events: ctx.events.clone(), tx };
    let result = match recorder.target() {
        DeliveryTarget::GitPr => GitPrTarget.apply(&ctx, &recorder).await,
        DeliveryTarget::Workspace => WorkspaceTarget.apply(&ctx, &recorder).await,
    };
    let finished = recorder.finish(result);
    drop(recorder);
    let _ = writer.await;
    if finished.state == DeliveryState::Delivered {
        landed(&ctx, &finished).await?;
    } else if let Some(e) = &finished.error {
        let text = format!("Delivery stopped: {}", e.message);
        crate::session::record(&ctx.ws, &ctx.events, &ctx.id, EntryKind::System, None, &text).await?;
    }
    Ok(())
}

/// Marks a workspace delivery's session delivered and records what landed.
async fn landed(ctx: &Delivering, run: &DeliveryRun) -> Result<()> {
    let at = run.ended_at.clone().unwrap_or_else(now);
    let text = match &run.pull_request {
        Some(pr) => format!("Delivered as a pull request: {} (branch `{}`).", pr.url, pr.branch),
        None => format!(
            "Delivered into the workspace: {} file{} landed{}.\n\n{}",
            run.landed.len(),
            if run.landed.len() == 1 { "" } else { "s" },
            if ctx.restart_needed { "; restart the running application" } else { "" },
            run.landed.iter().map(|p| format!("- `{p}`")).collect::<Vec<_>>().join("\n")
        ),
    };
    // A pull request is not the workspace's yet: the session stays open for updates.
    if run.target == DeliveryTarget::Workspace {
        kiln_records::store::sessions::set_delivered(&ctx.ws.pool, ctx.id.as_str(), &at).await?;
    }
    crate::session::record(&ctx.ws, &ctx.events, &ctx.id, EntryKind::System, None, &text).await?;
    crate::session::publish(&ctx.ws, &ctx.events, &ctx.id).await?;
    Ok(())
}

/// The `StepSink` of a run: updates the run, tells every view, queues the write.
struct Recorder {
    run: Mutex<DeliveryRun>,
    events: Arc<EventBus>,
    tx: tokio::sync::mpsc::UnboundedSender<DeliveryRun>,
}

impl Recorder {
    fn target(&self) -> DeliveryTarget {
        self.run.lock().unwrap().target
    }

    fn change(&self, f: impl FnOnce(&mut DeliveryRun)) -> DeliveryRun {
        let snapshot = {
            let mut run = self.run.lock().unwrap();
            f(&mut run);
            run.clone()
        };
        self.events.emit(EventBody::Delivery { run: snapshot.clone() });
        let _ = self.tx.send(snapshot.clone());
        snapshot
    }

    fn step(&self, id: &str, f: impl FnOnce(&mut DeliveryStep)) {
        let id = id.to_string();
        self.change(move |run| {
            if let Some(step) = run.steps.iter_mut().find(|s| s.id == id) {
                f(step);
            }
        });
    }

    fn end(&self, id: &str, state: StepState, output: &str) {
        let output = output.to_string();
        self.step(id, move |s| {
            s.state = state;
            s.output = output;
            s.ended_at = Some(now());
        });
    }

    fn finish(&self, result: Result<Applied>) -> DeliveryRun {
        self.change(|run| {
            run.ended_at = Some(now());
            match result {
                Ok(applied) => {
                    run.state = DeliveryState::Delivered;
                    run.landed = applied.landed;
                    run.pull_request = applied.pull_request;
                    // Planned steps a target did not use (names it spells otherwise).
                    run.steps.retain(|s| s.state != StepState::Pending);
                }
                Err(e) => {
                    run.state = DeliveryState::Failed;
                    for s in run.steps.iter_mut().filter(|s| s.state == StepState::Running) {
                        s.state = StepState::Failed;
                        s.ended_at = run.ended_at.clone();
                    }
                    run.error = Some(e);
                }
            }
        })
    }
}

impl StepSink for Recorder {
    fn start(&self, id: &str, title: &str, module: Option<&str>) {
        let (id, title, module) = (id.to_string(), title.to_string(), module.map(str::to_string));
        self.change(move |run| {
            let at = Some(now());
            match run.steps.iter_mut().find(|s| s.id == id) {
                Some(s) => {
                    s.state = StepState::Running;
                    s.title = title;
                    s.started_at = at;
                }
                // A step the plan did not list goes before the first still pending one.
                None => {
                    let step = DeliveryStep {
                        id,
                        title,
                        module_id: module,
                        state: StepState::Running,
                        output: String::new(),
                        started_at: at,
                        ended_at: None,
                    };
                    let at = run.steps.iter().position(|s| s.state == StepState::Pending).unwrap_or(run.steps.len());
                    run.steps.insert(at, step);
                }
            }
        });
    }

    fn pass(&self, id: &str, output: &str) {
        self.end(id, StepState::Passed, output);
    }

    fn fail(&self, id: &str, output: &str) {
        self.end(id, StepState::Failed, output);
    }

    fn skip(&self, id: &str, why: &str) {
        self.end(id, StepState::Skipped, why);
    }
}

/// The session's latest run, if it was ever delivered or tried.
pub(crate) async fn latest(cx: &Context, args: SessionIdArgs) -> Result<Option<DeliveryRun>> {
    let ws = &cx.ws;
    let id = SessionId::parse(&args.session_id)?;
    crate::session::view(ws, &id).await?;
    close_orphan(ws, &id).await?;
    deliveries::latest(&ws.pool, id.as_str()).await
}

/// A run stored as running with no task in this process was cut short: failed.
async fn close_orphan(ws: &Workspace, id: &SessionId) -> Result<()> {
    let _starting = STARTING.lock().await;
    if active(id.as_str()) {
        return Ok(());
    }
    let error = ApiError::new(ErrorCode::Internal, "the delivery was cut short (Kiln stopped); deliver again");
    deliveries::fail_running(&ws.pool, id.as_str(), &error, &now()).await
}

/// At start: a run of the session stored as running that no task of this process runs
/// was cut short by Kiln stopping. It is marked failed and the transcript says where it
/// stopped and how to go on.
pub(crate) async fn explain_cut_short(ws: &Workspace, events: &EventBus, id: &SessionId) -> Result<()> {
    if active(id.as_str()) {
        return Ok(());
    }
    let Some(run) = deliveries::latest(&ws.pool, id.as_str()).await? else { return Ok(()) };
    if run.state != DeliveryState::Running {
        return Ok(());
    }
    close_orphan(ws, id).await?;
    let step = run
        .steps
        .iter()
        .find(|s| s.state == StepState::Running)
        .map(|s| format!(" during “{}”", s.title))
        .unwrap_or_default();
    let mut text = match run.target {
        DeliveryTarget::Workspace => {
            format!("Kiln stopped while delivering into the workspace{step}, so the delivery was cut short.")
        }
        DeliveryTarget::GitPr => {
            format!("Kiln stopped while delivering as a pull request{step}, so the delivery was cut short.")
        }
    };
    // The stored steps may lag behind the run (a task of their own writes them): the
    // backup directory on disk says the copy had begun, too.
    let backup = std::path::Path::new(".kiln/deliveries").join(&run.id).join("backup");
    let copying =
        run.steps.iter().any(|s| s.id == "copy" && s.state == StepState::Running) || ws.root.join(&backup).is_dir();
    if run.target == DeliveryTarget::Workspace && copying {
        text.push_str(&format!(
            " Files it had copied stay in the workspace; the files they replaced are kept in `{}`.",
            backup.display()
        ));
    }
    text.push_str(" Deliver again to finish: what already landed is no conflict.");
    crate::session::record(ws, events, id, EntryKind::System, None, &text).await?;
    Ok(())
}
