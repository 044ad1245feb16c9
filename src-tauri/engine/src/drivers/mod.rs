//! Drivers: how Kiln runs each coding agent and reads what it prints. Every driver
//! turns its agent's own output into the one `events::DriverEvent` stream, so the
//! rest of the engine never needs to know which agent did the work.

pub(crate) mod acp;
pub mod agent_config;
pub(crate) mod claude;
pub(crate) mod codex;
pub(crate) mod discover;
pub(crate) mod events;
pub(crate) mod health;
pub(crate) mod mcp;
pub(crate) mod models;
pub(crate) mod openai;
pub(crate) mod permission;
pub(crate) mod registry;
pub(crate) mod runner;
pub(crate) mod tools;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use events::DriverEvent;
use kiln_runtime::process::Running;
use kiln_types::error::Result;

/// Everything a driver needs for one turn.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    /// The session's working copy: where the agent works.
    pub workdir: PathBuf,
    /// The session's own directory (`.kiln/sessions/<id>`), where the commands Kiln runs
    /// for the agent get their home and temporary directory (`kiln_runtime::sandbox::Scope`).
    pub session_dir: PathBuf,
    /// The operator's message, with the attachments note in front when there are any.
    pub prompt: String,
    /// The role's instruction and the session context, given through the agent's own
    /// mechanism (an appended system prompt, an instructions setting), never by editing
    /// the repository's `CLAUDE.md` or `AGENTS.md`.
    pub instructions: String,
    /// The agent's id for the conversation so far, to continue it.
    pub resume_id: Option<String>,
    pub model: Option<String>,
    /// A read-only turn (the planner, a review) may not change files.
    pub read_only: bool,
    /// What the commands Kiln runs for the agent get of the user's environment
    /// (`kiln.toml [environment]`).
    pub environment: kiln_runtime::sandbox::EnvironmentConfig,
    /// The MCP servers the user declared (`crate::mcp`), handed to the agent in its own form
    /// (`mcp`); none for a planner or review turn's read-only look.
    pub mcp: Vec<crate::mcp_config::McpServer>,
}

/// Where a running driver reports: its events, and its process group so a stop can
/// kill everything it started.
pub struct TurnSink {
    pub events: mpsc::UnboundedSender<DriverEvent>,
    pub on_process: Box<dyn FnOnce(Running) + Send>,
    /// Cancelled when the operator stops the turn. A driver that can end a turn politely
    /// (ACP's `session/cancel`) does so and ends its stream; the engine kills the process
    /// group after a short grace period whatever the driver does.
    pub stop: CancellationToken,
    /// Answers what the command policy cannot decide (a card in the chat); `None` where
    /// nobody can answer (the planner, tests), and then the request is refused.
    pub operator: Option<Arc<dyn permission::Operator>>,
}

impl TurnSink {
    /// A sink nobody stops early and with no operator to ask.
    pub fn new(events: mpsc::UnboundedSender<DriverEvent>, on_process: Box<dyn FnOnce(Running) + Send>) -> Self {
        TurnSink { events, on_process, stop: CancellationToken::new(), operator: None }
    }
}

pub type TurnFuture = Pin<Box<dyn Future<Output = Result<()>> + Send>>;

/// One agent. `run` resolves when the turn is over; it reports through `sink` and ends
/// its stream with `TurnEnded` (the caller supplies one when a driver dies without).
pub trait Driver: Send + Sync {
    /// `claude`, `codex`, `openai-compatible`: the key resume ids are stored under.
    fn id(&self) -> &'static str;
    fn run(&self, request: TurnRequest, sink: TurnSink) -> TurnFuture;
    /// Whether the driver ends its turn by itself soon after `TurnSink::stop` is cancelled
    /// (ACP's `session/cancel`); the others are killed at once.
    fn stops_politely(&self) -> bool {
        false
    }

    /// The agent's own configuration files a turn could change but Landlock cannot keep it
    /// from (`agent_config`), read before the turn and put back after it.
    fn guard_config(&self) -> agent_config::Guard {
        agent_config::Guard::none()
    }
}
