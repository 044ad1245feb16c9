//! Claude Code: the command line for one turn (`claude -p --output-format stream-json`)
//! and the parser that reads its stdout, one JSON line at a time, into driver events.
//! Each content block arrives as its own `assistant` line, tool results come back in
//! `user` lines, and the closing `result` line says whether the turn failed.

use std::collections::HashMap;

use serde_json::Value;

use super::events::{count, title_line, DriverEvent, FileChangeKind, ToolKind, ToolStatus, Usage};

const SOURCE: &str = "claude";

/// How to run one turn. No `Debug`: it may hold an API key.
#[derive(Clone)]
pub struct ClaudeOptions {
    /// The whole message for this turn, passed as the last argument.
    pub prompt: String,
    /// The `session_id` of an earlier turn to continue; `None` starts a new session.
    pub resume_id: Option<String>,
    pub model: Option<String>,
    /// Kiln's session context, added after Claude's own system prompt; it never goes
    /// into the repository's `CLAUDE.md`.
    pub append_system_prompt: Option<String>,
    /// `--permission-mode`; `acceptEdits` lets the agent edit without asking.
    pub permission_mode: String,
    /// Bring-your-own-key: an Anthropic-compatible endpoint and its key. Unset, the
    /// CLI uses the operator's own login.
    pub base_url: Option<String>,
    pub api_key: Option<String>,
}

impl ClaudeOptions {
    pub fn new(prompt: impl Into<String>) -> Self {
        ClaudeOptions {
            prompt: prompt.into(),
            resume_id: None,
            model: None,
            append_system_prompt: None,
            permission_mode: "acceptEdits".into(),
            base_url: None,
            api_key: None,
        }
    }
}

/// The arguments (after the `claude` binary) and the extra environment for a turn.
pub fn command(opts: &ClaudeOptions) -> (Vec<String>, Vec<(String, String)>) {
    // stream-json with -p refuses to run without --verbose.
    let mut args: Vec<String> = ["-p", "--verbose", "--output-format", "stream-json", "--permission-mode"].map(String::from).into();
    args.push(opts.permission_mode.clone());
    let optional = [("--model", &opts.model), ("--resume", &opts.resume_id), ("--append-system-prompt", &opts.append_system_prompt)];
    for (flag, value) in optional {
        if let Some(value) = value {
            args.extend([flag.to_string(), value.clone()]);
        }
    }
    args.push(opts.prompt.clone());

    // A turn should reach the model and nothing else: no telemetry, no self-update.
    let mut env: Vec<(String, String)> =
        [("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"), ("DISABLE_TELEMETRY", "1"), ("DISABLE_AUTOUPDATER", "1")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .into();
    if let Some(url) = &opts.base_url {
        env.push(("ANTHROPIC_BASE_URL".into(), url.clone()));
    }
    if let Some(key) = &opts.api_key {
        env.push(("ANTHROPIC_API_KEY".into(), key.clone()));
    }
    (args, env)
}

/// Reads one turn's stdout. Keep one parser per turn: it remembers each tool call
/// until its result arrives, to tell which files the result changed.
#[derive(Debug, Default)]
pub struct ClaudeParser {
    calls: HashMap<String, (String, Value)>,
}

impl ClaudeParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// The events in one stdout line; a blank line has none. A line that is not JSON,
    /// or of a type this parser does not know, comes back whole as `Unknown`.
    pub fn parse_line(&mut self, line: &str) -> Vec<DriverEvent> {
        let value = match super::events::json_line(line, SOURCE) {
            None => return Vec::new(),
            Some(Err(kept)) => return vec![kept],
            Some(Ok(value)) => value,
        };
        match value["type"].as_str() {
            Some("system") => system(value),
            Some("assistant") => self.assistant(value),
            Some("user") => self.user(&value),
            Some("result") => result(&value),
            Some("control_request") => permission(value),
            _ => vec![unknown(value)],
        }
    }

    fn assistant(&mut self, line: Value) -> Vec<DriverEvent> {
        let Some(blocks) = line["message"]["content"].as_array() else {
            return vec![unknown(line)];
        };
        let mut events = Vec::new();
        for block in blocks {
            match block["type"].as_str() {
                Some("text") => events.push(DriverEvent::Text { text: text_of(block, "text") }),
                // Thinking can arrive with its text withheld (only a signature): nothing to show.
                Some("thinking") if text_of(block, "thinking").is_empty() => {}
                Some("thinking") => events.push(DriverEvent::Thought { text: text_of(block, "thinking") }),
                Some("redacted_thinking") => {}
                Some("tool_use" | "server_tool_use") => {
                    let id = text_of(block, "id");
                    let name = text_of(block, "name");
                    let input = block["input"].clone();
                    events.push(DriverEvent::ToolCall {
                        id: id.clone(),
                        kind: tool_kind(&name),
                        title: tool_title(&name, &input),
                        input: input.clone(),
                    });
                    self.calls.insert(id, (name, input));
                }
                _ => events.push(unknown(block.clone())),
            }
        }
        events
    }

    /// Tool results. The other blocks of a `user` line are the prompts Kiln (or the
    /// agent, for a sub-agent) sent, already known: they make no event.
    fn user(&mut self, line: &Value) -> Vec<DriverEvent> {
        let Some(blocks) = line["message"]["content"].as_array() else {
            return Vec::new();
        };
        let mut events = Vec::new();
        for block in blocks.iter().filter(|b| b["type"] == "tool_result") {
            let id = text_of(block, "tool_use_id");
            let failed = block["is_error"].as_bool().unwrap_or(false);
            let status = if failed { ToolStatus::Failed } else { ToolStatus::Completed };
            events.push(DriverEvent::ToolResult { id: id.clone(), status, output: result_text(&block["content"]) });
            let Some((name, input)) = self.calls.remove(&id) else { continue };
            if let (false, Some(path)) = (failed, edited_path(&name, &input)) {
                let created = line["tool_use_result"]["type"] == "create" && line["tool_use_result"]["filePath"] == path;
                let change = if created { FileChangeKind::Add } else { FileChangeKind::Update };
                events.push(DriverEvent::FileChange { path: path.to_string(), change });
            }
        }
        events
    }
}

