//! Module specifications in the chain: reading, saving and approving a module's
//! specification, which the roles that build wait for.

use super::*;

/// Approves a module's specification as it is now in the working copy: sets its status
/// line, records the SHA-256 of that exact text, and resumes the chain.
pub(crate) async fn approve_spec(cx: &Context, args: ApproveSpecArgs) -> Result<SessionView> {
    let Context { ws, events } = cx;
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
        let started = begin(ws, events, &id, &module, &roles, route, driver, session.model.clone(), prompt, 0).await?;
        in_background(ws, events, started);
    }
    publish(ws, events, &id).await
}

pub(crate) async fn get_spec(cx: &Context, args: ModuleArgs) -> Result<SpecView> {
    let ws = &cx.ws;
    let id = SessionId::parse(&args.session_id)?;
    let session = session::view(ws, &id).await?;
    let module = session_module(&session, &args.module_id)?;
    spec_view(ws, &id, &module).await
}

pub(super) async fn spec_view(ws: &Workspace, id: &SessionId, module: &SessionModule) -> Result<SpecView> {
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
pub(crate) async fn save_spec(cx: &Context, args: SaveSpecArgs) -> Result<SpecView> {
    let Context { ws, events } = cx;
    let (id, session) = session::live(ws, &args.session_id).await?;
    session::refuse_closed(&session)?;
    if ws.busy.runs_turn(id.as_str()) {
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
pub(super) fn spec_path(ws: &Workspace, id: &SessionId, module: &SessionModule) -> Result<std::path::PathBuf> {
    let rel = std::path::Path::new(&module.directory).join(&ws.config.modules.spec);
    kiln_runtime::paths::confine(&ws.session_workdir(id), &rel.to_string_lossy())
}

/// Whether the module's specification is approved as it stands: approved in this
/// session (the recorded digest matches), or unchanged since the session's base with
/// `status: approved` there.
pub(crate) async fn spec_approved(ws: &Workspace, id: &SessionId, module: &SessionModule) -> Result<bool> {
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

pub(super) fn has_spec(ws: &Workspace, id: &SessionId, module: &SessionModule) -> bool {
    spec_path(ws, id, module).is_ok_and(|p| p.is_file())
}
