//! The `sessions` table: a session's own facts, and its whole view read together with
//! the tables that hang off it.

use sqlx::FromRow;

use super::{on, on_tx, Db};

use super::{attachments, checkpoints, enum_text, parse_enum, resume_ids, screenshots, session_modules, turns};
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

#[derive(FromRow)]
struct SessionRow {
    id: String,
    kind: String,
    title: String,
    brief: String,
    role: Option<String>,
    driver: Option<String>,
    model: Option<String>,
    auto_continue: bool,
    chain_depth: i64,
    state: String,
    setup: String,
    created_at: String,
    updated_at: String,
    delivered_at: Option<String>,
    archived_at: Option<String>,
    rejected_at: Option<String>,
    deleted_at: Option<String>,
    pending_role: Option<String>,
    current_checkpoint: Option<i64>,
    group_id: Option<String>,
    candidate: Option<i64>,
    issue_url: Option<String>,
    issue_number: Option<i64>,
    issue_repo: Option<String>,
    base_sequence: i64,
    conflicts: String,
}

/// The session's whole view, tombstones included; `SESSION_NOT_FOUND` when no record.
pub async fn load(pool: &Db, id: &str, running: bool) -> Result<SessionView> {
    let row: Option<SessionRow> =
        on!(pool => sqlx::query_as("SELECT * FROM sessions WHERE id = $1").bind(id).fetch_optional(pool).await)?;
    let row =
        row.ok_or_else(|| ApiError::new(ErrorCode::SessionNotFound, format!("no session {id} in this workspace")))?;
    let modules = session_modules::list(pool, id).await?;
    let checkpoints = checkpoints::views(pool, id, row.current_checkpoint).await?;
    Ok(SessionView {
        id: row.id,
        kind: parse_enum(&row.kind)?,
        modules,
        title: row.title,
        brief: row.brief,
        role: row.role,
        driver: row.driver,
        model: row.model,
        resume_ids: resume_ids::list(pool, id).await?,
        auto_continue: row.auto_continue,
        chain_depth: row.chain_depth,
        state: parse_enum(&row.state)?,
        running,
        setup: parse_enum(&row.setup)?,
        created_at: row.created_at,
        updated_at: row.updated_at,
        delivered_at: row.delivered_at,
        archived_at: row.archived_at,
        rejected_at: row.rejected_at,
        deleted_at: row.deleted_at,
        attachments: attachments::list(pool, id).await?,
        checkpoints,
        pending_role: row.pending_role,
        usage: turns::usage(pool, Some(id)).await?,
        // Filled in by `session::view`, which can read the working copy to tell stale ones.
        reviews: Vec::new(),
        // Filled in by `session::view`, which reads the checkpoints' trees.
        changed: false,
        // Filled in by `session::view`: they live in memory (`permissions.rs`), not here.
        permissions: Vec::new(),
        screenshots: screenshots::list(pool, id).await?.iter().map(screenshots::view).collect::<Result<_>>()?,
        // Filled in by `session::view`, for sessions not deleted.
        review_comments: Vec::new(),
        group_id: row.group_id,
        candidate: row.candidate,
        // Filled in by `session::view`: the slots live in memory (`slots.rs`).
        waiting: false,
        base_sequence: row.base_sequence,
        conflicts: serde_json::from_str(&row.conflicts).unwrap_or_default(),
        issue: match (row.issue_url, row.issue_number, row.issue_repo) {
            (Some(url), Some(number), Some(repo)) => Some(IssueLink { url, number, repo }),
            _ => None,
        },
    })
}

