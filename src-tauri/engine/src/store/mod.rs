//! The workspace's records: `.kiln/kiln.db` through sqlx (SQLite in WAL mode), with
//! the schema in embedded migrations. All of the engine's SQL lives here, one file per
//! table, each query behind a named function; the store imports nothing but the base.

pub mod attachments;
pub mod checkpoints;
pub mod deliveries;
pub mod gate_results;
pub mod postgres;
pub mod resume_ids;
pub mod review_comments;
pub mod reviews;
pub mod screenshots;
pub mod session_groups;
pub mod session_modules;
pub mod sessions;
pub mod settings;
pub mod spec_approvals;
pub mod transcript_entries;
pub mod turns;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;

use crate::error::{ApiError, Result};

pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Opens (creating when missing) the workspace's database and brings its schema up to date:
/// `path` (SQLite beside the workspace) unless `database` names a PostgreSQL server's.
pub async fn open(path: &Path, database: Option<&str>) -> Result<SqlitePool> {
    if let Some(url) = database {
        return Err(ApiError::invalid(format!("records on `{}` are not supported yet", crate::backing::shown(url))));
    }
    open_with(path, &MIGRATOR).await
}

/// Opens (creating when missing) a database with `migrator`'s schema.
pub async fn open_with(path: &Path, migrator: &sqlx::migrate::Migrator) -> Result<SqlitePool> {
    let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
        .map_err(|e| ApiError::internal("database path", e))?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .foreign_keys(true)
        .busy_timeout(Duration::from_secs(10));
    // No ping before each use: a connection to a local file does not go stale, and the ping
    // is one more round trip through the connection's worker thread on every query.
    let pool = SqlitePoolOptions::new().max_connections(4).test_before_acquire(false).connect_with(options).await?;
    migrator.run(&pool).await.map_err(|e| ApiError::internal("database migration", e))?;
    Ok(pool)
}

/// Parses a kebab-case enum stored as text through its serde spelling.
pub(crate) fn parse_enum<T: serde::de::DeserializeOwned>(text: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(text.to_string()))
        .map_err(|e| ApiError::internal("stored value", format!("`{text}`: {e}")))
}

/// The serde spelling of a unit enum variant, as stored.
pub(crate) fn enum_text<T: serde::Serialize>(value: T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => unreachable!("unit enum variants serialize as strings"),
    }
}
