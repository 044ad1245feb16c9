//! What Kiln serves an ACP agent during a turn, as the client: `session/update`
//! notifications become driver events (`updates.rs`); `fs/read_text_file` and
//! `fs/write_text_file` read and write the working copy (paths confined by
//! `workdir.rs`; no write in a read-only turn); `terminal/*` runs commands
//! (`terminal.rs`) under the command policy; `session/request_permission` is answered by
//! the policy (`policy.rs`) or, when it cannot decide, by the operator. After Stop every
//! permission request is answered `cancelled`, as ACP asks of a client that cancelled.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::policy::{self, Decision};
use super::terminal::Terminals;
use super::updates::Updates;
use super::workdir::Workdir;
use crate::drivers::events::{DriverEvent, FileChangeKind, ToolKind, ToolStatus};
use crate::drivers::permission::{Operator, PermissionAsk};
use kiln_runtime::paths::beneath::Written;
use kiln_types::CommandPolicy;

/// A request Kiln refuses: a JSON-RPC error code and its message.
pub(super) type Refusal = (i32, String);

const INVALID_PARAMS: i32 = -32602;
const METHOD_NOT_FOUND: i32 = -32601;

/// A file larger than this is not read whole (as the tool loop's `read_file`).
const READ_BYTES: u64 = 8 * 1024 * 1024;

/// One turn's client side, shared by the connection's handlers.
pub struct Client {
    pub workdir: Workdir,
    pub session_dir: PathBuf,
    /// What the agent's terminals get of the user's environment (`[environment]`; none
    /// until the turn sets it).
    pub environment: kiln_runtime::sandbox::EnvironmentConfig,
    pub read_only: bool,
    pub commands: CommandPolicy,
    /// Taken at the end of the turn (`close`), so the engine's stream ends even if the SDK
    /// kept a handler alive.
    events: Mutex<Option<mpsc::UnboundedSender<DriverEvent>>>,
    pub updates: Mutex<Updates>,
    pub terminals: Terminals,
    pub operator: Option<Arc<dyn Operator>>,
    pub stop: CancellationToken,
    /// Terminals Kiln reports as tool calls itself (the agent announced no command).
    own_calls: Mutex<HashSet<String>>,
}

impl Client {
    pub fn new(
        workdir: Workdir,
        session_dir: PathBuf,
        read_only: bool,
        commands: CommandPolicy,
        events: mpsc::UnboundedSender<DriverEvent>,
        operator: Option<Arc<dyn Operator>>,
        stop: CancellationToken,
    ) -> Client {
        Client {
            updates: Mutex::new(Updates::new(workdir.clone())),
            workdir,
            session_dir,
            environment: Default::default(),
            read_only,
            commands,
            events: Mutex::new(Some(events)),
            terminals: Terminals::default(),
            operator,
            stop,
            own_calls: Mutex::new(HashSet::new()),
        }
    }

