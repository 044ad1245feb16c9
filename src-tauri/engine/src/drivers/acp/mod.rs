//! The `acp` driver: any agent that speaks the Agent Client Protocol (Gemini CLI, OpenCode,
//! Goose, Claude and Codex through their ACP adapters, a custom command line). Kiln speaks
//! ACP protocol version 1 as the client, through the maintained Rust SDK
//! `agent-client-protocol` 5.2.0 (JSON-RPC 2.0, one message per line): the SDK's
//! connection runs over the stdin and stdout of the agent process Kiln spawns itself, so the
//! agent runs confined and in its own process group like every agent CLI
//! (`super::runner::spawn`). Each turn is its own process: `initialize`, then `session/load`
//! of the conversation so far (when the agent offers it) or `session/new`, then
//! `session/prompt`; the process is killed when the turn ends.
//!
//! - `turn.rs`: one turn over the connection (set-up, model, prompt, stop, the end). ACP's
//!   "session" is the agent's conversation, which Kiln calls a conversation and keeps as a
//!   resume id; a Kiln session is the change;
//! - `client.rs`: what Kiln serves the agent (updates, fs, terminals, permissions);
//! - `updates.rs`: `session/update` as driver events; `policy.rs`: permission decisions;
//! - `terminal.rs`: the commands the agent runs through Kiln; `workdir.rs`: its paths.

mod client;
mod policy;
pub(crate) mod presets;
mod terminal;
mod turn;
mod updates;
mod workdir;

#[cfg(feature = "test-support")]
pub use client::Client;
#[cfg(feature = "test-support")]
pub use workdir::Workdir;

use std::path::PathBuf;

use kiln_types::CommandPolicy;

/// How to start the agent: its binary, arguments and extra environment (set over the
/// operator's, as for every agent CLI).
#[derive(Clone, PartialEq, Eq)]
pub struct AcpCommand {
    pub binary: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

/// The environment's names only: its values may be API keys.
impl std::fmt::Debug for AcpCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.env.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("AcpCommand")
            .field("binary", &self.binary)
            .field("args", &self.args)
            .field("env", &names)
            .finish()
    }
}

/// One ACP agent as a driver. No `Debug`: its environment may hold an API key.
#[derive(Clone)]
pub struct AcpDriver {
    /// `acp:<preset>`: the key the agent's session ids are stored under.
    pub id: &'static str,
    pub command: AcpCommand,
    /// Which commands the agent may run (Settings).
    pub commands: CommandPolicy,
    /// The agent's own state directories (its sessions, logins, logs), writable beside the
    /// working copy and made before the first run (`kiln_runtime::sandbox::Confinement::create`).
    pub state_dirs: Vec<PathBuf>,
    /// Its configuration files there, put back after each turn that changes them
    /// (`super::agent_config`).
    pub config_files: Vec<PathBuf>,
}

impl AcpDriver {
    pub fn new(id: &'static str, command: AcpCommand, commands: CommandPolicy) -> Self {
        AcpDriver { id, command, commands, state_dirs: Vec::new(), config_files: Vec::new() }
    }

    /// The same driver with the agent's state directories writable (see `state_dirs`).
    pub fn with_state_dirs(mut self, dirs: Vec<PathBuf>) -> Self {
        self.state_dirs = dirs;
        self
    }

    /// The same driver with its configuration files guarded (see `config_files`).
    pub fn with_config_files(mut self, files: Vec<PathBuf>) -> Self {
        self.config_files = files;
        self
    }
}

impl super::Driver for AcpDriver {
    fn id(&self) -> &'static str {
        self.id
    }

    fn run(&self, request: super::TurnRequest, sink: super::TurnSink) -> super::TurnFuture {
        Box::pin(turn::run(self.clone(), request, sink))
    }

    fn stops_politely(&self) -> bool {
        true
    }

    /// The preset's configuration files; Codex's adapter shares Codex's home, writable
    /// whole (see `agent_config`).
    fn guard_config(&self) -> super::agent_config::Guard {
        if self.id == "acp:codex" {
            let home = kiln_runtime::sandbox::AgentState::dir("CODEX_HOME", ".codex", &self.command.env);
            return super::agent_config::Guard::take(home, super::agent_config::CODEX_CONFIG);
        }
        super::agent_config::Guard::files(self.config_files.clone())
    }
}
