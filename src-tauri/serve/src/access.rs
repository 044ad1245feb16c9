//! Who may use a `kiln serve`: access tokens (`kiln token create|list|revoke`) and the
//! browser sessions they open (`POST /api/connect`). Both secrets are random 256-bit
//! values shown once; the access store (`kiln_records::store::access`: `access.db` in the
//! app's config directory) keeps only their SHA-256, so reading it lets no one in. A browser
//! session lasts 12 hours, or until its token expires or is revoked, whichever comes first. A
//! team's hosts (`--database`) keep both in the `kiln_access` schema of their shared PostgreSQL
//! database instead, so a token or a browser's cookie holds on every host.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use aes_gcm::aead::rand_core::RngCore;
use aes_gcm::aead::OsRng;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as BASE64URL;
use base64::Engine as _;
use kiln_records::store::access as store;
use kiln_records::store::Db;
use sha2::{Digest, Sha256};
use time::OffsetDateTime;

use kiln_engine::types::ServeMode;
use kiln_engine::ApiError;

use crate::errors::{HttpError, Result, TransportCode};

pub use store::{TokenInfo, DB_FILE};

/// How long a browser session lasts at most.
pub const SESSION_LIFETIME: Duration = Duration::from_secs(12 * 60 * 60);
const TOKEN_PREFIX: &str = "kiln_";

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
        Ok(Access { pool: store::open(config_dir, database).await? })
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
        store::insert_token(&self.pool, &info, &hash(&token)).await?;
        Ok((info, token))
    }

    pub async fn list_tokens(&self) -> Result<Vec<TokenInfo>> {
        Ok(store::tokens(&self.pool).await?)
    }

    /// Revokes a token and ends every browser session it opened.
    pub async fn revoke_token(&self, id: &str) -> Result<()> {
        if !store::revoke_token(&self.pool, id, now()).await? {
            let shown: String = id.chars().take(40).collect();
            return Err(HttpError::new(
                TransportCode::TokenInvalid,
                format!("there is no token `{}`", shown.escape_debug()),
            ));
        }
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
            Proof::AccessToken(token) => match store::token_by_hash(&self.pool, &hash(token.trim())).await? {
                Some(t) if t.is_active(now) => (Some(t.id), t.expires_at),
                _ => {
                    return Err(HttpError::new(
                        TransportCode::TokenInvalid,
                        "that access token is unknown, expired or revoked",
                    ))
                }
            },
        };
        let lifetime_end = now + SESSION_LIFETIME.as_secs() as i64;
        let expires_at = token_expiry.map_or(lifetime_end, |e| e.min(lifetime_end));
        let secret = random_secret();
        let session = store::NewBrowserSession {
            hash: &hash(&secret),
            token_id: token_id.as_deref(),
            mode: mode_name(mode),
            created_at: now,
            expires_at,
        };
        store::insert_browser_session(&self.pool, &session).await?;
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
        let hashes: Vec<String> = secrets.iter().map(|s| hash(s)).collect();
        let live = store::live_browser_sessions(&self.pool, &hashes, mode_name(mode), now()).await?;
        Ok(secrets.iter().zip(&hashes).filter(|(_, h)| live.contains(*h)).map(|(s, _)| s.clone()).collect())
    }

    /// Ends a browser session; ending one that is already over is not an error.
    pub async fn disconnect(&self, secret: &str) -> Result<()> {
        Ok(store::end_browser_session(&self.pool, &hash(secret), now()).await?)
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