    pub fn emit(&self, events: Vec<DriverEvent>) {
        if let Some(sender) = self.events.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            for event in events {
                let _ = sender.send(event);
            }
        }
    }

    /// Where a terminal's output goes as it arrives: the turn's events, while it lasts.
    fn heard(&self) -> Option<mpsc::WeakUnboundedSender<DriverEvent>> {
        self.events.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|events| events.downgrade())
    }

    /// Ends the turn's event stream.
    pub fn close(&self) {
        self.events.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    pub fn updates(&self) -> std::sync::MutexGuard<'_, Updates> {
        self.updates.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A `session/update` notification.
    pub fn notified(&self, method: &str, params: &Value) {
        if method == "session/update" {
            let update = &params["update"];
            let mut events = self.updates().update(update);
            // A command's result that only points at the terminal Kiln ran it in: its output.
            let terminal = update["content"].as_array().into_iter().flatten().find(|c| c["type"] == "terminal");
            if let Some(id) = terminal.and_then(|c| c["terminalId"].as_str()) {
                for event in &mut events {
                    if let DriverEvent::ToolResult { output, .. } = event {
                        if output.is_empty() {
                            *output = self.terminals.text(id).unwrap_or_default();
                        }
                    }
                }
            }
            self.emit(events);
        } else {
            tracing::debug!("an ACP agent sent the notification {method}, which Kiln does not use");
        }
    }

    /// A request from the agent: the result, or the refusal.
    pub async fn request(&self, method: &str, params: &Value) -> Result<Value, Refusal> {
        match method {
            "fs/read_text_file" => self.read(params),
            "fs/write_text_file" => self.write(params),
            "terminal/create" => self.create_terminal(params),
            "terminal/output" => self.terminals.output(params).map_err(invalid),
            "terminal/wait_for_exit" => self.terminals.wait_for_exit(params).await.map_err(invalid),
            "terminal/kill" => self.terminals.kill(params).map_err(invalid),
            "terminal/release" => self.release_terminal(params),
            "session/request_permission" => Ok(self.permission(params).await),
            other => Err((METHOD_NOT_FOUND, format!("Kiln does not serve `{other}`"))),
        }
    }

    fn read(&self, params: &Value) -> Result<Value, Refusal> {
        let raw = params["path"].as_str().unwrap_or_default();
        let (beneath, path) = self.workdir.beneath(raw).map_err(|e| invalid(e.message))?;
        let bytes = beneath.read(&path, READ_BYTES).map_err(|e| match e.kind() {
            std::io::ErrorKind::FileTooLarge => invalid(format!("`{raw}` is too large to read ({e})")),
            _ if kiln_runtime::paths::beneath::is_refusal(&e) => invalid(e.to_string()),
            _ => invalid(format!("cannot read `{raw}`: {e}")),
        })?;
        let text = String::from_utf8_lossy(&bytes);
        // `line` counts from 1; `limit` is a number of lines.
        let first = params["line"].as_u64().unwrap_or(1).max(1) as usize;
        let content = match params["limit"].as_u64() {
            None if first == 1 => text.into_owned(),
            limit => {
                let lines = text.split_inclusive('\n').skip(first - 1);
                match limit {
                    Some(limit) => lines.take(limit as usize).collect(),
                    None => lines.collect(),
                }
            }
        };
        Ok(json!({"content": content}))
    }

    fn write(&self, params: &Value) -> Result<Value, Refusal> {
        let raw = params["path"].as_str().unwrap_or_default();
        if self.read_only {
            return Err(invalid(format!("refused `{raw}`: this turn is read-only and changes no files")));
        }
        let content = params["content"].as_str().ok_or_else(|| invalid("no `content` to write".into()))?;
        let (beneath, path) = self.workdir.beneath(raw).map_err(|e| invalid(e.message))?;
        let written = beneath.write(&path, content.as_bytes()).map_err(|e| match e.kind() {
            std::io::ErrorKind::IsADirectory => invalid(format!("`{raw}` is a directory")),
            _ if kiln_runtime::paths::beneath::is_refusal(&e) => invalid(e.to_string()),
            _ => invalid(format!("cannot write `{raw}`: {e}")),
        })?;
        let change = if written == Written::Replaced { FileChangeKind::Update } else { FileChangeKind::Add };
        let events = self.updates().wrote(self.workdir.shown(raw), change);
        self.emit(events);
        Ok(json!({}))
    }

    fn create_terminal(&self, params: &Value) -> Result<Value, Refusal> {
        if self.commands == CommandPolicy::None {
            return Err(invalid(
                "Kiln's command policy is \"no commands\" (Settings): this turn runs no commands".into(),
            ));
        }
        if self.read_only {
            return Err(invalid("a read-only turn runs no commands".into()));
        }
        let cwd = match params["cwd"].as_str() {
            Some(cwd) => self.workdir.confine(cwd).map_err(|e| invalid(e.message))?,
            None => self.workdir.path().to_path_buf(),
        };
        let id = self
            .terminals
            .create(params, &cwd, self.workdir.path(), &self.session_dir, &self.environment, self.heard())
            .map_err(invalid)?;
        // The agent usually announces the command as its own tool call; when it did not,
        // the transcript still shows what ran.
        if !self.updates().open_command() {
            let title = self.terminals.line(&json!({"terminalId": id})).unwrap_or_default();
            let call = DriverEvent::ToolCall {
                id: id.clone(),
                kind: ToolKind::Execute,
                title: crate::drivers::events::title_line(&title),
                input: params.clone(),
            };
            let mut events = Vec::new();
            self.updates().flush(&mut events);
            events.push(call);
            self.emit(events);
            self.own_calls.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone());
        }
        Ok(json!({"terminalId": id}))
    }

    fn release_terminal(&self, params: &Value) -> Result<Value, Refusal> {
        let output = self.terminals.release(params).map_err(invalid)?;
        let id = params["terminalId"].as_str().unwrap_or_default();
        if self.own_calls.lock().unwrap_or_else(|e| e.into_inner()).remove(id) {
            let passed = output["exitStatus"]["exitCode"] == 0;
            self.emit(vec![DriverEvent::ToolResult {
                id: id.to_string(),
                status: if passed { ToolStatus::Completed } else { ToolStatus::Failed },
                output: output["output"].as_str().unwrap_or_default().to_string(),
            }]);
        }
        Ok(json!({}))
    }

    /// The answer to `session/request_permission`: the agent's option matching the policy's
    /// decision or the operator's choice, or `cancelled` once the turn is stopped.
    async fn permission(&self, params: &Value) -> Value {
        let cancelled = json!({"outcome": {"outcome": "cancelled"}});
        if self.stop.is_cancelled() {
            return cancelled;
        }
        let call = &params["toolCall"];
        let options = &params["options"];
        let id = call["toolCallId"].as_str().unwrap_or_default().to_string();
        let (known_kind, known_title) = self.updates().known(&id);
        let kind = call["kind"].as_str().map(String::from).or(known_kind);
        let title = call["title"].as_str().map(String::from).or(known_title).unwrap_or_else(|| "a tool".into());
        let paths: Vec<&str> =
            call["locations"].as_array().into_iter().flatten().filter_map(|l| l["path"].as_str()).collect();
        let inside = paths.iter().all(|p| self.workdir.contains(p));
        let selected = |option: Option<String>| match option {
            Some(option) => json!({"outcome": {"outcome": "selected", "optionId": option}}),
            None => json!({"outcome": {"outcome": "cancelled"}}),
        };
        let (decision, reason, answer) = match policy::decide(kind.as_deref(), inside, self.commands, self.read_only) {
            Decision::Allow(reason) => ("allowed", reason.to_string(), selected(policy::option_for(options, true))),
            Decision::Refuse(reason) => ("refused", reason.to_string(), selected(policy::option_for(options, false))),
            Decision::Ask(why) => {
                // What the agent wrote before asking is stored before the card shows (not
                // held as live text until the answer), so the transcript reads in order.
                let mut before = Vec::new();
                self.updates().flush(&mut before);
                self.emit(before);
                let ask = PermissionAsk {
                    tool_call_id: id.clone(),
                    title: title.clone(),
                    kind: policy::tool_kind(kind.as_deref()),
                    locations: paths.iter().map(|p| self.workdir.shown(p)).collect(),
                    why: why.to_string(),
                    options: policy::choices(options),
                    input: params.clone(),
                };
                let chosen = match &self.operator {
                    Some(operator) => tokio::select! {
                        chosen = operator.ask(ask) => chosen,
                        _ = self.stop.cancelled() => None,
                    },
                    None => None,
                };
                if self.stop.is_cancelled() {
                    return cancelled;
                }
                match chosen {
                    Some(option) => {
                        let name = policy::choices(options)
                            .into_iter()
                            .find(|c| c.id == option)
                            .map_or_else(|| option.clone(), |c| c.name);
                        ("asked", format!("{why}; the operator chose \"{name}\""), selected(Some(option)))
                    }
                    None => (
                        "asked",
                        format!("{why}; nobody could answer, so it was refused"),
                        selected(policy::option_for(options, false)),
                    ),
                }
            }
        };
        let mut events = Vec::new();
        self.updates().flush(&mut events);
        events.push(DriverEvent::PermissionRequest {
            id,
            tool: title,
            input: json!({"decision": decision, "reason": reason, "kind": kind, "locations": paths}),
        });
        self.emit(events);
        answer
    }
}

fn invalid(message: String) -> Refusal {
    (INVALID_PARAMS, message)
}
