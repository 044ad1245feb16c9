//! An MCP server as the user declares it, once for every agent: in `kiln.toml`
//! (`[mcp.<name>]`, shared with the repository) or in Settings (per user, values sealed).
//! Either a command Kiln's agents start (stdio) or an address they reach (HTTP). What is
//! checked here holds wherever the server comes from; `crate::mcp` keeps the Settings ones,
//! `crate::drivers::mcp` hands them to each agent in its own form.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use kiln_types::McpSource;

/// `[mcp.<name>]`: `command` (with `args` and `env`) or `url` (with `headers`).
#[derive(Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpServerConfig {
    pub command: Option<String>,
    pub args: Vec<String>,
    /// Variables the command gets. In `kiln.toml` they are shared with everyone who clones
    /// the repository: a secret belongs in Settings, where values are sealed.
    pub env: BTreeMap<String, String>,
    pub url: Option<String>,
    pub headers: BTreeMap<String, String>,
}

/// A server an agent is given: its name, where it was declared, and how to reach it, with
/// every value opened (so its `Debug` shows names only, and it is never sent to a view).
#[derive(Clone, PartialEq)]
pub struct McpServer {
    pub name: String,
    pub source: McpSource,
    pub spec: McpServerConfig,
}

/// Names only: a value may be a token.
impl std::fmt::Debug for McpServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServerConfig")
            .field("command", &self.command)
            .field("url", &self.url.as_ref().map(|_| "…"))
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .field("source", &self.source)
            .field("spec", &self.spec)
            .finish()
    }
}

/// At most this many servers, from both places together.
pub(crate) const MAX_SERVERS: usize = 32;

/// What is wrong with a server's declaration, in words naming the key; `None` when it is
/// usable.
pub(crate) fn problem(name: &str, spec: &McpServerConfig) -> Option<String> {
    let valid_name =
        !name.is_empty() && name.len() <= 40 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid_name {
        return Some(format!(
            "the MCP server name `{}` must be 1 to 40 letters, digits, `-` or `_` (agents name its tools after it)",
            name.chars().take(60).collect::<String>()
        ));
    }
    match (&spec.command, &spec.url) {
        (Some(_), Some(_)) => return Some(format!("`mcp.{name}` has both `command` and `url`: give one")),
        (None, None) => return Some(format!("`mcp.{name}` needs a `command` (stdio) or a `url` (HTTP)")),
        (Some(command), None) => {
            if command.trim().is_empty() || command.contains('\0') {
                return Some(format!("`mcp.{name}.command` is empty"));
            }
            if !spec.headers.is_empty() {
                return Some(format!("`mcp.{name}.headers` are for a `url`; a command gets `env`"));
            }
        }
        (None, Some(url)) => {
            let parsed = reqwest::Url::parse(url).ok().filter(|u| matches!(u.scheme(), "http" | "https"));
            if parsed.is_none() {
                return Some(format!("`mcp.{name}.url` must be an http:// or https:// address"));
            }
            if !spec.args.is_empty() || !spec.env.is_empty() {
                return Some(format!("`mcp.{name}.args` and `env` are for a `command`; a `url` gets `headers`"));
            }
        }
    }
    for key in spec.env.keys() {
        let valid = !key.is_empty()
            && !key.starts_with(|c: char| c.is_ascii_digit())
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Some(format!("`mcp.{name}.env`: `{key}` is not a variable name"));
        }
    }
    for key in spec.headers.keys() {
        let valid = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        if !valid {
            return Some(format!("`mcp.{name}.headers`: `{key}` is not a header name"));
        }
    }
    let values = spec.args.iter().chain(spec.env.values()).chain(spec.headers.values());
    if values.into_iter().any(|v| v.contains('\0') || v.contains('\n')) {
        return Some(format!("`mcp.{name}`: a value holds a line break or a NUL"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(c: &str) -> McpServerConfig {
        McpServerConfig { command: Some(c.into()), ..Default::default() }
    }

    #[test]
    fn a_server_is_a_command_or_an_address_with_names_agents_can_use() {
        assert_eq!(problem("notes", &command("node")), None);
        let http = McpServerConfig { url: Some("https://mcp.example.test/x".into()), ..Default::default() };
        assert_eq!(problem("docs_1", &http), None);
        for (name, spec, says) in [
            ("has space", command("node"), "must be 1 to 40"),
            ("both", McpServerConfig { url: Some("http://x".into()), ..command("node") }, "both"),
            ("none", McpServerConfig::default(), "needs a `command`"),
            ("ftp", McpServerConfig { url: Some("ftp://x".into()), ..Default::default() }, "http://"),
            ("blank", command("  "), "empty"),
            ("envs", McpServerConfig { env: [("1X".into(), "v".into())].into(), ..command("node") }, "variable name"),
            (
                "hdr",
                McpServerConfig { headers: [("X".into(), "v".into())].into(), ..command("node") },
                "are for a `url`",
            ),
            ("nl", McpServerConfig { args: vec!["a\nb".into()], ..command("node") }, "line break"),
        ] {
            let found = problem(name, &spec).unwrap_or_default();
            assert!(found.contains(says), "{name}: {found}");
        }
    }
}
