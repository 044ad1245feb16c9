//! Who may use a `kiln serve`: access tokens (`kiln token create|list|revoke`) and the
//! browser sessions they open (`POST /api/connect`). Both secrets are random 256-bit
//! values shown once; `access.db` in the app's config directory keeps only their
//! SHA-256, so reading it lets no one in. A browser session lasts 12 hours, or until
//! its token expires or is revoked, whichever comes first. A team's hosts (`--database`) keep
//! both in the `kiln_access` schema of their shared PostgreSQL database instead, so a token or a
//! browser's cookie holds on every host.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use aes_gcm::aead::rand_core::RngCore;
use aes_gcm::aead::OsRng;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as BASE64URL;
use base64::Engine as _;
use kiln_engine::{on_db, on_db_tx, Db};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;

use kiln_engine::types::ServeMode;
use kiln_engine::ApiError;

use crate::errors::{HttpError, Result, TransportCode};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations-access");
static PG_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations-access-postgres");
/// The schema of a team's database that holds the access tables, apart from the records.
const PG_SCHEMA: &str = "kiln_access";

pub const DB_FILE: &str = "access.db";
/// Held while the access store's schema is brought up to date.
const MIGRATION_LOCK: &str = "access.migrate.lock";
/// How long a browser session lasts at most.
pub const SESSION_LIFETIME: Duration = Duration::from_secs(12 * 60 * 60);
const TOKEN_PREFIX: &str = "kiln_";

/// An access token as `kiln token list` shows it; never the token itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    pub id: String,
    pub name: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

impl TokenInfo {
    pub fn status(&self, now: i64) -> &'static str {
        if self.revoked_at.is_some() {
            "revoked"
        } else if self.expires_at.is_some_and(|e| e <= now) {
            "expired"
        } else {
            "active"
        }
    }
}

/// What a connect showed to open a browser session.
#[derive(Debug, Clone, Copy)]
pub enum Proof<'a> {
    /// An access token (`kiln token create`), checked here.
    AccessToken(&'a str),
    /// A loopback server's own token (`crate::server_token`), already matched by the caller.
    ServerToken,
}

/// A browser session just opened: the cookie's secret and when it ends.
#[derive(Debug, Clone)]
pub struct Connection {
    pub secret: String,
    pub expires_at: i64,
}

impl Connection {
    /// Seconds until it ends, for the cookie's `Max-Age`.
    pub fn max_age(&self) -> i64 {
        (self.expires_at - now()).max(0)
    }
}

pub struct Access {
    pool: Db,
}

