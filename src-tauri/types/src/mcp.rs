//! MCP servers declared once for every agent (SPEC §23): what Settings shows of them, how one
//! is saved, and what a check of them found.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a server was declared: `kiln.toml` (shared with the repository) or Settings (this
/// user's, values sealed). A Settings server of the same name as a `kiln.toml` one is used
/// instead of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum McpSource {
    Repository,
    Settings,
}

/// A server as Settings show it: the names of its variables and headers, never their values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpServerView {
    pub name: String,
    pub source: McpSource,
    /// The command agents start (stdio), with its arguments; null for an HTTP server.
    pub command: Option<String>,
    pub args: Vec<String>,
    /// The address agents reach (HTTP); null for a command.
    pub url: Option<String>,
    pub env_names: Vec<String>,
    pub header_names: Vec<String>,
    /// A Settings server of the same name is used instead of this `kiln.toml` one.
    pub overridden: bool,
}

/// A variable or header and its value (write-only: stored sealed, never shown again).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NamedValue {
    pub name: String,
    pub value: String,
}

/// Adds or replaces this user's server `name`: a `command` (with `args`, `env`) or a `url`
/// (with `headers`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveMcpServerArgs {
    pub name: String,
    #[serde(default)]
    #[ts(optional)]
    pub command: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub args: Option<Vec<String>>,
    #[serde(default)]
    #[ts(optional)]
    pub url: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub env: Option<Vec<NamedValue>>,
    #[serde(default)]
    #[ts(optional)]
    pub headers: Option<Vec<NamedValue>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpServerNameArgs {
    pub name: String,
}

/// What Kiln found when it started (or reached) a server and asked for its tools, as an
/// agent would.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpServerCheck {
    pub name: String,
    pub source: McpSource,
    /// It answered `initialize`.
    pub started: bool,
    /// The name and version it gave, as "name version".
    pub server: Option<String>,
    /// The tools it offers, by name; agents see them as `mcp__<server>__<tool>`.
    pub tools: Vec<String>,
    /// Why it did not start or answer, with the end of what it wrote to stderr.
    pub error: Option<String>,
    /// How long the check took, in milliseconds.
    pub millis: u64,
}
