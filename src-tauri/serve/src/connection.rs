//! Browser connections to `kiln serve`. `POST /api/connect` opens one (an access token,
//! or on loopback the server's own token: `server_token`) and sets an `HttpOnly;
//! SameSite=Strict; Secure` cookie; every other `/api/` call needs it, in either mode. An
//! unconnected `GET /api/state` answers only that it must connect, and the mode. Failed connects
//! are counted per client (an IPv4 address, or an IPv6 /64), and five within a minute
//! close the door until the minute is over, so tokens cannot be guessed at speed. A
//! connect counts as failed from before its body is read until it succeeds, and a client
//! may have only two in flight, so guesses sent all at once meet the same limit.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::access::{not_connected, Access, Proof};
use crate::server_token::ServerToken;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::{COOKIE, RETRY_AFTER, SET_COOKIE};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use kiln_engine::types::ServeMode;
use kiln_engine::ApiError;
use serde::Deserialize;

use crate::errors::{HttpError, TransportCode};
use crate::session_checks::SessionChecks;
use crate::streams::Streams;
use crate::ErrorResponse;

/// Failed connects one client may make per window.
const MAX_FAILURES: u32 = 5;
/// Connects one client may have in flight at once.
const MAX_IN_FLIGHT: u32 = 2;
const WINDOW: Duration = Duration::from_secs(60);

/// Whom the rate limit counts against: one IPv4 address, or one IPv6 /64, the block a
/// single host is usually given (so hopping addresses within it does not help).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Client {
    V4(Ipv4Addr),
    V6Net(u64),
    Unknown,
}

impl Client {
    fn of(ip: Option<IpAddr>) -> Client {
        match ip {
            Some(IpAddr::V4(v4)) => Client::V4(v4),
            Some(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
                Some(v4) => Client::V4(v4),
                None => Client::V6Net((u128::from(v6) >> 64) as u64),
            },
            None => Client::Unknown,
        }
    }
}

/// One client's connects in the current window.
struct Attempts {
    since: Instant,
    failures: u32,
    in_flight: u32,
}

pub(crate) struct Connections {
    pub mode: ServeMode,
    access: Arc<Access>,
    /// A loopback server's own token.
    token: Option<Arc<ServerToken>>,
    port: u16,
    cookie: String,
    attempts: Mutex<HashMap<Client, Attempts>>,
    /// Told when a browser session ends here, so its event streams end at once.
    streams: Arc<Streams>,
    /// Every check of a cookie, batched (see `session_checks`); shared with the streams.
    checks: Arc<SessionChecks>,
}

/// Whether the request carries a live connection; handlers read it to report `connected`.
#[derive(Clone, Copy)]
pub(crate) struct Connected(pub bool);

/// The cookie secret of the live browser session a request carries.
#[derive(Clone)]
pub(crate) struct Session(pub String);

/// A connect in flight, counted as failed until `succeeded`; dropping it (the answer
/// sent, or the client gone mid-body) settles the count.
struct Reservation {
    connections: Arc<Connections>,
    client: Client,
    succeeded: bool,
}

impl Reservation {
    fn succeeded(mut self) {
        self.succeeded = true;
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut attempts = self.connections.attempts.lock().unwrap();
        if let Some(entry) = attempts.get_mut(&self.client) {
            entry.in_flight = entry.in_flight.saturating_sub(1);
            if !self.succeeded {
                entry.failures += 1;
            }
        }
    }
}

impl Connections {
    pub(crate) fn new(
        mode: ServeMode,
        port: u16,
        access: Arc<Access>,
        token: Option<Arc<ServerToken>>,
        streams: Arc<Streams>,
    ) -> Connections {
        // Cookies are shared by every port of a host: name this server's by its port.
        let checks = Arc::new(SessionChecks::new(access.clone(), mode));
        Connections {
            mode,
            access,
            token,
            port,
            cookie: format!("kiln_session_{port}"),
            attempts: Mutex::default(),
            streams,
            checks,
        }
    }

