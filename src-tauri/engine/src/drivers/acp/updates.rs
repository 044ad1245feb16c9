//! ACP's `session/update` notifications as Kiln's driver events, read from the raw JSON so
//! an update kind this SDK version does not know is kept (`Unknown`), never an error.
//!
//! - `agent_message_chunk`: `TextDelta` for the live view; the whole stretch of prose
//!   becomes one `Text` when something else arrives or the turn ends (as Claude's driver
//!   sends a message whole after its deltas; only `Text` is stored).
//! - `agent_thought_chunk`: gathered the same way into one `Thought`.
//! - `tool_call` / `tool_call_update`: `ToolCall` (kind, title, `rawInput` and locations),
//!   then `ToolResult` once the status is completed or failed, and a `FileChange` for each
//!   diff (no `oldText`: added), unless Kiln already reported the write it served.
//! - `plan`: a `Thought` listing the entries and their status: the plan is the agent's
//!   own reasoning about what it will do, which the transcript shows as thoughts (an
//!   `Unknown` would be stored but never shown).
//! - `usage_update`: no event of its own. It carries the context window and the session's
//!   cumulative cost, so the turn's cost is the last cost minus the one the session had
//!   before the prompt; it becomes part of the turn's one `Usage` (`Turn::usage`).
//! - `user_message_chunk`: the prompt Kiln sent, already in the transcript: no event.
//! - `current_mode_update`, `available_commands_update`, `config_option_update`,
//!   `session_info_update` and any kind not listed: `Unknown { source: "acp" }`.
//!
//! While a `session/load` replays the conversation, nothing reaches the transcript again.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::policy::tool_kind;
use super::workdir::Workdir;
use crate::drivers::events::{title_line, DriverEvent, FileChangeKind, ToolKind, ToolStatus, Usage};

pub(super) const SOURCE: &str = "acp";

#[derive(Debug)]
struct Call {
    kind: Option<String>,
    title: String,
    done: bool,
}

/// The state of one turn's updates.
#[derive(Debug)]
pub struct Updates {
    workdir: Workdir,
    /// A `session/load` is replaying the conversation: its updates are not this turn's.
    pub replaying: bool,
    text: String,
    thought: String,
    /// The last stretch of prose, the turn's final text.
    pub last_text: Option<String>,
    calls: HashMap<String, Call>,
    /// Files Kiln wrote for the agent (`fs/write_text_file`) and already reported, until
    /// the agent's diff for them arrives.
    written: HashSet<String>,
    /// The session's cumulative cost in USD before this turn, and the last one reported.
    cost_before: Option<f64>,
    cost_now: Option<f64>,
}

impl Updates {
    pub fn new(workdir: Workdir) -> Updates {
        Updates {
            workdir,
            replaying: false,
            text: String::new(),
            thought: String::new(),
            last_text: None,
            calls: HashMap::new(),
            written: HashSet::new(),
            cost_before: None,
            cost_now: None,
        }
    }

    /// The events for one update (the `update` object of a `session/update`).
    pub fn update(&mut self, update: &Value) -> Vec<DriverEvent> {
        let kind = update["sessionUpdate"].as_str().unwrap_or_default();
        if kind == "usage_update" {
            self.cost(update);
            return Vec::new();
        }
        if self.replaying {
            return Vec::new();
        }
        let mut events = Vec::new();
        match (kind, update["content"]["type"].as_str(), update["content"]["text"].as_str()) {
            ("agent_message_chunk", Some("text"), Some(text)) => {
                self.flush_thought(&mut events);
                self.text.push_str(text);
                if !text.is_empty() {
                    events.push(DriverEvent::TextDelta { text: text.to_string() });
                }
                return events;
            }
            ("agent_thought_chunk", Some("text"), Some(text)) => {
                self.flush_text(&mut events);
                self.thought.push_str(text);
                return events;
            }
            _ => {}
        }
        self.flush(&mut events);
        match kind {
            "user_message_chunk" => {}
            "tool_call" => self.tool_call(update, &mut events),
            "tool_call_update" => self.tool_call_update(update, &mut events),
            "plan" => events.push(DriverEvent::Thought { text: plan(update) }),
            _ => events.push(unknown(update.clone())),
        }
        events
    }

