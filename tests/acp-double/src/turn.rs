//! One scripted turn: the actions of one `session/prompt`, in order. Each action is an
//! object with one key:
//!
//! - `{"update": {…}}`: a `session/update` body sent as is (plan, usage_update, modes,
//!   kinds no client knows);
//! - `{"message": "text" | ["chunk", …]}`, `{"thought": "text"}`: message or thought chunks;
//! - `{"writeFile": {"path", "content", "old"?}}`: a tool call (kind edit) that writes
//!   through `fs/write_text_file`, completed with a diff (`oldText` is `old`, else null), or
//!   failed with the client's error;
//! - `{"readFile": {"path", "line"?, "limit"?}}`: a tool call (kind read) through
//!   `fs/read_text_file`, completed with the text;
//! - `{"terminal": {"command", "args"?, "outputByteLimit"?}}`: a tool call (kind execute)
//!   through `terminal/create`, `wait_for_exit`, `output` and `release`, completed with the
//!   output, or with only the terminal (`{"type": "terminal"}`) when `"embed": true` (or
//!   failed with the client's error);
//! - `{"permission": {"title", "kind", "locations"?, "options"?}}`:
//!   `session/request_permission` (options default to allow once, allow always, reject
//!   once), then a message chunk `permission: <optionId|cancelled>`;
//! - `{"waitForCancel": true}`: waits for `session/cancel`; the turn ends `cancelled`;
//! - `{"error": {"code", "message", "data"?}}`: the prompt is answered with this error;
//! - `{"stopReason": "…"}`, `{"usage": {…}}`: the prompt's answer (`end_turn`, no usage
//!   by default);
//! - `{"sleep": ms}`; `{"exit": {"code", "stderr"?}}`: the process dies mid-turn.
//!
//! A cancel noticed between actions ends the turn `cancelled`. Every update sent is kept
//! in the session's history, with the prompt as `user_message_chunk`s.

use serde_json::{json, Value};

use crate::state::State;
use crate::wire::Wire;

pub struct Turn<'a> {
    pub wire: &'a mut Wire,
    pub state: &'a mut State,
    pub session: String,
    pub number: usize,
    pub calls: usize,
}

