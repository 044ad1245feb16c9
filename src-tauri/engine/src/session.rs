//! Sessions: the session's view, its transcript, and its lifecycle (add a module,
//! archive, restore, reject, delete), each refusal with its stable code and each change
//! recorded in the transcript. Starting a session (planner, setup) is the chain's
//! (`chain::start`); what runs for a session is stopped through the workspace's
//! registries, whatever registered it.

use std::time::Duration;

use crate::events::EventBus;
use crate::ids::SessionId;
use crate::workspace::{Context, Workspace};
use kiln_records::snapshot;
use kiln_records::store::checkpoints;
use kiln_records::store::sessions::{self as records, Flag};
use kiln_records::store::transcript_entries::{self as transcript, NewEntry};
use kiln_runtime::clock::now;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;
pub(crate) const MAX_TITLE: usize = 120;

/// The module a turn starts in when none is asked for: the session's first, else (a direct
/// session whose brief named none, before any module joined) the repository itself.
pub(crate) fn primary(session: &SessionView) -> SessionModule {
    session.modules.first().cloned().unwrap_or_else(|| crate::review::repository(session))
}

pub(crate) async fn view(ws: &Workspace, id: &SessionId) -> Result<SessionView> {
    let mut session = records::load(&ws.pool, id.as_str(), ws.is_running(id.as_str())).await?;
    if session.deleted_at.is_none() {
        session.reviews = crate::review::list(ws, id, &session).await?;
        session.changed = changed(ws, id).await;
        session.permissions = ws.permissions.cards(id.as_str());
        session.review_comments = kiln_records::store::review_comments::list(&ws.pool, id.as_str()).await?;
        session.waiting = ws.slots.is_waiting(id.as_str());
        let workdir = ws.session_workdir(id);
        // A file is resolved once no conflict marker is left in it, whoever edited it.
        session.conflicts.retain(|path| kiln_records::markers::file_holds_markers(&workdir, path));
    }
    Ok(session)
}

/// Whether the working copy's checkpoint (the current one) differs from the session's
/// start: two trees compared by id, no file read.
async fn changed(ws: &Workspace, id: &SessionId) -> bool {
    let Ok(Some((base, current))) = records::base_and_current_commits(&ws.pool, id.as_str()).await else {
        return false;
    };
    if base == current {
        return false;
    }
    let tree = |store: &git2::Repository, commit: &str| {
        git2::Oid::from_str(commit).ok().and_then(|oid| store.find_commit(oid).ok()).map(|c| c.tree_id())
    };
    match ws.open_store() {
        Ok(store) => tree(&store, &base) != tree(&store, &current),
        Err(_) => false,
    }
}

/// Appends an entry and tells every view.
pub(crate) async fn record(
    ws: &Workspace,
    events: &EventBus,
    id: &SessionId,
    kind: EntryKind,
    module: Option<&str>,
    text: &str,
) -> Result<TranscriptEntry> {
    record_as(ws, events, id, kind, module, None, text).await
}

/// `record` for an entry a role wrote (agent text, tool calls, handoffs).
pub(crate) async fn record_as(
    ws: &Workspace,
    events: &EventBus,
    id: &SessionId,
    kind: EntryKind,
    module: Option<&str>,
    role: Option<&str>,
    text: &str,
) -> Result<TranscriptEntry> {
    let entry = transcript::append(
        &ws.pool,
        NewEntry { session: id.as_str(), kind, module, role, text, at: &now(), context: None },
    )
    .await?;
    events.emit(EventBody::Transcript { entry: entry.clone() });
    Ok(entry)
}

/// Records an operator message with what was pointed at in the preview with it.
pub(crate) async fn record_message(
    ws: &Workspace,
    events: &EventBus,
    id: &SessionId,
    module: &str,
    text: &str,
    context: &[PointedChip],
) -> Result<TranscriptEntry> {
    let chips = (!context.is_empty()).then_some(context);
    let new = NewEntry {
        session: id.as_str(),
        kind: EntryKind::User,
        module: Some(module),
        role: None,
        text,
        at: &now(),
        context: chips,
    };
    let entry = transcript::append(&ws.pool, new).await?;
    events.emit(EventBody::Transcript { entry: entry.clone() });
    Ok(entry)
}

