//! The chain of turns (ARCHITECTURE.md: Workflows and the chain): an operator message starts a turn; each turn ends with
//! a handoff that decides what follows — the next role (by itself up to 4 turns per
//! message while auto-continue is on), the operator's approval of a specification, an
//! answer to a question, review, or blocked when the driver failed.

use std::sync::Arc;

use crate::approval;
use crate::config::Workflow;
use crate::events::EventBus;
use crate::handoff::{self, Target};
use crate::ids::SessionId;
use crate::roles::{self, Role};
use crate::routing::{self, ModuleState, Route};
use crate::session::{self, publish, record, record_as};
use crate::turn::{self, Started, TurnEnd, TurnPlan, TurnPlanSummary};
use crate::workspace::{Context, Workspace};
use kiln_records::store::sessions as records;
use kiln_records::store::{spec_approvals, turns};
use kiln_runtime::clock::now;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

mod comments;
mod next;
mod spec;
pub(crate) mod start;

pub(crate) use comments::send_review;
pub(crate) use next::review_module;
use next::*;
use spec::*;
pub(crate) use spec::{approve_spec, get_spec, save_spec, spec_approved};
pub(crate) use start::{create, create_from, title_from};
/// Chained turns one operator message may start by itself.
pub(crate) const MAX_CHAIN: i64 = 4;

/// Roles that write specifications and designs, and may work before approval.
const BEFORE_APPROVAL: &[&str] = &["business-manager", "ux-designer"];

