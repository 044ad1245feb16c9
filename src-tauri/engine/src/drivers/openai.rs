//! The `openai-compatible` driver: Kiln's own agent loop against any Chat Completions
//! endpoint (OpenAI, Ollama, llama.cpp, vLLM) with the user's key. Each step streams one
//! model reply; its tool calls run in the working copy (`tools`), their results go back
//! as `tool` messages, and the loop goes on until the model answers without calling a
//! tool, or runs out of steps.
//!
//! Text is reported once per model reply, whole, as Claude's driver reports each text
//! block, and that is what is stored; the fragments as they stream are also reported, as
//! `TextDelta`s, which only the live view shows.
//!
//! There is no server-side thread to resume. The driver keeps each conversation in
//! memory, shared by its clones, under a fresh id reported as the resume id; an id it no
//! longer holds (Kiln restarted) starts a fresh conversation, and says so.

mod stream;

use std::time::Duration;

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::sync::mpsc::UnboundedSender;

use super::events::{DriverEvent, Usage};
use super::tools::{self, Toolbox};
use super::{Driver, TurnFuture, TurnRequest, TurnSink};
use crate::registry::Conversations;
use kiln_types::error::{ApiError, ErrorCode};
use kiln_types::CommandPolicy;
use stream::{Assembly, EventReader, Reply};

const SOURCE: &str = "openai-compatible";
pub(crate) const DEFAULT_MAX_STEPS: u32 = 40;
pub(crate) const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(120);
/// How long to wait for a connection; the reply itself may take long (a local model
/// reading a large prompt), so only silence longer than `READ_TIMEOUT` ends it.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
const READ_TIMEOUT: Duration = Duration::from_secs(600);
/// Characters of a non-JSON error body kept in the message.
const ERROR_BODY_CHARS: usize = 500;

/// One message of a conversation, as Chat Completions takes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum Message {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        /// `null` when the reply was only tool calls.
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<Value>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// The `openai-compatible` driver. No `Debug`: it holds an API key.
#[derive(Clone)]
pub struct OpenAiDriver {
    /// Up to and including the version, e.g. `https://api.openai.com/v1` or
    /// `http://127.0.0.1:11434/v1`; `/chat/completions` is added.
    pub base_url: String,
    /// Sent as a bearer token; local servers need none.
    pub api_key: Option<String>,
    /// The model when the turn does not name one.
    pub model: String,
    /// Model replies per turn at most: a model that keeps calling tools is stopped.
    pub max_steps: u32,
    /// How long one `run_command` may run before its process group is killed.
    pub command_timeout: Duration,
    /// Which commands the model may run (Settings): "no commands" takes `run_command` away.
    pub commands: CommandPolicy,
    conversations: Conversations,
}

impl OpenAiDriver {
    pub fn new(base_url: impl Into<String>, api_key: Option<String>, model: impl Into<String>) -> Self {
        // Whoever gave the key, what the provider echoes of it is never stored or shown.
        if let Some(key) = &api_key {
            kiln_runtime::redact::hold(key);
        }
        OpenAiDriver {
            base_url: base_url.into(),
            api_key,
            model: model.into(),
            max_steps: DEFAULT_MAX_STEPS,
            command_timeout: DEFAULT_COMMAND_TIMEOUT,
            commands: CommandPolicy::Workdir,
            conversations: Conversations::default(),
        }
    }

    /// The driver keeping its conversations in `conversations` (the workspace's, so they
    /// outlast this turn's driver).
    pub fn with_conversations(self, conversations: Conversations) -> Self {
        OpenAiDriver { conversations, ..self }
    }
}

impl Driver for OpenAiDriver {
    fn id(&self) -> &'static str {
        SOURCE
    }

    /// Runs in-process: nothing to report to `on_process`. A stop drops the turn's
    /// future, which kills a running command's process group with it.
    fn run(&self, request: TurnRequest, sink: TurnSink) -> TurnFuture {
        let driver = self.clone();
        Box::pin(async move {
            let client = reqwest::Client::builder()
                .user_agent(concat!("kiln/", env!("CARGO_PKG_VERSION")))
                .connect_timeout(CONNECT_TIMEOUT)
                .read_timeout(READ_TIMEOUT)
                .build()
                .map_err(|e| {
                    ApiError::new(ErrorCode::DriverFailed, format!("could not set up the HTTP client: {e}"))
                })?;
            let events = sink.events;
            let ended = driver.turn(&client, request, &events).await;
            let _ = events.send(ended);
            Ok(())
        })
    }
}

