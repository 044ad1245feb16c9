//! The `attachments` table: the record of each file attached to a session (the bytes
//! live on disk, see `crate::attachments`).

use sqlx::FromRow;

use super::{on, Db};

use kiln_types::error::Result;
use kiln_types::AttachmentView;

#[derive(FromRow)]
struct Row {
    id: String,
    name: String,
    kind: String,
    size: i64,
    added_at: String,
}

/// A session's attachments, oldest first.
pub async fn list(pool: &Db, session: &str) -> Result<Vec<AttachmentView>> {
    let rows: Vec<Row> = on!(pool => sqlx::query_as(
        "SELECT id, name, kind, size, added_at FROM attachments WHERE session_id = $1 ORDER BY added_at, name",
    )
    .bind(session)
    .fetch_all(pool)
    .await)?;
    Ok(rows
        .into_iter()
        .map(|r| AttachmentView { id: r.id, name: r.name, kind: r.kind, size: r.size, added_at: r.added_at })
        .collect())
}

pub async fn insert(pool: &Db, session: &str, a: &AttachmentView) -> Result<()> {
    on!(pool => sqlx::query("INSERT INTO attachments (id, session_id, name, kind, size, added_at) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(&a.id)
        .bind(session)
        .bind(&a.name)
        .bind(&a.kind)
        .bind(a.size)
        .bind(&a.added_at)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// The name of the session's attachment `id`, if it has one.
pub async fn name(pool: &Db, session: &str, id: &str) -> Result<Option<String>> {
    Ok(on!(pool => sqlx::query_scalar("SELECT name FROM attachments WHERE id = $1 AND session_id = $2")
        .bind(id)
        .bind(session)
        .fetch_optional(pool)
        .await)?)
}

pub async fn remove(pool: &Db, id: &str) -> Result<()> {
    on!(pool => sqlx::query("DELETE FROM attachments WHERE id = $1").bind(id).execute(pool).await.map(|done| done.rows_affected()))?;
    Ok(())
}