impl Turn<'_> {
    fn update(&mut self, update: Value) {
        self.wire.notify("session/update", json!({"sessionId": self.session, "update": update}));
        let session = self.session.clone();
        self.state.remember(&session, &update);
    }

    fn text(&mut self, kind: &str, text: &str) {
        self.update(json!({"sessionUpdate": kind, "content": {"type": "text", "text": text}}));
    }

    fn call_id(&mut self) -> String {
        self.calls += 1;
        format!("call-{}-{}", self.number, self.calls)
    }

    /// Runs the actions: the prompt's answer, or the error it is answered with.
    pub fn run(&mut self, params: &Value, actions: &[Value]) -> Result<Value, Value> {
        let session = self.session.clone();
        for block in params["prompt"].as_array().into_iter().flatten() {
            self.state.remember(&session, &json!({"sessionUpdate": "user_message_chunk", "content": block}));
        }
        let mut answer = json!({"stopReason": "end_turn"});
        for action in actions {
            if self.wire.cancelled {
                break;
            }
            let Some((name, arg)) = action.as_object().and_then(|o| o.iter().next()) else { continue };
            match name.as_str() {
                "update" => self.update(arg.clone()),
                "message" | "thought" => {
                    let kind = if name == "message" { "agent_message_chunk" } else { "agent_thought_chunk" };
                    match arg {
                        Value::Array(chunks) => chunks.iter().for_each(|c| self.text(kind, c.as_str().unwrap_or(""))),
                        other => self.text(kind, other.as_str().unwrap_or("")),
                    }
                }
                "writeFile" => self.write_file(arg),
                "readFile" => self.read_file(arg),
                "terminal" => self.terminal(arg),
                "permission" => self.permission(arg),
                "waitForCancel" => self.wire.wait_for_cancel(),
                "error" => return Err(arg.clone()),
                "stopReason" => answer["stopReason"] = arg.clone(),
                "usage" => answer["usage"] = arg.clone(),
                "sleep" => std::thread::sleep(std::time::Duration::from_millis(arg.as_u64().unwrap_or(0))),
                "exit" => {
                    eprintln!("{}", arg["stderr"].as_str().unwrap_or(""));
                    std::process::exit(arg["code"].as_i64().unwrap_or(1) as i32);
                }
                other => eprintln!("kiln-acp-double: unknown action {other}"),
            }
        }
        if self.wire.cancelled {
            answer["stopReason"] = json!("cancelled");
        }
        Ok(answer)
    }

    fn start_call(&mut self, title: String, kind: &str, raw_input: Value, path: Option<&Value>) -> String {
        let id = self.call_id();
        let locations: Vec<Value> = path.into_iter().map(|p| json!({"path": p})).collect();
        self.update(json!({
            "sessionUpdate": "tool_call", "toolCallId": id, "title": title, "kind": kind,
            "status": "pending", "locations": locations, "rawInput": raw_input,
        }));
        id
    }

    fn finish_call(&mut self, id: &str, result: Result<Vec<Value>, Value>, raw_output: Option<Value>) {
        let (status, content) = match result {
            Ok(content) => ("completed", content),
            Err(error) => {
                let text = error["message"].as_str().unwrap_or("failed").to_string();
                ("failed", vec![json!({"type": "content", "content": {"type": "text", "text": text}})])
            }
        };
        let mut update =
            json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": status, "content": content});
        if let Some(raw) = raw_output {
            update["rawOutput"] = raw;
        }
        self.update(update);
    }

    fn write_file(&mut self, arg: &Value) {
        let id = self.start_call(
            format!("Write {}", arg["path"].as_str().unwrap_or("")),
            "edit",
            arg.clone(),
            Some(&arg["path"]),
        );
        let params = json!({"sessionId": self.session, "path": arg["path"], "content": arg["content"]});
        let result = self.wire.request("fs/write_text_file", params).map(|_| {
            vec![json!({"type": "diff", "path": arg["path"], "oldText": arg.get("old").cloned().unwrap_or(Value::Null), "newText": arg["content"]})]
        });
        self.finish_call(&id, result, None);
    }

    fn read_file(&mut self, arg: &Value) {
        let id = self.start_call(
            format!("Read {}", arg["path"].as_str().unwrap_or("")),
            "read",
            arg.clone(),
            Some(&arg["path"]),
        );
        let mut params = json!({"sessionId": self.session, "path": arg["path"]});
        for key in ["line", "limit"] {
            if let Some(value) = arg.get(key) {
                params[key] = value.clone();
            }
        }
        let result = self
            .wire
            .request("fs/read_text_file", params)
            .map(|answer| vec![json!({"type": "content", "content": {"type": "text", "text": answer["content"]}})]);
        self.finish_call(&id, result, None);
    }

    fn terminal(&mut self, arg: &Value) {
        let title = format!("{} {}", arg["command"].as_str().unwrap_or(""), args_line(&arg["args"]));
        let id = self.start_call(title.trim().to_string(), "execute", arg.clone(), None);
        let mut params = json!({"sessionId": self.session, "command": arg["command"], "args": arg.get("args").cloned().unwrap_or(json!([]))});
        if let Some(limit) = arg.get("outputByteLimit") {
            params["outputByteLimit"] = limit.clone();
        }
        let created = self.wire.request("terminal/create", params);
        let terminal_id = created.as_ref().map(|c| c["terminalId"].clone()).unwrap_or_default();
        let result = created.and_then(|created| {
            let terminal = json!({"sessionId": self.session, "terminalId": created["terminalId"]});
            let exit = self.wire.request("terminal/wait_for_exit", terminal.clone())?;
            let output = self.wire.request("terminal/output", terminal.clone())?;
            self.wire.request("terminal/release", terminal)?;
            Ok((exit, output))
        });
        match result {
            Ok((exit, output)) => {
                let content = if arg["embed"] == true {
                    vec![json!({"type": "terminal", "terminalId": terminal_id})]
                } else {
                    vec![json!({"type": "content", "content": {"type": "text", "text": output["output"]}})]
                };
                let raw =
                    json!({"exitCode": exit["exitCode"], "signal": exit["signal"], "truncated": output["truncated"]});
                self.finish_call(&id, Ok(content), Some(raw));
            }
            Err(error) => self.finish_call(&id, Err(error), None),
        }
    }

    fn permission(&mut self, arg: &Value) {
        let id = self.call_id();
        let options = arg.get("options").cloned().unwrap_or_else(|| {
            json!([
                {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            ])
        });
        let locations: Vec<Value> =
            arg["locations"].as_array().into_iter().flatten().map(|p| json!({"path": p})).collect();
        let tool_call = json!({"toolCallId": id, "title": arg["title"], "kind": arg["kind"], "locations": locations, "rawInput": arg});
        let params = json!({"sessionId": self.session, "toolCall": tool_call, "options": options});
        let chosen = match self.wire.request("session/request_permission", params) {
            Ok(answer) if answer["outcome"]["outcome"] == "selected" => {
                answer["outcome"]["optionId"].as_str().unwrap_or("?").to_string()
            }
            Ok(_) => "cancelled".to_string(),
            Err(error) => format!("error {}", error["message"].as_str().unwrap_or("")),
        };
        self.text("agent_message_chunk", &format!("permission: {chosen}"));
    }
}

fn args_line(args: &Value) -> String {
    args.as_array().into_iter().flatten().filter_map(Value::as_str).collect::<Vec<_>>().join(" ")
}
