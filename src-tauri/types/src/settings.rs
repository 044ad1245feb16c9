//! The workspace's settings: drivers, confinement, delivery, and their update.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::*;

/// Whether a driver can run here, and why not when it cannot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DriverStatus {
    pub id: String,
    /// The name the pickers show where the id is not one ("Gemini CLI (ACP)"); `None`
    /// shows the id.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub name: Option<String>,
    pub available: bool,
    /// The binary found, the endpoint set, or what to do to make it available.
    pub detail: String,
    /// What the binary's `--version` says (its first line), for a local CLI that
    /// answered; `None` when not installed or it would not say.
    pub version: Option<String>,
    /// Whether it is signed in, where that can be told without the network: an API key in
    /// the environment Kiln gives the CLI or the credentials file its login writes; for
    /// the OpenAI-compatible driver, whether a key is stored. `None` when not installed or
    /// when it cannot be told (the macOS keychain).
    pub signed_in: Option<bool>,
}

/// Which commands agents may run (ARCHITECTURE.md: Drivers and turns), answered for them by Kiln: the setting
/// "commands" in Settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum CommandPolicy {
    /// Commands in the working copy: the agent runs shell commands (builds, tests) and
    /// edits files without asking, confined by the OS where it can be.
    #[default]
    Workdir,
    /// No commands: edits only; the agents' shell tools are turned off.
    None,
}

/// Whether the commands agents run are confined by the OS here (`crate::sandbox`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConfinementView {
    pub available: bool,
    /// `landlock`, or `none` where the kernel lacks it.
    pub mechanism: String,
    /// The kernel's Landlock ABI version.
    pub abi: Option<u32>,
    /// `full`, `partial` (Landlock ABI 1 or 2) or `none`.
    pub enforcement: String,
    /// One sentence saying what commands may write, or that they run with the policy alone.
    pub detail: String,
}

/// The workspace's driver settings. A key is never sent back: only its fingerprint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    pub default_driver: String,
    /// Which commands agents may run.
    pub command_policy: CommandPolicy,
    /// Whether this server lets agents run commands at all: a self-hosted server started
    /// without `--allow-agent-commands` does not, whatever the policy says.
    pub commands_allowed: bool,
    /// How their commands are confined on this machine.
    pub confinement: ConfinementView,
    pub claude_path: Option<String>,
    pub codex_path: Option<String>,
    pub openai_base_url: Option<String>,
    pub openai_model: Option<String>,
    pub openai_key_fingerprint: Option<String>,
    /// Whether the planner agent amends the rules' classification of a new session.
    pub planner_agent: bool,
    /// The drivers this server offers (in self-hosted mode, bring-your-own-key only).
    pub drivers: Vec<DriverStatus>,
    /// The connected application (`[preview] bridge`): the address set here, else kiln.toml's.
    pub bridge_url: Option<String>,
    /// Its access token's fingerprint, when a token is stored for `bridge_url`.
    pub bridge_token_fingerprint: Option<String>,
    pub delivery: DeliverySettingsView,
    /// The ACP agents (README: "ACP agents"): the presets and the custom command line; their
    /// status (found, version) is their entry in `drivers`. Empty on a self-hosted server.
    pub acp_agents: Vec<AcpAgentView>,
    /// The names of the custom ACP command's environment variables; the values are stored
    /// sealed and never sent back.
    pub acp_custom_env_names: Vec<String>,
    /// The MCP servers every agent is given: `kiln.toml`'s, then this user's.
    pub mcp_servers: Vec<crate::McpServerView>,
}

/// An ACP agent Kiln can start: a preset (Gemini CLI, OpenCode, Goose, the Claude and
/// Codex adapters) or the custom command line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AcpAgentView {
    /// Its driver id: `acp:gemini`, …, `acp:custom`.
    pub id: String,
    pub name: String,
    /// The command line Kiln runs (the binary's name and its arguments); for the custom
    /// agent, the line set in Settings ("" when none is).
    pub command: String,
    /// The command a user runs to install it.
    pub install_hint: String,
    /// The binary's path set in Settings, for a preset not on PATH.
    pub path: Option<String>,
}

/// Changes to the settings: an absent field stays as it is, an empty string clears it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateSettingsArgs {
    #[serde(default)]
    #[ts(optional)]
    pub default_driver: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub planner_agent: Option<bool>,
    /// `workdir` (commands in the working copy) or `none` (no commands).
    #[serde(default)]
    #[ts(optional)]
    pub command_policy: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub claude_path: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub codex_path: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub openai_base_url: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub openai_model: Option<String>,
    /// Stored sealed; required again whenever the endpoint changes, so a stored key is
    /// never sent to a host it was not given for.
    #[serde(default)]
    #[ts(optional)]
    pub openai_key: Option<String>,
    /// The connected application's address; changing it requires `bridge_token` in the
    /// same request, so a stored token is never sent to another host.
    #[serde(default)]
    #[ts(optional)]
    pub bridge_url: Option<String>,
    /// Stored sealed, bound to `bridge_url`.
    #[serde(default)]
    #[ts(optional)]
    pub bridge_token: Option<String>,
    /// `owner/name` on the provider.
    #[serde(default)]
    #[ts(optional)]
    pub delivery_repository: Option<String>,
    /// Logins asked to review each pull request.
    #[serde(default)]
    #[ts(optional)]
    pub delivery_reviewers: Option<Vec<String>>,
    /// `auto`, `direct` or `fork`.
    #[serde(default)]
    #[ts(optional)]
    pub delivery_push_mode: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub delivery_remote: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub delivery_base: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub delivery_branch_prefix: Option<String>,
    /// Changing it requires `delivery_token` in the same request.
    #[serde(default)]
    #[ts(optional)]
    pub delivery_api_url: Option<String>,
    /// Stored sealed, bound to `delivery_api_url`; saving never pushes anything.
    #[serde(default)]
    #[ts(optional)]
    pub delivery_token: Option<String>,
    /// The custom ACP agent's command line, split into words as a shell would (quotes,
    /// backslashes) but never run by one; "" clears it.
    #[serde(default)]
    #[ts(optional)]
    pub acp_custom_command: Option<String>,
    /// Its environment, `KEY=VALUE` lines, replacing the stored ones whole; stored sealed.
    /// "" clears them.
    #[serde(default)]
    #[ts(optional)]
    pub acp_custom_env: Option<String>,
    /// Binary paths for ACP presets not on PATH: preset id → absolute path; "" clears one.
    /// Presets not named keep theirs.
    #[serde(default)]
    #[ts(optional)]
    pub acp_paths: Option<std::collections::BTreeMap<String, String>>,
}

/// The models an agent offers, for the composer's model picker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelListView {
    pub driver: String,
    /// The model a turn runs with when none is chosen (Settings' model for the
    /// OpenAI-compatible endpoint), when Kiln knows it.
    pub default_model: Option<String>,
    pub models: Vec<String>,
    /// Where the list comes from, in words: "the endpoint's /models", "Claude Code's model
    /// aliases", or why there is none.
    pub source: String,
    /// The list is all the agent accepts (an endpoint's own list): another model is
    /// refused before a turn starts (`MODEL_UNKNOWN`). Otherwise any model id may be typed.
    pub complete: bool,
}