impl OpenAiDriver {
    /// The loop; its result is the closing `TurnEnded`.
    async fn turn(
        &self,
        client: &reqwest::Client,
        request: TurnRequest,
        events: &UnboundedSender<DriverEvent>,
    ) -> DriverEvent {
        let emit = |event: DriverEvent| {
            let _ = events.send(event);
        };
        let model = request.model.clone().filter(|m| !m.is_empty()).unwrap_or_else(|| self.model.clone());
        let (resume_id, mut conversation) = self.open(request.resume_id.as_deref());
        if let Some(lost) = request.resume_id.as_deref().filter(|id| *id != resume_id) {
            // Like a CLI that rejects a resume: the turn fails, and the engine continues
            // on a fresh conversation with the transcript replayed.
            return failed(format!(
                "No conversation found with session ID: {lost} (this driver keeps conversations in memory only)"
            ));
        }
        emit(DriverEvent::SessionStarted { resume_id: resume_id.clone(), model: Some(model.clone()) });
        let toolbox =
            match Toolbox::new(&request.workdir, &request.session_dir, request.read_only, self.command_timeout) {
                Ok(toolbox) => toolbox.with_commands(self.commands).with_environment(request.environment.clone()),
                Err(e) => return failed(format!("the working copy {} cannot be used: {e}", request.workdir.display())),
            };
        let toolbox = toolbox.with_mcp(connect_mcp(&request, &emit).await);
        conversation.push(Message::User { content: request.prompt.clone() });

        let mut usage: Option<Usage> = None;
        let mut last_text: Option<String> = None;
        for _ in 0..self.max_steps {
            let body = request_body(&model, &request.instructions, &conversation, &toolbox);
            let reply = self.ask(client, &body, events).await;
            let reply = match reply {
                Ok(reply) => reply,
                Err(message) => return ended(&emit, usage, Err(message)),
            };
            if let Some(step) = &reply.usage {
                usage = Some(add(usage.unwrap_or_default(), step));
            }
            if !reply.thought.trim().is_empty() {
                emit(DriverEvent::Thought { text: reply.thought.clone() });
            }
            if !reply.text.trim().is_empty() {
                emit(DriverEvent::Text { text: reply.text.clone() });
                last_text = Some(reply.text.clone());
            }
            let content = Some(reply.text.clone()).filter(|t| !t.is_empty());
            if reply.calls.is_empty() {
                conversation.push(Message::Assistant { content, tool_calls: Vec::new() });
                self.keep(&resume_id, &conversation);
                return ended(&emit, usage, Ok((reply.finish_reason, last_text)));
            }

            let calls: Vec<Prepared> = reply.calls.into_iter().map(prepare).collect();
            let tool_calls = calls.iter().map(wire_call).collect();
            conversation.push(Message::Assistant { content, tool_calls });
            for (call, input) in calls {
                let (Ok(shown) | Err(shown)) = &input;
                emit(DriverEvent::ToolCall {
                    id: call.id.clone(),
                    kind: tools::kind(&call.name),
                    title: tools::title(&call.name, shown),
                    input: shown.clone(),
                });
                let watch = super::events::output_watch(call.id.clone(), events.downgrade());
                let outcome = match &input {
                    Ok(input) => toolbox.run_watched(&call.name, input, Some(watch)).await,
                    Err(_) => tools::ToolOutcome::failed(
                        "the arguments are not valid JSON; call the tool again with a JSON object",
                    ),
                };
                emit(DriverEvent::ToolResult {
                    id: call.id.clone(),
                    status: outcome.status,
                    output: outcome.output.clone(),
                });
                if let Some((path, change)) = outcome.change {
                    emit(DriverEvent::FileChange { path, change });
                }
                conversation.push(Message::Tool { tool_call_id: call.id, content: outcome.output });
            }
            // Kept after every step, so a turn that fails later still leaves its work in
            // the conversation the next turn continues.
            self.keep(&resume_id, &conversation);
        }
        ended(
            &emit,
            usage,
            Err(format!(
                "stopped after {} model steps without a final answer: the model kept calling tools",
                self.max_steps
            )),
        )
    }

