//! A client of one MCP server, as an agent is one: over stdio (a command Kiln starts, confined,
//! and stops with the client) or HTTP (Streamable HTTP, one POST per message). It says hello
//! (`initialize`), lists the server's tools and calls them. The check (`super::check`) and Kiln's
//! own loop (`crate::drivers::openai`, through the toolbox) use it.

use std::path::Path;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::Mutex;

use crate::mcp_config::McpServer;

/// The protocol version Kiln asks for; a server answers with the one it speaks.
const PROTOCOL: &str = "2025-06-18";

/// A tool a server offers: its name, what it says of itself, and its arguments' schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct McpTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// A server that answered `initialize`: its name and version, and its tools.
pub(crate) struct McpClient {
    pub server: Option<String>,
    pub tools: Vec<McpTool>,
    link: Mutex<Link>,
}

/// Why a server could not be used: in words, and whether it had answered `initialize`.
#[derive(Debug)]
pub(crate) struct Refused {
    pub why: String,
    pub initialized: bool,
}

/// How messages reach the server. The stdio side is the larger, and a link is made once per
/// server per turn, so it is boxed rather than the enum padded.
enum Link {
    Stdio(Box<Stdio>),
    Http { client: reqwest::Client, url: String, headers: Vec<(String, String)>, session: Option<String>, next: u64 },
}

struct Stdio {
    child: kiln_runtime::process::Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next: u64,
    stderr: Option<tokio::task::JoinHandle<String>>,
}

/// The server and its tools' names (never its link).
impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tools: Vec<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
        f.debug_struct("McpClient").field("server", &self.server).field("tools", &tools).finish_non_exhaustive()
    }
}

impl McpClient {
    /// Starts (or reaches) `server`, says hello and lists its tools. A command runs in `dir`
    /// with the operator's environment and the server's variables, confined as an agent's
    /// commands are (`read_only`: it may write nowhere in `dir`).
    pub(crate) async fn connect(server: &McpServer, dir: &Path, read_only: bool) -> Result<McpClient, Refused> {
        let spec = &server.spec;
        let link = match (&spec.command, &spec.url) {
            (Some(command), _) => {
                let env: Vec<(String, String)> = spec.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                let confinement = kiln_runtime::sandbox::Confinement::for_turn(dir, read_only, &env);
                let prepared = confinement.prepare().map_err(|e| refused(format!("it could not be confined: {e}")))?;
                let mut child =
                    kiln_runtime::process::Command::new(command, dir, kiln_runtime::process::Env::Operator(&env))
                        .args(&spec.args)
                        .piped_stdin()
                        .spawn(Some(&prepared))
                        .map_err(|e| refused(format!("`{command}` did not start: {e}")))?;
                let stderr = child.inner.stderr.take().map(|mut err| {
                    tokio::spawn(async move {
                        let mut text = String::new();
                        let _ = tokio::io::AsyncReadExt::read_to_string(&mut err, &mut text).await;
                        text
                    })
                });
                let (Some(stdin), Some(stdout)) = (child.inner.stdin.take(), child.inner.stdout.take()) else {
                    return Err(refused("its pipes could not be opened"));
                };
                Link::Stdio(Box::new(Stdio { child, stdin, lines: BufReader::new(stdout).lines(), next: 0, stderr }))
            }
            (None, Some(url)) => Link::Http {
                client: reqwest::Client::new(),
                url: url.clone(),
                headers: spec.headers.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                session: None,
                next: 0,
            },
            (None, None) => return Err(refused("it has no command and no address")),
        };
        let mut link = link;
        let hello = json!({
            "protocolVersion": PROTOCOL, "capabilities": {},
            "clientInfo": {"name": "kiln", "version": env!("CARGO_PKG_VERSION")},
        });
        let result = match link.ask("initialize", hello).await {
            Ok(result) => result,
            Err(why) => return Err(Refused { why: link.with_stderr(why).await, initialized: false }),
        };
        let info = &result["serverInfo"];
        let server_name = info["name"].as_str().map(|name| match info["version"].as_str() {
            Some(version) => format!("{name} {version}"),
            None => name.to_string(),
        });
        let listed = match link.tell("notifications/initialized").await {
            Ok(()) => link.ask("tools/list", json!({})).await,
            Err(why) => Err(why),
        };
        let listed = match listed {
            Ok(listed) => listed,
            Err(why) => return Err(Refused { why: link.with_stderr(why).await, initialized: true }),
        };
        let tools = listed["tools"].as_array().map(Vec::as_slice).unwrap_or_default();
        let tools = tools
            .iter()
            .filter_map(|t| {
                Some(McpTool {
                    name: t["name"].as_str()?.to_string(),
                    description: t["description"].as_str().unwrap_or_default().to_string(),
                    input_schema: t.get("inputSchema").cloned().unwrap_or_else(|| json!({"type": "object"})),
                })
            })
            .collect();
        Ok(McpClient { server: server_name, tools, link: Mutex::new(link) })
    }

