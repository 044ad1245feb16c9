//! One model request being answered: its step, the ids and token counts every
//! protocol reports for it, and how text is cut into stream fragments.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::script::{Step, EXHAUSTED};

/// Output tokens reported for every answer, so usage assertions are exact.
pub const OUTPUT_TOKENS: u64 = 10;

/// How many fragments streamed text and arguments are cut into: more than one,
/// so clients that reassemble deltas are actually exercised.
const FRAGMENTS: usize = 3;

pub(crate) struct Turn {
    /// 1-based position of this request among model requests; ids derive from it
    /// so a test knows them in advance (`call_1` is the first step's call).
    pub number: usize,
    pub step: Step,
    pub model: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub created: u64,
}

impl Turn {
    pub fn new(number: usize, step: Step, body: &Value, body_len: usize) -> Self {
        let model = body.get("model").and_then(Value::as_str).unwrap_or("kiln-scripted").to_owned();
        let created = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default();
        Turn { number, step, model, input_tokens: input_tokens(body_len), output_tokens: OUTPUT_TOKENS, created }
    }

    pub fn call_id(&self) -> String {
        format!("call_{}", self.number)
    }
}

/// Deterministic stand-in for a tokenizer: a token per four bytes of request body.
pub fn input_tokens(body_len: usize) -> u64 {
    (body_len / 4) as u64
}

/// The tool arguments as the JSON text every protocol carries.
pub fn arguments_json(arguments: &Value) -> String {
    serde_json::to_string(arguments).unwrap_or_else(|_| "{}".into())
}

/// `text` cut into up to three pieces on character boundaries; never empty pieces.
pub fn fragments(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let size = chars.len().div_ceil(FRAGMENTS);
    chars.chunks(size).map(|piece| piece.iter().collect()).collect()
}

/// Whether the client asked for server-sent events.
pub fn wants_stream(body: &Value) -> bool {
    body.get("stream").and_then(Value::as_bool).unwrap_or(false)
}

/// The answer text of a non-tool step; the exhausted-script text stands in for a
/// missing step.
pub fn text_of(step: &Step) -> &str {
    match step {
        Step::Text(text) => text,
        _ => EXHAUSTED,
    }
}
