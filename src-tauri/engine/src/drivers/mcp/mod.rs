//! The MCP servers the user declared once (`crate::mcp`), handed to each agent in its own
//! form: Claude Code's `--mcp-config` file, Codex's `mcp_servers` settings, ACP's
//! `session/new` list. No value of a variable or header is ever on a command line or in a
//! file: each one goes in the agent's environment, where its own MCP client reads it
//! (Claude Code expands `${NAME}` in the file; Codex takes `env_vars` and
//! `env_http_headers`). The agent starts a stdio server itself, so it runs as the agent does,
//! in Kiln's confinement. Kiln's own loop is a client itself (`client`, through the toolbox);
//! `check` starts each one as an agent would and asks for its tools.

mod check;
pub(crate) mod client;

pub(crate) use check::{check_all, WITHIN};

use serde_json::{json, Map, Value};

use crate::mcp_config::McpServer;

/// The variable that carries value `j` of server `i` to an agent.
fn carrier(i: usize, j: usize) -> String {
    format!("KILN_MCP_{i}_{j}")
}

/// Claude Code's form: the `--mcp-config` file's text (no value in it, only `${…}` of the
/// variables in `env`), the environment that carries the values, and the tool rule that lets
/// the agent use every tool of each server without asking (the user declared them).
pub(crate) struct ClaudeMcp {
    pub config: String,
    pub env: Vec<(String, String)>,
    pub allowed_tools: Vec<String>,
}

pub(crate) fn for_claude(servers: &[McpServer]) -> Option<ClaudeMcp> {
    if servers.is_empty() {
        return None;
    }
    let mut env = Vec::new();
    let mut entries = Map::new();
    for (i, server) in servers.iter().enumerate() {
        let mut carried = |values: &std::collections::BTreeMap<String, String>| -> Map<String, Value> {
            let mut out = Map::new();
            for (j, (name, value)) in values.iter().enumerate() {
                env.push((carrier(i, j), value.clone()));
                out.insert(name.clone(), json!(format!("${{{}}}", carrier(i, j))));
            }
            out
        };
        let spec = &server.spec;
        let entry = match (&spec.command, &spec.url) {
            (Some(command), _) => {
                json!({"type": "stdio", "command": command, "args": spec.args, "env": carried(&spec.env)})
            }
            (None, Some(url)) => json!({"type": "http", "url": url, "headers": carried(&spec.headers)}),
            (None, None) => continue,
        };
        entries.insert(server.name.clone(), entry);
    }
    let config = json!({ "mcpServers": entries }).to_string();
    let allowed_tools = servers.iter().map(|s| format!("mcp__{}", s.name)).collect();
    Some(ClaudeMcp { config, env, allowed_tools })
}

/// Names and values, in order: settings, or variables.
pub(crate) type Pairs = Vec<(String, String)>;

