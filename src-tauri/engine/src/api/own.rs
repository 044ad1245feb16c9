//! The operations that work on the engine's own state: which workspace is open, its
//! terminals, its options. The operation table names no function for them; each is the one
//! of its name here, given the engine (the others are given the open workspace's context).

use std::sync::Arc;

use super::*;

/// What the app is and has open; the recent workspaces only to the operator.
pub(super) async fn get_state(engine: &Engine, _: EmptyArgs) -> Result<AppState> {
    // Read first: whatever the answer shows happened before an event after this id.
    let last_event = engine.events.last_id();
    Ok(AppState {
        version: env!("CARGO_PKG_VERSION").to_string(),
        transport: engine.options.transport,
        mode: engine.options.mode,
        connected: None,
        workspace: engine.workspace.read().unwrap().as_ref().map(|w| w.view()),
        // The operator's other projects are none of a remote user's business.
        recent_workspaces: if engine.options.mode == ServeMode::SelfHosted { Vec::new() } else { engine.recent() },
        terminals: engine.terminal_offer().terminals,
        agent_terminals: engine.terminal_offer().agents,
        last_event,
    })
}

/// Opens a workspace, recovering what a Kiln that stopped left of it.
pub(super) async fn open_workspace(engine: &Engine, args: OpenWorkspaceArgs) -> Result<WorkspaceView> {
    if engine.options.mode == ServeMode::SelfHosted {
        // A self-hosted server serves the one workspace it was started with; opening
        // another would hand a remote user any directory of the host.
        let current = engine.workspace.read().unwrap().clone();
        if let Some(current) = current {
            let asked = std::path::Path::new(args.path.trim()).canonicalize().ok();
            if asked.as_deref() != Some(current.root.as_path()) {
                return Err(ApiError::new(
                    ErrorCode::NotAllowedInMode,
                    "a self-hosted server serves only the workspace it was started with",
                ));
            }
        }
    }
    let current = engine.workspace.read().unwrap().clone();
    if let (Some(_), Some(current)) = (&engine.backing.database, &current) {
        // A team's database holds one workspace's records: another workspace's would mix in.
        let asked = std::path::Path::new(args.path.trim()).canonicalize().ok();
        if asked.as_deref() != Some(current.root.as_path()) {
            return Err(ApiError::new(
                ErrorCode::NotAllowedInMode,
                "a server on a team database (--database) serves only the workspace it opened first",
            ));
        }
    }
    // Reopening the open workspace keeps this process's lock on it; another workspace
    // takes its own, and the one open now lets its lock go once nothing of it is left.
    let mut opened =
        Workspace::open(&args.path, engine.holder, current.as_ref().map(|c| &c.lock), &engine.backing).await?;
    opened.mode = engine.options.mode;
    opened.agent_commands = engine.agent_commands();
    engine.share(&mut opened);
    let (ws, fresh) = match current {
        // Opening the open workspace again keeps it, and the turns it runs.
        Some(current) if current.root == opened.root => (current, None),
        _ => {
            // No turn survives the process that ran it: one still marked running
            // when this process opens the workspace was cut short. On a team's
            // database, the sessions another host holds are that host's (or, when it
            // stopped, the one taking them over's: `team`).
            let elsewhere = team::leased_elsewhere(&opened).await?;
            let cut = crate::recover::interrupted::Interrupted::read(&opened.pool).await?;
            let at = kiln_runtime::clock::now();
            let stranded = crate::review_comments::STRANDED;
            let mine: Vec<Option<String>> = if elsewhere.is_empty() {
                vec![None]
            } else {
                let all = kiln_records::store::sessions::not_deleted(&opened.pool).await?;
                all.into_iter().map(|(id, _)| id).filter(|id| !elsewhere.contains(id)).map(Some).collect()
            };
            for only in mine.iter().map(Option::as_deref) {
                kiln_records::store::turns::close_orphans(&opened.pool, &at, only).await?;
                // Nor does the turn review comments were sent with: they are open again.
                kiln_records::store::review_comments::reopen_stranded(&opened.pool, stranded, &at, only).await?;
            }
            settings::hold_secrets(&opened).await;
            (Arc::new(opened), Some((cut, elsewhere)))
        }
    };
    if let Some((cut, elsewhere)) = fresh {
        // What Kiln stopping cut short is explained, and every working copy checked.
        recovery::at_open(&ws, &engine.events, cut, &elsewhere).await?;
    }
    let view = ws.view();
    engine.remember(&view.root);
    // The commands sessions run may not read Kiln's own state (see `sandbox::hidden`).
    kiln_runtime::sandbox::hidden::hide(&engine.options.config_dir);
    kiln_runtime::sandbox::hidden::hide(&ws.kiln_dir());
    let root = ws.root.clone();
    let previous = engine.workspace.write().unwrap().replace(ws);
    // The working copies of a workspace no longer open are watched no more.
    if let Some(previous) = previous.filter(|p| p.root != root) {
        crate::watch::stop_under(&previous.sessions_dir());
    }
    // The terminals of the workspace open before work on code no longer shown.
    engine.terminals.stop_other_workspaces(&root).await;
    engine.events.emit(EventBody::Workspace { workspace: view.clone() });
    Ok(view)
}