/// Which checkpoint the working copy is now: `None` for the latest.
pub async fn set_current_checkpoint(pool: &Db, session: &str, sequence: Option<i64>) -> Result<()> {
    on!(pool => sqlx::query("UPDATE sessions SET current_checkpoint = $1 WHERE id = $2")
        .bind(sequence)
        .bind(session)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// Which checkpoint the working copy is now (`Some(None)` for the latest); `None` when
/// there is no such session.
pub async fn current_checkpoint(pool: &Db, session: &str) -> Result<Option<Option<i64>>> {
    Ok(on!(pool => sqlx::query_scalar("SELECT current_checkpoint FROM sessions WHERE id = $1")
        .bind(session)
        .fetch_optional(pool)
        .await)?)
}

/// The commits of checkpoint 0 and of the current checkpoint, to tell whether anything changed.
pub async fn base_and_current_commits(pool: &Db, session: &str) -> Result<Option<(String, String)>> {
    let Some(current) = current_checkpoint(pool, session).await? else { return Ok(None) };
    let base = checkpoints::commit(pool, session, Some(base_sequence(pool, session).await?)).await?;
    let now = checkpoints::commit(pool, session, current).await?;
    Ok(base.zip(now))
}

/// The checkpoint the session's change is measured from: 0 (its start) until it took in
/// the workspace's changes.
pub async fn base_sequence(pool: &Db, session: &str) -> Result<i64> {
    Ok(on!(pool => sqlx::query_scalar("SELECT base_sequence FROM sessions WHERE id = $1")
        .bind(session)
        .fetch_optional(pool)
        .await)?
    .unwrap_or(0))
}

/// After an update from the workspace: the change is measured from `base` (every module's
/// too), and `conflicts` are the files the merge left with conflict markers.
pub async fn set_base(pool: &Db, session: &str, base: i64, conflicts: &[String]) -> Result<()> {
    let conflicts = serde_json::to_string(conflicts).map_err(|e| ApiError::internal("conflicts", e))?;
    on!(pool => sqlx::query("UPDATE sessions SET base_sequence = $1, conflicts = $2 WHERE id = $3")
        .bind(base)
        .bind(&conflicts)
        .bind(session)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    on!(pool => sqlx::query("UPDATE session_modules SET base_sequence = $1 WHERE session_id = $2 AND base_sequence < $1")
        .bind(base)
        .bind(session)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// Ids of sessions, newest first. Archived, rejected and deleted ones only when asked.
pub async fn list_ids(pool: &Db, include_archived: bool) -> Result<Vec<String>> {
    let sql = if include_archived {
        "SELECT id FROM sessions ORDER BY created_at DESC, id"
    } else {
        "SELECT id FROM sessions WHERE archived_at IS NULL AND rejected_at IS NULL AND deleted_at IS NULL ORDER BY created_at DESC, id"
    };
    Ok(on!(pool => sqlx::query_scalar(sql).fetch_all(pool).await)?)
}

pub struct NewSession<'a> {
    pub id: &'a str,
    pub kind: SessionKind,
    pub title: &'a str,
    pub brief: &'a str,
    pub modules: &'a [SessionModule],
    pub at: &'a str,
    pub base_commit: &'a str,
}

/// Writes a new session with its modules and checkpoint 0 in one transaction.
pub async fn insert(pool: &Db, s: NewSession<'_>) -> Result<()> {
    let mut tx = pool.begin().await?;
    let t = &mut tx;
    on_tx!(t => sqlx::query(
        "INSERT INTO sessions (id, kind, title, brief, state, setup, created_at, updated_at) VALUES ($1, $2, $3, $4, 'planning', 'none', $5, $6)",
    )
    .bind(s.id)
    .bind(enum_text(s.kind))
    .bind(s.title)
    .bind(s.brief)
    .bind(s.at)
    .bind(s.at)
    .execute(&mut **t)
    .await.map(|done| done.rows_affected()))?;
    for (position, m) in s.modules.iter().enumerate() {
        session_modules::insert(&mut tx, s.id, position as i64, m).await?;
    }
    checkpoints::insert_start(&mut tx, s.id, s.base_commit, s.at).await?;
    tx.commit().await?;
    Ok(())
}

/// Links the session to the GitHub issue it started from.
pub async fn set_issue(pool: &Db, session: &str, issue: &IssueLink) -> Result<()> {
    on!(pool => sqlx::query("UPDATE sessions SET issue_url = $1, issue_number = $2, issue_repo = $3 WHERE id = $4")
        .bind(&issue.url)
        .bind(issue.number)
        .bind(&issue.repo)
        .bind(session)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// Appends a module after the existing ones (`modules[0]` never changes).
pub async fn add_module(pool: &Db, session: &str, m: &SessionModule) -> Result<()> {
    let mut tx = pool.begin().await?;
    let position = session_modules::next_position(&mut tx, session).await?;
    session_modules::insert(&mut tx, session, position, m).await?;
    let t = &mut tx;
    on_tx!(t => sqlx::query("UPDATE sessions SET updated_at = $1 WHERE id = $2")
        .bind(&m.joined_at)
        .bind(session)
        .execute(&mut **t)
        .await.map(|done| done.rows_affected()))?;
    tx.commit().await?;
    Ok(())
}

pub async fn set_state(pool: &Db, session: &str, state: SessionState, at: &str) -> Result<()> {
    on!(pool => sqlx::query("UPDATE sessions SET state = $1, updated_at = $2 WHERE id = $3")
        .bind(enum_text(state))
        .bind(at)
        .bind(session)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

pub async fn set_setup(pool: &Db, session: &str, setup: SetupState, at: &str) -> Result<()> {
    on!(pool => sqlx::query("UPDATE sessions SET setup = $1, updated_at = $2 WHERE id = $3")
        .bind(enum_text(setup))
        .bind(at)
        .bind(session)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// Which lifecycle flag a column holds.
#[derive(Clone, Copy)]
pub enum Flag {
    Archived,
    Rejected,
    Deleted,
}

impl Flag {
    fn column(self) -> &'static str {
        match self {
            Flag::Archived => "archived_at",
            Flag::Rejected => "rejected_at",
            Flag::Deleted => "deleted_at",
        }
    }
}

/// Sets (`Some(at)`) or clears (`None`) a lifecycle flag.
pub async fn set_flag(pool: &Db, session: &str, flag: Flag, value: Option<&str>, at: &str) -> Result<()> {
    let sql = format!("UPDATE sessions SET {} = $1, updated_at = $2 WHERE id = $3", flag.column());
    on!(pool => sqlx::query(&sql).bind(value).bind(at).bind(session).execute(pool).await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// Removes the record and everything hanging off it (`keepTranscript: false`).
pub async fn remove(pool: &Db, session: &str) -> Result<()> {
    on!(pool => sqlx::query("DELETE FROM sessions WHERE id = $1").bind(session).execute(pool).await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// Renames a session; with `at`, the change counts as an update.
pub async fn set_title(pool: &Db, session: &str, title: &str, at: Option<&str>) -> Result<()> {
    on!(pool => sqlx::query("UPDATE sessions SET title = $1, updated_at = COALESCE($2, updated_at) WHERE id = $3")
        .bind(title)
        .bind(at)
        .bind(session)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

pub async fn set_auto_continue(pool: &Db, session: &str, on: bool, at: &str) -> Result<()> {
    on!(pool => sqlx::query("UPDATE sessions SET auto_continue = $1, updated_at = $2 WHERE id = $3")
        .bind(on)
        .bind(at)
        .bind(session)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// The role the next operator message goes to when none is picked.
pub async fn pending_role(pool: &Db, session: &str) -> Result<Option<String>> {
    Ok(
        on!(pool => sqlx::query_scalar("SELECT pending_role FROM sessions WHERE id = $1").bind(session).fetch_one(pool).await)?,
    )
}

pub async fn set_pending_role(pool: &Db, session: &str, role: Option<&str>) -> Result<()> {
    on!(pool => sqlx::query("UPDATE sessions SET pending_role = $1 WHERE id = $2").bind(role).bind(session).execute(pool).await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// Marks the session delivered into the workspace.
pub async fn set_delivered(pool: &Db, session: &str, at: &str) -> Result<()> {
    on!(pool => sqlx::query("UPDATE sessions SET state = $1, delivered_at = $2, updated_at = $3 WHERE id = $4")
        .bind(enum_text(SessionState::Delivered))
        .bind(at)
        .bind(at)
        .bind(session)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// Sessions stored in `state`: read before `turns::close_orphans` settles them, so the next start can
/// say what it settled (a turn, its checkpoint or gates under way; a planner at work).
pub async fn ids_in_state(pool: &Db, state: SessionState) -> Result<Vec<String>> {
    Ok(on!(pool => sqlx::query_scalar("SELECT id FROM sessions WHERE state = $1 ORDER BY created_at, id")
        .bind(enum_text(state))
        .fetch_all(pool)
        .await)?)
}

/// Every session that is not deleted, with whether it is closed (archived or rejected).
pub async fn not_deleted(pool: &Db) -> Result<Vec<(String, bool)>> {
    Ok(on!(pool => sqlx::query_as(
        "SELECT id, (archived_at IS NOT NULL OR rejected_at IS NOT NULL) FROM sessions WHERE deleted_at IS NULL ORDER BY created_at, id",
    )
    .fetch_all(pool)
    .await)?)
}
