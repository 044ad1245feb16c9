//! How answers go out: server-sent event framing, streamed bodies and plain JSON replies.

use std::convert::Infallible;

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// One frame: `event: NAME` (when named) and `data: JSON`, then a blank line.
/// Anthropic's SDK dispatches on the `event:` line, so it must be there for it;
/// Chat Completions frames carry `data:` only.
pub fn frame(event: Option<&str>, data: &str) -> String {
    match event {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// A named frame whose data is `value`.
pub fn event(name: &str, value: &Value) -> String {
    frame(Some(name), &value.to_string())
}

/// The frames as a streamed body, each its own chunk, so clients see deltas
/// arrive separately rather than as one buffered document.
pub fn stream(frames: Vec<String>, request_id: (&'static str, String)) -> Response {
    let chunks = futures_util::stream::iter(frames.into_iter().map(Ok::<_, Infallible>));
    let mut response = Response::new(Body::from_stream(chunks));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream; charset=utf-8"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    insert_request_id(&mut response, request_id);
    response
}

/// A plain JSON answer with `status`.
pub fn json(status: StatusCode, value: &Value, request_id: (&'static str, String)) -> Response {
    let mut response = (status, axum::Json(value.clone())).into_response();
    insert_request_id(&mut response, request_id);
    response
}

// Providers name their request-id header differently (`request-id` for Anthropic,
// `x-request-id` for OpenAI); clients log it, some surface it in errors.
fn insert_request_id(response: &mut Response, (name, id): (&'static str, String)) {
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(name, value);
    }
}
