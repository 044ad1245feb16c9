//! The operations on this user's MCP servers (`save_mcp_server`, `remove_mcp_server`): each
//! checks the whole server before anything is written, and answers with Settings as they are
//! then. What the servers are and where they are kept is `crate::mcp`.

use std::collections::BTreeMap;

use crate::mcp_config::{self, McpServerConfig};
use crate::workspace::Context;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::{EmptyArgs, McpServerNameArgs, NamedValue, SaveMcpServerArgs, ServeMode, SettingsView};

pub(super) async fn save(cx: &Context, args: SaveMcpServerArgs) -> Result<SettingsView> {
    let ws = &cx.ws;
    if ws.mode != ServeMode::Loopback {
        return Err(ApiError::new(
            ErrorCode::NotAllowedInMode,
            "a self-hosted server takes no MCP servers from its users: their commands would run on the host",
        ));
    }
    let pairs = |list: Option<Vec<NamedValue>>, what: &str| -> Result<BTreeMap<String, String>> {
        let mut map = BTreeMap::new();
        for NamedValue { name, value } in list.unwrap_or_default() {
            let name = name.trim().to_string();
            if map.insert(name.clone(), value).is_some() {
                return Err(ApiError::invalid(format!("the {what} `{name}` is given twice")));
            }
        }
        Ok(map)
    };
    let blank = |s: Option<String>| s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    let name = args.name.trim().to_string();
    let spec = McpServerConfig {
        command: blank(args.command),
        args: args.args.unwrap_or_default(),
        env: pairs(args.env, "variable")?,
        url: blank(args.url),
        headers: pairs(args.headers, "header")?,
    };
    if let Some(problem) = mcp_config::problem(&name, &spec) {
        return Err(ApiError::invalid(problem));
    }
    let mut servers = crate::mcp::stored(ws).await?;
    servers.insert(name, spec);
    if servers.len() + ws.config.mcp.len() > mcp_config::MAX_SERVERS {
        return Err(ApiError::invalid(format!("at most {} MCP servers", mcp_config::MAX_SERVERS)));
    }
    crate::mcp::store(ws, &servers).await?;
    super::settings::view(cx, EmptyArgs {}).await
}

pub(super) async fn remove(cx: &Context, args: McpServerNameArgs) -> Result<SettingsView> {
    let ws = &cx.ws;
    let mut servers = crate::mcp::stored(ws).await?;
    if servers.remove(args.name.trim()).is_none() {
        let shared = ws.config.mcp.contains_key(args.name.trim());
        let why = if shared { ": it is declared in kiln.toml, so it goes by editing the file" } else { "" };
        return Err(ApiError::new(
            ErrorCode::McpServerNotFound,
            format!(
                "there is no MCP server `{}` in Settings{why}",
                args.name.trim().chars().take(60).collect::<String>()
            ),
        ));
    }
    crate::mcp::store(ws, &servers).await?;
    super::settings::view(cx, EmptyArgs {}).await
}
