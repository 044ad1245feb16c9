//! OpenAI's error body, shared by Responses and Chat Completions:
//! `{"error": {"message", "type", "param", "code"}}` with the step's status.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};

use crate::reply;
use crate::script::ScriptedError;

pub fn response(error: &ScriptedError, number: usize) -> Response {
    let (kind, code) = defaults(error.status);
    let kind = error.kind.clone().unwrap_or_else(|| kind.into());
    let code = error.code.clone().map(Value::String).unwrap_or_else(|| code.map_or(Value::Null, |c| json!(c)));
    let body = json!({"error": {"message": error.message, "type": kind, "param": null, "code": code}});
    let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    reply::json(status, &body, request_id(number))
}

// The `type`/`code` OpenAI sends for each status; clients branch on `code`.
fn defaults(status: u16) -> (&'static str, Option<&'static str>) {
    match status {
        401 => ("invalid_request_error", Some("invalid_api_key")),
        403 => ("invalid_request_error", Some("unsupported_country_region_territory")),
        404 => ("invalid_request_error", Some("model_not_found")),
        429 => ("requests", Some("rate_limit_exceeded")),
        500..=599 => ("server_error", None),
        _ => ("invalid_request_error", None),
    }
}

pub fn request_id(number: usize) -> (&'static str, String) {
    ("x-request-id", format!("req_{number}"))
}