fn system(line: Value) -> Vec<DriverEvent> {
    match (line["subtype"].as_str(), line["session_id"].as_str()) {
        (Some("init"), Some(id)) => {
            vec![DriverEvent::SessionStarted { resume_id: id.to_string(), model: line["model"].as_str().map(String::from) }]
        }
        (Some("api_retry"), _) => {
            let status = line["error_status"].as_u64().map(|s| format!(" (HTTP {s})")).unwrap_or_default();
            let message = format!("{}{status}", plain_text(&line["error"]).unwrap_or_else(|| "API error".into()));
            let attempt = line["attempt"].as_u64().unwrap_or(0).try_into().unwrap_or(u32::MAX);
            vec![DriverEvent::Retry { attempt, message }]
        }
        _ => vec![unknown(line)],
    }
}

/// The closing line: usage for the whole turn, then how it ended. An API failure also
/// ends this way (and exits 1), so `is_error` is what says the turn failed.
fn result(line: &Value) -> Vec<DriverEvent> {
    let subtype = line["subtype"].as_str().unwrap_or("");
    let is_error = line["is_error"].as_bool().unwrap_or(subtype.starts_with("error"));
    let text = line["result"].as_str().filter(|t| !t.is_empty()).map(String::from);
    let mut events = Vec::new();
    if line.get("usage").is_some() || line.get("total_cost_usd").is_some() {
        let usage = &line["usage"];
        events.push(DriverEvent::Usage(Usage {
            input_tokens: count(usage, "input_tokens"),
            output_tokens: count(usage, "output_tokens"),
            cache_read_tokens: count(usage, "cache_read_input_tokens"),
            cache_write_tokens: count(usage, "cache_creation_input_tokens"),
            cost_usd: line["total_cost_usd"].as_f64(),
        }));
    }
    let error = is_error.then(|| {
        let listed = line["errors"].as_array().map(|e| e.iter().filter_map(plain_text).collect::<Vec<_>>().join("\n"));
        text.clone()
            .or(listed.filter(|e| !e.is_empty()))
            .unwrap_or_else(|| format!("claude ended the turn with an error ({subtype})"))
    });
    events.push(DriverEvent::TurnEnded {
        is_error,
        stop_reason: line["stop_reason"].as_str().map(String::from),
        final_text: if is_error { None } else { text },
        error,
    });
    events
}

