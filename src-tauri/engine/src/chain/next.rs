//! The chain's loop (`run_chain`) and what follows a turn, read top to bottom: the handoff's
//! next role, a review, a fix after failed gates, the operator's approval or answer, or
//! blocked. A decision returns the turn it began; the loop runs it next.

use super::*;

/// Starts the read-only review turn of `module` by `role` (ARCHITECTURE.md: Workflows and the chain, auto-review).
#[allow(clippy::too_many_arguments)]
pub(super) async fn begin_review(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    id: &SessionId,
    module: &SessionModule,
    role: &Role,
    driver: Arc<dyn crate::drivers::Driver>,
    model: Option<String>,
    chain_index: i64,
) -> Result<Option<Started>> {
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
    turn::begin(ws, events, plan).await.map(Some)
}

/// What a review turn concluded: a pass is stored and the session is ready for review
/// by the operator; findings go back to the same role, as implementation.
pub(super) async fn reviewed(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    turn: &TurnPlanSummary,
    end: &TurnEnd,
) -> Result<Option<Started>> {
    let id = &turn.session;
    let module = &turn.module;
    let Some((passed, reason)) = crate::review::verdict(&end.final_text) else {
        let text = format!("The review of `{}` ended without a `REVIEW:` verdict. Run the review again.", module.id);
        record(ws, events, id, EntryKind::System, Some(&module.id), &text).await?;
        return settle(ws, id, SessionState::Review).await;
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
        return settle(ws, id, SessionState::Review).await;
    }
    let next_index = turn.chain_index + 1;
    if !session.auto_continue || next_index >= MAX_CHAIN {
        let text = format!("Paused with review findings. Continue with **{}** to address them.", turn.role.name);
        record(ws, events, id, EntryKind::System, Some(&module.id), &text).await?;
        set_pending_role(ws, id, Some(&turn.role.id)).await?;
        return settle(ws, id, SessionState::Editing).await;
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
pub(crate) async fn review_module(cx: &Context, args: ModuleArgs) -> Result<SessionView> {
    let Context { ws, events } = cx;
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
    let started = begin_review(ws, events, &id, &module, &role, driver, session.model.clone(), 0).await?;
    in_background(ws, events, started);
    publish(ws, events, &id).await
}

/// The chain (ARCHITECTURE.md: Workflows and the chain): the started turn runs, what follows
/// it is decided and recorded, and the turn that decision began runs next, until a decision
/// waits for the operator, finds the work done, or blocks. One task per operator action.
pub(super) async fn run_chain(ws: Arc<Workspace>, events: Arc<EventBus>, mut started: Started) {
    loop {
        let turn::Finished { turn, end, ended } = turn::run_to_end(&ws, &events, started).await;
        let next = after_turn(&ws, &events, &turn, end).await;
        // A stop of the turn returns now, with what follows it recorded.
        drop(ended);
        match next {
            Some(next) => started = next,
            None => return,
        }
    }
}

/// Decides what follows a turn and records it: the turn it began, if any.
async fn after_turn(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    turn: &TurnPlanSummary,
    end: TurnEnd,
) -> Option<Started> {
    // Review comments sent with this turn are settled before anything follows it.
    let cut_short = if end.stopped {
        Some("was stopped")
    } else if end.error.is_some() {
        Some("failed")
    } else {
        None
    };
    if let Err(e) =
        crate::review_comments::after_turn(ws, events, &turn.session, turn.turn_id, end.checkpoint, cut_short).await
    {
        tracing::error!("settling the review comments of {}: {e}", turn.session);
    }
    let next = match decide(ws, events, turn, end).await {
        Ok(next) => next,
        Err(e) => {
            tracing::error!("deciding after a turn of {}: {e}", turn.session);
            let text = format!("Kiln could not go on: {}", e.message);
            let _ = record(ws, events, &turn.session, EntryKind::System, None, &text).await;
            let _ = records::set_state(&ws.pool, turn.session.as_str(), SessionState::Blocked, &now()).await;
            None
        }
    };
    let _ = publish(ws, events, &turn.session).await;
    next
}

pub(super) async fn decide(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    turn: &TurnPlanSummary,
    end: TurnEnd,
) -> Result<Option<Started>> {
    let id = &turn.session;
    let module = &turn.module;
    // The entry that closes the turn carries its checkpoint, when it took one.
    let link = |entry: TranscriptEntry| async move {
        match end.checkpoint {
            Some(sequence) => crate::checkpoint::link_entry(ws, id, sequence, entry.id).await,
            None => Ok(()),
        }
    };
    if end.stopped {
        link(record(ws, events, id, EntryKind::System, Some(&module.id), "Stopped by the operator.").await?).await?;
        return settle(ws, id, SessionState::Editing).await;
    }
    if let Some(error) = &end.error {
        // The provider's failure in words first (the agent's own message after it).
        let reason = crate::live::reason(None, error);
        let words = match reason {
            "other" => String::new(),
            // A refusal names what signed in, where the fix is.
            "auth" => format!(
                "{}. {} ",
                crate::live::words(reason, crate::live::status_in(error)),
                crate::drivers::registry::credentials(ws, turn.driver_id).await
            ),
            _ => format!("{}. ", crate::live::words(reason, crate::live::status_in(error))),
        };
        let text = format!("**Blocked**: the {} turn failed: {words}{error}", turn.role.name);
        link(record_as(ws, events, id, EntryKind::Handoff, Some(&module.id), Some(&turn.role.id), &text).await?)
            .await?;
        return settle(ws, id, SessionState::Blocked).await;
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
        // The look after the turn, shot off the chain's path while the gates run.
        let shown = touched.iter().find(|m| m.id == module.id).or(touched.first());
        if let (Some(shown), Some(checkpoint)) = (shown, end.checkpoint) {
            crate::preview::evidence::after_turn(ws, events, id, shown.id.clone(), checkpoint);
        }
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
                return settle(ws, id, SessionState::Editing).await;
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
                return settle(ws, id, SessionState::Review).await;
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
            return settle(ws, id, SessionState::Review).await;
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
            return settle(ws, id, SessionState::Editing).await;
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
pub(super) fn reviewed_together(ws: &Workspace, session: &SessionView, module: &SessionModule) -> Vec<SessionModule> {
    match ws.config.workflow() {
        Workflow::Direct => crate::review::covered(session),
        Workflow::Specs => vec![module.clone()],
    }
}

/// Whether every module the review of `module` covers has a passing review of its files now.
pub(super) async fn all_pass(ws: &Workspace, id: &SessionId, module: &SessionModule) -> Result<bool> {
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
pub(super) async fn changed_nothing(ws: &Arc<Workspace>, id: &SessionId) -> Result<bool> {
    let diff = crate::diff::changes(ws, GetDiffArgs { session_id: id.to_string(), module_id: None }).await?;
    Ok(diff.modules.iter().all(|m| m.files.is_empty()))
}

pub(super) async fn nothing_changed(
    ws: &Workspace,
    events: &EventBus,
    id: &SessionId,
    module: &SessionModule,
) -> Result<Option<Started>> {
    let text =
        "The request is reported done, but the session has changed no file: there is nothing to review or deliver.";
    record(ws, events, id, EntryKind::System, Some(&module.id), text).await?;
    settle(ws, id, SessionState::Editing).await
}

/// The chain stops here with the session in `state`: nothing follows until the operator acts.
async fn settle(ws: &Workspace, id: &SessionId, state: SessionState) -> Result<Option<Started>> {
    records::set_state(&ws.pool, id.as_str(), state, &now()).await?;
    Ok(None)
}

/// A turn of the direct workflow may change any module: each one it changed that is
/// not yet in the session joins it (from the session's start, which no earlier turn
/// changed for it), so its diff, gates, review and delivery follow.
pub(super) async fn join_changed_modules(
    ws: &Workspace,
    events: &EventBus,
    id: &SessionId,
    changed: &[String],
) -> Result<()> {
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
pub(super) async fn fix(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    turn: &TurnPlanSummary,
    session: &SessionView,
    failed: &crate::gates::Outcome,
    roles: &[Role],
) -> Result<Option<Started>> {
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
        return settle(ws, id, SessionState::Editing).await;
    }
    let command = if failed.command.is_empty() { "(no command)".to_string() } else { failed.command.clone() };
    // Which failures are the agent's own: the rest were there before the session.
    let verdict = match failed.note.as_deref() {
        Some(note) if !note.is_empty() => format!("\n\nCompared with the session's starting point: {note}. Fix what your change broke; failures that were there before are not yours to fix."),
        _ => String::new(),
    };
    let prompt = format!(
        "The `{}` gate failed in `{whom}` after your turn. Fix it before anything else.\n\nCommand: `{command}`{verdict}\n\nOutput (the first {} characters):\n```\n{}\n```",
        failed.gate,
        crate::gates::FIX_OUTPUT,
        failed.output_start()
    );
    let driver = crate::drivers::registry::resolve(ws, Some(turn.driver_id)).await?;
    let route =
        Route::Role { role: turn.role.id.clone(), reason: format!("the `{}` gate failed after its turn", failed.gate) };
    begin(ws, events, id, module, roles, route, driver, turn.model.clone(), prompt, next_index).await
}
