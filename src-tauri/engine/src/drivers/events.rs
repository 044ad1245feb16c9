//! The one event stream every driver produces (ARCHITECTURE.md: Drivers and turns): whatever agent ran, a turn
//! reads as session started, text, thoughts, tool calls and their results, file
//! changes, usage and turn ended. Anything a parser does not understand is kept as
//! `Unknown` rather than dropped, so a newer agent version never breaks a turn.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum DriverEvent {
    /// The agent's own id for this conversation: pass it back to continue it.
    SessionStarted {
        resume_id: String,
        model: Option<String>,
    },
    Text {
        text: String,
    },
    /// A piece of text still being written, for the live view only: the whole text
    /// follows as `Text`, which alone is stored.
    TextDelta {
        text: String,
    },
    Thought {
        text: String,
    },
    /// `title` is one short line for people; `input` is what the agent sent, whole.
    ToolCall {
        id: String,
        kind: ToolKind,
        title: String,
        input: Value,
    },
    /// Output a running tool printed so far, a piece at a time, for the live view only:
    /// the whole of it comes with the `ToolResult`, which alone is stored.
    ToolOutput {
        id: String,
        output: String,
    },
    /// `id` is the id of the `ToolCall` this answers.
    ToolResult {
        id: String,
        status: ToolStatus,
        output: String,
    },
    FileChange {
        path: String,
        change: FileChangeKind,
    },
    /// The agent asks before using a tool; Kiln answers by policy, never by a prompt.
    PermissionRequest {
        id: String,
        tool: String,
        input: Value,
    },
    Usage(Usage),
    /// A problem the agent reported mid-turn. Whether the turn failed is for
    /// `TurnEnded` to say: agents report recoverable problems the same way.
    Error {
        message: String,
    },
    /// Something the agent wants known that did not stop it (Codex's non-fatal error
    /// items: a deprecated setting, a feature under development): Kiln's log keeps it
    /// whole, the chat a short note, never an error.
    Warning {
        message: String,
    },
    /// The provider failed and the agent is trying again by itself. `max_attempts` and
    /// `http_status` when the agent says them.
    Retry {
        attempt: u32,
        message: String,
        #[serde(default)]
        max_attempts: Option<u32>,
        #[serde(default)]
        http_status: Option<u16>,
    },
    /// `final_text` is the agent's last answer; `error` is set only when `is_error`.
    TurnEnded {
        is_error: bool,
        stop_reason: Option<String>,
        final_text: Option<String>,
        error: Option<String>,
    },
    /// A line or item this parser does not know, kept whole. `source` names the driver.
    Unknown {
        source: String,
        raw: Value,
    },
}

/// A turn's tokens and cost, as the records add them up.
pub use kiln_records::store::turns::Usage;

/// What a tool does, so the UI can show and group calls without knowing every agent's
/// tool names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolKind {
    Read,
    Edit,
    Execute,
    Search,
    Fetch,
    Think,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolStatus {
    Completed,
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FileChangeKind {
    Add,
    Update,
    Delete,
}

/// Longest tool title kept; the whole of it is in the call's `input`.
const TITLE_CHARS: usize = 120;

/// A tool title: the first line of `text`, cut to `TITLE_CHARS`.
pub(crate) fn title_line(text: &str) -> String {
    let first = text.trim().lines().next().unwrap_or("");
    let cut: String = first.chars().take(TITLE_CHARS).collect();
    if cut.len() < text.trim().len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// A token count from a usage object; absent counts are 0 (the agent did not use any).
pub(crate) fn count(usage: &Value, key: &str) -> u64 {
    usage[key].as_u64().unwrap_or(0)
}

/// One line of a CLI's stdout as JSON: `None` for a blank line, `Err` with the line kept
/// whole as `Unknown` when it is not JSON.
pub(crate) fn json_line(line: &str, source: &str) -> Option<Result<Value, DriverEvent>> {
    let line = line.trim();
    if line.is_empty() {
        return None;
    }
    Some(
        serde_json::from_str::<Value>(line)
            .map_err(|_| DriverEvent::Unknown { source: source.into(), raw: Value::String(line.to_string()) }),
    )
}

/// Hands what a running command prints to the turn as `ToolOutput` for the call `id`, piece
/// by piece (Kiln's own `run_command`, an ACP agent's terminal). Held weakly: a grandchild
/// still holding the command's pipes never keeps the turn's stream open.
pub(crate) fn output_watch(
    id: String,
    events: tokio::sync::mpsc::WeakUnboundedSender<DriverEvent>,
) -> kiln_runtime::process::Watch {
    std::sync::Arc::new(move |bytes: &[u8]| {
        if let Some(events) = events.upgrade() {
            let output = String::from_utf8_lossy(bytes).into_owned();
            let _ = events.send(DriverEvent::ToolOutput { id: id.clone(), output });
        }
    })
}
