//! Routing: every request is recorded, then model requests consume the next step and
//! are answered in the protocol their path names; `GET /v1/models` lists the models (no
//! step is used); anything else gets a 404.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::Response;
use axum::Router;
use kiln_double_support::{lock, RecordedRequest};
use serde_json::{json, Value};

use crate::script::{ScriptedError, Step, EXHAUSTED};
use crate::turn::{input_tokens, Turn};
use crate::{anthropic, chat, reply, responses};

/// Agent CLIs resend the whole conversation each turn; axum's 2 MB default would
/// cut long sessions off, so allow far more.
const MAX_BODY: usize = 64 * 1024 * 1024;

#[derive(Default)]
pub(crate) struct Shared {
    script: Mutex<VecDeque<Step>>,
    /// Requests answered beside the script (`crate::Aside`).
    asides: Vec<crate::Aside>,
    /// Model requests answered so far; the next one is number `answered + 1`.
    answered: Mutex<usize>,
    pub requests: Mutex<Vec<RecordedRequest>>,
    /// What `GET /v1/models` lists; `MODELS` while empty.
    pub models: Mutex<Vec<String>>,
}

impl Shared {
    pub fn new(script: Vec<Step>, asides: Vec<crate::Aside>) -> Self {
        Shared { script: Mutex::new(script.into()), asides, ..Default::default() }
    }

    /// The step for a model request with this body: an aside's when the body holds its
    /// marker, else the script's next.
    fn next_step(&self, body: &[u8]) -> (usize, Step) {
        let mut answered = lock(&self.answered);
        *answered += 1;
        let aside = self.asides.iter().find(|a| contains(body, a.marker.as_bytes()));
        let step = match aside {
            Some(aside) => aside.step.clone(),
            None => lock(&self.script).pop_front().unwrap_or_else(|| Step::text(EXHAUSTED)),
        };
        (*answered, step)
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

pub(crate) fn recorded(shared: &Shared) -> Vec<RecordedRequest> {
    lock(&shared.requests).clone()
}

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    // One fallback handler sees every method and path, so nothing escapes recording.
    Router::new().fallback(handle).layer(DefaultBodyLimit::max(MAX_BODY)).with_state(shared)
}

#[derive(Clone, Copy)]
enum Protocol {
    Anthropic,
    Responses,
    Chat,
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let request = RecordedRequest::new(&method, &uri, &headers, &body);
    let json = request.body.clone();
    lock(&shared.requests).push(request);

    let protocol = match (method.as_str(), uri.path()) {
        ("POST", "/v1/messages/count_tokens") => return anthropic::count_tokens(input_tokens(body.len())),
        ("GET", "/v1/models") => return models(&shared),
        ("POST", "/v1/messages") => Protocol::Anthropic,
        ("POST", "/v1/responses") => Protocol::Responses,
        ("POST", "/v1/chat/completions") => Protocol::Chat,
        _ => return not_found(&method, &uri),
    };
    // A body that is not a JSON object is the client's bug; say so without using a step.
    if !json.is_object() {
        let error = ScriptedError {
            status: 400,
            message: "request body is not a JSON object".into(),
            kind: None,
            code: None,
            retry_after: None,
        };
        return error_response(protocol, &error, 0);
    }

    let (number, step) = shared.next_step(&body);
    match step {
        Step::Error(error) => error_response(protocol, &error, number),
        step => {
            let turn = Turn::new(number, step, &json, body.len());
            match protocol {
                Protocol::Anthropic => anthropic::answer(&turn, &json),
                Protocol::Responses => responses::answer(&turn, &json),
                Protocol::Chat => chat::answer(&turn, &json),
            }
        }
    }
}

fn error_response(protocol: Protocol, error: &ScriptedError, number: usize) -> Response {
    let mut response = match protocol {
        Protocol::Anthropic => anthropic::error(error, number),
        Protocol::Responses => responses::error(error, number),
        Protocol::Chat => chat::error(error, number),
    };
    if let Some(seconds) = error.retry_after {
        response.headers_mut().insert("retry-after", HeaderValue::from(seconds));
    }
    response
}

// Shaped so both Anthropic and OpenAI clients find `error.message`.
/// The models the server lists by default, as an OpenAI-compatible endpoint lists them
/// (`ModelServer::offer` sets others): every scripted step answers whatever model a request
/// names, so the list is what a client may rely on, not a limit the script enforces.
pub const MODELS: &[&str] = &["scripted", "scripted-large"];

fn models(shared: &Shared) -> Response {
    let offered = lock(&shared.models).clone();
    let ids: Vec<String> = if offered.is_empty() { MODELS.iter().map(|m| m.to_string()).collect() } else { offered };
    let data: Vec<Value> =
        ids.iter().map(|id| json!({"id": id, "object": "model", "owned_by": "kiln-model-server"})).collect();
    reply::json(StatusCode::OK, &json!({"object": "list", "data": data}), ("request-id", "req_models".into()))
}

fn not_found(method: &Method, uri: &Uri) -> Response {
    let body: Value = json!({
        "type": "error",
        "error": {"type": "not_found_error", "message": format!("kiln-model-server: no route for {method} {}", uri.path())},
    });
    reply::json(StatusCode::NOT_FOUND, &body, ("request-id", "req_not_found".into()))
}
