//! `check_mcp_servers`: starts (or reaches) each MCP server as an agent would, says hello
//! (`initialize`) and asks for its tools (`tools/list`), so Settings can say which servers
//! work before a turn depends on them. A command runs from the workspace's root, with the
//! environment an agent CLI gets and confined read-only, and goes when the check ends.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::mcp_config::McpServer;
use crate::workspace::Context;
use kiln_types::error::Result;
use kiln_types::{EmptyArgs, McpServerCheck};

/// How long one server has to start and list its tools.
const WITHIN: Duration = Duration::from_secs(15);
/// The protocol version Kiln asks for; a server answers with the one it speaks.
const PROTOCOL: &str = "2025-06-18";

pub(crate) async fn check_all(cx: &Context, _: EmptyArgs) -> Result<Vec<McpServerCheck>> {
    let servers = crate::mcp::servers(&cx.ws).await?;
    let root = cx.ws.root.clone();
    let checks = servers.iter().map(|server| check(server, &root));
    Ok(futures_util::future::join_all(checks).await)
}

async fn check(server: &McpServer, root: &std::path::Path) -> McpServerCheck {
    let started = Instant::now();
    let answer = match (&server.spec.command, &server.spec.url) {
        (Some(command), _) => tokio::time::timeout(WITHIN, stdio(server, command, root)).await,
        (None, Some(url)) => tokio::time::timeout(WITHIN, http(server, url)).await,
        (None, None) => Ok(Err(Failed::new("it has no command and no address"))),
    };
    let answer = answer.unwrap_or_else(|_| Err(Failed::new(format!("no answer within {} seconds", WITHIN.as_secs()))));
    let (started_ok, server_info, tools, error) = match answer {
        Ok((info, tools)) => (true, info, tools, None),
        Err(failed) => (failed.initialized, None, Vec::new(), Some(failed.why)),
    };
    McpServerCheck {
        name: server.name.clone(),
        source: server.source,
        started: started_ok,
        server: server_info,
        tools,
        error,
        millis: started.elapsed().as_millis() as u64,
    }
}

struct Failed {
    why: String,
    /// It answered `initialize` before failing.
    initialized: bool,
}

impl Failed {
    fn new(why: impl Into<String>) -> Self {
        Failed { why: why.into(), initialized: false }
    }
}

type Found = std::result::Result<(Option<String>, Vec<String>), Failed>;

fn hello() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "kiln", "version": env!("CARGO_PKG_VERSION")},
    }})
}

fn info(result: &Value) -> Option<String> {
    let info = &result["serverInfo"];
    let name = info["name"].as_str()?;
    Some(match info["version"].as_str() {
        Some(version) => format!("{name} {version}"),
        None => name.to_string(),
    })
}

fn tool_names(result: &Value) -> Vec<String> {
    let tools = result["tools"].as_array().map(Vec::as_slice).unwrap_or_default();
    tools.iter().filter_map(|t| t["name"].as_str().map(String::from)).collect()
}

/// The `result` of a JSON-RPC answer, or its error in words.
fn result_of(answer: Value, what: &str) -> std::result::Result<Value, String> {
    if let Some(error) = answer.get("error") {
        return Err(format!("{what} was refused: {}", error["message"].as_str().unwrap_or("no reason given")));
    }
    Ok(answer.get("result").cloned().unwrap_or(Value::Null))
}

