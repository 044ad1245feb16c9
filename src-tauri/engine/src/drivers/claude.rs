//! Claude Code: the command line for one turn (`claude -p --output-format stream-json`)
//! and the parser that reads its stdout, one JSON line at a time, into driver events.
//! Each content block arrives as its own `assistant` line, tool results come back in
//! `user` lines, and the closing `result` line says whether the turn failed.
//!
//! Permissions: stdin is closed, so Claude Code cannot ask anyone; in `-p` mode it
//! refuses whatever its permission rules do not allow, and says so in a
//! `permission_denied` line. Kiln's command policy is those rules: with "commands in the
//! working copy" the turn runs with `--permission-mode acceptEdits --allowedTools Bash`
//! (edits and shell commands without asking; `bypassPermissions` is refused as root),
//! with "no commands" `--disallowedTools Bash Monitor` takes the shell tools away. A
//! read-only turn runs in plan mode without `--allowedTools` (an allowed Bash would run
//! there even in plan mode). The OS confinement (`kiln_runtime::sandbox`) is what keeps the
//! commands' writes inside the working copy.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde_json::{json, Value};

use super::events::{count, title_line, DriverEvent, FileChangeKind, ToolKind, ToolStatus, Usage};
use kiln_types::CommandPolicy;

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
    /// `--allowedTools`: tools used without asking (`Bash`).
    pub allowed_tools: Vec<String>,
    /// `--disallowedTools`: tools taken away altogether.
    pub disallowed_tools: Vec<String>,
    /// Bring-your-own-key: an Anthropic-compatible endpoint and its key. Unset, the
    /// CLI uses the operator's own login.
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    /// `--mcp-config`: the file naming the MCP servers the user declared (`super::mcp`).
    pub mcp_config: Option<std::path::PathBuf>,
}

impl ClaudeOptions {
    pub fn new(prompt: impl Into<String>) -> Self {
        ClaudeOptions {
            prompt: prompt.into(),
            resume_id: None,
            model: None,
            append_system_prompt: None,
            permission_mode: "acceptEdits".into(),
            allowed_tools: Vec::new(),
            disallowed_tools: Vec::new(),
            base_url: None,
            api_key: None,
            mcp_config: None,
        }
    }
}

/// The arguments (after the `claude` binary) and the extra environment for a turn.
pub fn command(opts: &ClaudeOptions) -> (Vec<String>, Vec<(String, String)>) {
    // stream-json with -p refuses to run without --verbose.
    // Partial messages stream the agent's text as it is written, for the live view.
    let mut args: Vec<String> =
        ["-p", "--verbose", "--output-format", "stream-json", "--include-partial-messages", "--permission-mode"]
            .map(String::from)
            .into();
    args.push(opts.permission_mode.clone());
    let optional = [
        ("--model", &opts.model),
        ("--resume", &opts.resume_id),
        ("--append-system-prompt", &opts.append_system_prompt),
    ];
    for (flag, value) in optional {
        if let Some(value) = value {
            args.extend([flag.to_string(), value.clone()]);
        }
    }
    if let Some(path) = &opts.mcp_config {
        args.extend(["--mcp-config".to_string(), path.display().to_string()]);
    }
    let lists = [("--allowedTools", &opts.allowed_tools), ("--disallowedTools", &opts.disallowed_tools)];
    let mut listed = false;
    for (flag, tools) in lists.into_iter().filter(|(_, tools)| !tools.is_empty()) {
        args.push(flag.to_string());
        args.extend(tools.iter().cloned());
        listed = true;
    }
    // The tool lists take every argument up to the next option: `--` ends them, or the
    // prompt would be read as one more tool.
    if listed {
        args.push("--".into());
    }
    args.push(opts.prompt.clone());

    (args, cli_env(opts.base_url.as_deref(), opts.api_key.as_deref()))
}

