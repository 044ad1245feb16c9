//! OpenAI Responses (`POST /v1/responses`), as Codex speaks it: the streamed event
//! sequence ending in `response.completed` with usage, the plain response object for
//! `"stream": false`, and OpenAI's error body.

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
        reply::stream(frames(turn), request_id)
    } else {
        reply::json(StatusCode::OK, &response(turn, "completed", vec![item(turn, "completed")]), request_id)
    }
}

pub fn error(error: &ScriptedError, number: usize) -> Response {
    openai_error::response(error, number)
}

/// created, in_progress, output_item.added, then per kind
/// (text: content_part.added, output_text.delta × n, output_text.done, content_part.done;
/// tool: function_call_arguments.delta × n, function_call_arguments.done),
/// output_item.done, completed. Every event carries a rising `sequence_number`.
fn frames(turn: &Turn) -> Vec<String> {
    let mut events: Vec<(&str, Value)> = vec![
        ("response.created", json!({"response": response(turn, "in_progress", vec![])})),
        ("response.in_progress", json!({"response": response(turn, "in_progress", vec![])})),
        ("response.output_item.added", json!({"output_index": 0, "item": item(turn, "in_progress")})),
    ];
    let item_id = item_id(turn);
    match &turn.step {
        Step::Tool { name, arguments } => {
            let arguments = arguments_json(arguments);
            for piece in fragments(&arguments) {
                events.push((
                    "response.function_call_arguments.delta",
                    json!({"item_id": item_id, "output_index": 0, "delta": piece}),
                ));
            }
            events.push((
                "response.function_call_arguments.done",
                json!({"item_id": item_id, "output_index": 0, "name": name, "arguments": arguments}),
            ));
        }
        step => {
            let text = text_of(step);
            let at = json!({"item_id": item_id, "output_index": 0, "content_index": 0});
            events.push(("response.content_part.added", with(&at, json!({"part": output_text("")}))));
            for piece in fragments(text) {
                events.push(("response.output_text.delta", with(&at, json!({"delta": piece, "logprobs": []}))));
            }
            events.push(("response.output_text.done", with(&at, json!({"text": text, "logprobs": []}))));
            events.push(("response.content_part.done", with(&at, json!({"part": output_text(text)}))));
        }
    }
    events.push(("response.output_item.done", json!({"output_index": 0, "item": item(turn, "completed")})));
    events
        .push(("response.completed", json!({"response": response(turn, "completed", vec![item(turn, "completed")])})));

    events
        .into_iter()
        .enumerate()
        .map(|(sequence, (kind, mut data))| {
            // Every event names its kind and position, then carries its own fields.
            let mut ordered = json!({"type": kind, "sequence_number": sequence});
            if let (Some(target), Some(fields)) = (ordered.as_object_mut(), data.as_object_mut()) {
                target.append(fields);
            }
            reply::event(kind, &ordered)
        })
        .collect()
}

/// The response object; `usage` only once it is done, as the real API reports it.
fn response(turn: &Turn, status: &str, output: Vec<Value>) -> Value {
    let usage = if status == "completed" {
        json!({
            "input_tokens": turn.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": turn.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": turn.input_tokens + turn.output_tokens,
        })
    } else {
        Value::Null
    };
    json!({
        "id": format!("resp_{}", turn.number),
        "object": "response",
        "created_at": turn.created,
        "status": status,
        "error": null,
        "incomplete_details": null,
        "model": turn.model,
        "output": output,
        "parallel_tool_calls": true,
        "previous_response_id": null,
        "usage": usage,
    })
}

/// The single output item: a `function_call` for a tool step, else an assistant `message`.
fn item(turn: &Turn, status: &str) -> Value {
    let done = status == "completed";
    match &turn.step {
        Step::Tool { name, arguments } => json!({
            "type": "function_call",
            "id": item_id(turn),
            "call_id": turn.call_id(),
            "name": name,
            "arguments": if done { arguments_json(arguments) } else { String::new() },
            "status": status,
        }),
        step => json!({
            "type": "message",
            "id": item_id(turn),
            "role": "assistant",
            "status": status,
            "content": if done { json!([output_text(text_of(step))]) } else { json!([]) },
        }),
    }
}

fn item_id(turn: &Turn) -> String {
    match turn.step {
        Step::Tool { .. } => format!("fc_{}", turn.number),
        _ => format!("msg_{}", turn.number),
    }
}

fn output_text(text: &str) -> Value {
    json!({"type": "output_text", "text": text, "annotations": []})
}

fn with(base: &Value, extra: Value) -> Value {
    let mut merged = base.clone();
    if let (Some(target), Value::Object(mut fields)) = (merged.as_object_mut(), extra) {
        target.append(&mut fields);
    }
    merged
}