    /// Whether the browser session with this cookie secret is still live (not ended,
    /// expired or revoked, by this process or another).
    pub(crate) async fn session_live(&self, secret: &str) -> bool {
        self.checks.live(secret).await
    }

    /// What answers whether a browser session lives, for the streams that ask it as they go.
    pub(crate) fn checks(&self) -> Arc<SessionChecks> {
        self.checks.clone()
    }

    /// A connect without a token, refused: what this server wants instead.
    fn token_needed(&self) -> HttpError {
        let message = match self.mode {
            ServeMode::Loopback => format!(
                "this server needs its token: open the link `kiln serve` printed when it started, \
                 or send the token in its file `loopback-{}.token` in Kiln's config directory",
                self.port
            ),
            ServeMode::SelfHosted => "this server needs an access token: create one with `kiln token create`".into(),
        };
        HttpError::new(TransportCode::TokenInvalid, message)
    }

    fn secret<'a>(&self, headers: &'a HeaderMap) -> Option<&'a str> {
        headers
            .get_all(COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == self.cookie)
            .map(|(_, value)| value)
    }

    fn set_cookie(&self, secret: &str, max_age: i64) -> String {
        format!("{}={secret}; HttpOnly; SameSite=Strict; Secure; Path=/; Max-Age={max_age}", self.cookie)
    }

    /// Counts a connect from `client` before anything of it is read, or says how many
    /// seconds it must wait: counting after the answer would let guesses sent together
    /// all pass the check before any of them failed.
    fn reserve(self: &Arc<Self>, client: Client) -> Result<Reservation, u64> {
        let mut attempts = self.attempts.lock().unwrap();
        attempts.retain(|_, a| a.in_flight > 0 || a.since.elapsed() < WINDOW);
        let entry = attempts.entry(client).or_insert(Attempts { since: Instant::now(), failures: 0, in_flight: 0 });
        if entry.since.elapsed() >= WINDOW {
            (entry.since, entry.failures) = (Instant::now(), 0);
        }
        if entry.failures + entry.in_flight >= MAX_FAILURES {
            return Err(WINDOW.saturating_sub(entry.since.elapsed()).as_secs().max(1));
        }
        if entry.in_flight >= MAX_IN_FLIGHT {
            return Err(1);
        }
        entry.in_flight += 1;
        Ok(Reservation { connections: self.clone(), client, succeeded: false })
    }
}

fn client(request_extensions: &axum::http::Extensions) -> Client {
    Client::of(request_extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip()))
}

