//! The records on a team's PostgreSQL server (`kiln serve --database postgres://…`): the
//! pool and the PostgreSQL migrations, which a test keeps equal to the SQLite ones.

use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::PgPool;

use kiln_types::error::{ApiError, ErrorCode, Result};

pub static PG_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations-postgres");

/// Connects to `url` and brings its schema up to date (sqlx holds an advisory lock while it
/// migrates, so hosts started together apply each migration once). DATABASE_UNAVAILABLE when
/// the server cannot be reached or refuses us; the password never appears in the message.
pub async fn open(url: &str) -> Result<PgPool> {
    // Turns, gates, streams and the UI's reads of one host share these.
    let pool = connect(url, 16, None).await?;
    PG_MIGRATOR.run(&pool).await.map_err(|e| unavailable(url, e))?;
    Ok(pool)
}

/// Opens the tables of `migrator` in their own `schema` of the database at `url` (created when
/// missing), with migrations of their own: kiln-serve's access store beside the records.
pub async fn open_in_schema(url: &str, schema: &str, migrator: &sqlx::migrate::Migrator) -> Result<PgPool> {
    assert!(schema.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "a schema name of ours");
    let pool = connect(url, 4, Some(schema)).await?;
    if let Err(e) = sqlx::query(&format!("CREATE SCHEMA IF NOT EXISTS {schema}")).execute(&pool).await {
        // Two hosts creating it at once: one loses the race on the catalog, and finds it made.
        let made: Option<i32> = sqlx::query_scalar("SELECT 1 FROM pg_namespace WHERE nspname = $1")
            .bind(schema)
            .fetch_optional(&pool)
            .await
            .map_err(|e| unavailable(url, e))?;
        if made.is_none() {
            return Err(unavailable(url, e));
        }
    }
    migrator.run(&pool).await.map_err(|e| unavailable(url, e))?;
    Ok(pool)
}

/// A pool of at most `max` connections to `url`, its names looked up in `schema` when given.
async fn connect(url: &str, max: u32, schema: Option<&str>) -> Result<PgPool> {
    let shown = crate::backing::shown(url);
    let mut options: PgConnectOptions = url
        .parse()
        .map_err(|e| ApiError::invalid(format!("`{shown}` is not a PostgreSQL URL: {}", redacted(e, url))))?;
    if let Some(schema) = schema {
        options = options.options([("search_path", schema)]);
    }
    PgPoolOptions::new()
        .max_connections(max)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options)
        .await
        .map_err(|e| unavailable(url, e))
}

/// DATABASE_UNAVAILABLE for the database at `url`, saying why without its password.
pub(crate) fn unavailable(url: &str, e: impl std::fmt::Display) -> ApiError {
    let shown = crate::backing::shown(url);
    ApiError::new(ErrorCode::DatabaseUnavailable, format!("the database at `{shown}`: {}", redacted(e, url)))
}

/// An error's text with the URL's password taken out, should the driver have quoted it.
fn redacted(e: impl std::fmt::Display, url: &str) -> String {
    let text = e.to_string();
    match crate::backing::password(url) {
        Some(secret) => text.replace(secret, "***"),
        None => text,
    }
}
