//! The MCP servers agents are given (SPEC §23): `kiln.toml`'s `[mcp.<name>]` and this user's
//! from Settings, stored sealed as one list (a variable's or header's value may be a token);
//! a Settings server replaces a `kiln.toml` one of the same name. Only names leave the engine.

use std::collections::BTreeMap;

use crate::mcp_config::{McpServer, McpServerConfig};
use crate::workspace::Workspace;
use kiln_records::store::settings::{get_setting, set_setting};
use kiln_runtime::secrets::Sealer;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::{McpServerView, McpSource};

const KEY: &str = "mcp.servers";

/// This user's servers, opened; every value is held for redaction.
pub(crate) async fn stored(ws: &Workspace) -> Result<BTreeMap<String, McpServerConfig>> {
    let Some(sealed) = get_setting(&ws.pool, KEY).await? else { return Ok(BTreeMap::new()) };
    let plain = Sealer::open_or_create(&ws.kiln_dir())?.open(&sealed)?;
    let servers: BTreeMap<String, McpServerConfig> = serde_json::from_slice(&plain).map_err(|e| {
        ApiError::new(ErrorCode::SecretUnreadable, format!("the MCP servers in Settings cannot be read: {e}"))
    })?;
    for server in servers.values() {
        for value in server.env.values().chain(server.headers.values()) {
            kiln_runtime::redact::hold(value);
        }
    }
    Ok(servers)
}

/// Replaces this user's servers with `servers`, sealed.
pub(crate) async fn store(ws: &Workspace, servers: &BTreeMap<String, McpServerConfig>) -> Result<()> {
    let plain = serde_json::to_vec(servers).expect("strings serialize");
    let sealed = Sealer::open_or_create(&ws.kiln_dir())?.seal(&plain);
    set_setting(&ws.pool, KEY, Some(&sealed)).await
}

/// Every server agents are given, by name: `kiln.toml`'s, with this user's over them.
pub(crate) async fn servers(ws: &Workspace) -> Result<Vec<McpServer>> {
    let mut all: BTreeMap<String, McpServer> = BTreeMap::new();
    for (name, spec) in &ws.config.mcp {
        all.insert(name.clone(), McpServer { name: name.clone(), source: McpSource::Repository, spec: spec.clone() });
    }
    for (name, spec) in stored(ws).await? {
        all.insert(name.clone(), McpServer { name, source: McpSource::Settings, spec });
    }
    Ok(all.into_values().collect())
}

/// The servers a turn is given: all of them, but a command server only where agents may run
/// commands (it is one: under "no commands", or on a self-hosted server not started with
/// `--allow-agent-commands`, only the address servers remain).
pub(crate) async fn for_turn(ws: &Workspace) -> Result<Vec<McpServer>> {
    let commands = crate::settings::command_policy(ws).await? != kiln_types::CommandPolicy::None;
    let mut servers = servers(ws).await?;
    servers.retain(|s| commands || s.spec.command.is_none());
    Ok(servers)
}

/// What Settings show: `kiln.toml`'s servers (marked when replaced), then this user's.
pub(crate) async fn views(ws: &Workspace) -> Result<Vec<McpServerView>> {
    let mine = stored(ws).await?;
    let view = |name: &str, source, spec: &McpServerConfig, overridden| McpServerView {
        name: name.to_string(),
        source,
        command: spec.command.clone(),
        args: spec.args.clone(),
        url: spec.url.clone(),
        env_names: spec.env.keys().cloned().collect(),
        header_names: spec.headers.keys().cloned().collect(),
        overridden,
    };
    let shared =
        ws.config.mcp.iter().map(|(name, spec)| view(name, McpSource::Repository, spec, mine.contains_key(name)));
    let own = mine.iter().map(|(name, spec)| view(name, McpSource::Settings, spec, false));
    Ok(shared.chain(own).collect())
}
