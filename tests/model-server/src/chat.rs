//! OpenAI Chat Completions (`POST /v1/chat/completions`), as generic OpenAI-compatible
//! clients (and Kiln's own tool loop) speak it: `chat.completion.chunk` frames with
//! tool-call arguments split over several chunks, then `data: [DONE]`.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};

use crate::openai_error;
use crate::reply;
use crate::script::{ScriptedError, Step};
use crate::turn::{arguments_json, fragments, text_of, wants_stream, Turn};

pub fn answer(turn: &Turn, body: &Value) -> Response {
    let request_id = openai_error::request_id(turn.number);
    if wants_stream(body) {
        reply::stream(frames(turn, includes_usage(body)), request_id)
    } else {
        reply::json(StatusCode::OK, &completion(turn), request_id)
    }
}

pub fn error(error: &ScriptedError, number: usize) -> Response {
    openai_error::response(error, number)
}

// The real API sends a usage chunk only when asked to, via `stream_options`.
fn includes_usage(body: &Value) -> bool {
    body.pointer("/stream_options/include_usage").and_then(Value::as_bool).unwrap_or(false)
}

/// A first chunk with the role (and, for a tool, the call's id and name), one chunk
/// per fragment, a chunk with `finish_reason`, the usage chunk if asked for, `[DONE]`.
fn frames(turn: &Turn, with_usage: bool) -> Vec<String> {
    let mut deltas = Vec::new();
    match &turn.step {
        Step::Tool { name, arguments } => {
            deltas.push(json!({"role": "assistant", "content": null, "tool_calls": [{
                "index": 0, "id": turn.call_id(), "type": "function",
                "function": {"name": name, "arguments": ""},
            }]}));
            for piece in fragments(&arguments_json(arguments)) {
                deltas.push(json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}));
            }
        }
        step => {
            deltas.push(json!({"role": "assistant", "content": "", "refusal": null}));
            for piece in fragments(text_of(step)) {
                deltas.push(json!({"content": piece}));
            }
        }
    }
    let mut chunks: Vec<Value> = deltas.into_iter().map(|delta| chunk(turn, delta, Value::Null)).collect();
    chunks.push(chunk(turn, json!({}), json!(finish_reason(&turn.step))));
    if with_usage {
        // Asked-for usage comes as `null` on every chunk, then in a last chunk without choices.
        for chunk in &mut chunks {
            chunk["usage"] = Value::Null;
        }
        let mut last = chunk(turn, json!({}), Value::Null);
        last["choices"] = json!([]);
        last["usage"] = usage(turn);
        chunks.push(last);
    }
    let mut frames: Vec<String> = chunks.iter().map(|c| reply::frame(None, &c.to_string())).collect();
    frames.push(reply::frame(None, "[DONE]"));
    frames
}

fn chunk(turn: &Turn, delta: Value, finish_reason: Value) -> Value {
    json!({
        "id": format!("chatcmpl-{}", turn.number),
        "object": "chat.completion.chunk",
        "created": turn.created,
        "model": turn.model,
        "system_fingerprint": null,
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}],
    })
}

/// The whole completion, as `"stream": false` returns it.
fn completion(turn: &Turn) -> Value {
    let message = match &turn.step {
        Step::Tool { name, arguments } => json!({
            "role": "assistant", "content": null, "refusal": null,
            "tool_calls": [{"id": turn.call_id(), "type": "function",
                "function": {"name": name, "arguments": arguments_json(arguments)}}],
        }),
        step => json!({"role": "assistant", "content": text_of(step), "refusal": null}),
    };
    json!({
        "id": format!("chatcmpl-{}", turn.number),
        "object": "chat.completion",
        "created": turn.created,
        "model": turn.model,
        "system_fingerprint": null,
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason(&turn.step)}],
        "usage": usage(turn),
    })
}

fn usage(turn: &Turn) -> Value {
    json!({
        "prompt_tokens": turn.input_tokens,
        "completion_tokens": turn.output_tokens,
        "total_tokens": turn.input_tokens + turn.output_tokens,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    })
}

fn finish_reason(step: &Step) -> &'static str {
    match step {
        Step::Tool { .. } => "tool_calls",
        _ => "stop",
    }
}
