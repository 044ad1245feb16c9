//! Anthropic Messages (`POST /v1/messages`), as Claude Code speaks it: the streamed
//! event sequence, the plain message for `"stream": false`, and Anthropic's error body.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};

use crate::reply;
use crate::script::{ScriptedError, Step};
use crate::turn::{arguments_json, fragments, text_of, wants_stream, Turn};

pub fn answer(turn: &Turn, body: &Value) -> Response {
    if wants_stream(body) {
        reply::stream(frames(turn), request_id(turn.number))
    } else {
        reply::json(StatusCode::OK, &message(turn), request_id(turn.number))
    }
}

/// message_start, content_block_start, ping, content_block_delta × n,
/// content_block_stop, message_delta (stop reason, usage), message_stop.
fn frames(turn: &Turn) -> Vec<String> {
    let mut start = message(turn);
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    // The real API reports a token or so of output at the start and the total at the end.
    start["usage"]["output_tokens"] = json!(1);

    let (block, deltas) = match &turn.step {
        Step::Tool { name, arguments } => (
            json!({"type": "tool_use", "id": turn.call_id(), "name": name, "input": {}}),
            fragments(&arguments_json(arguments))
                .into_iter()
                .map(|piece| json!({"type": "input_json_delta", "partial_json": piece}))
                .collect::<Vec<_>>(),
        ),
        _ => (
            json!({"type": "text", "text": ""}),
            fragments(text_of(&turn.step))
                .into_iter()
                .map(|piece| json!({"type": "text_delta", "text": piece}))
                .collect(),
        ),
    };

    let mut frames = vec![
        reply::event("message_start", &json!({"type": "message_start", "message": start})),
        reply::event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        reply::event("ping", &json!({"type": "ping"})),
    ];
    for delta in deltas {
        frames.push(reply::event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ));
    }
    frames.push(reply::event("content_block_stop", &json!({"type": "content_block_stop", "index": 0})));
    frames.push(reply::event(
        "message_delta",
        &json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason(&turn.step), "stop_sequence": null},
            "usage": usage(turn),
        }),
    ));
    frames.push(reply::event("message_stop", &json!({"type": "message_stop"})));
    frames
}

/// The whole message, as `"stream": false` returns it.
fn message(turn: &Turn) -> Value {
    let content = match &turn.step {
        Step::Tool { name, arguments } => {
            json!([{"type": "tool_use", "id": turn.call_id(), "name": name, "input": arguments}])
        }
        step => json!([{"type": "text", "text": text_of(step)}]),
    };
    json!({
        "id": format!("msg_{}", turn.number),
        "type": "message",
        "role": "assistant",
        "model": turn.model,
        "content": content,
        "stop_reason": stop_reason(&turn.step),
        "stop_sequence": null,
        "usage": usage(turn),
    })
}

fn usage(turn: &Turn) -> Value {
    json!({
        "input_tokens": turn.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": turn.output_tokens,
    })
}

fn stop_reason(step: &Step) -> &'static str {
    match step {
        Step::Tool { .. } => "tool_use",
        _ => "end_turn",
    }
}

/// `{"type": "error", "error": {"type": ..., "message": ...}}` with the status.
pub fn error(error: &ScriptedError, number: usize) -> Response {
    let kind = error.kind.clone().unwrap_or_else(|| error_type(error.status).into());
    let body = json!({"type": "error", "error": {"type": kind, "message": error.message}});
    let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    reply::json(status, &body, request_id(number))
}

// Anthropic's documented error types per HTTP status.
fn error_type(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

/// `POST /v1/messages/count_tokens`: the same deterministic count, no step used.
pub fn count_tokens(input_tokens: u64) -> Response {
    reply::json(StatusCode::OK, &json!({"input_tokens": input_tokens}), ("request-id", "req_count".into()))
}

fn request_id(number: usize) -> (&'static str, String) {
    ("request-id", format!("req_{number}"))
}