/// Reads the session's view and sends it to every view when it changed since it was last
/// sent; the view either way.
pub(crate) async fn publish(ws: &Workspace, events: &EventBus, id: &SessionId) -> Result<SessionView> {
    ws.published
        .send_changed(id.as_str(), view(ws, id), |s| {
            events.emit(EventBody::Session { session: Box::new(s.clone()) });
        })
        .await
}

/// A session that may still be changed: exists and is not a tombstone.
pub(crate) async fn live(ws: &Workspace, raw_id: &str) -> Result<(SessionId, SessionView)> {
    let id = SessionId::parse(raw_id)?;
    let session = view(ws, &id).await?;
    if session.deleted_at.is_some() {
        return Err(ApiError::new(ErrorCode::SessionDeleted, format!("session {id} was deleted")));
    }
    Ok((id, session))
}

/// Refuses while a process of the session runs, unless asked to stop it.
pub(crate) async fn stop_or_refuse(ws: &Workspace, id: &SessionId, stop: bool, doing: &str) -> Result<()> {
    let planning = ws.busy.planner(id.as_str());
    if let Some(planning) = planning {
        if !stop {
            return Err(ApiError::new(
                ErrorCode::SessionRunning,
                format!("the planner agent of session {id} is at work; {doing} with `stop: true`"),
            ));
        }
        planning.stop().await;
        ws.busy.end_planning(id.as_str());
    }
    let turn = ws.busy.turn(id.as_str());
    if let Some(turn) = turn {
        if !stop {
            return Err(ApiError::new(
                ErrorCode::SessionRunning,
                format!("a turn of session {id} is running; stop it first or {doing} with `stop: true`"),
            ));
        }
        turn.stop().await;
    }
    if !stop {
        if ws.busy.runs_command(id.as_str()) {
            return Err(ApiError::new(
                ErrorCode::SessionRunning,
                format!("session {id} is running; stop it first or {doing} with `stop: true`"),
            ));
        }
        return Ok(());
    }
    let Some(running) = ws.busy.end(id.as_str()) else { return Ok(()) };
    running.kill();
    // Files are touched only once nothing of the command runs: a process killed in the
    // middle of a write can still finish it.
    if !running.gone(Duration::from_secs(10)).await {
        tracing::warn!(session = %id, "a stopped command of the session still ran after 10 s");
    }
    Ok(())
}

/// Stops the session's preview if one runs (it runs from the working copy).
async fn stop_preview(ws: &Workspace, events: &EventBus, id: &SessionId) {
    if let Some(preview) = ws.previews.take(id.as_str()) {
        preview.stop(events).await;
    }
}

pub(crate) async fn add_module(cx: &Context, args: AddModuleArgs) -> Result<SessionView> {
    let Context { ws, events } = cx;
    let (id, session) = live(ws, &args.session_id).await?;
    refuse_closed(&session)?;
    if ws.is_running(id.as_str()) {
        return Err(ApiError::new(
            ErrorCode::SessionRunning,
            format!("session {id} is running; add the module when it stops"),
        ));
    }
    let module = ws.module(&args.module_id).ok_or_else(|| {
        ApiError::new(ErrorCode::ModuleNotFound, format!("the workspace has no module `{}`", args.module_id))
    })?;
    if session.modules.iter().any(|m| m.id == module.id) {
        return Err(ApiError::new(
            ErrorCode::ModuleAlreadyInSession,
            format!("`{}` is already in this session", module.id),
        ));
    }
    let (sequence, _) = checkpoints::latest(&ws.pool, id.as_str()).await?;
    join(ws, events, &id, module, sequence, "").await?;
    publish(ws, events, &id).await
}

/// Records `module` as part of the session from checkpoint `base` on, with a note.
pub(crate) async fn join(
    ws: &Workspace,
    events: &EventBus,
    id: &SessionId,
    module: &crate::modules::ModuleInfo,
    base: i64,
    why: &str,
) -> Result<()> {
    let joined = SessionModule {
        id: module.id.clone(),
        directory: module.directory.clone(),
        kind: ModuleChange::Edit,
        joined_at: now(),
        base_sequence: base,
    };
    records::add_module(&ws.pool, id.as_str(), &joined).await?;
    let text = format!("Added module `{}` ({}){why}; its base is checkpoint {base}.", module.id, module.directory);
    record(ws, events, id, EntryKind::System, Some(&module.id), &text).await?;
    Ok(())
}

