//! kiln-serve: the engine's API over HTTP. Each operation is `POST /api/<command>`
//! with its arguments as the JSON body; events stream from `GET /api/events` as
//! server-sent events that resume from `Last-Event-ID`, a terminal's output from
//! `GET /api/terminal_stream`; any other path serves the UI.
//! Every request passes the guard (Host, same-site changes, body size) and every
//! `/api/` call a connection check, and every answer, the guard's refusals included,
//! carries the security headers; see SECURITY.md for what each mode promises.
//! `transport` holds the connections, `streams` the event streams, `access` the tokens and
//! browser sessions, `server_token` a loopback server's own token.

pub mod access;
mod assets;
mod connection;
pub mod errors;
mod guard;
pub mod server_token;
mod session_checks;
mod streams;
mod terminal_stream;
mod transport;

use std::net::SocketAddr;
use std::sync::Arc;

use access::Access;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use errors::{HttpError, TransportCode};
use kiln_engine::types::ServeMode;
use kiln_engine::{ApiError, Engine, ErrorCode};
use serde::Deserialize;
use server_token::ServerToken;

pub use assets::{mime_for as assets_mime, Assets, DirAssets};

/// Request bodies larger than this are refused before they are read, unless the operation's
/// line in the engine's operation table sets its own limit.
pub const MAX_BODY: usize = 1024 * 1024;

/// The largest body a request to `path` may carry.
pub(crate) fn body_limit(path: &str) -> usize {
    path.strip_prefix("/api/").and_then(kiln_engine::api::body_limit).unwrap_or(MAX_BODY)
}

pub(crate) fn too_large(limit: usize) -> HttpError {
    HttpError::new(TransportCode::BodyTooLarge, format!("the request body is over the limit of {} KiB", limit / 1024))
}

/// Reads a body of at most `limit` bytes (a chunked one can only be measured as it arrives).
pub(crate) async fn read_body(request: axum::extract::Request, limit: usize) -> Result<axum::body::Bytes, HttpError> {
    axum::body::to_bytes(request.into_body(), limit).await.map_err(|_| too_large(limit))
}

#[derive(Clone)]
struct App {
    engine: Arc<Engine>,
    assets: Arc<dyn Assets>,
    connections: Arc<connection::Connections>,
    streams: Arc<streams::Streams>,
}

/// How a server is reached and whom it trusts.
pub struct Serving {
    pub port: u16,
    pub mode: ServeMode,
    pub access: Arc<Access>,
    /// A loopback server's own token (`server_token`); `None` admits access tokens only.
    pub token: Option<Arc<ServerToken>>,
}

/// A server that is listening, as its operator is told.
pub struct Ready<'a> {
    pub addr: SocketAddr,
    /// A loopback server's own token, written to its file.
    pub token: Option<&'a ServerToken>,
}

/// The router for a server listening on `serving.port`.
pub fn router(engine: Arc<Engine>, assets: Arc<dyn Assets>, serving: Serving) -> Router {
    router_with(engine, assets, serving, Arc::new(streams::Streams::new()))
}

/// `router`, its event streams ended through `streams`.
fn router_with(
    engine: Arc<Engine>,
    assets: Arc<dyn Assets>,
    serving: Serving,
    streams: Arc<streams::Streams>,
) -> Router {
    let connections = Arc::new(connection::Connections::new(
        serving.mode,
        serving.port,
        serving.access,
        serving.token,
        streams.clone(),
    ));
    let app = App { engine, assets, connections: connections.clone(), streams };
    let api = Router::new()
        .route("/api/connect", post(connection::connect))
        .route("/api/disconnect", post(connection::disconnect))
        .with_state(connections.clone());
    Router::new()
        .route("/api/events", get(events))
        .route("/api/state", get(state))
        .route("/api/terminal_stream", get(terminal_stream::terminal_stream))
        .route("/api/{command}", post(call))
        .fallback(get(asset))
        .with_state(app)
        .merge(api)
        .layer(axum::middleware::from_fn_with_state(connections, connection::require))
        .layer(axum::middleware::from_fn_with_state(guard::Guard::new(serving.mode, serving.port), guard::check))
        // Outermost (the last layer added), so the guard's refusals carry them too.
        .layer(axum::middleware::map_response(security_headers))
}

/// What the page may load and who may frame it: the same policy as the desktop
/// webview's, with `'self'` in place of the IPC origin. Frames only from the preview
/// gateways, which listen on 127.0.0.1 (one port per running preview). Images also from
/// `data:`: the preview's screenshots arrive as base64 through the API (`get_screenshot`).
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; \
     img-src 'self' data:; frame-src http://127.0.0.1:*; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Headers on every answer, refusals included: no framing, no sniffing, no referrer