    /// The prose and thought still gathering, as whole events (at the end of the turn).
    pub fn flush(&mut self, events: &mut Vec<DriverEvent>) {
        self.flush_text(events);
        self.flush_thought(events);
    }

    fn flush_text(&mut self, events: &mut Vec<DriverEvent>) {
        if !self.text.is_empty() {
            let text = std::mem::take(&mut self.text);
            self.last_text = Some(text.clone());
            events.push(DriverEvent::Text { text });
        }
    }

    fn flush_thought(&mut self, events: &mut Vec<DriverEvent>) {
        if !self.thought.trim().is_empty() {
            events.push(DriverEvent::Thought { text: std::mem::take(&mut self.thought) });
        }
        self.thought.clear();
    }

    fn tool_call(&mut self, update: &Value, events: &mut Vec<DriverEvent>) {
        let id = update["toolCallId"].as_str().unwrap_or_default().to_string();
        let call = Call {
            kind: update["kind"].as_str().map(String::from),
            title: title_line(update["title"].as_str().unwrap_or("tool")),
            done: false,
        };
        events.push(DriverEvent::ToolCall {
            id: id.clone(),
            kind: tool_kind(call.kind.as_deref()),
            title: call.title.clone(),
            input: json!({"rawInput": update["rawInput"], "locations": update["locations"]}),
        });
        self.calls.insert(id, call);
        // Some agents report a call only once it is over.
        self.finish_call(update, events);
    }

    fn tool_call_update(&mut self, update: &Value, events: &mut Vec<DriverEvent>) {
        let id = update["toolCallId"].as_str().unwrap_or_default();
        match self.calls.get_mut(id) {
            Some(call) => {
                if let Some(kind) = update["kind"].as_str() {
                    call.kind = Some(kind.to_string());
                }
                if let Some(title) = update["title"].as_str() {
                    call.title = title_line(title);
                }
            }
            // An update for a call never announced: announce it first.
            None => return self.tool_call(update, events),
        }
        self.finish_call(update, events);
    }

    /// The result and the file changes once the call's status says it is over.
    fn finish_call(&mut self, update: &Value, events: &mut Vec<DriverEvent>) {
        let status = match update["status"].as_str() {
            Some("completed") => ToolStatus::Completed,
            Some("failed") => ToolStatus::Failed,
            _ => return,
        };
        let id = update["toolCallId"].as_str().unwrap_or_default().to_string();
        match self.calls.get_mut(&id) {
            Some(call) if !call.done => call.done = true,
            _ => return,
        }
        events.push(DriverEvent::ToolResult { id, status, output: output(update) });
        if status == ToolStatus::Failed {
            return;
        }
        for diff in update["content"].as_array().into_iter().flatten().filter(|c| c["type"] == "diff") {
            let Some(path) = diff["path"].as_str() else { continue };
            let path = self.workdir.shown(path);
            if self.written.remove(&path) {
                continue;
            }
            let change = if diff["oldText"].is_null() { FileChangeKind::Add } else { FileChangeKind::Update };
            events.push(DriverEvent::FileChange { path, change });
        }
    }

    /// Kiln wrote `path` (relative) for the agent: the change to report, remembered so the
    /// agent's diff of the same file does not report it twice.
    pub fn wrote(&mut self, path: String, change: FileChangeKind) -> Vec<DriverEvent> {
        let mut events = Vec::new();
        self.flush(&mut events);
        self.written.insert(path.clone());
        events.push(DriverEvent::FileChange { path, change });
        events
    }

    /// The kind and title of a call the agent announced, to judge its permission request.
    pub fn known(&self, id: &str) -> (Option<String>, Option<String>) {
        match self.calls.get(id) {
            Some(call) => (call.kind.clone(), Some(call.title.clone())),
            None => (None, None),
        }
    }