async fn stdio(server: &McpServer, command: &str, root: &std::path::Path) -> Found {
    let env: Vec<(String, String)> = server.spec.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let confinement = kiln_runtime::sandbox::Confinement::for_turn(root, true, &env);
    let prepared = confinement.prepare().map_err(|e| Failed::new(format!("it could not be confined: {e}")))?;
    let mut child = kiln_runtime::process::Command::new(command, root, kiln_runtime::process::Env::Operator(&env))
        .args(&server.spec.args)
        .piped_stdin()
        .spawn(Some(&prepared))
        .map_err(|e| Failed::new(format!("`{command}` did not start: {e}")))?;
    let stderr = child.inner.stderr.take();
    let tail = tokio::spawn(async move {
        let mut text = String::new();
        if let Some(mut err) = stderr {
            let _ = tokio::io::AsyncReadExt::read_to_string(&mut err, &mut text).await;
        }
        text
    });
    let (Some(mut stdin), Some(stdout)) = (child.inner.stdin.take(), child.inner.stdout.take()) else {
        return Err(Failed::new("its pipes could not be opened"));
    };
    let mut lines = BufReader::new(stdout).lines();
    let mut initialized = false;
    let talk = async {
        let mut ask = async |message: Value, id: Option<u64>| -> std::result::Result<Value, String> {
            let line = format!("{message}\n");
            stdin.write_all(line.as_bytes()).await.map_err(|e| format!("it stopped reading: {e}"))?;
            let Some(id) = id else { return Ok(Value::Null) };
            loop {
                let line = lines.next_line().await.map_err(|e| e.to_string())?;
                let Some(line) = line else { return Err("it exited".to_string()) };
                // Notifications, logs and requests of its own are not the answer.
                let Ok(answer) = serde_json::from_str::<Value>(&line) else { continue };
                if answer["id"] == json!(id) && (answer.get("result").is_some() || answer.get("error").is_some()) {
                    return Ok(answer);
                }
            }
        };
        let result = result_of(ask(hello(), Some(0)).await?, "initialize")?;
        initialized = true;
        ask(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), None).await?;
        let tools =
            result_of(ask(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}), Some(1)).await?, "tools/list")?;
        Ok::<_, String>((info(&result), tool_names(&tools)))
    };
    let outcome = talk.await;
    child.kill();
    match outcome {
        Ok(found) => Ok(found),
        Err(why) => {
            let said =
                tokio::time::timeout(Duration::from_secs(1), tail).await.ok().and_then(|t| t.ok()).unwrap_or_default();
            let said: String = said.trim().chars().rev().take(400).collect::<Vec<_>>().into_iter().rev().collect();
            let why = if said.is_empty() { why } else { format!("{why}; it said: {said}") };
            Err(Failed { why, initialized })
        }
    }
}

async fn http(server: &McpServer, url: &str) -> Found {
    let client = reqwest::Client::new();
    let mut session: Option<String> = None;
    let mut initialized = false;
    let mut post = async |message: Value| -> std::result::Result<Option<Value>, String> {
        let mut request = client
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .json(&message);
        for (name, value) in &server.spec.headers {
            request = request.header(name, value);
        }
        if let Some(id) = &session {
            request = request.header("mcp-session-id", id);
        }
        let response = request.send().await.map_err(|e| format!("it could not be reached: {}", without_url(&e)))?;
        if let Some(id) = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
            session = Some(id.to_string());
        }
        let status = response.status();
        if !status.is_success() {
            return Err(format!("it answered HTTP {status}"));
        }
        if message.get("id").is_none() {
            return Ok(None);
        }
        let sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        let text = response.text().await.map_err(|e| without_url(&e))?;
        let body = if sse {
            // The answer is one of the stream's `data:` lines.
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .find(|d| d.contains("\"id\""))
                .unwrap_or("")
                .to_string()
        } else {
            text
        };
        serde_json::from_str(&body).map(Some).map_err(|_| "its answer is not JSON-RPC".to_string())
    };
    let talk = async {
        let result = result_of(post(hello()).await?.unwrap_or_default(), "initialize")?;
        initialized = true;
        post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await?;
        let tools = result_of(
            post(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await?.unwrap_or_default(),
            "tools/list",
        )?;
        Ok::<_, String>((info(&result), tool_names(&tools)))
    };
    talk.await.map_err(|why| Failed { why, initialized })
}

/// A request error without its address: a query string may hold a token.
fn without_url(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    if let Some(url) = e.url() {
        text = text.replace(url.as_str(), "the server");
    }
    text
}