/// The variables Kiln sets for the CLI, in a turn or a terminal: no telemetry, no
/// self-update, and the bring-your-own-key endpoint when there is one.
pub(crate) fn cli_env(base_url: Option<&str>, api_key: Option<&str>) -> Vec<(String, String)> {
    // The CLI should reach the model and nothing else.
    let mut env: Vec<(String, String)> =
        [("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"), ("DISABLE_TELEMETRY", "1"), ("DISABLE_AUTOUPDATER", "1")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .into();
    if let Some(url) = base_url {
        env.push(("ANTHROPIC_BASE_URL".into(), url.to_string()));
    }
    if let Some(key) = api_key {
        env.push(("ANTHROPIC_API_KEY".into(), key.to_string()));
    }
    env
}

/// Where the CLI and its commands may write (`Confinement::for_turn`), with its state
/// directories in `~/.claude` made first so a first run keeps its sessions for `--resume`.
fn confinement(
    workdir: &std::path::Path,
    read_only: bool,
    env: &[(String, String)],
) -> kiln_runtime::sandbox::Confinement {
    let mut confinement = kiln_runtime::sandbox::Confinement::for_turn(workdir, read_only, env);
    if let Some(dir) = kiln_runtime::sandbox::AgentState::dir("CLAUDE_CONFIG_DIR", ".claude", env) {
        confinement.create_state(&dir, kiln_runtime::sandbox::CLAUDE_STATE);
    }
    confinement
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
            Some("stream_event") => stream_event(&value),
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
                let created =
                    line["tool_use_result"]["type"] == "create" && line["tool_use_result"]["filePath"] == path;
                let change = if created { FileChangeKind::Add } else { FileChangeKind::Update };
                events.push(DriverEvent::FileChange { path: path.to_string(), change });
            }
        }
        events
    }
}

