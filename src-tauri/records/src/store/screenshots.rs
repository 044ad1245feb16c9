//! The `screenshots` table: what each of a session's preview screenshots shows (its kind,
//! the checkpoint it belongs to, the page, its size). The PNG itself is a file in the
//! session's directory, named by the row's id.

use super::{on, Db};

use super::{enum_text, parse_enum};
use kiln_types::error::Result;
use kiln_types::{ScreenshotKind, ScreenshotView};

/// A stored screenshot.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ScreenshotRow {
    pub id: i64,
    /// `turn` (after a turn, bound to its checkpoint), `page`, `element` or `region`.
    pub kind: String,
    pub checkpoint: Option<i64>,
    pub module_id: Option<String>,
    /// The page's path on the preview's origin, e.g. `/?module=cart`.
    pub page_path: String,
    pub width: i64,
    pub height: i64,
    pub taken_at: String,
}

pub struct NewScreenshot<'a> {
    pub session: &'a str,
    pub kind: ScreenshotKind,
    pub checkpoint: Option<i64>,
    pub module: Option<&'a str>,
    pub page_path: &'a str,
    pub width: u32,
    pub height: u32,
    pub bytes: u64,
    pub at: &'a str,
}

const COLUMNS: &str = "id, kind, checkpoint, module_id, page_path, width, height, taken_at";

/// Records a screenshot and answers its id (the PNG is written under that id after).
pub async fn insert(pool: &Db, s: NewScreenshot<'_>) -> Result<i64> {
    let (id,): (i64,) = on!(pool => sqlx::query_as(
        "INSERT INTO screenshots (session_id, kind, checkpoint, module_id, page_path, width, height, bytes, taken_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
    )
    .bind(s.session)
    .bind(enum_text(s.kind))
    .bind(s.checkpoint)
    .bind(s.module)
    .bind(s.page_path)
    .bind(s.width as i64)
    .bind(s.height as i64)
    .bind(s.bytes as i64)
    .bind(s.at)
    .fetch_one(pool)
    .await)?;
    Ok(id)
}

/// A session's screenshots, oldest first.
pub async fn list(pool: &Db, session: &str) -> Result<Vec<ScreenshotRow>> {
    Ok(on!(pool => sqlx::query_as(&format!("SELECT {COLUMNS} FROM screenshots WHERE session_id = $1 ORDER BY id"))
        .bind(session)
        .fetch_all(pool)
        .await)?)
}

/// One of a session's screenshots.
pub async fn get(pool: &Db, session: &str, id: i64) -> Result<Option<ScreenshotRow>> {
    Ok(on!(pool => sqlx::query_as(&format!("SELECT {COLUMNS} FROM screenshots WHERE session_id = $1 AND id = $2"))
        .bind(session)
        .bind(id)
        .fetch_optional(pool)
        .await)?)
}

/// The session's newest screenshot taken after a turn (its current look), if any.
pub async fn latest_for_session(pool: &Db, session: &str) -> Result<Option<ScreenshotRow>> {
    Ok(on!(pool => sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM screenshots WHERE session_id = $1 AND kind = 'turn' ORDER BY id DESC LIMIT 1"
    ))
    .bind(session)
    .fetch_optional(pool)
    .await)?)
}

/// Forgets a record whose PNG could not be written.
pub async fn delete(pool: &Db, session: &str, id: i64) -> Result<()> {
    on!(pool => sqlx::query("DELETE FROM screenshots WHERE session_id = $1 AND id = $2").bind(session).bind(id).execute(pool).await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// Forgets all of a session's screenshots (its PNGs go with its directory).
pub async fn remove_all(pool: &Db, session: &str) -> Result<u64> {
    let done = on!(pool => sqlx::query("DELETE FROM screenshots WHERE session_id = $1").bind(session).execute(pool).await.map(|done| done.rows_affected()))?;
    Ok(done)
}

/// The row as the API shows it.
pub fn view(row: &ScreenshotRow) -> Result<ScreenshotView> {
    Ok(ScreenshotView {
        id: row.id,
        kind: parse_enum(&row.kind)?,
        checkpoint: row.checkpoint,
        module_id: row.module_id.clone(),
        page_path: row.page_path.clone(),
        width: row.width as u32,
        height: row.height as u32,
        taken_at: row.taken_at.clone(),
    })
}
