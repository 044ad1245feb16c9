//! `check_mcp_servers`: starts (or reaches) each MCP server as an agent would, says hello and
//! asks for its tools (`super::client`), so Settings can say which servers work before a turn
//! depends on them. A command runs from the workspace's root, with the environment an agent CLI
//! gets and confined read-only, and goes when the check ends.

use std::time::{Duration, Instant};

use super::client::McpClient;
use crate::mcp_config::McpServer;
use crate::workspace::Context;
use kiln_types::error::Result;
use kiln_types::{EmptyArgs, McpServerCheck};

/// How long one server has to start and list its tools.
pub(crate) const WITHIN: Duration = Duration::from_secs(15);

pub(crate) async fn check_all(cx: &Context, _: EmptyArgs) -> Result<Vec<McpServerCheck>> {
    let servers = crate::mcp::servers(&cx.ws).await?;
    let root = cx.ws.root.clone();
    let checks = servers.iter().map(|server| check(server, &root));
    Ok(futures_util::future::join_all(checks).await)
}

async fn check(server: &McpServer, root: &std::path::Path) -> McpServerCheck {
    let started = Instant::now();
    let connected = tokio::time::timeout(WITHIN, McpClient::connect(server, root, true)).await;
    let (answered, info, tools, error) = match connected {
        Ok(Ok(client)) => (true, client.server.clone(), client.tools.iter().map(|t| t.name.clone()).collect(), None),
        Ok(Err(refused)) => (refused.initialized, None, Vec::new(), Some(refused.why)),
        Err(_) => (false, None, Vec::new(), Some(format!("no answer within {} seconds", WITHIN.as_secs()))),
    };
    McpServerCheck {
        name: server.name.clone(),
        source: server.source,
        started: answered,
        server: info,
        tools,
        error,
        millis: started.elapsed().as_millis() as u64,
    }
}
