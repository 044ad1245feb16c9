//! The access store of `kiln serve`: access tokens and the browser sessions they open, kept by
//! the hash of their secrets only. Not a workspace's records: `access.db` in the user's config
//! directory (shared by every Kiln process of the user), or a team's `kiln_access` schema of
//! its PostgreSQL database (shared by every host). Who may connect, and with what, is
//! kiln-serve's to decide; this file keeps and reads the rows.

use std::collections::HashSet;
use std::path::Path;

use super::{on, on_tx, Db};
use crate::workspace_lock::wait_exclusive;

use kiln_types::error::Result;

pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations-access");
pub static PG_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations-access-postgres");
/// The schema of a team's database that holds the access tables, apart from the records.
const PG_SCHEMA: &str = "kiln_access";
/// The access store in the user's config directory.
pub const DB_FILE: &str = "access.db";
/// Held while the access store's schema is brought up to date.
const MIGRATION_LOCK: &str = "access.migrate.lock";

/// An access token as `kiln token list` shows it; never the token itself. Times are Unix
/// seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    pub id: String,
    pub name: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

impl TokenInfo {
    /// `revoked`, `expired` or `active` at `now`, as `kiln token list` says it.
    pub fn status(&self, now: i64) -> &'static str {
        if self.revoked_at.is_some() {
            "revoked"
        } else if self.expires_at.is_some_and(|e| e <= now) {
            "expired"
        } else {
            "active"
        }
    }

    /// Whether it still opens browser sessions at `now`: neither revoked nor expired.
    pub fn is_active(&self, now: i64) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|e| e > now)
    }
}

/// A browser session about to be kept: the hash of its cookie's secret, the token that opened
/// it (none for a loopback server's own), the serve mode it was opened in, and its times.
#[derive(Debug, Clone)]
pub struct NewBrowserSession<'a> {
    pub hash: &'a str,
    pub token_id: Option<&'a str>,
    pub mode: &'a str,
    pub created_at: i64,
    pub expires_at: i64,
}