    /// The conversation to continue and its id: the one `resume_id` names when the
    /// driver holds it, else a fresh one under a new id.
    fn open(&self, resume_id: Option<&str>) -> (String, Vec<Message>) {
        let held = self.conversations.lock().unwrap_or_else(|e| e.into_inner());
        let found = resume_id.and_then(|id| Some((id, held.get(id)?)));
        match found {
            // Written by `keep` from these messages, so each reads back.
            Some((id, kept)) => {
                (id.to_string(), kept.iter().filter_map(|m| serde_json::from_value(m.clone()).ok()).collect())
            }
            None => (uuid::Uuid::new_v4().to_string(), Vec::new()),
        }
    }

    fn keep(&self, resume_id: &str, conversation: &[Message]) {
        let kept = conversation.iter().filter_map(|m| serde_json::to_value(m).ok()).collect();
        let mut held = self.conversations.lock().unwrap_or_else(|e| e.into_inner());
        held.insert(resume_id.to_string(), kept);
    }

    /// One model request, read to its end.
    /// The text streams to `events` as `TextDelta`s, for the live view; the whole reply
    /// is still reported once.
    async fn ask(
        &self,
        client: &reqwest::Client,
        body: &Value,
        events: &UnboundedSender<DriverEvent>,
    ) -> Result<Reply, String> {
        let url = format!("{}/chat/completions", self.base_url.trim_end_matches('/'));
        let mut post = client.post(&url).json(body);
        if let Some(key) = self.api_key.as_deref().filter(|k| !k.is_empty()) {
            post = post.bearer_auth(key);
        }
        let response = post.send().await.map_err(|e| format!("could not reach {url}: {e}"))?;
        let status = response.status();
        if !status.is_success() {
            let text = response.text().await.unwrap_or_default();
            return Err(provider_error(status, &text));
        }
        let streamed = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !streamed {
            let completion: Value =
                response.json().await.map_err(|e| format!("the reply from {url} is not a completion: {e}"))?;
            return stream::whole(&completion);
        }

        let mut reader = EventReader::default();
        let mut assembly = Assembly::default();
        let mut bytes = response.bytes_stream();
        let mut done = false;
        while let Some(chunk) = bytes.next().await {
            let chunk = chunk.map_err(|e| format!("the reply from {url} broke off: {e}"))?;
            let before = assembly.text().len();
            for data in reader.feed(&chunk) {
                done |= take(&mut assembly, &data)?;
            }
            if let Some(piece) = assembly.text().get(before..).filter(|p| !p.is_empty()) {
                let _ = events.send(DriverEvent::TextDelta { text: piece.to_string() });
            }
        }
        if !done {
            for data in std::mem::take(&mut reader).end() {
                take(&mut assembly, &data)?;
            }
        }
        Ok(assembly.finish())
    }
}

/// One event's data into the reply; `true` at the closing `[DONE]`.
fn take(assembly: &mut Assembly, data: &str) -> Result<bool, String> {
    if data.trim() == "[DONE]" {
        return Ok(true);
    }
    match serde_json::from_str::<Value>(data) {
        Ok(chunk) => assembly.add(&chunk).map(|_| false),
        // A line that is not JSON (a proxy's banner) is no part of the reply.
        Err(_) => Ok(false),
    }
}

/// The request for one step: the turn's instructions as the system message (fresh each
/// turn: the session context changes), the conversation so far, and the tools.
fn request_body(model: &str, instructions: &str, conversation: &[Message], toolbox: &Toolbox) -> Value {
    let system = (!instructions.trim().is_empty()).then(|| Message::System { content: instructions.to_string() });
    let messages: Vec<&Message> = system.iter().chain(conversation).collect();
    json!({
        "model": model,
        "messages": messages,
        "tools": toolbox.definitions(),
        "stream": true,
        "stream_options": {"include_usage": true},
    })
}

/// A call with its input: the arguments parsed, or their raw text when they are not JSON.
type Prepared = (stream::Call, Result<Value, Value>);

/// The call ready to run: an id (some local servers send none; the tool message must
/// name one) and its parsed arguments, or the raw text when they are not JSON.
fn prepare(mut call: stream::Call) -> Prepared {
    if call.id.is_empty() {
        call.id = format!("call_{}", uuid::Uuid::new_v4().simple());
    }
    let arguments = if call.arguments.trim().is_empty() { "{}" } else { call.arguments.as_str() };
    let input = serde_json::from_str::<Value>(arguments).map_err(|_| Value::String(call.arguments.clone()));
    (call, input)
}