/// Codex's form: `-c` settings under `mcp_servers.<name>` (values as TOML) and the
/// environment that carries the values: a command's variables under their own names
/// (`env_vars` passes them through), a header's under a carrier (`env_http_headers`).
pub(crate) fn for_codex(servers: &[McpServer]) -> (Pairs, Pairs) {
    let string = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut config = Vec::new();
    let mut env = Vec::new();
    for (i, server) in servers.iter().enumerate() {
        let key = |field: &str| format!("mcp_servers.{}.{field}", server.name);
        let spec = &server.spec;
        if let Some(command) = &spec.command {
            config.push((key("command"), string(command)));
            let args: Vec<String> = spec.args.iter().map(|a| string(a)).collect();
            config.push((key("args"), format!("[{}]", args.join(", "))));
            if !spec.env.is_empty() {
                let names: Vec<String> = spec.env.keys().map(|n| string(n)).collect();
                config.push((key("env_vars"), format!("[{}]", names.join(", "))));
                env.extend(spec.env.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        } else if let Some(url) = &spec.url {
            config.push((key("url"), string(url)));
            if !spec.headers.is_empty() {
                let pairs: Vec<String> = spec
                    .headers
                    .keys()
                    .enumerate()
                    .map(|(j, name)| format!("{} = {}", string(name), string(&carrier(i, j))))
                    .collect();
                config.push((key("env_http_headers"), format!("{{ {} }}", pairs.join(", "))));
                env.extend(spec.headers.values().enumerate().map(|(j, v)| (carrier(i, j), v.clone())));
            }
        }
    }
    (config, env)
}

/// ACP's form, `session/new`'s `mcpServers`: a stdio server always, an HTTP one when the
/// agent says it takes them (`mcpCapabilities.http`); the values travel on the agent's
/// stdin, never on a command line.
pub(crate) fn for_acp(servers: &[McpServer], http: bool) -> Value {
    let pairs = |values: &std::collections::BTreeMap<String, String>| -> Vec<Value> {
        values.iter().map(|(name, value)| json!({"name": name, "value": value})).collect()
    };
    let list: Vec<Value> = servers
        .iter()
        .filter_map(|server| {
            let spec = &server.spec;
            match (&spec.command, &spec.url) {
                (Some(command), _) => Some(json!({
                    "name": server.name, "command": command, "args": spec.args, "env": pairs(&spec.env),
                })),
                (None, Some(url)) if http => Some(json!({
                    "type": "http", "name": server.name, "url": url, "headers": pairs(&spec.headers),
                })),
                _ => None,
            }
        })
        .collect();
    Value::Array(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp_config::McpServerConfig;
    use kiln_types::McpSource;

    fn servers() -> Vec<McpServer> {
        vec![
            McpServer {
                name: "notes".into(),
                source: McpSource::Repository,
                spec: McpServerConfig {
                    command: Some("node".into()),
                    args: vec!["tools/notes.mjs".into(), "say \"hi\"".into()],
                    env: [("NOTES_TOKEN".into(), "s3cret-env".into())].into(),
                    ..Default::default()
                },
            },
            McpServer {
                name: "docs".into(),
                source: McpSource::Settings,
                spec: McpServerConfig {
                    url: Some("https://mcp.example.test/docs".into()),
                    headers: [("Authorization".into(), "Bearer s3cret-header".into())].into(),
                    ..Default::default()
                },
            },
        ]
    }

    #[test]
    fn no_value_is_in_a_file_or_on_a_command_line() {
        let claude = for_claude(&servers()).unwrap();
        assert!(!claude.config.contains("s3cret"), "{}", claude.config);
        let file: Value = serde_json::from_str(&claude.config).unwrap();
        assert_eq!(file["mcpServers"]["notes"]["env"]["NOTES_TOKEN"], "${KILN_MCP_0_0}");
        assert_eq!(file["mcpServers"]["notes"]["args"][1], "say \"hi\"");
        assert_eq!(file["mcpServers"]["docs"]["headers"]["Authorization"], "${KILN_MCP_1_0}");
        assert!(claude.env.contains(&("KILN_MCP_1_0".into(), "Bearer s3cret-header".into())));
        assert_eq!(claude.allowed_tools, ["mcp__notes", "mcp__docs"]);
        assert!(for_claude(&[]).is_none());

        let (config, env) = for_codex(&servers());
        assert!(config.iter().all(|(k, v)| !k.contains("s3cret") && !v.contains("s3cret")), "{config:?}");
        let get = |k: &str| config.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        assert_eq!(get("mcp_servers.notes.command"), Some("\"node\""));
        assert_eq!(get("mcp_servers.notes.args"), Some(r#"["tools/notes.mjs", "say \"hi\""]"#));
        assert_eq!(get("mcp_servers.notes.env_vars"), Some(r#"["NOTES_TOKEN"]"#));
        assert_eq!(get("mcp_servers.docs.env_http_headers"), Some(r#"{ "Authorization" = "KILN_MCP_1_0" }"#));
        assert!(env.contains(&("NOTES_TOKEN".into(), "s3cret-env".into())));
        // Each value parses as the TOML codex reads.
        for (_, value) in &config {
            toml::from_str::<toml::Table>(&format!("v = {value}")).unwrap();
        }

        let acp = for_acp(&servers(), false);
        assert_eq!(acp.as_array().unwrap().len(), 1, "no HTTP server for an agent that takes none");
        assert_eq!(acp[0]["env"][0], json!({"name": "NOTES_TOKEN", "value": "s3cret-env"}));
        assert_eq!(for_acp(&servers(), true)[1]["type"], "http");
    }
}