impl Access {
    /// Opens `<config_dir>/access.db`, creating it (private to the user) when missing; or, for
    /// a team's hosts, the access tables of the PostgreSQL database at `database`.
    pub async fn open(config_dir: &Path, database: Option<&str>) -> Result<Access> {
        if let Some(url) = database {
            return Ok(Access {
                pool: Db::Postgres(kiln_engine::open_team_database(url, PG_SCHEMA, &PG_MIGRATOR).await?),
            });
        }
        std::fs::create_dir_all(config_dir)?;
        let path = config_dir.join(DB_FILE);
        // Every Kiln process of the user shares this store (servers, `kiln token`). sqlx
        // takes no lock to migrate SQLite, so two opening a fresh store at once would both
        // apply its migration: they take turns.
        let migrating = kiln_engine::wait_exclusive(&config_dir.join(MIGRATION_LOCK)).await?;
        let pool = kiln_engine::open_database(&path, &MIGRATOR).await?;
        drop(migrating);
        use std::os::unix::fs::PermissionsExt;
        for file in [path.clone(), path.with_extension("db-wal"), path.with_extension("db-shm")] {
            if file.exists() {
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))?;
            }
        }
        Ok(Access { pool: Db::Sqlite(pool) })
    }

    /// Makes a token; returns what `list` will show and the token itself, which is
    /// never stored and cannot be shown again.
    pub async fn create_token(&self, name: &str, lifetime: Option<Duration>) -> Result<(TokenInfo, String)> {
        let name = name.trim();
        if name.chars().count() > 80 || name.chars().any(char::is_control) {
            return Err(ApiError::invalid("a token's name is at most 80 printable characters").into());
        }
        let token = format!("{TOKEN_PREFIX}{}", random_secret());
        let info = TokenInfo {
            id: random_id(),
            name: if name.is_empty() { "token".into() } else { name.into() },
            created_at: now(),
            expires_at: lifetime.map(|l| now() + l.as_secs() as i64),
            revoked_at: None,
        };
        let pool = &self.pool;
        on_db!(pool => sqlx::query("INSERT INTO access_tokens (id, name, hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)")
            .bind(&info.id)
            .bind(&info.name)
            .bind(hash(&token))
            .bind(info.created_at)
            .bind(info.expires_at)
            .execute(pool)
            .await
            .map(|_| ()))?;
        Ok((info, token))
    }

    pub async fn list_tokens(&self) -> Result<Vec<TokenInfo>> {
        type Row = (String, String, i64, Option<i64>, Option<i64>);
        let pool = &self.pool;
        let rows: Vec<Row> = on_db!(pool => sqlx::query_as(
            "SELECT id, name, created_at, expires_at, revoked_at FROM access_tokens ORDER BY created_at, id",
        )
        .fetch_all(pool)
        .await)?;
        Ok(rows
            .into_iter()
            .map(|(id, name, created_at, expires_at, revoked_at)| TokenInfo {
                id,
                name,
                created_at,
                expires_at,
                revoked_at,
            })
            .collect())
    }

    /// Revokes a token and ends every browser session it opened.
    pub async fn revoke_token(&self, id: &str) -> Result<()> {
        let at = now();
        let mut tx = self.pool.begin().await?;
        let t = &mut tx;
        let done = on_db_tx!(t => sqlx::query("UPDATE access_tokens SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2")
            .bind(at)
            .bind(id)
            .execute(&mut **t)
            .await
            .map(|done| done.rows_affected()))?;
        if done == 0 {
            let shown: String = id.chars().take(40).collect();
            return Err(HttpError::new(
                TransportCode::TokenInvalid,
                format!("there is no token `{}`", shown.escape_debug()),
            ));
        }
        let t = &mut tx;
        on_db_tx!(t => sqlx::query("UPDATE browser_sessions SET ended_at = $1 WHERE token_id = $2 AND ended_at IS NULL")
            .bind(at)
            .bind(id)
            .execute(&mut **t)
            .await
            .map(|_| ()))?;
        tx.commit().await?;
        Ok(())
    }

    /// Opens a browser session for `proof`: an access token that is valid (either mode), or
    /// a loopback server's own token, which the caller has already matched.
    pub async fn connect(&self, mode: ServeMode, proof: Proof<'_>) -> Result<Connection> {
        let now = now();
        let (token_id, token_expiry) = match proof {
            Proof::ServerToken if mode == ServeMode::Loopback => (None, None),
            Proof::ServerToken => {
                return Err(HttpError::new(TransportCode::TokenInvalid, "only a loopback server has its own token"))
            }
            Proof::AccessToken(token) => {
                let token = token.trim();
                let pool = &self.pool;
                let row: Option<(String, Option<i64>, Option<i64>)> = on_db!(pool => sqlx::query_as(
                    "SELECT id, expires_at, revoked_at FROM access_tokens WHERE hash = $1"
                )
                .bind(hash(token))
                .fetch_optional(pool)
                .await)?;
                match row {
                    Some((id, expires_at, None)) if expires_at.is_none_or(|e| e > now) => (Some(id), expires_at),
                    _ => {
                        return Err(HttpError::new(
                            TransportCode::TokenInvalid,
                            "that access token is unknown, expired or revoked",
                        ))
                    }
                }
            }
        };
        let lifetime_end = now + SESSION_LIFETIME.as_secs() as i64;
        let expires_at = token_expiry.map_or(lifetime_end, |e| e.min(lifetime_end));
        let secret = random_secret();
        let pool = &self.pool;
        on_db!(pool => sqlx::query(
            "INSERT INTO browser_sessions (hash, token_id, mode, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(hash(&secret))
        .bind(token_id)
        .bind(mode_name(mode))
        .bind(now)
        .bind(expires_at)
        .execute(pool)
        .await
        .map(|_| ()))?;
        Ok(Connection { secret, expires_at })
    }

    /// Whether `secret` names a live browser session opened in `mode`: a loopback
    /// connection never admits anyone to a self-hosted server sharing the config.
    pub async fn check(&self, mode: ServeMode, secret: &str) -> Result<()> {
        match self.live_among(mode, &[secret.to_string()]).await?.is_empty() {
            false => Ok(()),
            true => Err(not_connected()),
        }
    }

    /// Which of `secrets` name a live browser session opened in `mode` (as `check` says),
    /// in one query: the open event streams all ask after every event (`session_checks`).
    pub async fn live_among(&self, mode: ServeMode, secrets: &[String]) -> Result<HashSet<String>> {
        if secrets.is_empty() {
            return Ok(HashSet::new());
        }
        let now = now();
        let n = secrets.len();
        let places = (1..=n).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
        let (mode_at, now_at) = (n + 1, n + 2);
        let sql = format!(
            "SELECT s.hash FROM browser_sessions s LEFT JOIN access_tokens t ON t.id = s.token_id
             WHERE s.hash IN ({places}) AND s.mode = ${mode_at} AND s.ended_at IS NULL AND s.expires_at > ${now_at}
               AND (s.token_id IS NULL OR (t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ${now_at})))"
        );
        let pool = &self.pool;
        let rows: Vec<(String,)> = on_db!(pool => {
            let mut query = sqlx::query_as(&sql);
            for secret in secrets {
                query = query.bind(hash(secret));
            }
            query.bind(mode_name(mode)).bind(now).fetch_all(pool).await
        })?;
        let live: HashSet<String> = rows.into_iter().map(|r| r.0).collect();
        Ok(secrets.iter().filter(|s| live.contains(&hash(s))).cloned().collect())
    }

    /// Ends a browser session; ending one that is already over is not an error.
    pub async fn disconnect(&self, secret: &str) -> Result<()> {
        let pool = &self.pool;
        on_db!(pool => sqlx::query("UPDATE browser_sessions SET ended_at = $1 WHERE hash = $2 AND ended_at IS NULL")
            .bind(now())
            .bind(hash(secret))
            .execute(pool)
            .await
            .map(|_| ()))?;
        Ok(())
    }
}