/// Makes a session; from an issue, the issue is read (and every refusal made) first.
pub(super) async fn create_session(engine: &Engine, mut args: CreateSessionArgs) -> Result<SessionView> {
    let ws = engine.workspace()?;
    // An issue is read (and every refusal made) before anything of the session exists.
    let Some(reference) = args.issue.take().filter(|reference| !reference.trim().is_empty()) else {
        return crate::chain::create(&ws, &engine.events, args).await;
    };
    let fetched = crate::delivery::issues::fetch(&ws, &reference, &args.brief).await?;
    args.brief = fetched.brief;
    if args.title.as_deref().is_none_or(|title| title.trim().is_empty()) {
        args.title = Some(crate::chain::title_from(&fetched.title));
    }
    crate::chain::create_from(&ws, &engine.events, args, Some(fetched.link)).await
}

/// Archives the session and stops its terminals.
pub(super) async fn archive_session(engine: &Engine, args: StopArgs) -> Result<SessionView> {
    let view = session::archive(&*engine.workspace()?, &engine.events, args).await?;
    engine.terminals.stop_session(&view.id).await;
    Ok(view)
}

/// Un-archives (or un-rejects) a session; its working copy is checked once it is open
/// again (after the restore, so not by the table's `ready`), so a copy the clean-up removed
/// comes back with its setup run.
pub(super) async fn restore_session(engine: &Engine, args: SessionIdArgs) -> Result<SessionView> {
    let id = args.session_id.clone();
    session::restore(&*engine.workspace()?, &engine.events, args).await?;
    engine.ready(&id).await?;
    let id = crate::ids::SessionId::parse(&id)?;
    session::publish(&*engine.workspace()?, &engine.events, &id).await
}

/// Rejects the session and stops its terminals.
pub(super) async fn reject_session(engine: &Engine, args: StopArgs) -> Result<SessionView> {
    let view = session::reject(&*engine.workspace()?, &engine.events, args).await?;
    engine.terminals.stop_session(&view.id).await;
    Ok(view)
}

/// Deletes the session and stops its terminals.
pub(super) async fn delete_session(engine: &Engine, args: DeleteSessionArgs) -> Result<Option<SessionView>> {
    let session_id = args.session_id.clone();
    let view = session::delete(&*engine.workspace()?, &engine.events, args).await?;
    // Parsed by the delete, which succeeded: the terminals of that session stop.
    if let Ok(id) = crate::ids::SessionId::parse(&session_id) {
        engine.terminals.stop_session(id.as_str()).await;
    }
    Ok(view)
}

