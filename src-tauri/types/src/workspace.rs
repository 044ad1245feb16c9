//! The open workspace and the app's state: what `get_state`, `open_workspace` and
//! `detect_workspace` answer, and the set-up `save_config` writes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::*;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RoleSummary {
    pub id: String,
    pub name: String,
}

/// What Kiln found in a workspace's own tooling (ARCHITECTURE.md: Gates): shown the first time a
/// workspace is opened, printed by `kiln detect`, saved as `kiln.toml` on request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DetectionView {
    pub root: String,
    /// The workspace's `kiln.toml`, when it has one.
    pub config_path: Option<String>,
    pub workflow: Workflow,
    pub modules: Vec<DetectedModule>,
    pub toolchains: Vec<ToolchainCheck>,
    /// The install step run after a session's working copy is made.
    pub setup: Option<DetectedCommand>,
    /// The same, as the `kiln.toml` that "Save as kiln.toml" writes.
    pub toml: String,
    /// What the commands Kiln runs (setup, gates, the preview, terminals) get of the
    /// user's environment, by name, in order.
    pub environment: Vec<PassedVariable>,
    /// The user's tool configuration files (under the home) the commands read from a copy.
    pub config_files: Vec<String>,
}

/// One variable the commands Kiln runs get.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PassedVariable {
    pub name: String,
    /// Null for a value kept from view: a secret-looking name the user passed on purpose.
    pub value: Option<String>,
    /// `your environment`, `kiln.toml [environment] pass` or `kiln.toml [environment] set`.
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DetectedModule {
    pub id: String,
    pub directory: String,
    pub toolchain: Toolchain,
    pub gates: Vec<DetectedGate>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DetectedGate {
    /// `dependencies`, `typecheck`, `tests`, `format` or `lint`.
    pub gate: String,
    /// `None`: not configured (never a blocker).
    pub command: Option<String>,
    /// Where the command came from, or why there is none.
    pub source: String,
    /// For a gate with no command: what would give it one.
    pub hint: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DetectedCommand {
    pub command: String,
    pub source: String,
}

/// A toolchain the workspace needs and what this machine has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolchainCheck {
    /// The command: `node`, `pnpm`, `cargo`, `python3`, `uv`, `go`, `make`…
    pub name: String,
    /// The version this machine has, `None` when it is missing.
    pub found: Option<String>,
    /// The version the repository asks for (`go 1.23` in go.mod, `engines.node`…).
    pub required: Option<String>,
    pub ok: bool,
    /// What to install, when not ok.
    pub message: Option<String>,
}

/// "Save as kiln.toml": the set-up as the operator edited it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveConfigArgs {
    pub workflow: Workflow,
    /// The install step; empty for none.
    pub setup: Option<String>,
    pub modules: Vec<SaveModuleGates>,
    /// Replace an existing `kiln.toml` (otherwise `CONFIG_EXISTS`).
    #[serde(default)]
    pub replace: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveModuleGates {
    pub id: String,
    /// Gate name to command; an empty command is written as off (not configured).
    pub gates: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceView {
    pub root: String,
    pub name: String,
    pub is_git: bool,
    pub config_path: Option<String>,
    /// `direct` unless the workspace's `kiln.toml` chooses `specs`.
    pub workflow: Workflow,
    /// The roles the composer's picker offers: `engineer` and the workspace's own in
    /// the direct workflow, the specialists in specs.
    pub roles: Vec<RoleSummary>,
    pub id_pattern: Option<String>,
    pub modules: Vec<ModuleInfo>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    Desktop,
    Serve,
}

/// Who `kiln serve` trusts (ARCHITECTURE.md: Security). Chosen on the command line or by `KILN_MODE`,
/// never over HTTP. The desktop app is `loopback`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ServeMode {
    /// The machine: requests must name the loopback address and port; local agent
    /// CLIs are offered.
    #[default]
    Loopback,
    /// Whoever holds an access token: a browser session is required for everything,
    /// and only bring-your-own-key drivers are offered.
    SelfHosted,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppState {
    pub version: String,
    pub transport: Transport,
    pub mode: ServeMode,
    /// Whether this browser holds a connection; set by `kiln serve`, absent on the desktop.
    #[ts(optional)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connected: Option<bool>,
    pub workspace: Option<WorkspaceView>,
    pub recent_workspaces: Vec<String>,
    /// Whether this engine offers terminals at all (not in self-hosted mode without
    /// `--allow-terminals`).
    pub terminals: bool,
    /// Whether the claude and codex terminal kinds are offered (never in self-hosted mode:
    /// the local CLIs carry the operator's login).
    pub agent_terminals: bool,
    /// The id of the last event sent before this answer: a view that subscribes since it
    /// hears every change after it, including those made while its first questions were
    /// being answered.
    pub last_event: u64,
}

/// `direct` (the default): one engineer role changes anything in the working copy.
/// `specs`: specialists, spec-first routing, approval, allowed paths.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Workflow {
    #[default]
    Direct,
    Specs,
}

impl Workflow {
    pub fn as_str(self) -> &'static str {
        match self {
            Workflow::Direct => "direct",
            Workflow::Specs => "specs",
        }
    }
}
