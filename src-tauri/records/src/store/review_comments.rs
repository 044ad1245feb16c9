//! The `review_comments` table: the operator's comments on lines of a session's diff, with
//! where each stands (open, sent with a turn, addressed, resolved).

use super::{on, Db};

use crate::store::{enum_text, parse_enum};
use kiln_types::error::Result;
use kiln_types::{ReviewCommentState, ReviewCommentView};

#[derive(sqlx::FromRow)]
struct Row {
    id: String,
    path: String,
    start_line: i64,
    end_line: i64,
    quote: String,
    body: String,
    state: String,
    turn_id: Option<i64>,
    note: Option<String>,
    created_at: String,
    updated_at: String,
}

impl Row {
    fn view(self) -> Result<ReviewCommentView> {
        Ok(ReviewCommentView {
            id: self.id,
            path: self.path,
            start_line: self.start_line,
            end_line: self.end_line,
            quote: self.quote,
            body: self.body,
            state: parse_enum(&self.state)?,
            turn_id: self.turn_id,
            note: self.note,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

const COLUMNS: &str = "id, path, start_line, end_line, quote, body, state, turn_id, note, created_at, updated_at";

pub struct NewComment<'a> {
    pub id: &'a str,
    pub session: &'a str,
    pub path: &'a str,
    pub start_line: i64,
    pub end_line: i64,
    pub quote: &'a str,
    pub body: &'a str,
    pub at: &'a str,
}

/// Stores a new open comment. The operator's words and the quoted code are redacted as
/// the transcript that will carry them is.
pub async fn insert(pool: &Db, c: NewComment<'_>) -> Result<()> {
    on!(pool => sqlx::query(
        "INSERT INTO review_comments (id, session_id, path, start_line, end_line, quote, body, state, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(c.id)
    .bind(c.session)
    .bind(c.path)
    .bind(c.start_line)
    .bind(c.end_line)
    .bind(kiln_runtime::redact::redact(c.quote).as_ref())
    .bind(kiln_runtime::redact::redact(c.body).as_ref())
    .bind(enum_text(ReviewCommentState::Open))
    .bind(c.at)
    .bind(c.at)
    .execute(pool)
    .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// A session's comments, oldest first.
pub async fn list(pool: &Db, session: &str) -> Result<Vec<ReviewCommentView>> {
    let rows: Vec<Row> = on!(pool => sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM review_comments WHERE session_id = $1 ORDER BY created_at, rowid"
    ))
    .bind(session)
    .fetch_all(pool)
    .await)?;
    rows.into_iter().map(Row::view).collect()
}

/// One comment of a session, if it has it.
pub async fn get(pool: &Db, session: &str, id: &str) -> Result<Option<ReviewCommentView>> {
    let row: Option<Row> = on!(pool => sqlx::query_as(&format!("SELECT {COLUMNS} FROM review_comments WHERE session_id = $1 AND id = $2"))
            .bind(session)
            .bind(id)
            .fetch_optional(pool)
            .await)?;
    row.map(Row::view).transpose()
}

pub async fn set_body(pool: &Db, session: &str, id: &str, body: &str, at: &str) -> Result<()> {
    on!(pool => sqlx::query("UPDATE review_comments SET body = $1, updated_at = $2 WHERE session_id = $3 AND id = $4")
        .bind(kiln_runtime::redact::redact(body).as_ref())
        .bind(at)
        .bind(session)
        .bind(id)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// Sets where a comment stands, with the note that explains it (or none).
pub async fn set_state(
    pool: &Db,
    session: &str,
    id: &str,
    state: ReviewCommentState,
    note: Option<&str>,
    at: &str,
) -> Result<()> {
    on!(pool => sqlx::query("UPDATE review_comments SET state = $1, note = $2, updated_at = $3 WHERE session_id = $4 AND id = $5")
        .bind(enum_text(state))
        .bind(note)
        .bind(at)
        .bind(session)
        .bind(id)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

pub async fn remove(pool: &Db, session: &str, id: &str) -> Result<()> {
    on!(pool => sqlx::query("DELETE FROM review_comments WHERE session_id = $1 AND id = $2")
        .bind(session)
        .bind(id)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// Marks every open comment of the session sent, read against checkpoint `checkpoint`;
/// answers them, as they were sent. One statement, so a comment added meanwhile is either
/// in the prompt and sent, or neither.
pub async fn send_open(pool: &Db, session: &str, checkpoint: i64, at: &str) -> Result<Vec<ReviewCommentView>> {
    let rows: Vec<Row> = on!(pool => sqlx::query_as(&format!(
        "UPDATE review_comments SET state = $1, sent_checkpoint = $2, turn_id = NULL, note = NULL, updated_at = $3
         WHERE session_id = $4 AND state = $5 RETURNING {COLUMNS}"
    ))
    .bind(enum_text(ReviewCommentState::Sent))
    .bind(checkpoint)
    .bind(at)
    .bind(session)
    .bind(enum_text(ReviewCommentState::Open))
    .fetch_all(pool)
    .await)?;
    let mut views = rows.into_iter().map(Row::view).collect::<Result<Vec<_>>>()?;
    views.sort_by(|a, b| a.created_at.cmp(&b.created_at));
    Ok(views)
}

/// The comments sent and waiting for their turn's end, with the checkpoint each was sent at.
pub async fn in_flight(pool: &Db, session: &str) -> Result<Vec<(ReviewCommentView, Option<i64>)>> {
    let rows: Vec<(String, Option<i64>)> = on!(pool => sqlx::query_as("SELECT id, sent_checkpoint FROM review_comments WHERE session_id = $1 AND state = $2")
            .bind(session)
            .bind(enum_text(ReviewCommentState::Sent))
            .fetch_all(pool)
            .await)?;
    let mut out = Vec::new();
    for (id, checkpoint) in rows {
        if let Some(view) = get(pool, session, &id).await? {
            out.push((view, checkpoint));
        }
    }
    Ok(out)
}

/// A sent comment's outcome once its turn ended: its state, the turn, where its lines are now.
pub struct Outcome<'a> {
    pub id: &'a str,
    pub state: ReviewCommentState,
    pub turn_id: Option<i64>,
    pub start_line: i64,
    pub end_line: i64,
    pub note: Option<&'a str>,
    pub at: &'a str,
}

pub async fn settle(pool: &Db, session: &str, o: Outcome<'_>) -> Result<()> {
    on!(pool => sqlx::query(
        "UPDATE review_comments SET state = $1, turn_id = $2, start_line = $3, end_line = $4, note = $5, updated_at = $6
         WHERE session_id = $7 AND id = $8",
    )
    .bind(enum_text(o.state))
    .bind(o.turn_id)
    .bind(o.start_line)
    .bind(o.end_line)
    .bind(o.note)
    .bind(o.at)
    .bind(session)
    .bind(o.id)
    .execute(pool)
    .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// Every comment still marked sent, in any session, goes back to open with `note`: for a
/// process opening the workspace, when no turn of it can be running.
/// With `only`, one session's.
pub async fn reopen_stranded(pool: &Db, note: &str, at: &str, only: Option<&str>) -> Result<u64> {
    let done = on!(pool => sqlx::query("UPDATE review_comments SET state = $1, note = $2, updated_at = $3 WHERE state = $4 AND ($5 IS NULL OR session_id = $5)")
        .bind(enum_text(ReviewCommentState::Open))
        .bind(note)
        .bind(at)
        .bind(enum_text(ReviewCommentState::Sent))
        .bind(only)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(done)
}
