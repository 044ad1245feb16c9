//! The gateway's body type and its own small answers (401, 403, 405, 502, 503): never
//! cached, since the same URL answers differently once the preview is up or entered.

use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Bytes;
use hyper::header::{HeaderName, HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use hyper::{Response, StatusCode};

pub(super) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// One body type for all answers: the application's and the bridge's streamed as they
/// arrive, files streamed from disk, the gateway's own pages in one piece.
pub(crate) type Body = UnsyncBoxBody<Bytes, BoxError>;

/// Says where an `/api/` answer came from, for the UI.
pub(super) const SOURCE: HeaderName = HeaderName::from_static("x-kiln-source");

pub(super) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).map_err(|never| match never {}).boxed_unsync()
}

pub(super) fn empty() -> Body {
    Empty::new().map_err(|never| match never {}).boxed_unsync()
}

pub(super) fn empty_response(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(empty());
    *response.status_mut() = status;
    response
}

/// A small HTML page; `refresh` reloads it every second (the preview is on its way).
/// The texts are the gateway's own, never a request's, so they need no escaping.
pub(super) fn page(status: StatusCode, title: &str, text: &str, refresh: bool) -> Response<Body> {
    let refresh = if refresh { r#"<meta http-equiv="refresh" content="1">"# } else { "" };
    let html = format!(
        "<!doctype html><meta charset=\"utf-8\">{refresh}<title>{title}</title>\
         <body style=\"font-family:system-ui,sans-serif;color:#555;padding:2em\"><p>{text}</p>\n"
    );
    answer(status, "text/html; charset=utf-8", full(html))
}

/// A small JSON answer marked with where it came from (`bridge-refused`, …).
pub(super) fn json(status: StatusCode, value: serde_json::Value, source: &'static str) -> Response<Body> {
    let mut response = answer(status, "application/json", full(value.to_string()));
    response.headers_mut().insert(SOURCE, HeaderValue::from_static(source));
    response
}

fn answer(status: StatusCode, content_type: &'static str, body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
