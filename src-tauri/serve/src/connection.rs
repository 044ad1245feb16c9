//! Browser connections to `kiln serve`. `POST /api/connect` opens one (self-hosted
//! needs an access token, loopback none) and sets an `HttpOnly; SameSite=Strict;
//! Secure` cookie; every other `/api/` call needs it, except that a loopback page may
//! read the state unconnected, which is how it learns it must connect. Failed connects
//! are counted per client address, and five within a minute close the door until the
//! minute is over, so tokens cannot be guessed at speed.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::{COOKIE, RETRY_AFTER, SET_COOKIE};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use kiln_engine::access::{not_connected, Access};
use kiln_engine::types::ServeMode;
use kiln_engine::{ApiError, ErrorCode};
use serde::Deserialize;

use crate::ErrorResponse;

/// Failed connects one address may make per window.
const MAX_FAILURES: u32 = 5;
const WINDOW: Duration = Duration::from_secs(60);

pub struct Connections {
    pub mode: ServeMode,
    access: Arc<Access>,
    cookie: String,
    failures: Mutex<HashMap<Option<IpAddr>, (Instant, u32)>>,
}

/// Whether the request carries a live connection; handlers read it to report `connected`.
#[derive(Clone, Copy)]
pub struct Connected(pub bool);

impl Connections {
    pub fn new(mode: ServeMode, port: u16, access: Arc<Access>) -> Connections {
        // Cookies are shared by every port of a host: name this server's by its port.
        Connections { mode, access, cookie: format!("kiln_session_{port}"), failures: Mutex::default() }
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

    /// Seconds until `client` may try again, when it has failed too often.
    fn blocked(&self, client: Option<IpAddr>) -> Option<u64> {
        let mut failures = self.failures.lock().unwrap();
        failures.retain(|_, (start, _)| start.elapsed() < WINDOW);
        match failures.get(&client) {
            Some((start, count)) if *count >= MAX_FAILURES => Some((WINDOW - start.elapsed()).as_secs().max(1)),
            _ => None,
        }
    }

    fn failed(&self, client: Option<IpAddr>) {
        let mut failures = self.failures.lock().unwrap();
        let entry = failures.entry(client).or_insert((Instant::now(), 0));
        entry.1 += 1;
    }
}

fn client(request_extensions: &axum::http::Extensions) -> Option<IpAddr> {
    request_extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip())
}

/// Lets a request reach `/api/` only with a live connection (see the module doc).
pub async fn require(State(connections): State<Arc<Connections>>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if !path.starts_with("/api/") || path == "/api/connect" || path == "/api/disconnect" {
        return next.run(request).await;
    }
    let connected = match connections.secret(request.headers()) {
        Some(secret) => connections.access.check(connections.mode, secret).await.is_ok(),
        None => false,
    };
    let open_to_all = connections.mode == ServeMode::Loopback && (path == "/api/state" || path == "/api/get_state");
    if !connected && !open_to_all {
        if path == "/api/state" {
            // The one thing an unconnected page may learn: it must connect, and how.
            let body = serde_json::json!({ "error": not_connected(), "mode": connections.mode });
            return (axum::http::StatusCode::UNAUTHORIZED, Json(body)).into_response();
        }
        return ErrorResponse(not_connected()).into_response();
    }
    request.extensions_mut().insert(Connected(connected));
    next.run(request).await
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ConnectArgs {
    token: Option<String>,
}

pub async fn connect(State(connections): State<Arc<Connections>>, request: Request) -> Response {
    let client = client(request.extensions());
    if let Some(wait) = connections.blocked(client) {
        let error = ApiError::new(ErrorCode::RateLimited, format!("too many failed connects: try again in {wait} s"));
        return ([(RETRY_AFTER, wait.to_string())], ErrorResponse(error)).into_response();
    }
    let body = match crate::read_body(request, crate::MAX_BODY).await {
        Ok(body) => body,
        Err(e) => return ErrorResponse(e).into_response(),
    };
    let args: ConnectArgs = if body.is_empty() {
        ConnectArgs::default()
    } else {
        match serde_json::from_slice(&body) {
            Ok(args) => args,
            Err(e) => return ErrorResponse(ApiError::invalid(format!("the body is not `{{\"token\": …}}`: {e}"))).into_response(),
        }
    };
    match connections.access.connect(connections.mode, args.token.as_deref()).await {
        Ok(connection) => {
            let body = serde_json::json!({
                "connected": true,
                "mode": connections.mode,
                "expiresAt": kiln_engine::access::rfc3339(connection.expires_at),
            });
            ([(SET_COOKIE, connections.set_cookie(&connection.secret, connection.max_age()))], Json(body)).into_response()
        }
        Err(e) => {
            if e.code == ErrorCode::TokenInvalid {
                connections.failed(client);
            }
            ErrorResponse(e).into_response()
        }
    }
}

pub async fn disconnect(State(connections): State<Arc<Connections>>, headers: HeaderMap) -> Response {
    if let Some(secret) = connections.secret(&headers) {
        if let Err(e) = connections.access.disconnect(secret).await {
            return ErrorResponse(e).into_response();
        }
    }
    ([(SET_COOKIE, connections.set_cookie("", 0))], Json(serde_json::json!({ "connected": false }))).into_response()
}
