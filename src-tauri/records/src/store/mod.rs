//! The workspace's records: `.kiln/kiln.db` through sqlx (SQLite in WAL mode), or a team's
//! PostgreSQL database (`kiln serve --database`), with each schema in embedded migrations
//! kept equal by a test. All of the engine's SQL lives here, one file per table, each query
//! behind a named function written once for both engines (`$1` placeholders, which SQLite
//! reads too, and SQL both speak); the store imports nothing but the base. `access` is the one
//! store that is not a workspace's: `kiln serve`'s tokens and browser sessions.

pub mod access;
pub mod attachments;
pub mod check;
pub mod checkpoints;
pub mod deliveries;
pub mod gate_results;
pub mod hosts;
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

/// Runs `$body` with `$pool` bound to the concrete pool of whichever engine the `Db` `$pool`
/// is: each query is written once and compiled for both.
macro_rules! on {
    ($pool:ident => $body:expr) => {
        match $pool {
            $crate::store::Db::Sqlite($pool) => $body,
            $crate::store::Db::Postgres($pool) => $body,
        }
    };
}
pub(crate) use on;

/// `on!` for a transaction of `Db::begin`: `$tx` bound to the concrete transaction
/// (`&mut **$tx` is its connection).
macro_rules! on_tx {
    ($tx:ident => $body:expr) => {
        match $tx {
            $crate::store::Tx::Sqlite($tx) => $body,
            $crate::store::Tx::Postgres($tx) => $body,
        }
    };
}
pub(crate) use on_tx;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{PgPool, SqlitePool};

use kiln_types::error::{ApiError, Result};

pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// The records' connection pool: SQLite beside the workspace, or a team's PostgreSQL.
#[derive(Clone, Debug)]
pub enum Db {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl Db {
    /// A transaction on either engine; dropped without `commit`, it rolls back.
    pub async fn begin(&self) -> Result<Tx<'static>> {
        Ok(match self {
            Db::Sqlite(pool) => Tx::Sqlite(pool.begin().await?),
            Db::Postgres(pool) => Tx::Postgres(pool.begin().await?),
        })
    }

    /// Runs one statement whose parameters are all text, on either engine: for tests, which
    /// set up states no operation reaches.
    pub async fn execute_text(&self, sql: &str, params: &[&str]) -> Result<u64> {
        let pool = self;
        Ok(on!(pool => {
            let mut query = sqlx::query(sql);
            for p in params {
                query = query.bind(*p);
            }
            query.execute(pool).await.map(|done| done.rows_affected())
        })?)
    }
}

/// A transaction of `Db::begin`.
pub enum Tx<'c> {
    Sqlite(sqlx::Transaction<'c, sqlx::Sqlite>),
    Postgres(sqlx::Transaction<'c, sqlx::Postgres>),
}

impl Tx<'_> {
    pub async fn commit(self) -> Result<()> {
        match self {
            Tx::Sqlite(tx) => tx.commit().await?,
            Tx::Postgres(tx) => tx.commit().await?,
        }
        Ok(())
    }
}

/// Opens (creating when missing) the workspace's database and brings its schema up to date:
/// `path` (SQLite beside the workspace) unless `database` names a PostgreSQL server's.
pub async fn open(path: &Path, database: Option<&str>) -> Result<Db> {
    match database {
        Some(url) => Ok(Db::Postgres(postgres::open(url).await?)),
        None => Ok(Db::Sqlite(open_with(path, &MIGRATOR).await?)),
    }
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
pub fn parse_enum<T: serde::de::DeserializeOwned>(text: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(text.to_string()))
        .map_err(|e| ApiError::internal("stored value", format!("`{text}`: {e}")))
}

/// The serde spelling of a unit enum variant, as stored.
pub fn enum_text<T: serde::Serialize>(value: T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => unreachable!("unit enum variants serialize as strings"),
    }
}