    /// Calls `tool` with `arguments`: its text, or why it failed (an error of the server's, or
    /// a result it marked `isError`).
    pub(crate) async fn call(&self, tool: &str, arguments: &Value) -> Result<String, String> {
        let mut link = self.link.lock().await;
        let result = link.ask("tools/call", json!({"name": tool, "arguments": arguments})).await?;
        let content = result["content"].as_array().map(Vec::as_slice).unwrap_or_default();
        let text: Vec<String> = content
            .iter()
            .map(|c| match c["type"].as_str() {
                Some("text") => c["text"].as_str().unwrap_or_default().to_string(),
                Some(other) => format!("({other} content)"),
                None => String::new(),
            })
            .collect();
        let text = text.join("\n");
        if result["isError"] == true {
            return Err(if text.is_empty() { "the tool failed".into() } else { text });
        }
        Ok(text)
    }
}

fn refused(why: impl Into<String>) -> Refused {
    Refused { why: why.into(), initialized: false }
}

impl Link {
    /// Sends a request and waits for its answer's `result` (its `error`, in words).
    async fn ask(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let answer = match self {
            Link::Stdio(stdio) => {
                let Stdio { stdin, lines, next, .. } = stdio.as_mut();
                *next += 1;
                let id = *next;
                let line = format!("{}\n", json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
                stdin.write_all(line.as_bytes()).await.map_err(|e| format!("it stopped reading: {e}"))?;
                loop {
                    let Some(line) = lines.next_line().await.map_err(|e| e.to_string())? else {
                        return Err("it exited".into());
                    };
                    // Notifications, logs and requests of its own are not the answer.
                    let Ok(answer) = serde_json::from_str::<Value>(&line) else { continue };
                    if answer["id"] == json!(id) && (answer.get("result").is_some() || answer.get("error").is_some()) {
                        break answer;
                    }
                }
            }
            Link::Http { next, .. } => {
                *next += 1;
                let message = json!({"jsonrpc": "2.0", "id": *next, "method": method, "params": params});
                self.post(message).await?.ok_or("it answered nothing")?
            }
        };
        if let Some(error) = answer.get("error") {
            return Err(format!("{method} was refused: {}", error["message"].as_str().unwrap_or("no reason given")));
        }
        Ok(answer.get("result").cloned().unwrap_or(Value::Null))
    }

    /// Sends a notification (no answer).
    async fn tell(&mut self, method: &str) -> Result<(), String> {
        let message = json!({"jsonrpc": "2.0", "method": method});
        match self {
            Link::Stdio(stdio) => {
                let line = format!("{message}\n");
                stdio.stdin.write_all(line.as_bytes()).await.map_err(|e| format!("it stopped reading: {e}"))
            }
            Link::Http { .. } => self.post(message).await.map(|_| ()),
        }
    }

    /// One message over HTTP; the answer is the body, or one of its stream's `data:` lines.
    async fn post(&mut self, message: Value) -> Result<Option<Value>, String> {
        let Link::Http { client, url, headers, session, .. } = self else { return Ok(None) };
        let mut request = client
            .post(url.as_str())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .json(&message);
        for (name, value) in headers.iter() {
            request = request.header(name.as_str(), value.as_str());
        }
        if let Some(id) = session.as_deref() {
            request = request.header("mcp-session-id", id);
        }
        let response = request.send().await.map_err(|e| format!("it could not be reached: {}", without_url(&e)))?;
        if let Some(id) = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
            *session = Some(id.to_string());
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
            let data = text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim);
            data.into_iter().find(|d| d.contains("\"id\"")).unwrap_or("").to_string()
        } else {
            text
        };
        serde_json::from_str(&body).map(Some).map_err(|_| "its answer is not JSON-RPC".to_string())
    }

    /// `why`, with the end of what a command wrote to stderr (it is stopped first).
    async fn with_stderr(&mut self, why: String) -> String {
        let Link::Stdio(stdio) = self else { return why };
        stdio.child.kill();
        let Some(task) = stdio.stderr.take() else { return why };
        let said = tokio::time::timeout(std::time::Duration::from_secs(1), task).await.ok().and_then(|t| t.ok());
        let said = said.unwrap_or_default();
        let said = said.trim();
        let tail: String = said.chars().rev().take(400).collect::<Vec<_>>().into_iter().rev().collect();
        if tail.is_empty() {
            why
        } else {
            format!("{why}; it said: {tail}")
        }
    }
}

/// A request error without its address: a query string may hold a token.
fn without_url(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    if let Some(url) = e.url() {
        text = text.replace(url.as_str(), "the server");
    }
    text
}