/// Lets a request reach `/api/` only with a live connection (see the module doc).
pub(crate) async fn require(State(connections): State<Arc<Connections>>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if !path.starts_with("/api/") || path == "/api/connect" || path == "/api/disconnect" {
        return next.run(request).await;
    }
    let mut live = None;
    if let Some(secret) = connections.secret(request.headers()) {
        if connections.session_live(secret).await {
            live = Some(secret.to_string());
        }
    }
    let connected = live.is_some();
    if !connected {
        if path == "/api/state" {
            // The one thing an unconnected page may learn: it must connect, and how.
            let body = serde_json::json!({ "error": not_connected(), "mode": connections.mode });
            return (axum::http::StatusCode::UNAUTHORIZED, Json(body)).into_response();
        }
        return ErrorResponse(not_connected()).into_response();
    }
    request.extensions_mut().insert(Connected(connected));
    if let Some(secret) = live {
        request.extensions_mut().insert(Session(secret));
    }
    next.run(request).await
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ConnectArgs {
    token: Option<String>,
}

pub(crate) async fn connect(State(connections): State<Arc<Connections>>, request: Request) -> Response {
    let reservation = match connections.reserve(client(request.extensions())) {
        Ok(reservation) => reservation,
        Err(wait) => {
            let error = HttpError::new(
                TransportCode::RateLimited,
                format!("too many connects that failed or are under way: try again in {wait} s"),
            );
            return ([(RETRY_AFTER, wait.to_string())], ErrorResponse(error)).into_response();
        }
    };
    let body = match crate::read_body(request, crate::MAX_BODY).await {
        Ok(body) => body,
        Err(e) => return ErrorResponse(e).into_response(),
    };
    let args: ConnectArgs = if body.is_empty() {
        ConnectArgs::default()
    } else {
        match serde_json::from_slice(&body) {
            Ok(args) => args,
            Err(e) => {
                return ErrorResponse::from(ApiError::invalid(format!("the body is not `{{\"token\": …}}`: {e}")))
                    .into_response()
            }
        }
    };
    let proof = match args.token.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        Some(token) if connections.token.as_ref().is_some_and(|own| own.matches(token)) => Proof::ServerToken,
        Some(token) => Proof::AccessToken(token),
        None => {
            // No token is no guess: it does not count against the client.
            reservation.succeeded();
            return ErrorResponse(connections.token_needed()).into_response();
        }
    };
    match connections.access.connect(connections.mode, proof).await {
        Ok(connection) => {
            reservation.succeeded();
            let body = serde_json::json!({
                "connected": true,
                "mode": connections.mode,
                "expiresAt": crate::access::rfc3339(connection.expires_at),
            });
            ([(SET_COOKIE, connections.set_cookie(&connection.secret, connection.max_age()))], Json(body))
                .into_response()
        }
        Err(e) => {
            // Only a wrong token is a guess; a store error says nothing about the token.
            if e.code != TransportCode::TokenInvalid {
                reservation.succeeded();
            }
            ErrorResponse(e).into_response()
        }
    }
}

pub(crate) async fn disconnect(State(connections): State<Arc<Connections>>, headers: HeaderMap) -> Response {
    if let Some(secret) = connections.secret(&headers) {
        if let Err(e) = connections.access.disconnect(secret).await {
            return ErrorResponse(e).into_response();
        }
        connections.streams.session_ended();
    }
    ([(SET_COOKIE, connections.set_cookie("", 0))], Json(serde_json::json!({ "connected": false }))).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn connections() -> (tempfile::TempDir, Arc<Connections>) {
        let dir = tempfile::tempdir().unwrap();
        let access = Arc::new(Access::open(dir.path(), None).await.unwrap());
        (dir, Arc::new(Connections::new(ServeMode::SelfHosted, 4320, access, None, Arc::new(Streams::new()))))
    }

    #[test]
    fn an_ipv6_client_is_its_64_block() {
        let ip = |s: &str| Some(s.parse::<IpAddr>().unwrap());
        assert_eq!(Client::of(ip("2001:db8:1:2::1")), Client::of(ip("2001:db8:1:2:ffff:ffff:ffff:fffe")));
        assert_ne!(Client::of(ip("2001:db8:1:2::1")), Client::of(ip("2001:db8:1:3::1")));
        assert_eq!(Client::of(ip("::ffff:10.0.0.1")), Client::of(ip("10.0.0.1")));
        assert_ne!(Client::of(ip("10.0.0.1")), Client::of(ip("10.0.0.2")));
    }

    #[tokio::test]
    async fn connects_count_before_they_are_answered() {
        let (_dir, connections) = connections().await;
        let client = Client::of(Some("2001:db8::1".parse().unwrap()));
        let (a, b) = (connections.reserve(client).unwrap(), connections.reserve(client).unwrap());
        // Two in flight: a third waits, whatever becomes of the two.
        assert_eq!(connections.reserve(client).err(), Some(1));
        assert!(connections.reserve(Client::of(Some("2001:db8:0:1::1".parse().unwrap()))).is_ok(), "another /64");
        a.succeeded();
        drop(b);
        // One failure so far; four more fill the window.
        for _ in 0..4 {
            drop(connections.reserve(client).unwrap());
        }
        let wait = connections.reserve(client).err().expect("the limit after five failures");
        assert!((1..=60).contains(&wait), "{wait}");
    }
}
