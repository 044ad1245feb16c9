//! The chain of turns (SPEC §6): an operator message starts a turn; each turn ends with
//! a handoff that decides what follows — the next role (by itself up to 4 turns per
//! message while auto-continue is on), the operator's approval of a specification, an
//! answer to a question, review, or blocked when the driver failed.

use std::sync::Arc;

use crate::api::types::*;
use crate::approval;
use crate::clock::now;
use crate::config::Workflow;
use crate::error::{ApiError, ErrorCode, Result};
use crate::events::EventBus;
use crate::handoff::{self, Target};
use crate::ids::SessionId;
use crate::planner_agent::Planning;
use crate::roles::{self, Role};
use crate::routing::{self, ModuleState, Route};
use crate::session::{self, publish, record, record_as};
use crate::store::sessions as records;
use crate::store::{spec_approvals, turns};
use crate::turn::{self, TurnEnd, TurnHandle, TurnPlan, TurnPlanSummary};
use crate::workspace::Workspace;

/// Chained turns one operator message may start by itself.
pub const MAX_CHAIN: i64 = 4;

/// Roles that write specifications and designs, and may work before approval.
const BEFORE_APPROVAL: &[&str] = &["business-manager", "ux-designer"];

pub async fn send_message(ws: &Arc<Workspace>, events: &Arc<EventBus>, args: SendMessageArgs) -> Result<SessionView> {
    let (id, session) = session::live(ws, &args.session_id).await?;
    session::refuse_closed(&session)?;
    let text = args.text.trim();
    if text.is_empty() {
        return Err(ApiError::invalid("the message is empty"));
    }
    let module = match &args.module {
        Some(m) => session.modules.iter().find(|x| &x.id == m).cloned().ok_or_else(|| {
            ApiError::new(ErrorCode::ModuleNotFound, format!("`{m}` is not a module of this session; add it first"))
        })?,
        None => session.modules[0].clone(),
    };
    let roles = ws.roles()?;
    let picked = match &args.role {
        Some(r) => {
            Some(roles::find(&roles, r).cloned().ok_or_else(|| ApiError::invalid(format!("there is no role `{r}`")))?)
        }
        None => None,
    };
    let driver_id = args.driver.clone().or(session.driver.clone());
    let driver = crate::drivers::registry::resolve(ws, driver_id.as_deref()).await?;

    record_as(ws, events, &id, EntryKind::User, Some(&module.id), None, text).await?;
    let start = Start {
        id: id.clone(),
        module,
        roles,
        picked,
        driver,
        model: args.model.or(session.model.clone()),
        text: text.to_string(),
    };
    // The first message waits for the planner agent and the session's setup, in the
    // background so the composer is free at once; its turn starts when they are done.
    let planning = ws.planning.get::<Planning>(id.as_str());
    let setting_up = ws.running.lock().unwrap().contains_key(id.as_str());
    // `Some(planner)` or `Some(None)` (setup only) means the turn must wait.
    let wait_for = match planning {
        Some(planning) => Some(Some(planning)),
        None => setting_up.then_some(None),
    };
    match wait_for {
        Some(planning) => {
            let (ws, events) = (ws.clone(), events.clone());
            // Counted as running from now until its turn has started, without a gap.
            ws.queued.lock().unwrap().insert(id.to_string());
            tokio::spawn(async move {
                if let Some(planning) = planning {
                    planning.wait().await;
                }
                while ws.running.lock().unwrap().contains_key(start.id.as_str()) {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                // Stop during planning or setup takes the waiting message off the queue.
                if !ws.queued.lock().unwrap().contains(start.id.as_str()) {
                    return;
                }
                let started = start.run(&ws, &events).await;
                ws.queued.lock().unwrap().remove(start.id.as_str());
                if let Err(e) = started {
                    let note =
                        format!("The turn for your message could not start: {} [{}]", e.message, e.code.as_str());
                    let _ = record(&ws, &events, &start.id, EntryKind::System, None, &note).await;
                }
                let _ = publish(&ws, &events, &start.id).await;
            });
        }
        None => start.run(ws, events).await?,
    }
    publish(ws, events, &id).await
}

/// An operator message's turn, ready to start once nothing else runs.
struct Start {
    id: SessionId,
    module: SessionModule,
    roles: Vec<Role>,
    picked: Option<Role>,
    driver: Arc<dyn crate::drivers::Driver>,
    model: Option<String>,
    text: String,
}

impl Start {
    async fn run(&self, ws: &Arc<Workspace>, events: &Arc<EventBus>) -> Result<()> {
        let id = &self.id;
        // The session may have been archived or deleted while the message waited.
        let (_, session) = session::live(ws, id.as_str()).await?;
        session::refuse_closed(&session)?;
        // A new turn supersedes a running one, after it is gone; it waits for the
        // session's setup or gates to finish rather than cutting them short.
        let turn = ws.turns.get::<TurnHandle>(id.as_str());
        if let Some(turn) = turn {
            turn.stop().await;
        }
        while ws.running.lock().unwrap().contains_key(id.as_str()) {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let pending = pending_role(ws, id).await?;
        set_pending_role(ws, id, None).await?;
        let route = match &self.picked {
            Some(role) => Route::Role { role: role.id.clone(), reason: "picked in the composer".into() },
            None => match pending.and_then(|p| roles::find(&self.roles, &p).cloned()) {
                Some(role) => Route::Role {
                    role: role.id,
                    reason: "the session was waiting for it (a question, a paused chain or the planner's suggestion)"
                        .into(),
                },
                None => route_module(ws, id, &self.module, &self.text).await?,
            },
        };
        begin(
            ws,
            events,
            id,
            &self.module,
            &self.roles,
            route,
            self.driver.clone(),
            self.model.clone(),
            self.text.clone(),
            0,
        )
        .await
    }
}

/// Stops what the session runs: its turn, or else its planner agent, its setup (or
/// gates) and the message waiting for them. `INVALID_INPUT` when nothing runs.
pub async fn stop_turn(ws: &Arc<Workspace>, events: &Arc<EventBus>, args: SessionIdArgs) -> Result<SessionView> {
    let id = SessionId::parse(&args.session_id)?;
    let session = session::view(ws, &id).await?;
    let handle = ws.turns.get::<TurnHandle>(id.as_str());
    if let Some(handle) = handle {
        handle.stop().await;
        return publish(ws, events, &id).await;
    }
    let planning = ws.planning.remove::<Planning>(id.as_str());
    let running = ws.running.lock().unwrap().remove(id.as_str());
    let queued = ws.queued.lock().unwrap().remove(id.as_str());
    if planning.is_none() && running.is_none() && !queued {
        return Err(ApiError::new(ErrorCode::InvalidInput, format!("session {id} runs no turn, planner or setup")));
    }
    let mut during = Vec::new();
    if let Some(planning) = &planning {
        planning.stop();
        during.push("planning");
        crate::live::Live::new(&id, LivePhase::Planning, None, None).end(events);
        records::set_state(&ws.pool, id.as_str(), SessionState::Editing, &now()).await?;
    }
    if let Some(running) = running {
        running.kill();
        during.push(if session.setup == SetupState::Running { "setup" } else { "the gates" });
    }
    let mut text = if during.is_empty() {
        "Stopped by the operator.".to_string()
    } else {
        format!("Stopped by the operator during {}.", during.join(" and "))
    };
    if queued {
        text.push_str(" The message waiting for it was not started; send it again when ready.");
    }
    record(ws, events, &id, EntryKind::System, None, &text).await?;
    publish(ws, events, &id).await
}

/// Runs again the turn that blocked the session: the same module, role, driver, model
/// and prompt. `NOT_BLOCKED` unless the session is blocked.
pub async fn retry_turn(ws: &Arc<Workspace>, events: &Arc<EventBus>, args: SessionIdArgs) -> Result<SessionView> {
    let (id, session) = session::live(ws, &args.session_id).await?;
    session::refuse_closed(&session)?;
    if session.state != SessionState::Blocked {
        return Err(ApiError::new(
            ErrorCode::NotBlocked,
            format!("session {id} is not blocked: there is no failed turn to retry"),
        ));
    }
    if ws.is_running(id.as_str()) {
        return Err(ApiError::new(ErrorCode::SessionRunning, format!("session {id} is running")));
    }
    let last = turns::latest(&ws.pool, id.as_str()).await?;
    let Some(last) = last else {
        return Err(ApiError::new(ErrorCode::NotBlocked, format!("session {id} has run no turn to retry")));
    };
    let Some(prompt) = last.prompt.filter(|p| !p.is_empty()) else {
        return Err(ApiError::new(
            ErrorCode::NotBlocked,
            "the failed turn ran before Kiln kept its prompt: send your message again",
        ));
    };
    let module = session_module(&session, &last.module_id)?;
    let roles = ws.roles()?;
    let role = roles::find(&roles, &last.role)
        .cloned()
        .ok_or_else(|| ApiError::invalid(format!("there is no role `{}` any more", last.role)))?;
    let driver = crate::drivers::registry::resolve(ws, Some(&last.driver)).await?;
    let text = format!("Retrying the **{}** turn in `{}`.", role.name, module.id);
    record(ws, events, &id, EntryKind::System, Some(&module.id), &text).await?;
    if last.review {
        // A review is asked the same way every time, with the review's own instructions.
        begin_review(ws, events, &id, &module, &role, driver, last.model, last.chain_index).await?;
        return publish(ws, events, &id).await;
    }
    let plan = TurnPlan {
        session: id.clone(),
        module: module.clone(),
        instructions: instructions(&role, &session, &module, &roles),
        resume_id: session.resume_ids.get(driver.id()).cloned(),
        role,
        driver,
        model: last.model,
        prompt,
        chain_index: last.chain_index,
        review: last.review,
    };
    turn::start(ws.clone(), events.clone(), plan, after_turn).await?;
    publish(ws, events, &id).await
}

/// Approves a module's specification as it is now in the working copy: sets its status
/// line, records the SHA-256 of that exact text, and resumes the chain.
pub async fn approve_spec(ws: &Arc<Workspace>, events: &Arc<EventBus>, args: ApproveSpecArgs) -> Result<SessionView> {
    let (id, session) = session::live(ws, &args.session_id).await?;
    session::refuse_closed(&session)?;
    if ws.is_running(id.as_str()) {
        return Err(ApiError::new(ErrorCode::SessionRunning, "approve the specification when the turn has ended"));
    }
    let module = session_module(&session, &args.module_id)?;
    let path = spec_path(ws, &id, &module)?;
    let text = std::fs::read_to_string(&path).map_err(|_| {
        ApiError::new(ErrorCode::SpecMissing, format!("`{}` has no specification to approve yet", module.id))
    })?;
    let approved = approval::with_status(&text, "approved");
    std::fs::write(&path, &approved)?;
    let digest = approval::digest(&approved);
    spec_approvals::set(&ws.pool, id.as_str(), &module.id, &digest, &now()).await?;
    let note = format!("Approved the specification of `{}` (SHA-256 `{}…`).", module.id, &digest[..12]);
    record(ws, events, &id, EntryKind::System, Some(&module.id), &note).await?;
    records::set_state(&ws.pool, id.as_str(), SessionState::Editing, &now()).await?;
    if session.state == SessionState::AwaitingApproval && session.auto_continue {
        let roles = ws.roles()?;
        // The role that was about to build goes on; else routing decides.
        let waiting = pending_role(ws, &id).await?.and_then(|p| roles::find(&roles, &p).cloned());
        set_pending_role(ws, &id, None).await?;
        let route = match waiting {
            Some(role) => Route::Role { role: role.id, reason: "it was waiting for this approval".into() },
            None => route_module(ws, &id, &module, &session.brief).await?,
        };
        let driver = crate::drivers::registry::resolve(ws, session.driver.as_deref()).await?;
        let prompt = format!("The operator approved the specification. Continue this request:\n\n{}", session.brief);
        begin(ws, events, &id, &module, &roles, route, driver, session.model.clone(), prompt, 0).await?;
    }
    publish(ws, events, &id).await
}

/// The module of a session an operation names, or `MODULE_NOT_FOUND`.
fn session_module(session: &SessionView, module_id: &str) -> Result<SessionModule> {
    session.modules.iter().find(|m| m.id == module_id).cloned().ok_or_else(|| {
        ApiError::new(ErrorCode::ModuleNotFound, format!("`{module_id}` is not a module of this session"))
    })
}

pub async fn get_spec(ws: &Workspace, args: ModuleArgs) -> Result<SpecView> {
    let id = SessionId::parse(&args.session_id)?;
    let session = session::view(ws, &id).await?;
    let module = session_module(&session, &args.module_id)?;
    spec_view(ws, &id, &module).await
}

async fn spec_view(ws: &Workspace, id: &SessionId, module: &SessionModule) -> Result<SpecView> {
    // A specification that leads out of the working copy is refused, not shown.
    let text = std::fs::read_to_string(spec_path(ws, id, module)?).ok();
    Ok(SpecView {
        module_id: module.id.clone(),
        path: std::path::Path::new(&module.directory).join(&ws.config.modules.spec).to_string_lossy().into_owned(),
        status: text.as_deref().and_then(crate::modules::spec_status),
        approved: spec_approved(ws, id, module).await?,
        text,
    })
}

/// The operator's edit of a specification. Any edit makes an approval stale: the
/// recorded digest no longer matches the text.
pub async fn save_spec(ws: &Workspace, events: &EventBus, args: SaveSpecArgs) -> Result<SpecView> {
    let (id, session) = session::live(ws, &args.session_id).await?;
    session::refuse_closed(&session)?;
    if ws.turns.contains(id.as_str()) {
        return Err(ApiError::new(ErrorCode::SessionRunning, "edit the specification when the turn has ended"));
    }
    let module = session_module(&session, &args.module_id)?;
    if args.text.len() > 512 * 1024 {
        return Err(ApiError::invalid("a specification is at most 512 KiB"));
    }
    let path = spec_path(ws, &id, &module)?;
    let was_approved = spec_approved(ws, &id, &module).await?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&path, &args.text)?;
    let view = spec_view(ws, &id, &module).await?;
    let stale = if was_approved && !view.approved { " Its approval is now stale." } else { "" };
    record(
        ws,
        events,
        &id,
        EntryKind::System,
        Some(&module.id),
        &format!("You edited the specification of `{}`.{stale}", module.id),
    )
    .await?;
    publish(ws, events, &id).await?;
    Ok(view)
}

/// The module's specification in the working copy, confined to it (`paths::confine`):
/// the working copy is the agent's, so its module directory or specification may be a
/// link by now, and one leading out is refused (`PATH_NOT_ALLOWED`), never read or
/// written through.
fn spec_path(ws: &Workspace, id: &SessionId, module: &SessionModule) -> Result<std::path::PathBuf> {
    let rel = std::path::Path::new(&module.directory).join(&ws.config.modules.spec);
    crate::paths::confine(&ws.session_workdir(id), &rel.to_string_lossy())
}

/// Whether the module's specification is approved as it stands: approved in this
/// session (the recorded digest matches), or unchanged since the session's base with
/// `status: approved` there.
pub async fn spec_approved(ws: &Workspace, id: &SessionId, module: &SessionModule) -> Result<bool> {
    let Ok(text) = spec_path(ws, id, module).and_then(|p| Ok(std::fs::read_to_string(p)?)) else { return Ok(false) };
    if approval::is_current(spec_approvals::get(&ws.pool, id.as_str(), &module.id).await?.as_deref(), &text) {
        return Ok(true);
    }
    if crate::modules::spec_status(&text).as_deref() != Some("approved") {
        return Ok(false);
    }
    let store = ws.open_store()?;
    let base = store.find_reference(&format!("refs/kiln/{id}/0")).and_then(|r| r.peel_to_tree());
    let rel = std::path::Path::new(&module.directory).join(&ws.config.modules.spec);
    let unchanged = base
        .and_then(|tree| tree.get_path(&rel))
        .and_then(|entry| store.find_blob(entry.id()).map(|b| b.content() == text.as_bytes()))
        .unwrap_or(false);
    Ok(unchanged)
}

async fn route_module(ws: &Workspace, id: &SessionId, module: &SessionModule, request: &str) -> Result<Route> {
    if ws.config.workflow() == Workflow::Direct {
        return Ok(Route::Role {
            role: roles::ENGINEER.into(),
            reason: "the engineer takes every turn of the direct workflow".into(),
        });
    }
    let dir = ws.session_workdir(id).join(&module.directory);
    let approved = spec_approved(ws, id, module).await?;
    let m = &ws.config.modules;
    let state = ModuleState::read(&dir, &m.spec, &m.server, &m.screen, approved);
    let roles = ws.roles()?;
    let ids: Vec<&str> = roles.iter().map(|r| r.id.as_str()).collect();
    Ok(routing::route(&state, request, &ids))
}

async fn pending_role(ws: &Workspace, id: &SessionId) -> Result<Option<String>> {
    records::pending_role(&ws.pool, id.as_str()).await
}

async fn set_pending_role(ws: &Workspace, id: &SessionId, role: Option<&str>) -> Result<()> {
    records::set_pending_role(&ws.pool, id.as_str(), role).await
}

/// Starts the turn a route names, or stops at approval.
#[allow(clippy::too_many_arguments)]
async fn begin(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    id: &SessionId,
    module: &SessionModule,
    roles: &[Role],
    route: Route,
    driver: Arc<dyn crate::drivers::Driver>,
    model: Option<String>,
    prompt: String,
    chain_index: i64,
) -> Result<()> {
    let (role_id, reason) = match route {
        Route::AwaitApproval { reason } => {
            let text = format!(
                "Waiting for your approval: {reason}. Read the specification of `{}` and approve it to go on.",
                module.id
            );
            record(ws, events, id, EntryKind::System, Some(&module.id), &text).await?;
            records::set_state(&ws.pool, id.as_str(), SessionState::AwaitingApproval, &now()).await?;
            return Ok(());
        }
        Route::Role { role, reason } => (role, reason),
    };
    let role = roles::find(roles, &role_id)
        .cloned()
        .ok_or_else(|| ApiError::invalid(format!("there is no role `{role_id}`")))?;
    let specs = ws.config.workflow() == Workflow::Specs;
    if specs
        && !BEFORE_APPROVAL.contains(&role.id.as_str())
        && !spec_approved(ws, id, module).await?
        && has_spec(ws, id, module)
    {
        let text = format!(
            "**{}** would build `{}` next ({reason}), but its specification is not approved. Approve it to go on.",
            role.name, module.id
        );
        record(ws, events, id, EntryKind::System, Some(&module.id), &text).await?;
        records::set_state(&ws.pool, id.as_str(), SessionState::AwaitingApproval, &now()).await?;
        set_pending_role(ws, id, Some(&role.id)).await?;
        return Ok(());
    }
    let session = session::view(ws, id).await?;
    let prompt = match crate::attach::note(&session.attachments) {
        Some(note) => format!("{note}\n\n{prompt}"),
        None => prompt,
    };
    let routed = format!("Routed to **{}**: {reason}.", role.name);
    record(ws, events, id, EntryKind::System, Some(&module.id), &routed).await?;
    let plan = TurnPlan {
        session: id.clone(),
        module: module.clone(),
        instructions: instructions(&role, &session, module, roles),
        resume_id: session.resume_ids.get(driver.id()).cloned(),
        role,
        driver,
        model,
        prompt,
        chain_index,
        review: false,
    };
    turn::start(ws.clone(), events.clone(), plan, after_turn).await
}

/// Starts the read-only review turn of `module` by `role` (SPEC §6 auto-review).
#[allow(clippy::too_many_arguments)]
async fn begin_review(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    id: &SessionId,
    module: &SessionModule,
    role: &Role,
    driver: Arc<dyn crate::drivers::Driver>,
    model: Option<String>,
    chain_index: i64,
) -> Result<()> {
    let session = session::view(ws, id).await?;
    let mut reviewer = role.clone();
    // Read-only: whatever the review writes is put back after its turn.
    reviewer.allowed_paths = Vec::new();
    let text = format!("**{}** reviews `{}` before it can be delivered (read-only).", role.name, module.id);
    record(ws, events, id, EntryKind::System, Some(&module.id), &text).await?;
    let plan = TurnPlan {
        session: id.clone(),
        module: module.clone(),
        instructions: format!(
            "{}\n\n{}",
            role.instruction,
            crate::review::instruction(&role.name, &session, &reviewed_together(ws, &session, module))
        ),
        resume_id: session.resume_ids.get(driver.id()).cloned(),
        role: reviewer,
        driver,
        model,
        prompt: format!("Review the change to `{}` now, as your instructions say.", module.id),
        chain_index,
        review: true,
    };
    turn::start(ws.clone(), events.clone(), plan, after_turn).await
}

/// What a review turn concluded: a pass is stored and the session is ready for review
/// by the operator; findings go back to the same role, as implementation.
async fn reviewed(ws: &Arc<Workspace>, events: &Arc<EventBus>, turn: &TurnPlanSummary, end: &TurnEnd) -> Result<()> {
    let id = &turn.session;
    let module = &turn.module;
    let at = now();
    let Some((passed, reason)) = crate::review::verdict(&end.final_text) else {
        let text = format!("The review of `{}` ended without a `REVIEW:` verdict. Run the review again.", module.id);
        record(ws, events, id, EntryKind::System, Some(&module.id), &text).await?;
        return records::set_state(&ws.pool, id.as_str(), SessionState::Review, &at).await;
    };
    let session = session::view(ws, id).await?;
    for m in reviewed_together(ws, &session, module) {
        crate::review::store(ws, id, &m, passed, &reason, end.final_text.trim()).await?;
    }
    let word = if passed { "pass" } else { "changes" };
    let reason_text = if reason.is_empty() { String::new() } else { format!(": {reason}") };
    record_as(
        ws,
        events,
        id,
        EntryKind::Handoff,
        Some(&module.id),
        Some(&turn.role.id),
        &format!("**review → {word}**{reason_text}"),
    )
    .await?;
    if passed {
        if changed_nothing(ws, id).await? {
            return nothing_changed(ws, events, id, module).await;
        }
        record(
            ws,
            events,
            id,
            EntryKind::System,
            Some(&module.id),
            "The review passed: ready for review and delivery.",
        )
        .await?;
        return records::set_state(&ws.pool, id.as_str(), SessionState::Review, &at).await;
    }
    let next_index = turn.chain_index + 1;
    if !session.auto_continue || next_index >= MAX_CHAIN {
        let text = format!("Paused with review findings. Continue with **{}** to address them.", turn.role.name);
        record(ws, events, id, EntryKind::System, Some(&module.id), &text).await?;
        set_pending_role(ws, id, Some(&turn.role.id)).await?;
        return records::set_state(&ws.pool, id.as_str(), SessionState::Editing, &at).await;
    }
    let roles = ws.roles()?;
    let prompt = format!(
        "The review of `{}` found changes to make before it can be delivered:\n\n{}\n\nAddress them.",
        module.id,
        end.final_text.trim()
    );
    let driver = crate::drivers::registry::resolve(ws, Some(turn.driver_id)).await?;
    let route = Route::Role { role: turn.role.id.clone(), reason: "the review found changes to make".into() };
    begin(ws, events, id, module, &roles, route, driver, turn.model.clone(), prompt, next_index).await
}

/// Starts a review of a module now: for a session from before auto-review, or to
/// review again after the operator's own edits.
pub async fn review_module(ws: &Arc<Workspace>, events: &Arc<EventBus>, args: ModuleArgs) -> Result<SessionView> {
    let (id, session) = session::live(ws, &args.session_id).await?;
    session::refuse_closed(&session)?;
    if ws.is_running(id.as_str()) {
        return Err(ApiError::new(ErrorCode::SessionRunning, "a turn is running: review when it has ended"));
    }
    let module = session_module(&session, &args.module_id)?;
    let roles = ws.roles()?;
    // The role that last worked on the module reviews it; else the one routing picks.
    let last = turns::last_role(&ws.pool, id.as_str(), &module.id).await?;
    let role_id = match last {
        Some(role) => role,
        None => match route_module(ws, &id, &module, "").await? {
            Route::Role { role, .. } => role,
            Route::AwaitApproval { reason } => {
                return Err(ApiError::new(ErrorCode::SpecMissing, format!("nothing to review yet: {reason}")));
            }
        },
    };
    let role = roles::find(&roles, &role_id)
        .cloned()
        .ok_or_else(|| ApiError::invalid(format!("there is no role `{role_id}`")))?;
    let driver = crate::drivers::registry::resolve(ws, session.driver.as_deref()).await?;
    begin_review(ws, events, &id, &module, &role, driver, session.model.clone(), 0).await?;
    publish(ws, events, &id).await
}

fn has_spec(ws: &Workspace, id: &SessionId, module: &SessionModule) -> bool {
    spec_path(ws, id, module).is_ok_and(|p| p.is_file())
}

/// The role's instruction and the session context the driver receives.
fn instructions(role: &Role, session: &SessionView, module: &SessionModule, roles: &[Role]) -> String {
    let modules: Vec<String> = session.modules.iter().map(|m| format!("`{}` in `{}`", m.id, m.directory)).collect();
    let where_ = match role.scope {
        roles::Scope::Repository => {
            "You may change any file of the working copy (sources, tests, manifests, lockfiles, docs); `.git/` and `.kiln/` are not yours to touch.".to_string()
        }
        roles::Scope::Module => {
            let allowed: Vec<String> = role.allowed_paths.iter().map(|p| format!("`{}/{p}`", module.directory)).collect();
            format!("You may change only {}; changes anywhere else are put back after your turn.", allowed.join(", "))
        }
    };
    let targets: Vec<String> =
        role.handoff.iter().filter_map(|h| roles::find(roles, h)).map(|r| format!("`{}` ({})", r.id, r.name)).collect();
    let handoff = if targets.is_empty() {
        "End your answer with one line `HANDOFF: none - <why>` when the request is satisfied or you need the operator's answer.".to_string()
    } else {
        format!(
            "End your answer with one line `HANDOFF: <role-id> - <why>` naming who should take the next turn, one of {}, or `HANDOFF: none - <why>` when the request is satisfied or you need the operator's answer.",
            targets.join(", ")
        )
    };
    format!(
        "{}\n\n## Kiln session\nYou are the {} ({}). The request: {}\n\nModules of this session: {}. This turn starts in `{}` (`{}`); your current directory is the root of the session's working copy.\n{where_}\n\n{handoff}",
        role.instruction, role.name, role.id, session.brief, modules.join(", "), module.id, module.directory,
    )
}

/// Decides what follows a turn (SPEC §6 outcomes).
fn after_turn(
    ws: Arc<Workspace>,
    events: Arc<EventBus>,
    turn: TurnPlanSummary,
    end: TurnEnd,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
    Box::pin(async move {
        if let Err(e) = decide(&ws, &events, &turn, end).await {
            tracing::error!("deciding after a turn of {}: {e}", turn.session);
            let _ = record(
                &ws,
                &events,
                &turn.session,
                EntryKind::System,
                None,
                &format!("Kiln could not go on: {}", e.message),
            )
            .await;
            let _ = records::set_state(&ws.pool, turn.session.as_str(), SessionState::Blocked, &now()).await;
        }
        let _ = publish(&ws, &events, &turn.session).await;
    })
}

async fn decide(ws: &Arc<Workspace>, events: &Arc<EventBus>, turn: &TurnPlanSummary, end: TurnEnd) -> Result<()> {
    let id = &turn.session;
    let module = &turn.module;
    let at = now();
    // The entry that closes the turn carries its checkpoint, when it took one.
    let link = |entry: TranscriptEntry| async move {
        match end.checkpoint {
            Some(sequence) => crate::checkpoint::link_entry(ws, id, sequence, entry.id).await,
            None => Ok(()),
        }
    };
    if end.stopped {
        link(record(ws, events, id, EntryKind::System, Some(&module.id), "Stopped by the operator.").await?).await?;
        return records::set_state(&ws.pool, id.as_str(), SessionState::Editing, &at).await;
    }
    if let Some(error) = &end.error {
        // The provider's failure in words first (the agent's own message after it).
        let reason = crate::live::reason(None, error);
        let words = match reason {
            "other" => String::new(),
            _ => format!("{}. ", crate::live::words(reason, crate::live::status_in(error))),
        };
        let text = format!("**Blocked**: the {} turn failed: {words}{error}", turn.role.name);
        link(record_as(ws, events, id, EntryKind::Handoff, Some(&module.id), Some(&turn.role.id), &text).await?)
            .await?;
        return records::set_state(&ws.pool, id.as_str(), SessionState::Blocked, &at).await;
    }
    if turn.review {
        return reviewed(ws, events, turn, &end).await;
    }
    let roles = ws.roles()?;
    let parsed = handoff::parse(&end.final_text, &roles);
    let (target, reason) = match parsed {
        Some(h) => (h.target, h.reason),
        None => (Target::None, "the turn ended without a HANDOFF line".to_string()),
    };
    let shown = match &target {
        Target::Role(r) => r.clone(),
        Target::None => "none".into(),
        Target::Unknown(name) => name.clone(),
    };
    let reason_text = if reason.is_empty() { String::new() } else { format!(": {reason}") };
    let line = format!("**{} → {shown}**{reason_text}", turn.role.id);
    link(record_as(ws, events, id, EntryKind::Handoff, Some(&module.id), Some(&turn.role.id), &line).await?).await?;

    // The gates run for the modules the turn changed; a failed one is its own handoff:
    // the same role fixes it in the same module before anyone else works.
    if !end.changed.is_empty() {
        join_changed_modules(ws, events, id, &end.changed).await?;
        let session = session::view(ws, id).await?;
        let touched: Vec<SessionModule> = session
            .modules
            .iter()
            .filter(|m| m.directory == "." || end.changed.iter().any(|p| p.starts_with(&format!("{}/", m.directory))))
            .cloned()
            .collect();
        let outcomes = crate::gates::run_all(ws, events, id, &session, &touched).await?;
        if let Some(failed) = outcomes.iter().find(|o| o.status == GateStatus::Failed) {
            return fix(ws, events, turn, &session, failed, &roles).await;
        }
    }

    let next = match target {
        Target::None => {
            if end.changed.is_empty() && end.final_text.contains('?') {
                record(
                    ws,
                    events,
                    id,
                    EntryKind::System,
                    Some(&module.id),
                    &format!("**{}** asks; your answer goes back to it.", turn.role.name),
                )
                .await?;
                set_pending_role(ws, id, Some(&turn.role.id)).await?;
                return records::set_state(&ws.pool, id.as_str(), SessionState::Editing, &at).await;
            }
            if changed_nothing(ws, id).await? {
                return nothing_changed(ws, events, id, module).await;
            }
            if all_pass(ws, id, module).await? {
                record(
                    ws,
                    events,
                    id,
                    EntryKind::System,
                    Some(&module.id),
                    "The request is reported satisfied and its review still holds: ready for review.",
                )
                .await?;
                return records::set_state(&ws.pool, id.as_str(), SessionState::Review, &at).await;
            }
            let session = session::view(ws, id).await?;
            let next_index = turn.chain_index + 1;
            if session.auto_continue && next_index < MAX_CHAIN {
                let driver = crate::drivers::registry::resolve(ws, Some(turn.driver_id)).await?;
                let role = roles::find(&roles, &turn.role.id).cloned().unwrap_or_else(|| turn.role.clone());
                return begin_review(ws, events, id, module, &role, driver, turn.model.clone(), next_index).await;
            }
            let text = "The request is reported satisfied. It needs a review before it can be delivered: run Review.";
            record(ws, events, id, EntryKind::System, Some(&module.id), text).await?;
            return records::set_state(&ws.pool, id.as_str(), SessionState::Review, &at).await;
        }
        Target::Role(r) if turn.role.handoff.contains(&r) && r != turn.role.id => {
            Route::Role { role: r.clone(), reason: format!("{} handed off to it", turn.role.name) }
        }
        Target::Role(r) => {
            let why = if r == turn.role.id {
                "a role cannot hand off to itself".to_string()
            } else {
                format!("`{r}` is not in {}'s handoff list", turn.role.id)
            };
            fallback(ws, id, module, &why).await?
        }
        Target::Unknown(name) => fallback(ws, id, module, &format!("`{name}` is not a role")).await?,
    };
    let session = session::view(ws, id).await?;
    let next_index = turn.chain_index + 1;
    if let Route::Role { role, .. } = &next {
        if !session.auto_continue || next_index >= MAX_CHAIN {
            let why = if session.auto_continue {
                format!("after {MAX_CHAIN} chained turns")
            } else {
                "auto-continue is off".into()
            };
            let name = roles::find(&roles, role).map(|r| r.name.clone()).unwrap_or_else(|| role.clone());
            record(
                ws,
                events,
                id,
                EntryKind::System,
                Some(&module.id),
                &format!("Paused {why}. Continue with **{name}** when ready."),
            )
            .await?;
            set_pending_role(ws, id, Some(role)).await?;
            return records::set_state(&ws.pool, id.as_str(), SessionState::Editing, &at).await;
        }
    }
    let driver = crate::drivers::registry::resolve(ws, Some(turn.driver_id)).await?;
    let prompt = format!(
        "Continue this request:\n\n{}\n\nThe {} handed off to you{}",
        session.brief,
        turn.role.name,
        if reason.is_empty() { ".".to_string() } else { format!(": {reason}") }
    );
    begin(ws, events, id, module, &roles, next, driver, turn.model.clone(), prompt, next_index).await
}

/// The modules one review covers: the turn's in the specs workflow; every module of the
/// session in the direct workflow, where one engineer made one change across them.
fn reviewed_together(ws: &Workspace, session: &SessionView, module: &SessionModule) -> Vec<SessionModule> {
    match ws.config.workflow() {
        Workflow::Direct => session.modules.clone(),
        Workflow::Specs => vec![module.clone()],
    }
}

/// Whether every module the review of `module` covers has a passing review of its files now.
async fn all_pass(ws: &Workspace, id: &SessionId, module: &SessionModule) -> Result<bool> {
    let session = session::view(ws, id).await?;
    for m in reviewed_together(ws, &session, module) {
        if !crate::review::current_pass(ws, id, &m).await? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether the session's working copy still equals its base in every module: there is
/// nothing to review or deliver.
async fn changed_nothing(ws: &Arc<Workspace>, id: &SessionId) -> Result<bool> {
    let diff = crate::diff::get(ws, GetDiffArgs { session_id: id.to_string(), module_id: None }).await?;
    Ok(diff.modules.iter().all(|m| m.files.is_empty()))
}

async fn nothing_changed(ws: &Workspace, events: &EventBus, id: &SessionId, module: &SessionModule) -> Result<()> {
    let text =
        "The request is reported done, but the session has changed no file: there is nothing to review or deliver.";
    record(ws, events, id, EntryKind::System, Some(&module.id), text).await?;
    records::set_state(&ws.pool, id.as_str(), SessionState::Editing, &now()).await
}

/// A turn of the direct workflow may change any module: each one it changed that is
/// not yet in the session joins it (from the session's start, which no earlier turn
/// changed for it), so its diff, gates, review and delivery follow.
async fn join_changed_modules(ws: &Workspace, events: &EventBus, id: &SessionId, changed: &[String]) -> Result<()> {
    if ws.config.workflow() != Workflow::Direct {
        return Ok(());
    }
    let session = session::view(ws, id).await?;
    for module in &ws.modules {
        let inside = |p: &String| module.directory == "." || p.starts_with(&format!("{}/", module.directory));
        if session.modules.iter().any(|m| m.id == module.id) || !changed.iter().any(inside) {
            continue;
        }
        session::join(ws, events, id, module, 0, ": the turn changed its files").await?;
    }
    Ok(())
}

/// Hands a failed gate back to the role whose turn it followed, in the same module.
async fn fix(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    turn: &TurnPlanSummary,
    session: &SessionView,
    failed: &crate::gates::Outcome,
    roles: &[Role],
) -> Result<()> {
    let id = &turn.session;
    let module = &turn.module;
    let whom = failed.module.as_deref().unwrap_or(module.id.as_str());
    let line =
        format!("**gate `{}` → {}**: it failed in `{whom}`; the same role fixes it first", failed.gate, turn.role.id);
    record_as(ws, events, id, EntryKind::Handoff, Some(&module.id), Some(&turn.role.id), &line).await?;
    let next_index = turn.chain_index + 1;
    if !session.auto_continue || next_index >= MAX_CHAIN {
        let text = format!("Paused with a failed gate. Continue with **{}** to fix it.", turn.role.name);
        record(ws, events, id, EntryKind::System, Some(&module.id), &text).await?;
        set_pending_role(ws, id, Some(&turn.role.id)).await?;
        return records::set_state(&ws.pool, id.as_str(), SessionState::Editing, &now()).await;
    }
    let command = if failed.command.is_empty() { "(no command)".to_string() } else { failed.command.clone() };
    let prompt = format!(
        "The `{}` gate failed in `{whom}` after your turn. Fix it before anything else.\n\nCommand: `{command}`\n\nOutput (the first {} characters):\n```\n{}\n```",
        failed.gate,
        crate::gates::FIX_OUTPUT,
        failed.output_start()
    );
    let driver = crate::drivers::registry::resolve(ws, Some(turn.driver_id)).await?;
    let route =
        Route::Role { role: turn.role.id.clone(), reason: format!("the `{}` gate failed after its turn", failed.gate) };
    begin(ws, events, id, module, roles, route, driver, turn.model.clone(), prompt, next_index).await
}

/// When a handoff names no usable role, routing decides and the transcript says why.
async fn fallback(ws: &Workspace, id: &SessionId, module: &SessionModule, why: &str) -> Result<Route> {
    let route = route_module(ws, id, module, "").await?;
    let route = match route {
        Route::Role { role, reason } => Route::Role { role, reason: format!("{why}, so routing chose: {reason}") },
        other => other,
    };
    Ok(route)
}