/// The MCP servers Kiln gave the CLI (`--mcp-config`, which it calls "dynamic"), each as a
/// step of the turn as Kiln's own loop shows it: the tools it offers, or that it did not
/// connect. Servers of the user's own Claude configuration are theirs, and not shown.
fn mcp_starts(init: &Value) -> Vec<DriverEvent> {
    let servers = init["mcp_servers"].as_array().map(Vec::as_slice).unwrap_or_default();
    let tools = init["tools"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut events = Vec::new();
    for server in servers.iter().filter(|s| s["source"] == "dynamic") {
        let Some(name) = server["name"].as_str() else { continue };
        let id = format!("mcp-start-{name}");
        let prefix = format!("mcp__{name}__");
        let offered: Vec<&str> = tools.iter().filter_map(|t| t.as_str()?.strip_prefix(prefix.as_str())).collect();
        let status = server["status"].as_str().unwrap_or("unknown");
        let (status, output) = if status == "connected" {
            (ToolStatus::Completed, format!("{} tool(s): {}", offered.len(), offered.join(", ")))
        } else {
            (ToolStatus::Failed, format!("Claude Code says the server is {status}"))
        };
        events.push(DriverEvent::ToolCall {
            id: id.clone(),
            kind: ToolKind::Other,
            title: format!("Start the MCP server {name}"),
            input: json!({"server": name}),
        });
        events.push(DriverEvent::ToolResult { id, status, output });
    }
    events
}

fn system(line: Value) -> Vec<DriverEvent> {
    match (line["subtype"].as_str(), line["session_id"].as_str()) {
        // Claude Code refused a tool call by its permission rules (Kiln's policy), without asking.
        (Some("permission_denied"), _) => vec![DriverEvent::PermissionRequest {
            id: text_of(&line, "tool_use_id"),
            tool: text_of(&line, "tool_name"),
            input: json!({"decision": "denied", "reason": line["decision_reason"].as_str().or(line["message"].as_str())}),
        }],
        (Some("init"), Some(id)) => {
            let mut events = vec![DriverEvent::SessionStarted {
                resume_id: id.to_string(),
                model: line["model"].as_str().map(String::from),
            }];
            events.extend(mcp_starts(&line));
            events
        }
        (Some("api_retry"), _) => {
            let http_status = line["error_status"].as_u64().and_then(|s| u16::try_from(s).ok());
            let status = http_status.map(|s| format!(" (HTTP {s})")).unwrap_or_default();
            let message = format!("{}{status}", plain_text(&line["error"]).unwrap_or_else(|| "API error".into()));
            let attempt = line["attempt"].as_u64().unwrap_or(0).try_into().unwrap_or(u32::MAX);
            let max_attempts = line["max_retries"].as_u64().and_then(|n| u32::try_from(n).ok());
            vec![DriverEvent::Retry { attempt, message, max_attempts, http_status }]
        }
        _ => vec![unknown(line)],
    }
}

/// A piece of a message still streaming (`--include-partial-messages`): text deltas are
/// for the live view; the rest (block starts and stops, tool input, thinking) is told
/// again whole by the `assistant` line that follows, so it makes no event.
fn stream_event(line: &Value) -> Vec<DriverEvent> {
    let event = &line["event"];
    // A sub-agent's stream is not the turn's prose.
    if !line["parent_tool_use_id"].is_null() {
        return Vec::new();
    }
    match (event["type"].as_str(), event["delta"]["type"].as_str()) {
        (Some("content_block_delta"), Some("text_delta")) => match event["delta"]["text"].as_str() {
            Some(text) if !text.is_empty() => vec![DriverEvent::TextDelta { text: text.to_string() }],
            _ => Vec::new(),
        },
        _ => Vec::new(),
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

/// The shell tools: allowed by the policy "commands in the working copy", taken away by
/// "no commands".
const COMMAND_TOOLS: &[&str] = &["Bash", "Monitor"];

/// The permission mode and tool lists for a turn under `policy`.
pub(crate) fn permissions(policy: CommandPolicy, read_only: bool) -> (String, Vec<String>, Vec<String>) {
    let mode = if read_only { "plan" } else { "acceptEdits" };
    let list = |tools: &[&str]| tools.iter().map(|t| t.to_string()).collect::<Vec<_>>();
    match (policy, read_only) {
        (CommandPolicy::None, _) => (mode.into(), Vec::new(), list(COMMAND_TOOLS)),
        // In plan mode an allowed Bash would still run (and write): leave it to plan mode.
        (CommandPolicy::Workdir, true) => (mode.into(), Vec::new(), Vec::new()),
        (CommandPolicy::Workdir, false) => (mode.into(), list(&["Bash"]), Vec::new()),
    }
}

/// Says in the transcript what Kiln's policy decided when Claude Code refuses a call:
/// the refused call's result starts with the decision.
#[derive(Debug)]
pub(crate) struct Decisions {
    policy: CommandPolicy,
    read_only: bool,
    commands: HashSet<String>,
    denied: HashSet<String>,
}

impl Decisions {
    pub(crate) fn new(policy: CommandPolicy, read_only: bool) -> Self {
        Decisions { policy, read_only, commands: HashSet::new(), denied: HashSet::new() }
    }

    pub(crate) fn note(&mut self, event: DriverEvent) -> DriverEvent {
        match event {
            DriverEvent::ToolCall { ref id, kind: ToolKind::Execute, .. } => {
                self.commands.insert(id.clone());
                event
            }
            DriverEvent::PermissionRequest { ref id, .. } => {
                self.denied.insert(id.clone());
                event
            }
            DriverEvent::ToolResult { id, status: ToolStatus::Failed, output } => {
                let command = self.commands.remove(&id);
                let denied = self.denied.remove(&id);
                let why = match (command, denied) {
                    (true, _) if self.policy == CommandPolicy::None => {
                        Some("Refused by Kiln's command policy \"no commands\" (Settings): the agent runs no commands.")
                    }
                    (true, true) if self.read_only => Some("Refused by Kiln's policy: a read-only turn runs no command that needs approval."),
                    (_, true) => Some(
                        "Refused by Kiln's policy: the agent edits files in the working copy and runs commands there, and nothing else is allowed without asking.",
                    ),
                    _ => None,
                };
                let output = match why {
                    Some(why) => format!("{why}\n\n{output}"),
                    None => output,
                };
                DriverEvent::ToolResult { id, status: ToolStatus::Failed, output }
            }
            DriverEvent::ToolResult { ref id, .. } => {
                self.commands.remove(id);
                self.denied.remove(id);
                event
            }
            other => other,
        }
    }
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
    /// Which commands the agent may run (Settings).
    pub commands: CommandPolicy,
}

impl ClaudeDriver {
    /// The CLI as a person runs it, in a terminal of the session working in `workdir`:
    /// `claude`, or `claude --resume <id>` to continue the session's conversation, with the
    /// environment and the confinement of a turn.
    pub fn interactive(
        &self,
        workdir: &std::path::Path,
        repository: &Repository,
        resume_id: Option<&str>,
        model: Option<&str>,
    ) -> kiln_types::error::Result<super::runner::Interactive> {
        let binary = super::discover::find("claude", self.binary.as_deref())?;
        let mut args = resume_id.map(|id| vec!["--resume".to_string(), id.to_string()]).unwrap_or_default();
        // The session's model, as its turns run with.
        if let Some(model) = model.filter(|m| !m.trim().is_empty()) {
            args.extend(["--model".to_string(), model.to_string()]);
        }
        let mut env = cli_env(self.base_url.as_deref(), self.api_key.as_deref());
        env.extend(self.env.iter().cloned());
        // Claude Code asks once per git root whether to trust it. A session's copy is a git
        // checkout of its own, so it would ask again in every session though the user already
        // trusted the repository the copy is of. Their answer for the repository stands for
        // the copy: Claude Code takes `CLAUDE_CODE_SANDBOXED` as its host's word that the
        // folder is safe to work in, and this CLI runs confined to the copy.
        let home = env
            .iter()
            .find(|(k, _)| k == "HOME")
            .map(|(_, v)| v.clone())
            .or_else(|| kiln_runtime::process::operator_var("HOME"));
        let config_dir = env
            .iter()
            .find(|(k, _)| k == "CLAUDE_CONFIG_DIR")
            .map(|(_, v)| v.clone())
            .or_else(|| kiln_runtime::process::operator_var("CLAUDE_CONFIG_DIR"));
        let config = config_dir
            .map(|d| Path::new(&d).join(".claude.json"))
            .or_else(|| home.map(|h| Path::new(&h).join(".claude.json")));
        if config.is_some_and(|c| trusted(&c, repository)) {
            env.push(("CLAUDE_CODE_SANDBOXED".into(), "1".into()));
        }
        let confinement = confinement(workdir, false, &env);
        Ok(super::runner::Interactive { binary, args, env, confinement })
    }
}

/// The repository a session copies, for Claude Code's trust: its root, and the git root
/// above it where Claude stops looking for a trusted folder (none without git).
pub struct Repository<'a> {
    pub root: &'a Path,
    pub git_root: Option<&'a Path>,
}

/// Whether the user's Claude Code trusts `repository` (read from its `projects` in
/// `.claude.json`, never written): the root or a folder above it up to its git root, as
/// Claude Code looks.
fn trusted(config: &Path, repository: &Repository) -> bool {
    let Ok(text) = std::fs::read_to_string(config) else { return false };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else { return false };
    let Some(projects) = json.get("projects").and_then(|p| p.as_object()) else { return false };
    let accepted = |dir: &Path| {
        let key = dir.to_string_lossy();
        projects.get(key.as_ref()).and_then(|p| p.get("hasTrustDialogAccepted")).and_then(|v| v.as_bool()) == Some(true)
    };
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let stop = repository.git_root.map(real);
    if accepted(repository.root) {
        return true;
    }
    let mut dir = Some(real(repository.root));
    while let Some(d) = dir {
        if accepted(&d) {
            return true;
        }
        if stop.as_deref() == Some(d.as_path()) {
            return false;
        }
        dir = d.parent().map(Path::to_path_buf);
    }
    false
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
            (opts.permission_mode, opts.allowed_tools, opts.disallowed_tools) =
                permissions(driver.commands, request.read_only);
            opts.base_url = driver.base_url;
            opts.api_key = driver.api_key;
            let mcp = super::mcp::for_claude(&request.mcp);
            if let Some(mcp) = &mcp {
                // The file names the servers; their values reach the CLI in its environment.
                let path = request.session_dir.join("claude-mcp.json");
                std::fs::create_dir_all(&request.session_dir)?;
                std::fs::write(&path, &mcp.config)?;
                opts.mcp_config = Some(path);
                opts.allowed_tools.extend(mcp.allowed_tools.iter().cloned());
            }
            let (args, mut env) = command(&opts);
            env.extend(mcp.map(|m| m.env).unwrap_or_default());
            env.extend(driver.env);
            // Confined to the working copy, temp, caches and its own state.
            let confinement = confinement(&request.workdir, request.read_only, &env);
            let mut parser = ClaudeParser::new();
            let mut decisions = Decisions::new(driver.commands, request.read_only);
            let cli = super::runner::CliRun {
                binary: &binary,
                args,
                env,
                workdir: &request.workdir,
                confinement: Some(confinement),
            };
            super::runner::run(cli, sink, move |line| {
                parser.parse_line(line).into_iter().map(|e| decisions.note(e)).collect()
            })
            .await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_mcp_servers_kiln_gave_are_steps_of_the_turn() {
        let init = json!({"type": "system", "subtype": "init", "session_id": "s", "model": "m",
        "tools": ["Bash", "mcp__notes__note", "mcp__notes__list", "mcp__mine__x"],
        "mcp_servers": [
            {"name": "notes", "status": "connected", "source": "dynamic"},
            {"name": "docs", "status": "failed", "source": "dynamic"},
            {"name": "mine", "status": "connected", "source": "user"},
        ]});
        let events = system(init);
        let steps: Vec<(String, ToolStatus, String)> = events
            .iter()
            .filter_map(|e| match e {
                DriverEvent::ToolResult { id, status, output } => Some((id.clone(), *status, output.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            steps,
            [
                ("mcp-start-notes".to_string(), ToolStatus::Completed, "2 tool(s): note, list".to_string()),
                ("mcp-start-docs".to_string(), ToolStatus::Failed, "Claude Code says the server is failed".to_string()),
            ]
        );
        assert!(matches!(events[0], DriverEvent::SessionStarted { .. }));
    }

    /// The user's trust of a folder carries to the repository below it, up to its git root
    /// and no further, as Claude Code looks; nothing else trusts it.
    #[test]
    fn a_session_copy_is_trusted_as_the_user_trusted_its_repository() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let (git_root, repo) = (base.join("mono"), base.join("mono/packages/web"));
        std::fs::create_dir_all(&repo).unwrap();
        let config = base.join(".claude.json");
        let trusting = |dir: &Path| {
            let key = dir.display().to_string();
            std::fs::write(&config, json!({"projects": {key: {"hasTrustDialogAccepted": true}}}).to_string()).unwrap();
        };
        let with_git = Repository { root: &repo, git_root: Some(&git_root) };
        let without_git = Repository { root: &repo, git_root: None };
        assert!(!trusted(&config, &with_git), "no config: not trusted");
        trusting(&repo);
        assert!(trusted(&config, &with_git));
        trusting(&git_root);
        assert!(trusted(&config, &with_git), "the git root above it");
        trusting(&base);
        assert!(!trusted(&config, &with_git), "above the git root does not count");
        assert!(trusted(&config, &without_git), "without git, any folder above");
        std::fs::write(
            &config,
            json!({"projects": {repo.display().to_string(): {"hasTrustDialogAccepted": false}}}).to_string(),
        )
        .unwrap();
        assert!(!trusted(&config, &with_git));
        std::fs::write(&config, "not json").unwrap();
        assert!(!trusted(&config, &with_git));
    }

    #[test]
    fn the_policy_becomes_the_permission_mode_and_tool_lists() {
        let bash = strings(&["Bash"]);
        let shell = strings(&["Bash", "Monitor"]);
        assert_eq!(permissions(CommandPolicy::Workdir, false), ("acceptEdits".into(), bash, vec![]));
        assert_eq!(permissions(CommandPolicy::None, false), ("acceptEdits".into(), vec![], shell.clone()));
        assert_eq!(permissions(CommandPolicy::Workdir, true), ("plan".into(), vec![], vec![]));
        assert_eq!(permissions(CommandPolicy::None, true), ("plan".into(), vec![], shell));
    }

    #[test]
    fn tool_lists_end_before_the_prompt() {
        let mut opts = ClaudeOptions::new("--looks like a flag");
        opts.allowed_tools = strings(&["Bash"]);
        let (args, _) = command(&opts);
        assert_eq!(args[args.len() - 4..], strings(&["--allowedTools", "Bash", "--", "--looks like a flag"]));
    }

    #[test]
    fn a_refusal_says_what_the_policy_decided() {
        let mut parser = ClaudeParser::new();
        let denied = r#"{"type":"system","subtype":"permission_denied","tool_name":"Bash","tool_use_id":"call_1","decision_reason":"This command requires approval","session_id":"s"}"#;
        let events = parser.parse_line(denied);
        let request = DriverEvent::PermissionRequest {
            id: "call_1".into(),
            tool: "Bash".into(),
            input: json!({"decision": "denied", "reason": "This command requires approval"}),
        };
        assert_eq!(events, vec![request.clone()]);

        let call = DriverEvent::ToolCall {
            id: "call_1".into(),
            kind: ToolKind::Execute,
            title: "make".into(),
            input: json!({}),
        };
        let failed = |output: &str| DriverEvent::ToolResult {
            id: "call_1".into(),
            status: ToolStatus::Failed,
            output: output.into(),
        };
        let mut decisions = Decisions::new(CommandPolicy::Workdir, true);
        decisions.note(call.clone());
        decisions.note(request);
        let DriverEvent::ToolResult { output, .. } = decisions.note(failed("This command requires approval")) else {
            panic!()
        };
        assert!(
            output.starts_with("Refused by Kiln's policy: a read-only turn") && output.ends_with("requires approval"),
            "{output}"
        );

        let mut decisions = Decisions::new(CommandPolicy::None, false);
        decisions.note(call.clone());
        let DriverEvent::ToolResult { output, .. } = decisions.note(failed("No such tool available: Bash")) else {
            panic!()
        };
        assert!(output.starts_with("Refused by Kiln's command policy \"no commands\""), "{output}");

        // A command that ran and failed on its own is left as it is.
        let mut decisions = Decisions::new(CommandPolicy::Workdir, false);
        decisions.note(call);
        assert_eq!(decisions.note(failed("exit code 1")), failed("exit code 1"));
    }
}
