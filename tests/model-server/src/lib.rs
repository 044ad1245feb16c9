//! kiln-model-server: a scripted model provider on 127.0.0.1, so tests can run the
//! real agent CLIs (Claude Code, Codex) and Kiln's own tool loop offline.
//!
//! A test starts one server per case with a script, points the CLI at it, and asserts
//! on what the CLI did and on the requests the server recorded:
//!
//! ```no_run
//! use kiln_model_server::{ModelServer, Step};
//! use serde_json::json;
//!
//! # async fn example() {
//! let server = ModelServer::start(vec![
//!     Step::tool("shell", json!({"command": ["ls"]})),
//!     Step::text("Listed the files."),
//! ])
//! .await;
//! // Claude Code: ANTHROPIC_BASE_URL = server.base_url()
//! // Codex / Chat Completions clients: base URL = server.openai_base_url() (".../v1")
//! // ... run the CLI ...
//! let requests = server.requests();
//! assert_eq!(requests[0].path, "/v1/messages");
//! # }
//! ```
//!
//! **Script.** An ordered list of [`Step`]s shared by all protocols; each model request
//! consumes the next one, whatever its protocol. In JSON (for the `kiln-model-server`
//! binary, `--port N --script FILE.json`):
//! `[{"tool": "shell", "arguments": {...}}, {"text": "done"}, {"error": {"status": 429, "message": "slow down"}}]`.
//! An error may also carry `"type"`, `"code"` (override the provider's defaults) and
//! `"retry_after"` (seconds, sent as `retry-after`). Once the script is used up every
//! model request is answered with the text `(script exhausted)`.
//!
//! **Ids and usage are predictable.** The n-th model request (1-based) gets call id
//! `call_n`, message/response ids `msg_n`/`resp_n`/`chatcmpl-n`, Responses item ids
//! `fc_n`/`msg_n`. Input tokens are the request body's length in bytes / 4, output
//! tokens are always 10; Anthropic also reports zero cache tokens, OpenAI zero cached
//! and reasoning tokens.
//!
//! **Routes.** `POST /v1/messages` (Anthropic Messages, any query such as `?beta=true`),
//! `POST /v1/messages/count_tokens` (`{"input_tokens": n}`, uses no step),
//! `POST /v1/responses` (OpenAI Responses), `POST /v1/chat/completions` (OpenAI Chat
//! Completions). Each streams server-sent events when the body says `"stream": true`
//! and returns the provider's plain JSON otherwise. Any other request is recorded and
//! answered 404 with a JSON error.
//!
//! **Asides.** Some agents ask the model for more than the turn: a title for the
//! session, sent beside the turn's first request (claude-agent-acp, OpenCode). Which of
//! the two arrives first is a race, so such a request would take a step meant for the
//! turn. A server started with [`ModelServer::start_with_asides`] answers each request
//! whose body holds an [`Aside`]'s marker with that aside's step, leaving the script as
//! it was. The request is recorded and numbered like any other.
//!
//! **Recording.** Every request, model or not, is kept as a [`RecordedRequest`]
//! (method, path, query, headers, JSON body) in arrival order: [`ModelServer::requests`].
//!
//! The server runs on its own thread and runtime, so a test body may block on a child
//! process (even on a current-thread runtime) without starving it. It only ever binds
//! 127.0.0.1 and stops when the [`ModelServer`] is dropped.

mod anthropic;
mod chat;
mod openai_error;
mod reply;
mod responses;
mod script;
mod server;
mod turn;

use std::net::SocketAddr;
use std::sync::Arc;

use kiln_double_support::{LoopbackPort, LoopbackServer};

pub use kiln_double_support::RecordedRequest;
pub use script::{load_script, parse_script, ScriptedError, Step, EXHAUSTED};
pub use server::MODELS;
pub use turn::OUTPUT_TOKENS;

/// A request answered beside the script: one whose body (its JSON text) holds `marker`
/// gets `step`, every time, and uses no step of the script.
#[derive(Clone, Debug, PartialEq)]
pub struct Aside {
    pub marker: String,
    pub step: Step,
}

impl Aside {
    pub fn new(marker: impl Into<String>, step: Step) -> Self {
        Aside { marker: marker.into(), step }
    }
}

/// A running scripted server; dropping it shuts the server down.
pub struct ModelServer {
    pub addr: SocketAddr,
    shared: Arc<server::Shared>,
    // Held only so that dropping the ModelServer stops serving.
    _server: LoopbackServer,
}

impl ModelServer {
    /// Starts a server on a free loopback port.
    pub async fn start(script: Vec<Step>) -> ModelServer {
        Self::spawn(script)
    }

    /// [`ModelServer::start`], answering the requests the asides mark beside the script.
    pub async fn start_with_asides(script: Vec<Step>, asides: Vec<Aside>) -> ModelServer {
        Self::spawn_with_asides(0, script, asides).expect("bind 127.0.0.1:0")
    }

    /// [`ModelServer::start`] for callers without an async context.
    pub fn spawn(script: Vec<Step>) -> ModelServer {
        Self::spawn_on(0, script).expect("bind 127.0.0.1:0")
    }

    /// Starts a server on 127.0.0.1:`port` (0 for any free port).
    pub fn spawn_on(port: u16, script: Vec<Step>) -> std::io::Result<ModelServer> {
        Self::serve(port, script, Vec::new())
    }

    /// [`ModelServer::spawn_on`] with asides.
    pub fn spawn_with_asides(port: u16, script: Vec<Step>, asides: Vec<Aside>) -> std::io::Result<ModelServer> {
        Self::serve(port, script, asides)
    }

    fn serve(port: u16, script: Vec<Step>, asides: Vec<Aside>) -> std::io::Result<ModelServer> {
        let port = LoopbackPort::bind(port)?;
        let addr = port.addr;
        let shared = Arc::new(server::Shared::new(script, asides));
        let server = port.serve("kiln-model-server", server::router(shared.clone()))?;
        Ok(ModelServer { addr, shared, _server: server })
    }

    /// `http://127.0.0.1:PORT`, the form Anthropic clients take (`ANTHROPIC_BASE_URL`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`, the form OpenAI clients take as their base URL.
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.base_url())
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        server::recorded(&self.shared)
    }

    /// Lists `models` at `GET /v1/models` from now on, instead of [`MODELS`].
    pub fn offer(&self, models: &[&str]) {
        *self.shared.models.lock().unwrap_or_else(|e| e.into_inner()) = models.iter().map(|m| m.to_string()).collect();
    }
}