pub(crate) fn refuse_closed(session: &SessionView) -> Result<()> {
    if session.archived_at.is_some() || session.rejected_at.is_some() {
        let what = if session.rejected_at.is_some() { "rejected" } else { "archived" };
        return Err(ApiError::new(
            ErrorCode::SessionArchived,
            format!("session {} is {what}; restore it first", session.id),
        ));
    }
    if session.delivered_at.is_some() || session.state == SessionState::Delivered {
        return Err(ApiError::new(ErrorCode::SessionDelivered, format!("session {} was delivered", session.id)));
    }
    Ok(())
}

pub(crate) async fn archive(ws: &Workspace, events: &EventBus, args: StopArgs) -> Result<SessionView> {
    let (id, session) = live(ws, &args.session_id).await?;
    if session.archived_at.is_some() {
        return Err(ApiError::new(ErrorCode::SessionArchived, format!("session {id} is already archived")));
    }
    stop_or_refuse(ws, &id, args.stop.unwrap_or(false), "archive").await?;
    stop_preview(ws, events, &id).await;
    crate::watch::stop(&ws.session_workdir(&id));
    let at = now();
    records::set_flag(&ws.pool, id.as_str(), Flag::Archived, Some(&at), &at).await?;
    record(ws, events, &id, EntryKind::System, None, "Archived.").await?;
    publish(ws, events, &id).await
}

pub(crate) async fn restore(ws: &Workspace, events: &EventBus, args: SessionIdArgs) -> Result<SessionView> {
    let (id, session) = live(ws, &args.session_id).await?;
    if session.archived_at.is_none() && session.rejected_at.is_none() {
        return Err(ApiError::new(
            ErrorCode::SessionNotArchived,
            format!("session {id} is neither archived nor rejected"),
        ));
    }
    let at = now();
    records::set_flag(&ws.pool, id.as_str(), Flag::Archived, None, &at).await?;
    records::set_flag(&ws.pool, id.as_str(), Flag::Rejected, None, &at).await?;
    record(ws, events, &id, EntryKind::System, None, "Restored.").await?;
    publish(ws, events, &id).await
}

pub(crate) async fn reject(ws: &Workspace, events: &EventBus, args: StopArgs) -> Result<SessionView> {
    let (id, session) = live(ws, &args.session_id).await?;
    if session.delivered_at.is_some() {
        return Err(ApiError::new(
            ErrorCode::SessionDelivered,
            format!("session {id} was delivered; it cannot be rejected"),
        ));
    }
    if session.rejected_at.is_some() {
        return Err(ApiError::new(ErrorCode::SessionArchived, format!("session {id} is already rejected")));
    }
    stop_or_refuse(ws, &id, args.stop.unwrap_or(false), "reject").await?;
    stop_preview(ws, events, &id).await;
    crate::watch::stop(&ws.session_workdir(&id));
    let at = now();
    records::set_flag(&ws.pool, id.as_str(), Flag::Rejected, Some(&at), &at).await?;
    record(ws, events, &id, EntryKind::System, None, "Rejected: this change will not be delivered.").await?;
    publish(ws, events, &id).await
}

pub(crate) async fn delete(ws: &Workspace, events: &EventBus, args: DeleteSessionArgs) -> Result<Option<SessionView>> {
    let id = SessionId::parse(&args.session_id)?;
    let session = view(ws, &id).await?;
    let keep = args.keep_transcript.unwrap_or(true);
    if session.deleted_at.is_some() && keep {
        return Err(ApiError::new(ErrorCode::SessionDeleted, format!("session {id} was already deleted")));
    }
    // Checked before anything stops or goes, so a refusal removes nothing.
    let dir = removable_session_dir(ws, &id)?;
    stop_or_refuse(ws, &id, args.stop.unwrap_or(false), "delete").await?;
    // The preview runs from the working copy about to go: stop it first.
    stop_preview(ws, events, &id).await;
    crate::watch::stop(&ws.session_workdir(&id));

    if let Some(dir) = dir {
        // `remove_dir_all` never follows a link inside (a link an agent planted in the
        // working copy is removed, what it points to stays).
        std::fs::remove_dir_all(&dir)?;
    }
    let removed = {
        let _guard = ws.store_lock.lock().await;
        let store = ws.open_store()?;
        snapshot::remove_session_refs(&store, id.as_str())?
    };
    checkpoints::remove_all(&ws.pool, id.as_str()).await?;
    // The screenshots show checkpoints that are gone; their PNGs went with the directory.
    kiln_records::store::screenshots::remove_all(&ws.pool, id.as_str()).await?;
    if !keep {
        records::remove(&ws.pool, id.as_str()).await?;
        ws.published.forget(id.as_str());
        events.emit(EventBody::SessionRemoved { session_id: id.to_string() });
        return Ok(None);
    }
    let at = now();
    records::set_flag(&ws.pool, id.as_str(), Flag::Deleted, Some(&at), &at).await?;
    let text = format!("Deleted: the working copy and {removed} checkpoint(s) were removed; this transcript is kept.");
    record(ws, events, &id, EntryKind::System, None, &text).await?;
    publish(ws, events, &id).await.map(Some)
}

