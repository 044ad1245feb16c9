//! The `session_groups` table: a brief fanned out to candidate sessions (best-of-N), the
//! candidates' place in it (`sessions.group_id`, `sessions.candidate`), and the pick.

use sqlx::FromRow;

use super::{on, Db};

use kiln_types::error::Result;

#[derive(Debug, Clone, FromRow)]
pub struct GroupRow {
    pub id: String,
    pub title: String,
    pub brief: String,
    pub created_at: String,
    pub picked_session_id: Option<String>,
    pub picked_at: Option<String>,
}

/// Writes the group before its candidates are made, so each can name it.
pub async fn insert(pool: &Db, id: &str, title: &str, brief: &str, at: &str) -> Result<()> {
    on!(pool => sqlx::query("INSERT INTO session_groups (id, title, brief, created_at) VALUES ($1, $2, $3, $4)")
        .bind(id)
        .bind(title)
        .bind(brief)
        .bind(at)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// Removes a group whose candidates could not all be made (they were removed first).
pub async fn remove(pool: &Db, id: &str) -> Result<()> {
    on!(pool => sqlx::query("DELETE FROM session_groups WHERE id = $1").bind(id).execute(pool).await.map(|done| done.rows_affected()))?;
    Ok(())
}

pub async fn load(pool: &Db, id: &str) -> Result<Option<GroupRow>> {
    Ok(on!(pool => sqlx::query_as("SELECT * FROM session_groups WHERE id = $1").bind(id).fetch_optional(pool).await)?)
}

/// Every group, newest first.
pub async fn list(pool: &Db) -> Result<Vec<GroupRow>> {
    Ok(on!(pool => sqlx::query_as("SELECT * FROM session_groups ORDER BY created_at DESC, id").fetch_all(pool).await)?)
}

/// Makes a session candidate `candidate` of `group`, run by `driver` with `model`: the
/// session's own driver and model, so later messages to it go to the same agent.
pub async fn join(
    pool: &Db,
    session: &str,
    group: &str,
    candidate: i64,
    driver: &str,
    model: Option<&str>,
) -> Result<()> {
    on!(pool => sqlx::query("UPDATE sessions SET group_id = $1, candidate = $2, driver = $3, model = $4 WHERE id = $5")
        .bind(group)
        .bind(candidate)
        .bind(driver)
        .bind(model)
        .bind(session)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// The group's sessions in candidate order, tombstones included.
pub async fn members(pool: &Db, group: &str) -> Result<Vec<String>> {
    Ok(on!(pool => sqlx::query_scalar("SELECT id FROM sessions WHERE group_id = $1 ORDER BY candidate, id")
        .bind(group)
        .fetch_all(pool)
        .await)?)
}

pub async fn set_picked(pool: &Db, group: &str, session: &str, at: &str) -> Result<()> {
    on!(pool => sqlx::query("UPDATE session_groups SET picked_session_id = $1, picked_at = $2 WHERE id = $3")
        .bind(session)
        .bind(at)
        .bind(group)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}
