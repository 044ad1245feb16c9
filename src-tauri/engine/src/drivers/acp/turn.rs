//! One turn of an ACP agent, from its start to its end.
//!
//! - The agent starts confined, like every agent CLI (`super::super::runner::spawn`), with
//!   its stdin and stdout as the SDK's transport.
//! - `initialize` offers fs read and write and terminals, and names Kiln.
//! - With a resume id, `session/load` continues the conversation when the agent offers it
//!   (`loadSession`); what it replays is not this turn's and reaches nothing. When it does
//!   not offer it, or the load fails, the turn ends with "no conversation found", which the
//!   engine answers by replaying the transcript on a fresh session (`turn::lost_resume`).
//!   Otherwise `session/new`, in the working copy.
//! - Kiln's instructions go in the session set-up as `_meta.systemPrompt.append` (what the
//!   Claude adapter reads); for other agents they come before the prompt as a block of
//!   their own, never into the repository.
//! - The model is set with `session/set_model` or a `model` config option when the agent
//!   offers one.
//! - On Stop, `session/cancel`; the agent answers the prompt with `cancelled`. The engine
//!   kills the process group after its grace period whatever happens.
//! - The prompt's answer ends the turn: `refusal` is a failure; a JSON-RPC error (the
//!   provider failed) is one with the agent's message; an agent that exits first fails
//!   with the tail of its stderr.

use std::sync::Arc;

use agent_client_protocol::{is_incoming_transport_closed, ByteStreams, Error, ErrorCode, UntypedMessage};
use serde_json::{json, Value};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use super::client::Client;
use super::workdir::Workdir;
use super::AcpDriver;
use crate::drivers::events::DriverEvent;
use crate::drivers::runner;
use crate::drivers::{TurnRequest, TurnSink};
use kiln_types::error::Result;

type Connection = agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>;

/// How the conversation ended.
enum Ending {
    /// The prompt was answered.
    Answered { stop_reason: String, usage: Value },
    /// The agent answered with an error: the turn failed, for this reason.
    Failed(String),
    /// The agent exited (or closed its output) before answering.
    Died,
}

pub(super) async fn run(driver: AcpDriver, request: TurnRequest, sink: TurnSink) -> Result<()> {
    let TurnSink { events, on_process, stop, operator } = sink;
    let mut confinement =
        kiln_runtime::sandbox::Confinement::for_turn(&request.workdir, request.read_only, &driver.command.env);
    for dir in &driver.state_dirs {
        confinement.create(dir.clone());
    }
    // Claude's adapter keeps the CLI's own state, writable in part only
    // (`kiln_runtime::sandbox::CLAUDE_STATE`): its directories are made for a first run.
    if driver.id == "acp:claude" {
        if let Some(dir) = kiln_runtime::sandbox::AgentState::dir("CLAUDE_CONFIG_DIR", ".claude", &driver.command.env) {
            confinement.create_state(&dir, kiln_runtime::sandbox::CLAUDE_STATE);
        }
    }
    let cli = runner::CliRun {
        binary: &driver.command.binary,
        args: driver.command.args.clone(),
        env: driver.command.env.clone(),
        workdir: &request.workdir,
        confinement: Some(confinement),
    };
    let mut child = runner::spawn(&cli, true, on_process)?;
    let stderr = runner::keep_stderr(&mut child);
    let (Some(stdin), Some(stdout)) = (child.inner.stdin.take(), child.inner.stdout.take()) else {
        return Err(kiln_types::error::ApiError::internal("starting the agent", "its stdin or stdout is missing"));
    };
    let mut client = Client::new(
        Workdir::new(&request.workdir),
        request.session_dir.clone(),
        request.read_only,
        driver.commands,
        events,
        operator,
        stop,
    );
    client.environment = request.environment.clone();
    let client = Arc::new(client);
    let transport = ByteStreams::new(stdin.compat_write(), stdout.compat());
    let ending = converse(client.clone(), transport, &request, driver.id).await;
    client.terminals.kill_all();

    let mut events = Vec::new();
    client.updates().flush(&mut events);
    let final_text = client.updates().last_text.clone();
    let ended = |is_error: bool, stop_reason: Option<String>, error: Option<String>| DriverEvent::TurnEnded {
        is_error,
        stop_reason,
        final_text: if is_error { None } else { final_text.clone() },
        error,
    };
    match ending {
        Ending::Answered { stop_reason, usage } => {
            events.extend(client.updates().usage(&usage).map(DriverEvent::Usage));
            let refused = stop_reason == "refusal";
            let error = refused.then(|| "the agent refused to go on (stop reason: refusal)".to_string());
            events.push(ended(refused, Some(stop_reason), error));
        }
        Ending::Failed(message) => events.push(ended(true, None, Some(kiln_runtime::redact::redact_owned(message)))),
        Ending::Died => {
            let status = match tokio::time::timeout(std::time::Duration::from_secs(2), child.wait()).await {
                Ok(Ok(status)) => status.to_string(),
                _ => "still running, its output closed".to_string(),
            };
            events.push(ended(true, None, Some(runner::died(&status, &runner::stderr_tail(stderr).await))));
        }
    }
    client.emit(events);
    // Each turn is its own process: the next one continues with `session/load`.
    child.kill();
    client.close();
    Ok(())
}