/// A `can_use_tool` control request: Claude asking its host whether a tool may run.
fn permission(line: Value) -> Vec<DriverEvent> {
    let request = &line["request"];
    match (request["subtype"].as_str(), line["request_id"].as_str()) {
        (Some("can_use_tool"), Some(id)) => vec![DriverEvent::PermissionRequest {
            id: id.to_string(),
            tool: text_of(request, "tool_name"),
            input: request["input"].clone(),
        }],
        _ => vec![unknown(line)],
    }
}

fn tool_kind(name: &str) -> ToolKind {
    match name {
        "Read" | "NotebookRead" => ToolKind::Read,
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => ToolKind::Edit,
        "Bash" | "BashOutput" | "KillShell" | "PowerShell" => ToolKind::Execute,
        "Grep" | "Glob" | "LS" => ToolKind::Search,
        "WebFetch" | "WebSearch" => ToolKind::Fetch,
        "TodoWrite" | "ExitPlanMode" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// A shell command is titled by the command itself, as Codex's are; other tools by
/// their name and the one argument that says what they act on.
fn tool_title(name: &str, input: &Value) -> String {
    let field = |key: &str| input[key].as_str();
    let detail = match name {
        "Bash" | "PowerShell" => return title_line(field("command").unwrap_or(name)),
        "Read" | "Write" | "Edit" | "MultiEdit" => field("file_path"),
        "NotebookEdit" => field("notebook_path"),
        "Grep" | "Glob" => field("pattern"),
        "WebFetch" => field("url"),
        "WebSearch" => field("query"),
        "Task" | "Agent" => field("description"),
        _ => None,
    };
    title_line(&detail.map_or_else(|| name.to_string(), |d| format!("{name} {d}")))
}

/// The file a successful call of this tool wrote, if it writes one.
fn edited_path<'a>(name: &str, input: &'a Value) -> Option<&'a str> {
    match name {
        "Write" | "Edit" | "MultiEdit" => input["file_path"].as_str(),
        "NotebookEdit" => input["notebook_path"].as_str(),
        _ => None,
    }
}

/// A tool result's content: a string, or blocks whose text parts are joined.
fn result_text(content: &Value) -> String {
    match content {
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
        other => plain_text(other).unwrap_or_default(),
    }
}

/// A string as is; any other value as its JSON, so nothing the agent said is lost.
fn plain_text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn text_of(value: &Value, key: &str) -> String {
    value[key].as_str().unwrap_or_default().to_string()
}

fn unknown(raw: Value) -> DriverEvent {
    DriverEvent::Unknown { source: SOURCE.into(), raw }
}

/// The `claude` driver: the Claude Code CLI, continued across turns with `--resume`.
/// No `Debug`: it may hold an API key.
#[derive(Clone, Default)]
pub struct ClaudeDriver {
    /// The binary from Settings; `None` searches the usual places.
    pub binary: Option<std::path::PathBuf>,
    /// Bring-your-own-key endpoint; unset, the CLI uses the operator's own login.
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    /// Extra environment for the CLI (`HOME`, …), set after the driver's own variables
    /// (so one named here wins): a caller can give it another home without a setting each.
    pub env: Vec<(String, String)>,
}

impl super::Driver for ClaudeDriver {
    fn id(&self) -> &'static str {
        SOURCE
    }

    fn run(&self, request: super::TurnRequest, sink: super::TurnSink) -> super::TurnFuture {
        let driver = self.clone();
        Box::pin(async move {
            let binary = super::discover::find("claude", driver.binary.as_deref())?;
            let mut opts = ClaudeOptions::new(request.prompt);
            opts.resume_id = request.resume_id;
            opts.model = request.model;
            opts.append_system_prompt = Some(request.instructions).filter(|s| !s.is_empty());
            // A read-only turn plans: Claude's plan mode edits nothing.
            opts.permission_mode = if request.read_only { "plan".into() } else { "acceptEdits".into() };
            opts.base_url = driver.base_url;
            opts.api_key = driver.api_key;
            let (args, mut env) = command(&opts);
            env.extend(driver.env);
            let mut parser = ClaudeParser::new();
            let cli = super::runner::CliRun { binary: &binary, args, env, workdir: &request.workdir };
            super::runner::run(cli, sink, move |line| parser.parse_line(line)).await
        })
    }
}