/// The session's directory as it may be removed: `None` when there is none, else its
/// real path, which must be a directory directly inside the real `.kiln/sessions`. The
/// id is a validated UUID, so the name is one plain segment; but the directory itself
/// may have been replaced by a link (to anywhere), which is refused, `PATH_NOT_ALLOWED`,
/// rather than followed or removed: only the operator should sort that out.
pub(crate) fn removable_session_dir(ws: &Workspace, id: &SessionId) -> Result<Option<std::path::PathBuf>> {
    let dir = ws.session_dir(id);
    let meta = match std::fs::symlink_metadata(&dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let outside = || {
        ApiError::new(
            ErrorCode::PathNotAllowed,
            format!(
                "the directory of session {id} is not a plain directory inside .kiln/sessions; nothing was removed"
            ),
        )
    };
    if !meta.is_dir() {
        return Err(outside());
    }
    let real = dir.canonicalize()?;
    let sessions = ws.sessions_dir().canonicalize()?;
    if real.parent() != Some(sessions.as_path()) || real.file_name() != Some(std::ffi::OsStr::new(id.as_str())) {
        return Err(outside());
    }
    Ok(Some(real))
}

/// One session's view.
pub(crate) async fn get(cx: &Context, args: SessionIdArgs) -> Result<SessionView> {
    view(&cx.ws, &SessionId::parse(&args.session_id)?).await
}

/// Tokens and cost of every turn in the workspace, in total and per role.
pub(crate) async fn usage(cx: &Context, _: EmptyArgs) -> Result<UsageView> {
    kiln_records::store::turns::usage(&cx.ws.pool, None).await
}

pub(crate) async fn list(cx: &Context, args: ListSessionsArgs) -> Result<Vec<SessionView>> {
    let ws = &cx.ws;
    let mut out = Vec::new();
    for id in records::list_ids(&ws.pool, args.include_archived.unwrap_or(false)).await? {
        out.push(view(ws, &SessionId::parse(&id)?).await?);
    }
    Ok(out)
}

pub(crate) async fn get_transcript(cx: &Context, args: GetTranscriptArgs) -> Result<Vec<TranscriptEntry>> {
    let ws = &cx.ws;
    let id = SessionId::parse(&args.session_id)?;
    if args.last == Some(0) {
        return Err(ApiError::invalid("last is at least 1 (leave it out for every entry)"));
    }
    view(ws, &id).await?; // SESSION_NOT_FOUND before an empty list
    transcript::list_window(&ws.pool, id.as_str(), args.after, args.before, args.last).await
}

/// Changes what the operator may change about a session: its title and auto-continue.
pub(crate) async fn update(cx: &Context, args: UpdateSessionArgs) -> Result<SessionView> {
    let Context { ws, events } = cx;
    let (id, _) = live(ws, &args.session_id).await?;
    let title = match args.title.as_deref().map(str::trim) {
        Some("") => return Err(ApiError::invalid("the title is empty")),
        Some(t) if t.chars().count() > MAX_TITLE => {
            return Err(ApiError::invalid(format!("the title is longer than {MAX_TITLE} characters")))
        }
        other => other.map(str::to_string),
    };
    let at = now();
    if let Some(title) = &title {
        records::set_title(&ws.pool, id.as_str(), title, Some(&at)).await?;
    }
    if let Some(on) = args.auto_continue {
        records::set_auto_continue(&ws.pool, id.as_str(), on, &at).await?;
        let text = if on {
            "Auto-continue is on: handoffs start the next turn by themselves."
        } else {
            "Auto-continue is off: each handoff waits for you."
        };
        record(ws, events, &id, EntryKind::System, None, text).await?;
    }
    publish(ws, events, &id).await
}
