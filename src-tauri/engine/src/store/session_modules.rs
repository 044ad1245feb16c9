//! The `session_modules` table: the modules a session works on, in the order they joined.

use sqlx::{FromRow, SqlitePool};

use super::{enum_text, parse_enum};
use crate::api::types::SessionModule;
use crate::error::Result;

#[derive(FromRow)]
struct ModuleRow {
    module_id: String,
    directory: String,
    kind: String,
    joined_at: String,
    base_sequence: i64,
}

/// A session's modules, `modules[0]` first.
pub async fn list(pool: &SqlitePool, session: &str) -> Result<Vec<SessionModule>> {
    let rows: Vec<ModuleRow> = sqlx::query_as(
        "SELECT module_id, directory, kind, joined_at, base_sequence FROM session_modules WHERE session_id = ? ORDER BY position",
    )
    .bind(session)
    .fetch_all(pool)
    .await?;
    rows.into_iter()
        .map(|m| {
            Ok(SessionModule {
                id: m.module_id,
                directory: m.directory,
                kind: parse_enum(&m.kind)?,
                joined_at: m.joined_at,
                base_sequence: m.base_sequence,
            })
        })
        .collect()
}

/// Writes a module at `position` (inside the caller's transaction).
pub async fn insert(tx: &mut sqlx::SqliteConnection, session: &str, position: i64, m: &SessionModule) -> Result<()> {
    sqlx::query(
        "INSERT INTO session_modules (session_id, position, module_id, directory, kind, joined_at, base_sequence) VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(session)
    .bind(position)
    .bind(&m.id)
    .bind(&m.directory)
    .bind(enum_text(m.kind))
    .bind(&m.joined_at)
    .bind(m.base_sequence)
    .execute(tx)
    .await?;
    Ok(())
}

/// The position after the session's last module.
pub async fn next_position(tx: &mut sqlx::SqliteConnection, session: &str) -> Result<i64> {
    Ok(sqlx::query_scalar("SELECT COALESCE(MAX(position), -1) + 1 FROM session_modules WHERE session_id = ?")
        .bind(session)
        .fetch_one(tx)
        .await?)
}