pub(crate) async fn send_message(cx: &Context, args: SendMessageArgs) -> Result<SessionView> {
    let Context { ws, events } = cx;
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
        None => session::primary(&session),
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
    // A model chosen for this turn that the agent does not offer is caught now, not after
    // the turn started.
    if let Some(model) = args.model.as_deref() {
        crate::drivers::models::check(ws, driver.id(), model).await?;
    }
    let pointed = crate::preview::pointed::check(ws, &id, args.context.as_deref().unwrap_or_default()).await?;
    crate::preview::pointed::copy(ws, &id, &pointed)?;

    session::record_message(ws, events, &id, &module.id, text, &crate::preview::pointed::chips(&pointed)).await?;
    let start = Start {
        id: id.clone(),
        module,
        roles,
        picked,
        driver,
        model: args.model.or(session.model.clone()),
        text: text.to_string(),
        pointed: crate::preview::pointed::note(&pointed),
    };
    // The first message waits for the planner agent and the session's setup, in the
    // background so the composer is free at once; its turn starts when they are done.
    let planning = ws.busy.planner(id.as_str());
    let setting_up = ws.busy.runs_command(id.as_str());
    // `Some(planner)` or `Some(None)` (setup only) means the turn must wait.
    // The "before" look is shot before the first turn changes anything.
    let before = crate::preview::evidence::before_due(ws, &id).await?;
    let wait_for = match planning {
        Some(planning) => Some(Some(planning)),
        None => (setting_up || before).then_some(None),
    };
    match wait_for {
        Some(planning) => {
            let (ws, events) = (ws.clone(), events.clone());
            // Counted as running from now until its turn has started, without a gap.
            ws.busy.queue(id.as_str());
            // One task for the wait and the chain after it, owned by the workspace.
            let owner = ws.clone();
            owner.background.spawn(async move {
                if let Some(planning) = planning {
                    planning.ended().await;
                }
                ws.busy.until_idle(start.id.as_str()).await;
                if before {
                    crate::preview::evidence::before(&ws, &events, &start.id).await;
                }
                // Stop during planning or setup takes the waiting message off the queue.
                if !ws.busy.is_queued(start.id.as_str()) {
                    return;
                }
                let started = start.begin(&ws, &events).await;
                ws.busy.unqueue(start.id.as_str());
                if let Err(e) = &started {
                    let note =
                        format!("The turn for your message could not start: {} [{}]", e.message, e.code.as_str());
                    let _ = record(&ws, &events, &start.id, EntryKind::System, None, &note).await;
                }
                let _ = publish(&ws, &events, &start.id).await;
                if let Ok(Some(started)) = started {
                    run_chain(ws, events, started).await;
                }
            });
        }
        None => in_background(ws, events, start.begin(ws, events).await?),
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
    /// What the operator pointed at in the preview, worded for the prompt (not for routing).
    pointed: Option<String>,
}

impl Start {
    /// Routes the message and begins its turn (`None` when the route waits for an approval).
    async fn begin(&self, ws: &Arc<Workspace>, events: &Arc<EventBus>) -> Result<Option<Started>> {
        let id = &self.id;
        // The session may have been archived or deleted while the message waited.
        let (_, session) = session::live(ws, id.as_str()).await?;
        session::refuse_closed(&session)?;
        // A new turn supersedes a running one, after it is gone; it waits for the
        // session's setup or gates to finish rather than cutting them short.
        let turn = ws.busy.turn(id.as_str());
        if let Some(turn) = turn {
            turn.stop().await;
        }
        ws.busy.until_idle(id.as_str()).await;
        let pending = pending_role(ws, id).await?;
        set_pending_role(ws, id, None).await?;
        let route = match &self.picked {
            Some(role) => Route::Role { role: role.id.clone(), reason: "picked in the composer".into() },
            None => match pending.and_then(|p| roles::find(&self.roles, &p).cloned()) {
                Some(role) => Route::Role {
                    role: role.id,
                    reason: "it was next: it asked a question, its run was paused, or it was suggested first".into(),
                },
                None => {
                    let own = crate::review_comments::prompt::operator_words(&self.text);
                    route_module(ws, id, &self.module, own).await?
                }
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
            match &self.pointed {
                Some(note) => format!("{}\n\n{note}", self.text),
                None => self.text.clone(),
            },
            0,
        )
        .await
    }
}

/// Runs the chain from the turn an operator's action began, in the background: the action
/// answers at once, and the chain's task, which the workspace owns, ends with the chain.
fn in_background(ws: &Arc<Workspace>, events: &Arc<EventBus>, started: Option<Started>) {
    if let Some(started) = started {
        ws.background.spawn(run_chain(ws.clone(), events.clone(), started));
    }
}

/// Stops what the session runs: its turn, or else its planner agent, its setup (or
/// gates) and the message waiting for them. `INVALID_INPUT` when nothing runs.
pub(crate) async fn stop_turn(cx: &Context, args: SessionIdArgs) -> Result<SessionView> {
    let Context { ws, events } = cx;
    let id = SessionId::parse(&args.session_id)?;
    let session = session::view(ws, &id).await?;
    let turn = ws.busy.turn(id.as_str());
    if let Some(turn) = turn {
        turn.stop().await;
        return publish(ws, events, &id).await;
    }
    let planning = ws.busy.end_planning(id.as_str());
    let running = ws.busy.end(id.as_str());
    let queued = ws.busy.unqueue(id.as_str());
    if planning.is_none() && running.is_none() && !queued {
        return Err(ApiError::new(ErrorCode::InvalidInput, format!("session {id} runs no turn, planner or setup")));
    }
    let mut during = Vec::new();
    if let Some(planning) = &planning {
        planning.stop().await;
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
pub(crate) async fn retry_turn(cx: &Context, args: SessionIdArgs) -> Result<SessionView> {
    let Context { ws, events } = cx;
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
        let started = begin_review(ws, events, &id, &module, &role, driver, last.model, last.chain_index).await?;
        in_background(ws, events, started);
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
    let started = turn::begin(ws, events, plan).await?;
    in_background(ws, events, Some(started));
    publish(ws, events, &id).await
}

/// The module of a session an operation names, or `MODULE_NOT_FOUND`.
fn session_module(session: &SessionView, module_id: &str) -> Result<SessionModule> {
    crate::review::covered(session).into_iter().find(|m| m.id == module_id).ok_or_else(|| {
        ApiError::new(ErrorCode::ModuleNotFound, format!("`{module_id}` is not a module of this session"))
    })
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
) -> Result<Option<Started>> {
    let (role_id, reason) = match route {
        Route::AwaitApproval { reason } => {
            let text = format!(
                "Waiting for your approval: {reason}. Read the specification of `{}` and approve it to go on.",
                module.id
            );
            record(ws, events, id, EntryKind::System, Some(&module.id), &text).await?;
            records::set_state(&ws.pool, id.as_str(), SessionState::AwaitingApproval, &now()).await?;
            return Ok(None);
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
        return Ok(None);
    }
    let session = session::view(ws, id).await?;
    let prompt = match crate::attachments::note(&session.attachments) {
        Some(note) => format!("{note}\n\n{prompt}"),
        None => prompt,
    };
    let prompt = match setup_failed_note(ws, id, &session).await? {
        Some(note) => format!("{note}\n\n{prompt}"),
        None => prompt,
    };
    // The direct workflow's engineer takes every turn: a line saying so says nothing. A
    // routing line stands where there was a choice (specs, a role picked or waiting).
    if !(ws.config.workflow() == Workflow::Direct && role.id == roles::ENGINEER) {
        let routed = format!("Routed to **{}**: {reason}.", role.name);
        record(ws, events, id, EntryKind::System, Some(&module.id), &routed).await?;
    }
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
    turn::begin(ws, events, plan).await.map(Some)
}

/// What the agent is told when the session's setup failed: the command and its error in
/// one line, since the cause may be the agent's own (a lockfile, a manifest).
async fn setup_failed_note(ws: &Workspace, id: &SessionId, session: &SessionView) -> Result<Option<String>> {
    if session.setup != SetupState::Failed {
        return Ok(None);
    }
    let latest = crate::gates::latest(ws, id).await?;
    let Some(setup) = latest.iter().find(|g| g.gate == "dependencies" && g.module.is_none()) else { return Ok(None) };
    let why = crate::gates::first_line(&format!("{}\n{}", setup.output_head, setup.output_tail));
    Ok(Some(format!(
        "Note from Kiln: the session's setup (`{}`) failed: {why}\nThe gates that need the dependencies will not run until it passes. The cause may be in the repository (a lockfile or manifest out of step) or in this machine's environment; fix it when it is the repository's.",
        setup.command
    )))
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
    let start = if modules.is_empty() {
        "No module of the workspace is in this session yet: each one you change joins it.".to_string()
    } else {
        format!(
            "Modules of this session: {}. This turn starts in `{}` (`{}`).",
            modules.join(", "),
            module.id,
            module.directory
        )
    };
    format!(
        "{}\n\n## Kiln session\nYou are the {} ({}). The request: {}\n\n{start} Your current directory is the root of the session's working copy.\n{where_}\n\n{handoff}",
        role.instruction, role.name, role.id, session.brief,
    )
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