/// Saves the set-up as `kiln.toml` and reopens the workspace with it. Refused while
/// anything of the workspace runs: its turns, setups and gates would lose their
/// configuration mid-way.
pub(super) async fn save_config(engine: &Engine, args: SaveConfigArgs) -> Result<DetectionView> {
    if engine.options.mode == ServeMode::SelfHosted {
        return Err(ApiError::new(
            ErrorCode::NotAllowedInMode,
            "a self-hosted server's kiln.toml is changed on the server, not over HTTP",
        ));
    }
    let ws = engine.workspace()?;
    let busy = ws.busy.any();
    if busy {
        return Err(ApiError::new(
            ErrorCode::SessionRunning,
            "a session is running: save the set-up when it has stopped",
        ));
    }
    crate::detect::save(&ws, &args)?;
    crate::preview::stop_all(&ws, &engine.events).await;
    let root = ws.root.display().to_string();
    let mut reopened = Workspace::open(&root, engine.holder, Some(&ws.lock), &engine.backing).await?;
    reopened.mode = engine.options.mode;
    reopened.agent_commands = engine.agent_commands();
    engine.share(&mut reopened);
    let view = reopened.view();
    drop(ws);
    *engine.workspace.write().unwrap() = Some(Arc::new(reopened));
    engine.events.emit(EventBody::Workspace { workspace: view });
    engine.detect_workspace(EmptyArgs {}).await
}

/// Opens a terminal of the session (see `crate::terminal`). Its offer is checked before
/// anything else, the workspace included, so its working copy is made ready here, not by
/// the table's `ready`.
pub(super) async fn open_terminal(engine: &Engine, args: OpenTerminalArgs) -> Result<TerminalView> {
    let offer = engine.terminal_offer();
    // Refused before anything else is looked at, the workspace included.
    offer.check(args.kind)?;
    // A shell in a working copy that is gone would start nowhere: rebuild it first.
    engine.ready(&args.session_id).await?;
    engine.terminals.open(&*engine.workspace()?, &engine.events, offer, args).await
}

/// The session's terminals (the session must exist).
pub(super) async fn list_terminals(engine: &Engine, args: SessionIdArgs) -> Result<Vec<TerminalView>> {
    let id = crate::ids::SessionId::parse(&args.session_id)?;
    session::view(&*engine.workspace()?, &id).await?;
    Ok(engine.terminals.list(&id))
}

/// Types into a terminal.
pub(super) async fn write_terminal(engine: &Engine, args: TerminalInputArgs) -> Result<TerminalView> {
    engine.terminals.write(args).await
}

/// Sets a terminal's size.
pub(super) async fn resize_terminal(engine: &Engine, args: ResizeTerminalArgs) -> Result<TerminalView> {
    engine.terminals.resize(&engine.events, args)
}

/// Stops a terminal and what it started.
pub(super) async fn stop_terminal(engine: &Engine, args: TerminalArgs) -> Result<TerminalView> {
    engine.terminals.stop(args).await
}

/// One candidate's tree against another's; both working copies are checked first (two
/// sessions, so not the table's `ready`).
pub(super) async fn compare_candidates(engine: &Engine, args: CompareCandidatesArgs) -> Result<DiffView> {
    let ws = engine.workspace()?;
    crate::groups::load(&ws, &args.group_id).await?;
    for session in [&args.left, &args.right] {
        crate::groups::member(&ws, &args.group_id, session).await?;
        engine.ready(session).await?;
    }
    crate::groups::compare_candidates(&ws, &args).await
}

/// Picks the winner; the other candidates are archived and their terminals stopped.
pub(super) async fn pick_candidate(engine: &Engine, args: PickCandidateArgs) -> Result<GroupView> {
    let (view, archived) = crate::groups::pick(&engine.workspace()?, &engine.events, args).await?;
    for id in archived {
        engine.terminals.stop_session(&id).await;
    }
    Ok(view)
}
