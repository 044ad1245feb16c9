//! The `session_modules` table: the modules a session works on, in the order they joined.

use sqlx::FromRow;

use super::{on, on_tx, Db, Tx};

use super::{enum_text, parse_enum};
use kiln_types::error::Result;
use kiln_types::SessionModule;

#[derive(FromRow)]
struct ModuleRow {
    module_id: String,
    directory: String,
    kind: String,
    joined_at: String,
    base_sequence: i64,
}

/// A session's modules, `modules[0]` first.
pub async fn list(pool: &Db, session: &str) -> Result<Vec<SessionModule>> {
    let rows: Vec<ModuleRow> = on!(pool => sqlx::query_as(
        "SELECT module_id, directory, kind, joined_at, base_sequence FROM session_modules WHERE session_id = $1 ORDER BY position",
    )
    .bind(session)
    .fetch_all(pool)
    .await)?;
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
pub async fn insert(tx: &mut Tx<'_>, session: &str, position: i64, m: &SessionModule) -> Result<()> {
    on_tx!(tx => sqlx::query(
        "INSERT INTO session_modules (session_id, position, module_id, directory, kind, joined_at, base_sequence) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(session)
    .bind(position)
    .bind(&m.id)
    .bind(&m.directory)
    .bind(enum_text(m.kind))
    .bind(&m.joined_at)
    .bind(m.base_sequence)
    .execute(&mut **tx)
    .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// The position after the session's last module.
pub async fn next_position(tx: &mut Tx<'_>, session: &str) -> Result<i64> {
    Ok(
        on_tx!(tx => sqlx::query_scalar("SELECT COALESCE(MAX(position), -1) + 1 FROM session_modules WHERE session_id = $1")
        .bind(session)
        .fetch_one(&mut **tx)
        .await)?,
    )
}