    /// Whether the agent reports a command it has not finished (its own `execute` call):
    /// then a terminal Kiln runs for it needs no tool events of its own.
    pub fn open_command(&self) -> bool {
        self.calls.values().any(|c| !c.done && tool_kind(c.kind.as_deref()) == ToolKind::Execute)
    }

    fn cost(&mut self, update: &Value) {
        let cost = &update["cost"];
        let Some(amount) = cost["amount"].as_f64().filter(|_| cost["currency"] == "USD") else { return };
        if self.replaying {
            self.cost_before = Some(amount);
        } else {
            self.cost_now = Some(amount);
        }
    }

    /// The turn's usage from the prompt's answer (`usage`, tokens) and the cost updates;
    /// `None` when the agent reported neither, so the turn's usage stays unknown.
    pub fn usage(&self, answer_usage: &Value) -> Option<Usage> {
        let tokens = |key: &str| answer_usage[key].as_u64().unwrap_or(0);
        let cost_usd = self.cost_now.map(|now| (now - self.cost_before.unwrap_or(0.0)).max(0.0));
        if answer_usage.is_null() && cost_usd.is_none() {
            return None;
        }
        Some(Usage {
            input_tokens: tokens("inputTokens"),
            output_tokens: tokens("outputTokens"),
            cache_read_tokens: tokens("cachedReadTokens"),
            cache_write_tokens: tokens("cachedWriteTokens"),
            cost_usd,
        })
    }
}

