//! A session's terminals: a shell or an agent's own CLI running in a pseudo-terminal in the
//! session's working copy, its arguments and views, and the chunks of its output stream.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What a terminal runs: the user's shell, or an agent's interactive CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum TerminalKind {
    Shell,
    Claude,
    Codex,
}

/// Whether the terminal's program still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum TerminalState {
    Running,
    Exited,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OpenTerminalArgs {
    pub session_id: String,
    pub kind: TerminalKind,
    /// 80 when absent; 2 to 1000.
    #[ts(optional = nullable)]
    #[serde(default)]
    pub cols: Option<u32>,
    /// 24 when absent; 1 to 500.
    #[ts(optional = nullable)]
    #[serde(default)]
    pub rows: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TerminalArgs {
    pub terminal_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TerminalInputArgs {
    pub terminal_id: String,
    /// Text as the terminal view types it (keys, pastes, escape sequences); at most 64 KiB.
    pub data: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResizeTerminalArgs {
    pub terminal_id: String,
    pub cols: u32,
    pub rows: u32,
}

/// One terminal of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TerminalView {
    pub id: String,
    pub session_id: String,
    pub kind: TerminalKind,
    /// What runs, for a tab: `bash`, `claude --resume`, `codex resume`.
    pub title: String,
    pub cols: u32,
    pub rows: u32,
    pub state: TerminalState,
    /// The program's exit code once it exited; null while it runs or when a signal ended it.
    pub exit_code: Option<i32>,
    pub started_at: String,
    pub ended_at: Option<String>,
}

/// One piece of a terminal's output stream: its output as it comes (the first is the replay
/// of what it printed before the view attached), then one `exit` when the program ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum TerminalChunk {
    /// Raw bytes the program wrote, base64-encoded (they need not be whole UTF-8 characters).
    Output { data: String },
    #[serde(rename_all = "camelCase")]
    Exit { exit_code: Option<i32> },
}
