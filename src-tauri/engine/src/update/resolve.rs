//! The conflicts an update from the workspace left, one at a time (SPEC §4): each file's
//! conflicts as its markers stand, and the user's pick for one of them (the session's
//! side, the workspace's, or both) written into the working copy through a handle beneath
//! it. A file left with no marker is resolved: a checkpoint records it, so the pick can
//! be undone by a restore, and the transcript says so.

use std::path::Path;

use crate::session::{publish, record};
use crate::workspace::Context;
use kiln_records::markers;
use kiln_runtime::paths::beneath::Beneath;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

pub(crate) async fn get(cx: &Context, args: SessionIdArgs) -> Result<ConflictsView> {
    let ws = &cx.ws;
    let (id, session) = crate::session::live(ws, &args.session_id).await?;
    Ok(view(&ws.session_workdir(&id), &session.conflicts))
}

pub(crate) async fn resolve(cx: &Context, args: ResolveConflictArgs) -> Result<ConflictsView> {
    let Context { ws, events } = cx;
    let (id, session) = crate::session::live(ws, &args.session_id).await?;
    crate::session::refuse_closed(&session)?;
    if ws.is_running(id.as_str()) {
        return Err(ApiError::new(ErrorCode::SessionRunning, "resolve conflicts when the session stops"));
    }
    let relative = kiln_runtime::paths::relative(&args.path)?;
    if !session.conflicts.contains(&args.path) {
        return Err(ApiError::new(
            ErrorCode::ConflictNotFound,
            format!("`{}` holds no conflict from the update from the workspace", args.path),
        ));
    }
    let workdir = ws.session_workdir(&id);
    let text = markers::read(&workdir, &args.path).ok_or_else(|| {
        ApiError::new(
            ErrorCode::ConflictNotFound,
            format!("`{}` cannot be read as text here; edit it in the terminal", args.path),
        )
    })?;
    let resolved = markers::resolve(&text, &args.conflict_id, args.keep).ok_or_else(|| {
        ApiError::new(
            ErrorCode::ConflictNotFound,
            format!("that conflict in `{}` changed since it was shown; look at it again", args.path),
        )
    })?;
    Beneath::open(&workdir)
        .and_then(|copy| copy.write(&relative, resolved.as_bytes()))
        .map_err(|e| ApiError::internal(&format!("writing `{}`", args.path), e))?;
    ws.diffs.forget(id.as_str());
    if !markers::holds_markers(&resolved) {
        let tree = {
            let _guard = ws.store_lock.lock().await;
            crate::working_copy::snapshot_workdir(&ws.open_store()?, &workdir)?
        };
        let label = format!("Conflicts resolved in {}", args.path);
        crate::checkpoint::take(ws, events, &id, tree, &label, None, None).await?;
        let left = session.conflicts.len() - 1;
        let rest = match left {
            0 => " No conflict is left.".to_string(),
            1 => " 1 file still has conflicts.".to_string(),
            n => format!(" {n} files still have conflicts."),
        };
        record(ws, events, &id, EntryKind::System, None, &format!("Conflicts in `{}` resolved.{rest}", args.path))
            .await?;
    }
    let session = publish(ws, events, &id).await?;
    Ok(view(&workdir, &session.conflicts))
}

fn view(workdir: &Path, paths: &[String]) -> ConflictsView {
    let files = paths
        .iter()
        .map(|path| ConflictFile {
            path: path.clone(),
            conflicts: markers::read(workdir, path)
                .map(|text| markers::conflicts(&text))
                .unwrap_or_default()
                .into_iter()
                .map(|c| ConflictView { id: c.id, line: c.line, session: c.ours, workspace: c.theirs, base: c.base })
                .collect(),
        })
        .collect();
    ConflictsView { files }
}