/// A tool call's output: the text of its content blocks, else (unless it ran in a
/// terminal) its `rawOutput`.
fn output(update: &Value) -> String {
    let texts: Vec<&str> = update["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["type"] == "content")
        .filter_map(|c| c["content"]["text"].as_str())
        .collect();
    if !texts.is_empty() {
        return texts.join("\n");
    }
    // A command run in a terminal Kiln served: its output is the terminal's (`Client`).
    if update["content"].as_array().into_iter().flatten().any(|c| c["type"] == "terminal") {
        return String::new();
    }
    match &update["rawOutput"] {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn plan(update: &Value) -> String {
    let entries: Vec<String> = update["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let mark = match e["status"].as_str() {
                Some("completed") => "[x]",
                Some("in_progress") => "[~]",
                _ => "[ ]",
            };
            format!("{mark} {}", e["content"].as_str().unwrap_or_default())
        })
        .collect();
    format!("Plan: {}", entries.join(" · "))
}

fn unknown(raw: Value) -> DriverEvent {
    DriverEvent::Unknown { source: SOURCE.into(), raw }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn updates() -> Updates {
        Updates::new(Workdir::new(std::path::Path::new("/work/copy")))
    }

    fn chunk(kind: &str, text: &str) -> Value {
        json!({"sessionUpdate": kind, "content": {"type": "text", "text": text}})
    }

    #[test]
    fn chunks_gather_into_one_text_and_one_thought() {
        let mut u = updates();
        assert_eq!(u.update(&chunk("agent_thought_chunk", "think ")), vec![]);
        assert_eq!(u.update(&chunk("agent_thought_chunk", "hard")), vec![]);
        let events = u.update(&chunk("agent_message_chunk", "Hel"));
        assert_eq!(
            events,
            vec![DriverEvent::Thought { text: "think hard".into() }, DriverEvent::TextDelta { text: "Hel".into() }]
        );
        u.update(&chunk("agent_message_chunk", "lo"));
        let mut end = Vec::new();
        u.flush(&mut end);
        assert_eq!(end, vec![DriverEvent::Text { text: "Hello".into() }]);
        assert_eq!(u.last_text.as_deref(), Some("Hello"));
    }

    #[test]
    fn tool_calls_their_results_and_diffs() {
        let mut u = updates();
        let call = json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Write a.txt", "kind": "edit",
            "status": "pending", "locations": [{"path": "/work/copy/a.txt"}], "rawInput": {"path": "a.txt"}});
        let events = u.update(&call);
        assert_eq!(
            events,
            vec![DriverEvent::ToolCall {
                id: "c1".into(),
                kind: ToolKind::Edit,
                title: "Write a.txt".into(),
                input: json!({"rawInput": {"path": "a.txt"}, "locations": [{"path": "/work/copy/a.txt"}]}),
            }]
        );
        let done = json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed", "content": [
            {"type": "diff", "path": "/work/copy/a.txt", "oldText": null, "newText": "A"},
            {"type": "diff", "path": "/work/copy/b.txt", "oldText": "x", "newText": "y"},
            {"type": "content", "content": {"type": "text", "text": "wrote"}}]});
        assert_eq!(
            u.update(&done),
            vec![
                DriverEvent::ToolResult { id: "c1".into(), status: ToolStatus::Completed, output: "wrote".into() },
                DriverEvent::FileChange { path: "a.txt".into(), change: FileChangeKind::Add },
                DriverEvent::FileChange { path: "b.txt".into(), change: FileChangeKind::Update },
            ]
        );
        // A second completion of the same call says nothing more.
        assert_eq!(u.update(&done), vec![]);

        // A write Kiln served is reported once, not again by the agent's diff.
        let mut u = updates();
        assert_eq!(u.wrote("a.txt".into(), FileChangeKind::Add).len(), 1);
        let failed_raw = json!({"sessionUpdate": "tool_call_update", "toolCallId": "c2", "status": "completed", "kind": "edit",
            "content": [{"type": "diff", "path": "/work/copy/a.txt", "oldText": null, "newText": "A"}], "rawOutput": {"ok": true}});
        let events = u.update(&failed_raw);
        assert!(matches!(&events[0], DriverEvent::ToolCall { id, .. } if id == "c2"), "{events:?}");
        assert_eq!(
            events[1],
            DriverEvent::ToolResult { id: "c2".into(), status: ToolStatus::Completed, output: r#"{"ok":true}"#.into() }
        );
        assert_eq!(events.len(), 2, "{events:?}");
    }

    #[test]
    fn plan_usage_modes_and_unknown_kinds() {
        let mut u = updates();
        let plan = json!({"sessionUpdate": "plan", "entries": [
            {"content": "read", "status": "completed", "priority": "high"},
            {"content": "write", "status": "in_progress", "priority": "high"}]});
        assert_eq!(u.update(&plan), vec![DriverEvent::Thought { text: "Plan: [x] read · [~] write".into() }]);
        for raw in [
            json!({"sessionUpdate": "current_mode_update", "currentModeId": "code"}),
            json!({"sessionUpdate": "available_commands_update", "availableCommands": []}),
            json!({"sessionUpdate": "something_new", "x": 1}),
        ] {
            assert_eq!(u.update(&raw), vec![DriverEvent::Unknown { source: "acp".into(), raw: raw.clone() }]);
        }
        assert_eq!(u.usage(&Value::Null), None, "nothing reported: unknown, never 0");
        u.replaying = true;
        u.update(&json!({"sessionUpdate": "usage_update", "used": 10, "size": 100, "cost": {"amount": 1.0, "currency": "USD"}}));
        assert_eq!(u.update(&chunk("agent_message_chunk", "old")), vec![], "a replay reaches nothing");
        u.replaying = false;
        u.update(&json!({"sessionUpdate": "usage_update", "used": 20, "size": 100, "cost": {"amount": 1.25, "currency": "USD"}}));
        let usage = u.usage(&json!({"totalTokens": 30, "inputTokens": 20, "outputTokens": 10, "cachedReadTokens": 5}));
        assert_eq!(
            usage,
            Some(Usage {
                input_tokens: 20,
                output_tokens: 10,
                cache_read_tokens: 5,
                cache_write_tokens: 0,
                cost_usd: Some(0.25)
            })
        );
        let mut tokens_only = updates();
        assert_eq!(tokens_only.usage(&json!({"inputTokens": 1})).unwrap().cost_usd, None);
        tokens_only.update(
            &json!({"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": {"amount": 3, "currency": "EUR"}}),
        );
        assert_eq!(tokens_only.usage(&Value::Null), None, "a cost in another currency is not dollars");
    }
}
