//! The transcript and the events the engine streams: entries, live status, `KilnEvent`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum EntryKind {
    User,
    Agent,
    System,
    Tool,
    Gate,
    Handoff,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptEntry {
    pub id: i64,
    pub session_id: String,
    pub kind: EntryKind,
    pub module: Option<String>,
    pub role: Option<String>,
    pub text: String,
    pub created_at: String,
    /// An operator message's chips: what was pointed at in the preview with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub context: Option<Vec<PointedChip>>,
}

/// What changed, streamed to every open view (Tauri channel or server-sent events).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum EventBody {
    /// Boxed: a session view is the largest body by far, and every other event would carry its size.
    Session {
        session: Box<SessionView>,
    },
    Transcript {
        entry: TranscriptEntry,
    },
    #[serde(rename_all = "camelCase")]
    SessionRemoved {
        session_id: String,
    },
    Workspace {
        workspace: WorkspaceView,
    },
    /// A session's preview changed state (starting, ready, crashed, stopped…).
    Preview {
        preview: PreviewView,
    },
    /// A delivery run moved: a step started, finished or failed, or the run ended.
    Delivery {
        run: DeliveryRun,
    },
    /// The subscriber asked to resume from an event no longer kept: refetch everything.
    Resync,
    /// What a session's agent is doing right now (streamed text, a provider retrying):
    /// ephemeral, never stored in the transcript; the next `Live` of the session replaces it.
    Live {
        live: LiveView,
    },
    /// A terminal opened, exited, was resized or stopped.
    Terminal {
        terminal: TerminalView,
    },
    /// A session's gates ran (after a turn, "Run gates", the setup): its latest result of every
    /// gate, as `get_gates` answers now.
    #[serde(rename_all = "camelCase")]
    Gates {
        session_id: String,
        gates: Vec<GateResultView>,
    },
    /// A session's working copy was recorded as checkpoint `sequence` (after a turn, an update,
    /// a resolved conflict…), or put back to it (`restored`): its files changed, so its diff and
    /// which gate results judged them did too.
    #[serde(rename_all = "camelCase")]
    Checkpoint {
        session_id: String,
        sequence: i64,
        restored: bool,
    },
}

/// The phase a `LiveView` belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum LivePhase {
    Planning,
    Setup,
    Turn,
}

/// A session's live activity. A view with `text` and `status` both `None` clears it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LiveView {
    pub session_id: String,
    pub phase: LivePhase,
    pub role: Option<String>,
    pub module: Option<String>,
    /// The agent's prose of the current stretch so far, not yet written to the
    /// transcript; `None` once it is written (or nothing is streaming).
    pub text: Option<String>,
    /// One updating status line for the phase, or `None` when the phase ended or cleared.
    pub status: Option<LiveStatus>,
    /// The end of what the running command has printed so far (at most
    /// `live::OUTPUT_TAIL` bytes), where the agent reports it as it runs; `None` when no
    /// command runs or its output is not heard until it ends.
    #[serde(default)]
    #[ts(optional)]
    pub output: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum LiveStatusKind {
    /// The provider failed and the agent is trying again.
    Retrying,
    /// The provider failed for good (the phase ends).
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LiveStatus {
    pub kind: LiveStatusKind,
    /// Words for people, e.g. "The provider is overloaded (529)".
    pub message: String,
    pub attempt: Option<u32>,
    pub max_attempts: Option<u32>,
    /// A stable short reason: `auth`, `rate-limit`, `overloaded`, `network` or `other`.
    pub reason: String,
    /// The HTTP status, when known.
    pub http_status: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct KilnEvent {
    pub id: u64,
    pub at: String,
    pub body: EventBody,
}