/// Opens `<config_dir>/access.db`, creating it (private to the user) when missing; or, for a
/// team's hosts, the access tables of the PostgreSQL database at `database`.
pub async fn open(config_dir: &Path, database: Option<&str>) -> Result<Db> {
    if let Some(url) = database {
        return Ok(Db::Postgres(super::postgres::open_in_schema(url, PG_SCHEMA, &PG_MIGRATOR).await?));
    }
    std::fs::create_dir_all(config_dir)?;
    let path = config_dir.join(DB_FILE);
    // Every Kiln process of the user shares this store (servers, `kiln token`). sqlx takes no
    // lock to migrate SQLite, so two opening a fresh store at once would both apply its
    // migration: they take turns.
    let migrating = wait_exclusive(&config_dir.join(MIGRATION_LOCK)).await?;
    let pool = super::open_with(&path, &MIGRATOR).await?;
    drop(migrating);
    use std::os::unix::fs::PermissionsExt;
    for file in [path.clone(), path.with_extension("db-wal"), path.with_extension("db-shm")] {
        if file.exists() {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(Db::Sqlite(pool))
}

/// Keeps a new token by the hash of its secret.
pub async fn insert_token(pool: &Db, token: &TokenInfo, hash: &str) -> Result<()> {
    on!(pool => sqlx::query("INSERT INTO access_tokens (id, name, hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)")
        .bind(&token.id)
        .bind(&token.name)
        .bind(hash)
        .bind(token.created_at)
        .bind(token.expires_at)
        .execute(pool)
        .await
        .map(|_| ()))?;
    Ok(())
}

type TokenRow = (String, String, i64, Option<i64>, Option<i64>);

fn token(row: TokenRow) -> TokenInfo {
    let (id, name, created_at, expires_at, revoked_at) = row;
    TokenInfo { id, name, created_at, expires_at, revoked_at }
}

/// Every token, oldest first.
pub async fn tokens(pool: &Db) -> Result<Vec<TokenInfo>> {
    let rows: Vec<TokenRow> = on!(pool => sqlx::query_as(
        "SELECT id, name, created_at, expires_at, revoked_at FROM access_tokens ORDER BY created_at, id",
    )
    .fetch_all(pool)
    .await)?;
    Ok(rows.into_iter().map(token).collect())
}

/// The token whose secret has this hash, whatever its state.
pub async fn token_by_hash(pool: &Db, hash: &str) -> Result<Option<TokenInfo>> {
    let row: Option<TokenRow> = on!(pool => sqlx::query_as(
        "SELECT id, name, created_at, expires_at, revoked_at FROM access_tokens WHERE hash = $1",
    )
    .bind(hash)
    .fetch_optional(pool)
    .await)?;
    Ok(row.map(token))
}

/// Revokes token `id` at `at` (an earlier revocation stands) and ends every browser session it
/// opened, in one transaction. `false` when there is no such token, and nothing changed.
pub async fn revoke_token(pool: &Db, id: &str, at: i64) -> Result<bool> {
    let mut tx = pool.begin().await?;
    let t = &mut tx;
    let done = on_tx!(t => sqlx::query("UPDATE access_tokens SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2")
        .bind(at)
        .bind(id)
        .execute(&mut **t)
        .await
        .map(|done| done.rows_affected()))?;
    if done == 0 {
        return Ok(false);
    }
    let t = &mut tx;
    on_tx!(t => sqlx::query("UPDATE browser_sessions SET ended_at = $1 WHERE token_id = $2 AND ended_at IS NULL")
        .bind(at)
        .bind(id)
        .execute(&mut **t)
        .await
        .map(|_| ()))?;
    tx.commit().await?;
    Ok(true)
}

pub async fn insert_browser_session(pool: &Db, session: &NewBrowserSession<'_>) -> Result<()> {
    on!(pool => sqlx::query(
        "INSERT INTO browser_sessions (hash, token_id, mode, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(session.hash)
    .bind(session.token_id)
    .bind(session.mode)
    .bind(session.created_at)
    .bind(session.expires_at)
    .execute(pool)
    .await
    .map(|_| ()))?;
    Ok(())
}

/// Which of `hashes` name a browser session opened in `mode` that is live at `now`: not ended,
/// not past its end, and opened by no token or by one neither revoked nor expired. One query
/// however many are asked about.
pub async fn live_browser_sessions(pool: &Db, hashes: &[String], mode: &str, now: i64) -> Result<HashSet<String>> {
    if hashes.is_empty() {
        return Ok(HashSet::new());
    }
    let n = hashes.len();
    let places = (1..=n).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
    let (mode_at, now_at) = (n + 1, n + 2);
    let sql = format!(
        "SELECT s.hash FROM browser_sessions s LEFT JOIN access_tokens t ON t.id = s.token_id
         WHERE s.hash IN ({places}) AND s.mode = ${mode_at} AND s.ended_at IS NULL AND s.expires_at > ${now_at}
           AND (s.token_id IS NULL OR (t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ${now_at})))"
    );
    let rows: Vec<(String,)> = on!(pool => {
        let mut query = sqlx::query_as(&sql);
        for hash in hashes {
            query = query.bind(hash);
        }
        query.bind(mode).bind(now).fetch_all(pool).await
    })?;
    Ok(rows.into_iter().map(|r| r.0).collect())
}

/// Ends the browser session with this hash at `at`; ending one already over changes nothing.
pub async fn end_browser_session(pool: &Db, hash: &str, at: i64) -> Result<()> {
    on!(pool => sqlx::query("UPDATE browser_sessions SET ended_at = $1 WHERE hash = $2 AND ended_at IS NULL")
        .bind(at)
        .bind(hash)
        .execute(pool)
        .await
        .map(|_| ()))?;
    Ok(())
}