/// leaking a session's URL, and nothing from the API kept in a cache.
async fn security_headers(mut response: Response) -> Response {
    use axum::http::header::{self, HeaderValue};
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert("cross-origin-opener-policy", HeaderValue::from_static("same-origin"));
    headers.insert("cross-origin-resource-policy", HeaderValue::from_static("same-origin"));
    let is_asset = headers.get(header::CONTENT_TYPE).is_some_and(|t| !t.as_bytes().starts_with(b"application/json"));
    if !is_asset {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// Binds `addr` and serves until the process ends. A loopback server binds loopback
/// addresses only, and makes its own token, written to its file in `config_dir` (see
/// `server_token`). `on_ready` gets the bound address and that token.
pub async fn serve(
    engine: Arc<Engine>,
    assets: Arc<dyn Assets>,
    addr: SocketAddr,
    mode: ServeMode,
    access: Arc<Access>,
    config_dir: std::path::PathBuf,
    on_ready: impl FnOnce(Ready<'_>),
) -> std::io::Result<()> {
    if mode == ServeMode::Loopback && !addr.ip().is_loopback() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "a loopback server binds loopback addresses only (127.0.0.1 or ::1); another address runs self-hosted",
        ));
    }
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let token = match mode {
        ServeMode::Loopback => {
            let mut token = ServerToken::new();
            token.write(&config_dir, bound.port()).map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!("could not write the server's token in {}: {e}", config_dir.display()),
                )
            })?;
            Some(Arc::new(token))
        }
        ServeMode::SelfHosted => None,
    };
    on_ready(Ready { addr: bound, token: token.as_deref() });
    let streams = Arc::new(streams::Streams::new());
    let serving = Serving { port: bound.port(), mode, access, token };
    let app = router_with(engine.clone(), assets, serving, streams.clone());
    transport::run(listener, app, streams, stop_signal()).await;
    // Turns and setups run in process groups of their own: stop them with the server.
    engine.shutdown().await;
    Ok(())
}

/// Resolves on SIGINT or SIGTERM.
async fn stop_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

/// An error as an HTTP response: its code's status and `{"error": {code, message}}`.
pub struct ErrorResponse(pub HttpError);

impl From<ApiError> for ErrorResponse {
    fn from(error: ApiError) -> Self {
        ErrorResponse(error.into())
    }
}

impl From<HttpError> for ErrorResponse {
    fn from(error: HttpError) -> Self {
        ErrorResponse(error)
    }
}

impl IntoResponse for ErrorResponse {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.0.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, Json(serde_json::json!({ "error": self.0 }))).into_response()
    }
}

async fn call(
    State(app): State<App>,
    command: Result<Path<String>, axum::extract::rejection::PathRejection>,
    connected: Option<axum::Extension<connection::Connected>>,
    request: axum::extract::Request,
) -> Response {
    let Ok(Path(command)) = command else {
        return ErrorResponse::from(ApiError::new(ErrorCode::UnknownCommand, "that is not a command name"))
            .into_response();
    };
    if command == "get_state" {
        return state(State(app), connected).await;
    }
    let body = match read_body(request, body_limit(&format!("/api/{command}"))).await {
        Ok(body) => body,
        Err(e) => return ErrorResponse(e).into_response(),
    };
    let args = if body.is_empty() {
        serde_json::Value::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                return ErrorResponse::from(ApiError::invalid(format!("the body is not JSON: {e}"))).into_response()
            }
        }
    };
    match app.engine.dispatch(&command, args).await {
        Ok(value) => Json(value).into_response(),
        Err(e) => ErrorResponse::from(e).into_response(),
    }
}

async fn state(State(app): State<App>, connected: Option<axum::Extension<connection::Connected>>) -> Response {
    match app.engine.dispatch("get_state", serde_json::Value::Null).await {
        Ok(mut value) => {
            value["connected"] = serde_json::Value::Bool(connected.is_some_and(|c| c.0 .0));
            Json(value).into_response()
        }
        Err(e) => ErrorResponse::from(e).into_response(),
    }
}

#[derive(Deserialize)]
struct EventsQuery {
    since: Option<u64>,
}

async fn events(
    State(app): State<App>,
    connected: Option<axum::Extension<connection::Session>>,
    headers: HeaderMap,
    Query(query): Query<EventsQuery>,
) -> Response {
    // `require` lets no one here without a live browser session, and says which.
    let Some(axum::Extension(connection::Session(secret))) = connected else {
        return ErrorResponse(access::not_connected()).into_response();
    };
    let last_id = headers.get("last-event-id").and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    let subscription = app.engine.subscribe(last_id.or(query.since));
    Sse::new(app.streams.watch(app.connections.checks(), secret, subscription))
        .keep_alive(KeepAlive::default())
        .into_response()
}

async fn asset(State(app): State<App>, uri: axum::http::Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    let path = if path.is_empty() { "index.html" } else { path };
    match app.assets.get(path).or_else(|| app.assets.get("index.html").filter(|_| !path.contains('.'))) {
        Some((bytes, mime)) => ([(axum::http::header::CONTENT_TYPE, mime)], bytes).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