/// The call as the assistant message carries it. Arguments that are not JSON go back
/// as `{}`: some servers parse the history and would refuse every later request.
fn wire_call((call, input): &Prepared) -> Value {
    let arguments =
        if input.is_ok() && !call.arguments.trim().is_empty() { call.arguments.clone() } else { "{}".into() };
    json!({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}})
}

fn add(total: Usage, step: &Usage) -> Usage {
    Usage {
        input_tokens: total.input_tokens + step.input_tokens,
        output_tokens: total.output_tokens + step.output_tokens,
        cache_read_tokens: total.cache_read_tokens + step.cache_read_tokens,
        cache_write_tokens: total.cache_write_tokens + step.cache_write_tokens,
        cost_usd: None,
    }
}

/// Usage (what the turn spent, even when it failed) and the closing event.
fn ended(
    emit: &impl Fn(DriverEvent),
    usage: Option<Usage>,
    outcome: Result<(Option<String>, Option<String>), String>,
) -> DriverEvent {
    if let Some(usage) = usage {
        emit(DriverEvent::Usage(usage));
    }
    match outcome {
        Ok((stop_reason, final_text)) => {
            DriverEvent::TurnEnded { is_error: false, stop_reason, final_text, error: None }
        }
        Err(message) => failed(message),
    }
}

/// The failed end, redacted: a provider's error may echo the key it was sent.
fn failed(message: String) -> DriverEvent {
    DriverEvent::TurnEnded {
        is_error: true,
        stop_reason: None,
        final_text: None,
        error: Some(kiln_runtime::redact::redact_owned(message)),
    }
}

/// The provider's own message and the status: `{"error": {"message"}}` as OpenAI and
/// most servers send it, `{"error": "…"}` as Ollama does, else the body itself.
fn provider_error(status: reqwest::StatusCode, body: &str) -> String {
    let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let message = stream::error_message(&parsed["error"])
        .or_else(|| parsed["message"].as_str().map(String::from))
        .unwrap_or_else(|| {
            let body: String = body.trim().chars().take(ERROR_BODY_CHARS).collect();
            if body.is_empty() {
                status.canonical_reason().unwrap_or("no reason given").to_string()
            } else {
                body
            }
        });
    format!("{message} (HTTP {})", status.as_u16())
}

/// Starts (or reaches) the user's MCP servers for a turn that may change files, each shown in
/// the chat as a step that says what it offers or why it did not answer; the turn goes on
/// with those that answered. They run in the working copy, confined as its commands are, and
/// stop with the turn (their clients are dropped with the toolbox).
async fn connect_mcp(
    request: &TurnRequest,
    emit: &impl Fn(DriverEvent),
) -> Vec<(String, std::sync::Arc<super::mcp::client::McpClient>)> {
    use super::mcp::client::McpClient;
    if request.read_only || request.mcp.is_empty() {
        return Vec::new();
    }
    let within = super::mcp::WITHIN;
    let starts = request.mcp.iter().map(|server| async move {
        let connected = tokio::time::timeout(within, McpClient::connect(server, &request.workdir, false)).await;
        (server, connected)
    });
    let mut clients = Vec::new();
    for (server, connected) in futures_util::future::join_all(starts).await {
        let id = format!("mcp-start-{}", server.name);
        emit(DriverEvent::ToolCall {
            id: id.clone(),
            kind: super::events::ToolKind::Other,
            title: format!("Start the MCP server {}", server.name),
            input: serde_json::json!({"server": server.name}),
        });
        let (status, output) = match connected {
            Ok(Ok(client)) => {
                let names: Vec<&str> = client.tools.iter().map(|t| t.name.as_str()).collect();
                let said = format!("{} tool(s): {}", names.len(), names.join(", "));
                clients.push((server.name.clone(), std::sync::Arc::new(client)));
                (super::events::ToolStatus::Completed, said)
            }
            Ok(Err(refused)) => (super::events::ToolStatus::Failed, refused.why),
            Err(_) => (super::events::ToolStatus::Failed, format!("no answer within {} seconds", within.as_secs())),
        };
        emit(DriverEvent::ToolResult { id, status, output });
    }
    clients
}