/// Runs the SDK's connection until the prompt is answered.
async fn converse(
    client: Arc<Client>,
    transport: impl agent_client_protocol::ConnectTo<agent_client_protocol::Client> + 'static,
    request: &TurnRequest,
    driver_id: &'static str,
) -> Ending {
    let requests = client.clone();
    let notifications = client.clone();
    let turn = client.clone();
    let result = agent_client_protocol::Client
        .v1()
        .name("kiln")
        .on_receive_request(
            async move |message: UntypedMessage, responder, cx: Connection| {
                // Answered off the dispatch loop: a permission may wait for the operator
                // while the agent's updates keep arriving.
                let client = requests.clone();
                cx.spawn(async move {
                    let (method, params) = message.into_parts();
                    match client.request(&method, &params).await {
                        Ok(result) => responder.respond(result),
                        Err((code, message)) => responder.respond_with_error(Error::new(ErrorCode::new(code), message)),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |message: UntypedMessage, _cx: Connection| {
                notifications.notified(&message.method, &message.params);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_with(transport, async move |cx: Connection| Ok(conversation(&cx, &turn, request, driver_id).await))
        .await;
    match result {
        Ok(ending) => ending,
        Err(e) => {
            tracing::info!("the ACP connection of {driver_id} ended: {e}");
            Ending::Died
        }
    }
}

/// `method` sent as a request and its answer.
async fn ask(cx: &Connection, method: &str, params: Value) -> std::result::Result<Value, Error> {
    let message = UntypedMessage::new(method, params)?;
    cx.send_request(message).block_task().await
}

/// What a failed request means for the turn: the agent is gone, or it said why.
fn failure(cx: &Connection, what: &str, error: &Error) -> Ending {
    if is_incoming_transport_closed(error) || cx.is_incoming_closed() {
        Ending::Died
    } else {
        Ending::Failed(format!("{what}: {}", error_text(error)))
    }
}

/// The agent's error in words: its message, and the details it gave in `data`.
fn error_text(error: &Error) -> String {
    let detail = error.data.as_ref().and_then(|data| match data {
        Value::String(s) => Some(s.clone()),
        Value::Object(_) => ["message", "details", "error"]
            .iter()
            .find_map(|k| data[k].as_str().map(String::from))
            .or_else(|| Some(data.to_string())),
        Value::Null => None,
        other => Some(other.to_string()),
    });
    match detail {
        Some(detail) if detail != error.message => format!("{} ({detail})", error.message),
        _ => error.message.clone(),
    }
}

async fn conversation(cx: &Connection, client: &Client, request: &TurnRequest, driver_id: &str) -> Ending {
    let initialize = json!({
        "protocolVersion": 1,
        "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": true},
        "clientInfo": {"name": "kiln", "title": "Kiln", "version": env!("CARGO_PKG_VERSION")},
    });
    let agent = match ask(cx, "initialize", initialize).await {
        Ok(agent) => agent,
        Err(e) => return failure(cx, "the agent did not initialize", &e),
    };
    let cwd = std::path::absolute(&request.workdir).unwrap_or_else(|_| request.workdir.clone());
    let instructions = request.instructions.trim();
    let http = agent["agentCapabilities"]["mcpCapabilities"]["http"] == true;
    let mut setup = json!({"cwd": cwd, "mcpServers": super::super::mcp::for_acp(&request.mcp, http)});
    if !instructions.is_empty() {
        setup["_meta"] = json!({"systemPrompt": {"append": instructions}});
    }
    let (session_id, session) = match &request.resume_id {
        Some(id) if agent["agentCapabilities"]["loadSession"] != true => {
            return Ending::Failed(format!(
                "no conversation found: {driver_id} cannot load session {id}, it does not offer session/load"
            ));
        }
        Some(id) => {
            setup["sessionId"] = json!(id);
            client.updates().replaying = true;
            let loaded = ask(cx, "session/load", setup).await;
            client.updates().replaying = false;
            match loaded {
                Ok(answer) => (id.clone(), answer),
                Err(e) if matches!(failure(cx, "", &e), Ending::Died) => return Ending::Died,
                // Whatever the reason, the conversation cannot continue here: the engine
                // replays it on a fresh one.
                Err(e) => {
                    return Ending::Failed(format!(
                        "no conversation found: the agent could not load session {id}: {}",
                        error_text(&e)
                    ))
                }
            }
        }
        None => match ask(cx, "session/new", setup).await {
            Ok(answer) => match answer["sessionId"].as_str() {
                Some(id) => (id.to_string(), answer),
                None => return Ending::Failed("the agent answered session/new without a session id".into()),
            },
            Err(e) => return failure(cx, "the agent did not start a session", &e),
        },
    };
    let model = choose_model(cx, &session_id, &session, request.model.as_deref()).await;
    client.emit(vec![DriverEvent::SessionStarted { resume_id: session_id.clone(), model }]);

    let reads_meta = agent["agentInfo"]["name"].as_str().is_some_and(|n| n.to_ascii_lowercase().contains("claude"));
    let text = if instructions.is_empty() || reads_meta {
        request.prompt.clone()
    } else {
        format!(
            "<kiln-instructions>\nKiln's instructions for this turn (from the tool you work in, not from the repository):\n\n{instructions}\n</kiln-instructions>\n\n{}",
            request.prompt
        )
    };
    // Stopped while the session was being set up: nothing to cancel yet.
    if client.stop.is_cancelled() {
        return Ending::Answered { stop_reason: "cancelled".into(), usage: Value::Null };
    }
    let prompt =
        ask(cx, "session/prompt", json!({"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}));
    tokio::pin!(prompt);
    let answer = tokio::select! {
        answer = &mut prompt => answer,
        _ = client.stop.cancelled() => {
            if let Ok(cancel) = UntypedMessage::new("session/cancel", json!({"sessionId": session_id})) {
                let _ = cx.send_notification(cancel);
            }
            prompt.await
        }
    };
    match answer {
        Ok(answer) => Ending::Answered {
            stop_reason: answer["stopReason"].as_str().unwrap_or("end_turn").to_string(),
            usage: answer["usage"].clone(),
        },
        Err(_) if client.stop.is_cancelled() => {
            Ending::Answered { stop_reason: "cancelled".into(), usage: Value::Null }
        }
        Err(e) => failure(cx, "the agent failed", &e),
    }
}

/// Sets `wanted` when the session offers it (`models`, or a config option of category
/// `model`); the model the session runs, as far as the agent said.
async fn choose_model(cx: &Connection, session_id: &str, session: &Value, wanted: Option<&str>) -> Option<String> {
    let current = session["models"]["currentModelId"].as_str().map(String::from);
    let Some(wanted) = wanted else { return current };
    let offered = |list: &Value, key: &str| list.as_array().is_some_and(|l| l.iter().any(|m| m[key] == wanted));
    let option = session["configOptions"].as_array().and_then(|options| {
        options.iter().find(|o| o["category"] == "model" || o["id"] == "model").and_then(|o| o["id"].as_str())
    });
    let set = if offered(&session["models"]["availableModels"], "modelId") {
        Some(ask(cx, "session/set_model", json!({"sessionId": session_id, "modelId": wanted})).await)
    } else if let Some(option) = option {
        let params = json!({"sessionId": session_id, "configId": option, "value": wanted});
        Some(ask(cx, "session/set_config_option", params).await)
    } else {
        None
    };
    match set {
        Some(Ok(_)) => Some(wanted.to_string()),
        Some(Err(e)) => {
            tracing::info!("the agent did not take the model {wanted}: {}", error_text(&e));
            current
        }
        None => {
            tracing::info!("the agent offers no way to choose the model {wanted}; it runs its own");
            current
        }
    }
}
