//! Reading one Chat Completions answer: the server-sent events of a streamed reply,
//! put back together into the reply's text, reasoning, tool calls (whose id and name
//! come in a call's first fragment and whose arguments are split over many, matched
//! by `index`), finish reason and usage. A server that answers with the whole
//! completion instead of a stream is read too.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::drivers::events::{count, Usage};

/// One model reply, whole.
#[derive(Debug, Default)]
pub(super) struct Reply {
    pub text: String,
    /// Reasoning some servers stream beside the answer (`reasoning_content`, `reasoning`).
    pub thought: String,
    pub calls: Vec<Call>,
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
}

#[derive(Debug, Default, Clone)]
pub(super) struct Call {
    pub id: String,
    pub name: String,
    /// JSON text, as the model wrote it.
    pub arguments: String,
}

/// Accumulates the chunks of a streamed reply.
#[derive(Debug, Default)]
pub(super) struct Assembly {
    reply: Reply,
    calls: BTreeMap<u64, Call>,
}

impl Assembly {
    /// The reply's text so far.
    pub(super) fn text(&self) -> &str {
        &self.reply.text
    }

    /// Takes in one `chat.completion.chunk`; an error object sent mid-stream fails it.
    pub(super) fn add(&mut self, chunk: &Value) -> Result<(), String> {
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            return Err(error_message(error).unwrap_or_else(|| error.to_string()));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.reply.usage = Some(usage_of(usage));
        }
        let Some(choice) = chunk["choices"].get(0) else { return Ok(()) };
        let delta = &choice["delta"];
        if let Some(text) = delta["content"].as_str() {
            self.reply.text.push_str(text);
        }
        if let Some(thought) = delta["reasoning_content"].as_str().or(delta["reasoning"].as_str()) {
            self.reply.thought.push_str(thought);
        }
        for (position, fragment) in delta["tool_calls"].as_array().into_iter().flatten().enumerate() {
            // Every server sends `index`; the position is only a fallback.
            let index = fragment["index"].as_u64().unwrap_or(position as u64);
            let call = self.calls.entry(index).or_default();
            if let Some(id) = fragment["id"].as_str().filter(|id| !id.is_empty()) {
                call.id = id.to_string();
            }
            if let Some(name) = fragment["function"]["name"].as_str().filter(|n| !n.is_empty()) {
                call.name = name.to_string();
            }
            if let Some(arguments) = fragment["function"]["arguments"].as_str() {
                call.arguments.push_str(arguments);
            }
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.reply.finish_reason = Some(reason.to_string());
        }
        Ok(())
    }

    pub(super) fn finish(mut self) -> Reply {
        self.reply.calls = self.calls.into_values().collect();
        self.reply
    }
}

/// A non-streamed `chat.completion`, for servers that ignore `stream: true`.
pub(super) fn whole(completion: &Value) -> Result<Reply, String> {
    if let Some(error) = completion.get("error").filter(|e| !e.is_null()) {
        return Err(error_message(error).unwrap_or_else(|| error.to_string()));
    }
    let choice = &completion["choices"][0];
    let message = &choice["message"];
    let calls = message["tool_calls"].as_array().into_iter().flatten();
    Ok(Reply {
        text: message["content"].as_str().unwrap_or_default().to_string(),
        thought: message["reasoning_content"]
            .as_str()
            .or(message["reasoning"].as_str())
            .unwrap_or_default()
            .to_string(),
        calls: calls
            .map(|call| Call {
                id: call["id"].as_str().unwrap_or_default().to_string(),
                name: call["function"]["name"].as_str().unwrap_or_default().to_string(),
                arguments: match &call["function"]["arguments"] {
                    Value::String(text) => text.clone(),
                    // Some servers send the arguments as an object already.
                    other => other.to_string(),
                },
            })
            .collect(),
        finish_reason: choice["finish_reason"].as_str().map(String::from),
        usage: completion.get("usage").filter(|u| u.is_object()).map(usage_of),
    })
}

/// Chat Completions usage in Kiln's terms: input without the cached prompt tokens, as
/// `Usage` counts it. Chat Completions never reports a cost.
fn usage_of(usage: &Value) -> Usage {
    let cached = usage["prompt_tokens_details"]["cached_tokens"].as_u64().unwrap_or(0);
    Usage {
        input_tokens: count(usage, "prompt_tokens").saturating_sub(cached),
        output_tokens: count(usage, "completion_tokens"),
        cache_read_tokens: cached,
        cache_write_tokens: 0,
        cost_usd: None,
    }
}

/// The message of an OpenAI-style error: `{"message": …}`, or a bare string (Ollama).
pub(super) fn error_message(error: &Value) -> Option<String> {
    error["message"].as_str().or(error.as_str()).map(String::from)
}

/// Splits server-sent events out of the bytes as they arrive. Only `data:` lines
/// matter here; comments (`: keep-alive`), `event:` and `id:` lines are skipped.
#[derive(Debug, Default)]
pub(super) struct EventReader {
    pending: Vec<u8>,
    data: Vec<String>,
}

impl EventReader {
    /// The data of every event completed by `bytes`.
    pub(super) fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            self.line(line.trim_end_matches(['\n', '\r']), &mut events);
        }
        events
    }

    /// The last event, when the stream ends without a blank line after it.
    pub(super) fn end(mut self) -> Vec<String> {
        let mut events = Vec::new();
        let rest = String::from_utf8_lossy(&std::mem::take(&mut self.pending)).into_owned();
        self.line(rest.trim_end_matches(['\n', '\r']), &mut events);
        self.line("", &mut events);
        events
    }

    fn line(&mut self, line: &str, events: &mut Vec<String>) {
        if line.is_empty() {
            if !self.data.is_empty() {
                events.push(std::mem::take(&mut self.data).join("\n"));
            }
        } else if let Some(data) = line.strip_prefix("data:") {
            self.data.push(data.strip_prefix(' ').unwrap_or(data).to_string());
        }
    }
}
