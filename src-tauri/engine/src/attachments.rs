//! Adding and removing a session's attachments (ARCHITECTURE.md: Attachments). The bytes are checked by
//! `attachment_rules::check` before anything is written, stored under
//! `sessions/<id>/attachments/<attachmentId>-<safeName>` and copied into the working
//! copy at `reference/attachments/<safeName>`, where the agent reads them.
//!
//! Paths: the attachment id is Kiln's own UUID (and a UUID is checked before a remove
//! builds a path from one); the name is `attachment_rules::safe_name`, one plain segment.
//! Both directories are Kiln's own, so they are confined with no link allowed on the
//! way (`paths::confine_no_links`), and a file already at a copy's place (a link an
//! agent planted, say) is replaced, never written through.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;

use crate::attachment_rules;
use crate::ids::SessionId;
use crate::session::{self, publish, record};
use crate::workspace::{Context, Workspace};
use kiln_records::objects::files::Kind;
use kiln_records::store::attachments as records;
use kiln_runtime::clock::now;
use kiln_runtime::paths;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

pub(crate) use crate::attachment_rules::IN_WORKDIR;

pub(crate) async fn list(ws: &Workspace, session: &str) -> Result<Vec<AttachmentView>> {
    records::list(&ws.pool, session).await
}

pub(crate) async fn add(cx: &Context, args: AddAttachmentArgs) -> Result<AttachmentView> {
    let Context { ws, events } = cx;
    let (id, s) = session::live(ws, &args.session_id).await?;
    session::refuse_closed(&s)?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(args.data_base64.as_bytes())
        .map_err(|e| ApiError::invalid(format!("the attachment's data is not base64: {e}")))?;
    let existing = list(ws, id.as_str()).await?;
    let checked = attachment_rules::check(&args.name, &bytes, existing.len())?;
    let taken: Vec<String> = existing.iter().map(|a| a.name.clone()).collect();
    let name = attachment_rules::safe_name(&args.name, &taken)?;
    debug_assert!(attachment_rules::is_safe_name(&name), "{name:?}");
    let attachment_id = SessionId::new().to_string();

    // Both places are checked before either is written, so a refusal leaves nothing.
    let stored = stored_dir(ws, &id)?.join(format!("{attachment_id}-{name}"));
    let copy = copy_dir(ws, &id)?.join(&name);
    for path in [&stored, &copy] {
        if let Err(e) = write_new(path, &bytes) {
            let _ = std::fs::remove_file(&stored);
            return Err(e);
        }
    }
    // With a bucket, the bytes are in it before the record names them.
    if let Some(bucket) = &ws.objects {
        let kept =
            kiln_records::objects::files::keep(bucket, id.as_str(), Kind::Attachment, &attachment_id, bytes.clone())
                .await;
        if let Err(e) = kept {
            let _ = std::fs::remove_file(&stored);
            let _ = std::fs::remove_file(&copy);
            return Err(e);
        }
    }
    let kind = match checked.kind {
        attachment_rules::Kind::Image => "image",
        attachment_rules::Kind::File => "file",
    };
    let at = now();
    let view = AttachmentView { id: attachment_id, name, kind: kind.into(), size: bytes.len() as i64, added_at: at };
    if let Err(e) = records::insert(&ws.pool, id.as_str(), &view).await {
        let _ = std::fs::remove_file(&stored);
        let _ = std::fs::remove_file(&copy);
        return Err(e);
    }
    let name = &view.name;
    record(ws, events, &id, EntryKind::System, None, &format!("Attached `{name}` ({} bytes).", bytes.len())).await?;
    publish(ws, events, &id).await?;
    Ok(view)
}

pub(crate) async fn remove(cx: &Context, args: RemoveAttachmentArgs) -> Result<SessionView> {
    let Context { ws, events } = cx;
    let (id, s) = session::live(ws, &args.session_id).await?;
    session::refuse_closed(&s)?;
    let attachment_id = SessionId::parse(&args.attachment_id)
        .map_err(|_| ApiError::invalid(format!("`{}` is not an attachment id", args.attachment_id)))?;
    let name = records::name(&ws.pool, id.as_str(), attachment_id.as_str()).await?;
    let name =
        name.ok_or_else(|| ApiError::new(ErrorCode::AttachmentNotFound, "this session has no such attachment"))?;
    records::remove(&ws.pool, attachment_id.as_str()).await?;
    // The record is gone either way; a file is removed only where Kiln put it: a
    // directory that became a link holds nothing of Kiln's, so nothing there is removed.
    // `remove_file` on a link removes the link, never what it points to.
    if !attachment_rules::is_safe_name(&name) {
        tracing::warn!("attachment {attachment_id} had the unsafe name {name:?}; no file removed");
    } else {
        for file in [
            stored_dir(ws, &id).map(|d| d.join(format!("{attachment_id}-{name}"))),
            copy_dir(ws, &id).map(|d| d.join(&name)),
        ] {
            match file {
                Ok(file) => {
                    let _ = std::fs::remove_file(file);
                }
                Err(e) => tracing::warn!("removing attachment {attachment_id}: {}", e.message),
            }
        }
    }
    record(ws, events, &id, EntryKind::System, None, &format!("Removed the attachment `{name}`.")).await?;
    publish(ws, events, &id).await
}