pub fn not_connected() -> HttpError {
    HttpError::new(TransportCode::NotConnected, "connect first: this needs a browser session (POST /api/connect)")
}

/// Reads `30d`, `12h`, `90m` or `45s`.
pub fn parse_lifetime(text: &str) -> Result<Duration> {
    let text = text.trim();
    let bad = || HttpError::from(ApiError::invalid(format!("`{text}` is not a lifetime like 30d, 12h, 90m or 45s")));
    let split = text.len().checked_sub(1).filter(|&i| text.is_char_boundary(i)).ok_or_else(bad)?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit {
        "d" => 86_400,
        "h" => 3_600,
        "m" => 60,
        "s" => 1,
        _ => return Err(bad()),
    };
    match number.checked_mul(seconds) {
        Some(s) if s > 0 && s <= 10 * 366 * 86_400 => Ok(Duration::from_secs(s)),
        _ => Err(bad()),
    }
}

/// Unix seconds as RFC 3339, for showing.
pub fn rfc3339(unix: i64) -> String {
    OffsetDateTime::from_unix_timestamp(unix)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default()
}

pub fn now() -> i64 {
    OffsetDateTime::now_utc().unix_timestamp()
}

fn mode_name(mode: ServeMode) -> &'static str {
    match mode {
        ServeMode::Loopback => "loopback",
        ServeMode::SelfHosted => "self-hosted",
    }
}

fn random_secret() -> String {
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    BASE64URL.encode(bytes)
}

