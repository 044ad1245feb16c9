//! Adding and removing a session's attachments (SPEC §13). The bytes are checked by
//! `attachments::check` before anything is written, stored under
//! `sessions/<id>/attachments/<attachmentId>-<safeName>` and copied into the working
//! copy at `reference/attachments/<safeName>`, where the agent reads them.

use base64::Engine as _;
use sqlx::FromRow;

use crate::api::types::*;
use crate::attachments;
use crate::clock::now;
use crate::error::{ApiError, ErrorCode, Result};
use crate::events::EventBus;
use crate::ids::SessionId;
use crate::session::{self, publish, record};
use crate::workspace::Workspace;

/// Where attachment copies live inside a working copy (never checkpointed or delivered).
pub const IN_WORKDIR: &str = "reference/attachments";

#[derive(FromRow)]
struct Row {
    id: String,
    name: String,
    kind: String,
    size: i64,
    added_at: String,
}

pub async fn list(ws: &Workspace, session: &str) -> Result<Vec<AttachmentView>> {
    list_in(&ws.pool, session).await
}

pub async fn list_in(pool: &sqlx::SqlitePool, session: &str) -> Result<Vec<AttachmentView>> {
    let rows: Vec<Row> = sqlx::query_as("SELECT id, name, kind, size, added_at FROM attachments WHERE session_id = ? ORDER BY added_at, name")
        .bind(session)
        .fetch_all(pool)
        .await?;
    Ok(rows.into_iter().map(|r| AttachmentView { id: r.id, name: r.name, kind: r.kind, size: r.size, added_at: r.added_at }).collect())
}

pub async fn add(ws: &Workspace, events: &EventBus, args: AddAttachmentArgs) -> Result<AttachmentView> {
    let (id, s) = session::live(ws, &args.session_id).await?;
    session::refuse_closed(&s)?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(args.data_base64.as_bytes())
        .map_err(|e| ApiError::invalid(format!("the attachment's data is not base64: {e}")))?;
    let existing = list(ws, id.as_str()).await?;
    let checked = attachments::check(&args.name, &bytes, existing.len())?;
    let taken: Vec<String> = existing.iter().map(|a| a.name.clone()).collect();
    let name = attachments::safe_name(&args.name, &taken)?;
    let attachment_id = SessionId::new().to_string();

    let stored = ws.session_dir(&id).join("attachments").join(format!("{attachment_id}-{name}"));
    let copy = ws.session_workdir(&id).join(IN_WORKDIR).join(&name);
    for path in [&stored, &copy] {
        std::fs::create_dir_all(path.parent().expect("has a parent"))?;
        std::fs::write(path, &bytes)?;
    }
    let kind = match checked.kind {
        attachments::Kind::Image => "image",
        attachments::Kind::File => "file",
    };
    let at = now();
    let inserted = sqlx::query("INSERT INTO attachments (id, session_id, name, kind, size, added_at) VALUES (?, ?, ?, ?, ?, ?)")
        .bind(&attachment_id)
        .bind(id.as_str())
        .bind(&name)
        .bind(kind)
        .bind(bytes.len() as i64)
        .bind(&at)
        .execute(&ws.pool)
        .await;
    if let Err(e) = inserted {
        let _ = std::fs::remove_file(&stored);
        let _ = std::fs::remove_file(&copy);
        return Err(e.into());
    }
    record(ws, events, &id, EntryKind::System, None, &format!("Attached `{name}` ({} bytes).", bytes.len())).await?;
    publish(ws, events, &id).await?;
    Ok(AttachmentView { id: attachment_id, name, kind: kind.into(), size: bytes.len() as i64, added_at: at })
}

pub async fn remove(ws: &Workspace, events: &EventBus, args: RemoveAttachmentArgs) -> Result<SessionView> {
    let (id, s) = session::live(ws, &args.session_id).await?;
    session::refuse_closed(&s)?;
    let attachment_id = SessionId::parse(&args.attachment_id)
        .map_err(|_| ApiError::invalid(format!("`{}` is not an attachment id", args.attachment_id)))?;
    let name: Option<String> = sqlx::query_scalar("SELECT name FROM attachments WHERE id = ? AND session_id = ?")
        .bind(attachment_id.as_str())
        .bind(id.as_str())
        .fetch_optional(&ws.pool)
        .await?;
    let name = name.ok_or_else(|| ApiError::new(ErrorCode::AttachmentNotFound, "this session has no such attachment"))?;
    sqlx::query("DELETE FROM attachments WHERE id = ?").bind(attachment_id.as_str()).execute(&ws.pool).await?;
    let _ = std::fs::remove_file(ws.session_dir(&id).join("attachments").join(format!("{attachment_id}-{name}")));
    let _ = std::fs::remove_file(ws.session_workdir(&id).join(IN_WORKDIR).join(&name));
    record(ws, events, &id, EntryKind::System, None, &format!("Removed the attachment `{name}`.")).await?;
    publish(ws, events, &id).await
}

/// The note a turn's instruction starts with when the session has attachments.
pub fn note(attachments: &[AttachmentView]) -> Option<String> {
    if attachments.is_empty() {
        return None;
    }
    let names: Vec<String> = attachments.iter().map(|a| format!("`{IN_WORKDIR}/{}`", a.name)).collect();
    Some(format!("The operator attached {} file(s) for this session, to read: {}.", attachments.len(), names.join(", ")))
}
