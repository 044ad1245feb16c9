//! The `session_groups` table: a brief fanned out to candidate sessions (best-of-N), the
//! candidates' place in it (`sessions.group_id`, `sessions.candidate`), and the pick.

use sqlx::{FromRow, SqlitePool};

use crate::error::Result;

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
pub async fn insert(pool: &SqlitePool, id: &str, title: &str, brief: &str, at: &str) -> Result<()> {
    sqlx::query("INSERT INTO session_groups (id, title, brief, created_at) VALUES (?, ?, ?, ?)")
        .bind(id)
        .bind(title)
        .bind(brief)
        .bind(at)
        .execute(pool)
        .await?;
    Ok(())
}

/// Removes a group whose candidates could not all be made (they were removed first).
pub async fn remove(pool: &SqlitePool, id: &str) -> Result<()> {
    sqlx::query("DELETE FROM session_groups WHERE id = ?").bind(id).execute(pool).await?;
    Ok(())
}

pub async fn load(pool: &SqlitePool, id: &str) -> Result<Option<GroupRow>> {
    Ok(sqlx::query_as("SELECT * FROM session_groups WHERE id = ?").bind(id).fetch_optional(pool).await?)
}

/// Every group, newest first.
pub async fn list(pool: &SqlitePool) -> Result<Vec<GroupRow>> {
    Ok(sqlx::query_as("SELECT * FROM session_groups ORDER BY created_at DESC, id").fetch_all(pool).await?)
}

/// Makes a session candidate `candidate` of `group`, run by `driver` with `model`: the
/// session's own driver and model, so later messages to it go to the same agent.
pub async fn join(
    pool: &SqlitePool,
    session: &str,
    group: &str,
    candidate: i64,
    driver: &str,
    model: Option<&str>,
) -> Result<()> {
    sqlx::query("UPDATE sessions SET group_id = ?, candidate = ?, driver = ?, model = ? WHERE id = ?")
        .bind(group)
        .bind(candidate)
        .bind(driver)
        .bind(model)
        .bind(session)
        .execute(pool)
        .await?;
    Ok(())
}

/// The group's sessions in candidate order, tombstones included.
pub async fn members(pool: &SqlitePool, group: &str) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar("SELECT id FROM sessions WHERE group_id = ? ORDER BY candidate, id")
        .bind(group)
        .fetch_all(pool)
        .await?)
}

pub async fn set_picked(pool: &SqlitePool, group: &str, session: &str, at: &str) -> Result<()> {
    sqlx::query("UPDATE session_groups SET picked_session_id = ?, picked_at = ? WHERE id = ?")
        .bind(session)
        .bind(at)
        .bind(group)
        .execute(pool)
        .await?;
    Ok(())
}