fn random_id() -> String {
    let mut bytes = [0u8; 6];
    OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hash(secret: &str) -> String {
    Sha256::digest(secret.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn access() -> (tempfile::TempDir, Access) {
        let dir = tempfile::tempdir().unwrap();
        let access = Access::open(dir.path(), None).await.unwrap();
        (dir, access)
    }

    #[tokio::test]
    async fn a_token_opens_a_session_until_it_is_revoked() {
        let (_dir, access) = access().await;
        let (info, token) = access.create_token("laptop", None).await.unwrap();
        assert!(token.starts_with("kiln_") && token.len() == 5 + 43, "{token}");
        let conn = access.connect(ServeMode::SelfHosted, Proof::AccessToken(&token)).await.unwrap();
        assert!(conn.max_age() > 11 * 3600 && conn.max_age() <= 12 * 3600);
        access.check(ServeMode::SelfHosted, &conn.secret).await.unwrap();
        // The session is not valid in the other mode, nor is any other secret.
        assert_eq!(
            access.check(ServeMode::Loopback, &conn.secret).await.unwrap_err().code,
            TransportCode::NotConnected
        );
        assert_eq!(access.check(ServeMode::SelfHosted, "forged").await.unwrap_err().code, TransportCode::NotConnected);
        access.revoke_token(&info.id).await.unwrap();
        assert_eq!(
            access.check(ServeMode::SelfHosted, &conn.secret).await.unwrap_err().code,
            TransportCode::NotConnected
        );
        let again = access.connect(ServeMode::SelfHosted, Proof::AccessToken(&token)).await.unwrap_err();
        assert_eq!(again.code, TransportCode::TokenInvalid);
        assert_eq!(access.list_tokens().await.unwrap()[0].status(now()), "revoked");
        assert_eq!(access.revoke_token("nope").await.unwrap_err().code, TransportCode::TokenInvalid);
    }

    #[tokio::test]
    async fn only_hashes_are_stored() {
        let (dir, access) = access().await;
        let (_, token) = access.create_token("ci", None).await.unwrap();
        let conn = access.connect(ServeMode::SelfHosted, Proof::AccessToken(&token)).await.unwrap();
        drop(access);
        let mut stored = Vec::new();
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            stored.extend(std::fs::read(entry.unwrap().path()).unwrap());
        }
        let stored = String::from_utf8_lossy(&stored);
        assert!(!stored.contains(&token[5..]) && !stored.contains(&conn.secret));
        assert!(stored.contains(&hash(&token)));
    }

    #[tokio::test]
    async fn only_a_loopback_server_has_a_token_of_its_own() {
        let (_dir, access) = access().await;
        assert_eq!(
            access.connect(ServeMode::SelfHosted, Proof::ServerToken).await.unwrap_err().code,
            TransportCode::TokenInvalid
        );
        assert_eq!(
            access.connect(ServeMode::SelfHosted, Proof::AccessToken("kiln_guess")).await.unwrap_err().code,
            TransportCode::TokenInvalid
        );
        let local = access.connect(ServeMode::Loopback, Proof::ServerToken).await.unwrap();
        access.check(ServeMode::Loopback, &local.secret).await.unwrap();
        assert_eq!(
            access.check(ServeMode::SelfHosted, &local.secret).await.unwrap_err().code,
            TransportCode::NotConnected
        );
        assert_eq!(
            access.connect(ServeMode::Loopback, Proof::AccessToken("kiln_guess")).await.unwrap_err().code,
            TransportCode::TokenInvalid
        );
        access.disconnect(&local.secret).await.unwrap();
        assert_eq!(
            access.check(ServeMode::Loopback, &local.secret).await.unwrap_err().code,
            TransportCode::NotConnected
        );
    }

    #[tokio::test]
    async fn a_session_ends_with_its_token() {
        let (_dir, access) = access().await;
        let (_, token) = access.create_token("short", Some(Duration::from_secs(60))).await.unwrap();
        let conn = access.connect(ServeMode::SelfHosted, Proof::AccessToken(&token)).await.unwrap();
        assert!(conn.max_age() <= 60);
        // Expire the token by moving its end into the past.
        access
            .pool
            .execute_text(
                "UPDATE access_tokens SET expires_at = CAST($1 AS BIGINT)",
                &[(now() - 1).to_string().as_str()],
            )
            .await
            .unwrap();
        assert_eq!(
            access.check(ServeMode::SelfHosted, &conn.secret).await.unwrap_err().code,
            TransportCode::NotConnected
        );
        assert_eq!(
            access.connect(ServeMode::SelfHosted, Proof::AccessToken(&token)).await.unwrap_err().code,
            TransportCode::TokenInvalid
        );
        assert_eq!(access.list_tokens().await.unwrap()[0].status(now()), "expired");
    }

    #[test]
    fn lifetimes() {
        assert_eq!(parse_lifetime("30d").unwrap(), Duration::from_secs(30 * 86_400));
        assert_eq!(parse_lifetime("12h").unwrap(), Duration::from_secs(12 * 3_600));
        assert_eq!(parse_lifetime("45s").unwrap(), Duration::from_secs(45));
        for bad in ["", "0s", "d", "10", "-1h", "1w", "99999999999999d", "1é"] {
            assert!(parse_lifetime(bad).is_err(), "{bad}");
        }
    }
}