/// Copies every attachment the session holds from where its original is kept into
/// `workdir` (a working copy being rebuilt, not yet in place), as `add` put them there;
/// returns how many. An original that is gone or unsafely named is skipped and logged.
pub(crate) async fn restore_copies(ws: &Workspace, id: &SessionId, workdir: &Path) -> Result<usize> {
    let mut copied = 0;
    for attachment in list(ws, id.as_str()).await? {
        if !attachment_rules::is_safe_name(&attachment.name) {
            tracing::warn!("attachment {} has the unsafe name {:?}; not copied", attachment.id, attachment.name);
            continue;
        }
        let original = stored_dir(ws, id)?.join(format!("{}-{}", attachment.id, attachment.name));
        let bytes = match std::fs::read(&original) {
            Ok(bytes) => bytes,
            // A host that never had it (or lost it) reads it from the bucket.
            Err(e) if ws.objects.is_some() => match recall(ws, id, &attachment.id, &original).await {
                Some(bytes) => bytes,
                None => {
                    tracing::warn!("attachment {} could not be read back, here or from the bucket: {e}", attachment.id);
                    continue;
                }
            },
            Err(e) => {
                tracing::warn!("attachment {} could not be read back: {e}", attachment.id);
                continue;
            }
        };
        write_new(&paths::confine_no_links(workdir, IN_WORKDIR)?.join(&attachment.name), &bytes)?;
        copied += 1;
    }
    Ok(copied)
}

/// The attachment's bytes from the bucket, kept again at `original` for next time.
async fn recall(ws: &Workspace, id: &SessionId, attachment: &str, original: &Path) -> Option<Vec<u8>> {
    let bucket = ws.objects.as_ref()?;
    match kiln_records::objects::files::recall(bucket, id.as_str(), Kind::Attachment, attachment).await {
        Ok(Some(bytes)) => {
            if let Err(e) = write_new(original, &bytes) {
                tracing::warn!("keeping attachment {attachment} from the bucket: {}", e.message);
            }
            Some(bytes)
        }
        Ok(None) => None,
        Err(e) => {
            tracing::warn!("attachment {attachment} from the bucket: {}", e.message);
            None
        }
    }
}

/// `sessions/<id>/attachments`, where the originals are kept.
fn stored_dir(ws: &Workspace, id: &SessionId) -> Result<PathBuf> {
    paths::confine_no_links(&ws.session_dir(id), "attachments")
}

/// `reference/attachments` in the working copy, where the agent reads the copies.
fn copy_dir(ws: &Workspace, id: &SessionId) -> Result<PathBuf> {
    paths::confine_no_links(&ws.session_workdir(id), IN_WORKDIR)
}

/// Writes `bytes` as a new regular file at `path` (its directory made first). Whatever
/// is already there, a link included, is removed first and the file is created with
/// `create_new`, which never follows a link: the bytes land at `path` and nowhere else.
pub(crate) fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::create_dir_all(path.parent().expect("has a parent"))?;
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            return Err(paths::refused(&path.display().to_string(), "a directory is in the attachment's place"))
        }
        Ok(_) => std::fs::remove_file(path)?,
        Err(_) => {}
    }
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(path)?;
    file.write_all(bytes)?;
    Ok(())
}

/// The note a turn's instruction starts with when the session has attachments.
pub(crate) fn note(attachments: &[AttachmentView]) -> Option<String> {
    if attachments.is_empty() {
        return None;
    }
    let names: Vec<String> = attachments.iter().map(|a| format!("`{IN_WORKDIR}/{}`", a.name)).collect();
    Some(format!(
        "The operator attached {} file(s) for this session, to read: {}.",
        attachments.len(),
        names.join(", ")
    ))
}
