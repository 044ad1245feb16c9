//! Codex: the command line for one turn (`codex exec --json`) and the parser that
//! reads its stdout, one JSON line at a time, into driver events. Codex reports items
//! (messages, commands, patches…) as started, updated and completed, and tokens but
//! never a cost.
//!
//! Permissions: approvals are never asked (`approval_policy="never"`): Kiln's command
//! policy decides. "No commands" turns Codex's shell tool off (`features.shell_tool=false`:
//! no `exec_command`), leaving its edits. Codex's own sandbox for `workspace-write` is
//! bubblewrap, which cannot start inside a Landlock domain (it needs mounts and a uid map
//! there, both refused). So where Kiln confines the CLI with Landlock (`kiln_runtime::sandbox`),
//! Codex runs with `--sandbox danger-full-access` inside Kiln's confinement, which then
//! keeps the working copy read-only for a read-only turn; where the kernel has no
//! Landlock, Codex's own `workspace-write` (or `read-only`) sandbox is what confines it.

use std::collections::HashSet;
use std::path::PathBuf;

use serde_json::{json, Value};

use super::events::{count, title_line, DriverEvent, FileChangeKind, ToolKind, ToolStatus, Usage};
use kiln_types::CommandPolicy;

const SOURCE: &str = "codex";

/// How to run one turn. No `Debug`: it may hold an API key.
#[derive(Clone)]
pub struct CodexOptions {
    /// The whole message for this turn, passed as the last argument. Codex also reads
    /// stdin when it is piped, so the turn must run with stdin closed.
    pub prompt: String,
    /// The session working copy, where the agent works and may write.
    pub dir: PathBuf,
    /// The `thread_id` of an earlier turn to continue; `None` starts a new thread.
    pub thread_id: Option<String>,
    pub model: Option<String>,
    /// `-c key=value` settings; codex reads each value as TOML, falling back to a string.
    pub config: Vec<(String, String)>,
    /// Bring-your-own-key; unset, the CLI uses the operator's own login.
    pub api_key: Option<String>,
    /// `--sandbox`: `workspace-write`, `read-only` or `danger-full-access`.
    pub sandbox: String,
}

impl CodexOptions {
    pub fn new(prompt: impl Into<String>, dir: impl Into<PathBuf>) -> Self {
        CodexOptions {
            prompt: prompt.into(),
            dir: dir.into(),
            thread_id: None,
            model: None,
            config: Vec::new(),
            api_key: None,
            sandbox: "workspace-write".into(),
        }
    }
}

/// The arguments (after the `codex` binary) and the extra environment for a turn.
pub fn command(opts: &CodexOptions) -> (Vec<String>, Vec<(String, String)>) {
    let dir = opts.dir.to_string_lossy().into_owned();
    let mut args: Vec<String> =
        ["exec", "--json", "--skip-git-repo-check", "-C", dir.as_str(), "--sandbox", opts.sandbox.as_str()]
            .map(String::from)
            .into();
    if let Some(model) = &opts.model {
        args.extend(["--model".to_string(), model.clone()]);
    }
    for (key, value) in &opts.config {
        args.extend(["-c".to_string(), format!("{key}={value}")]);
    }
    // Every option goes before `resume`: `exec resume` itself rejects -C and --sandbox.
    if let Some(thread) = &opts.thread_id {
        args.extend(["resume".to_string(), thread.clone()]);
    }
    args.push(opts.prompt.clone());

    // `codex exec` takes an API key from CODEX_API_KEY.
    let env = opts.api_key.iter().map(|key| ("CODEX_API_KEY".to_string(), key.clone())).collect();
    (args, env)
}

/// Reads one turn's stdout. Keep one parser per turn: it remembers which tool calls it
/// already announced and the agent's last message, which `turn.completed` lacks.
#[derive(Debug, Default)]
pub struct CodexParser {
    announced: HashSet<String>,
    last_text: Option<String>,
}

impl CodexParser {
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
            Some("thread.started") => match value["thread_id"].as_str() {
                Some(id) => vec![DriverEvent::SessionStarted { resume_id: id.to_string(), model: None }],
                None => vec![unknown(value)],
            },
            Some("turn.started") => {
                self.last_text = None;
                Vec::new()
            }
            Some("turn.completed") => vec![
                usage(&value["usage"]),
                DriverEvent::TurnEnded {
                    is_error: false,
                    stop_reason: None,
                    final_text: self.last_text.take(),
                    error: None,
                },
            ],
            Some("turn.failed") => {
                let message = value["error"]["message"].as_str().unwrap_or("codex reported the turn failed");
                vec![DriverEvent::TurnEnded {
                    is_error: true,
                    stop_reason: None,
                    final_text: None,
                    error: Some(message.into()),
                }]
            }
            Some("error") => vec![stream_error(text_of(&value, "message"))],
            Some("item.started" | "item.updated") => self.item(value, false),
            Some("item.completed") => self.item(value, true),
            _ => vec![unknown(value)],
        }
    }

    fn item(&mut self, line: Value, completed: bool) -> Vec<DriverEvent> {
        let item = &line["item"];
        let id = text_of(item, "id");
        match item["type"].as_str() {
            // Messages and reasoning are whole only once completed.
            Some("agent_message") if completed => {
                let text = text_of(item, "text");
                self.last_text = Some(text.clone());
                vec![DriverEvent::Text { text }]
            }
            Some("reasoning") if completed => vec![DriverEvent::Thought { text: text_of(item, "text") }],
            Some("agent_message" | "reasoning") => Vec::new(),
            Some("command_execution") => {
                let command = text_of(item, "command");
                let failed = item["exit_code"].as_i64().is_some_and(|code| code != 0);
                let call = (ToolKind::Execute, title_line(&command), json!({ "command": command }));
                self.tool(id, completed, call, status(item, failed), text_of(item, "aggregated_output"))
            }
            Some("file_change") => {
                let changes = item["changes"].as_array().cloned().unwrap_or_default();
                let listed: Vec<String> =
                    changes.iter().map(|c| format!("{} {}", text_of(c, "kind"), text_of(c, "path"))).collect();
                let paths: Vec<String> = changes.iter().map(|c| text_of(c, "path")).collect();
                let call =
                    (ToolKind::Edit, title_line(&format!("Edit {}", paths.join(", "))), json!({ "changes": changes }));
                let status = status(item, false);
                let mut events = self.tool(id, completed, call, status, listed.join("\n"));
                if completed && status == ToolStatus::Completed {
                    let changed = changes
                        .iter()
                        .map(|c| DriverEvent::FileChange { path: text_of(c, "path"), change: change_kind(c) });
                    events.extend(changed);
                }
                events
            }
            Some("mcp_tool_call") => {
                let title = format!("{}: {}", text_of(item, "server"), text_of(item, "tool"));
                let call = (ToolKind::Other, title_line(&title), item["arguments"].clone());
                let output = match item["error"]["message"].as_str() {
                    Some(message) => message.to_string(),
                    None => {
                        let blocks = item["result"]["content"].as_array().into_iter().flatten();
                        blocks.filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n")
                    }
                };
                self.tool(id, completed, call, status(item, item["error"].is_object()), output)
            }
            Some("web_search") => {
                let query = text_of(item, "query");
                let call = (ToolKind::Fetch, title_line(&format!("Web search {query}")), json!({ "query": query }));
                self.tool(id, completed, call, status(item, false), String::new())
            }
            // The plan as it stands; its completion at the end of the turn repeats the last one.
            Some("todo_list") if completed => Vec::new(),
            Some("todo_list") => vec![DriverEvent::Thought { text: plan(item) }],
            // An error item is codex's non-fatal notice; a failure ends the turn as `turn.failed`.
            Some("error") => vec![DriverEvent::Warning { message: text_of(item, "message") }],
            _ => vec![unknown(line)],
        }
    }

    /// A tool item's call, once (some items are only ever reported completed), and its
    /// result when it completes.
    fn tool(
        &mut self,
        id: String,
        completed: bool,
        (kind, title, input): (ToolKind, String, Value),
        status: ToolStatus,
        output: String,
    ) -> Vec<DriverEvent> {
        let mut events = Vec::new();
        if !self.announced.contains(&id) {
            events.push(DriverEvent::ToolCall { id: id.clone(), kind, title, input });
        }
        if completed {
            self.announced.remove(&id);
            events.push(DriverEvent::ToolResult { id, status, output });
        } else {
            self.announced.insert(id);
        }
        events
    }
}

/// Codex's input count includes cache reads; Kiln's does not (see `Usage`).
fn usage(usage: &Value) -> DriverEvent {
    let cached = count(usage, "cached_input_tokens");
    DriverEvent::Usage(Usage {
        input_tokens: count(usage, "input_tokens").saturating_sub(cached),
        output_tokens: count(usage, "output_tokens"),
        cache_read_tokens: cached,
        cache_write_tokens: count(usage, "cache_write_input_tokens"),
        cost_usd: None,
    })
}

/// Codex reports its own reconnects ("Reconnecting... 2/5 …") as errors: those are retries.
fn stream_error(message: String) -> DriverEvent {
    match message.strip_prefix("Reconnecting...") {
        Some(rest) => {
            let mut counts = rest.split_whitespace().next().unwrap_or("").split('/');
            let attempt = counts.next().and_then(|n| n.parse().ok()).unwrap_or(0);
            let max_attempts = counts.next().and_then(|n| n.parse().ok());
            let http_status = crate::live::status_in(&message);
            DriverEvent::Retry { attempt, message, max_attempts, http_status }
        }
        None => DriverEvent::Error { message },
    }
}

fn status(item: &Value, failed: bool) -> ToolStatus {
    match item["status"].as_str() {
        Some("failed" | "declined") => ToolStatus::Failed,
        _ if failed => ToolStatus::Failed,
        _ => ToolStatus::Completed,
    }
}

fn change_kind(change: &Value) -> FileChangeKind {
    match change["kind"].as_str() {
        Some("add") => FileChangeKind::Add,
        Some("delete") => FileChangeKind::Delete,
        _ => FileChangeKind::Update,
    }
}

fn plan(item: &Value) -> String {
    let steps = item["items"].as_array().into_iter().flatten();
    let lines: Vec<String> = steps
        .map(|step| format!("[{}] {}", if step["completed"] == true { "x" } else { " " }, text_of(step, "text")))
        .collect();
    lines.join("\n")
}

fn text_of(value: &Value, key: &str) -> String {
    value[key].as_str().unwrap_or_default().to_string()
}

fn unknown(raw: Value) -> DriverEvent {
    DriverEvent::Unknown { source: SOURCE.into(), raw }
}

/// The `codex` driver: `codex exec --json`, continued across turns with `resume`.
/// No `Debug`: it may hold an API key.
#[derive(Clone, Default)]
pub struct CodexDriver {
    pub binary: Option<PathBuf>,
    /// Extra `-c key=value` settings (a model provider for bring-your-own-key, …).
    pub config: Vec<(String, String)>,
    pub api_key: Option<String>,
    /// Extra environment for the CLI (`CODEX_HOME`, a provider's key variable, …), set after
    /// the driver's own variables (so one named here wins): no setting needed for each.
    pub env: Vec<(String, String)>,
    /// Which commands the agent may run (Settings).
    pub commands: CommandPolicy,
}

/// Codex's `--sandbox` and the `-c` settings for a turn under `policy`; `confined` says
/// whether Kiln's own confinement (Landlock) wraps the CLI.
pub(crate) fn permissions(policy: CommandPolicy, read_only: bool, confined: bool) -> (String, Vec<(String, String)>) {
    let sandbox = match (confined, read_only) {
        (true, _) => "danger-full-access",
        (false, true) => "read-only",
        (false, false) => "workspace-write",
    };
    let mut config = vec![("approval_policy".to_string(), "\"never\"".to_string())];
    if policy == CommandPolicy::None {
        config.push(("features.shell_tool".into(), "false".into()));
    }
    (sandbox.into(), config)
}

impl super::Driver for CodexDriver {
    fn id(&self) -> &'static str {
        SOURCE
    }

    fn guard_config(&self) -> super::agent_config::Guard {
        let home = kiln_runtime::sandbox::AgentState::dir("CODEX_HOME", ".codex", &self.env);
        super::agent_config::Guard::take(home, super::agent_config::CODEX_CONFIG)
    }

    fn run(&self, request: super::TurnRequest, sink: super::TurnSink) -> super::TurnFuture {
        let driver = self.clone();
        Box::pin(async move {
            let binary = super::discover::find("codex", driver.binary.as_deref())?;
            let mut opts = CodexOptions::new(request.prompt, request.workdir.clone());
            opts.thread_id = request.resume_id;
            opts.model = request.model;
            opts.api_key = driver.api_key;
            let confined = kiln_runtime::sandbox::kernel_abi().is_some();
            let (sandbox, policy_config) = permissions(driver.commands, request.read_only, confined);
            opts.sandbox = sandbox;
            opts.config = policy_config;
            opts.config.extend(driver.config);
            let (mcp_config, mcp_env) = super::mcp::for_codex(&request.mcp);
            opts.config.extend(mcp_config);
            if !request.instructions.is_empty() {
                // Kiln's context goes in Codex's own instructions setting, never AGENTS.md.
                opts.config.push(("developer_instructions".into(), toml_string(&request.instructions)));
            }
            let (args, mut env) = command(&opts);
            env.extend(mcp_env);
            env.extend(driver.env);
            let confinement = confinement(&request.workdir, request.read_only, &env);
            let mut parser = CodexParser::new();
            let cli = super::runner::CliRun {
                binary: &binary,
                args,
                env,
                workdir: &request.workdir,
                confinement: Some(confinement),
            };
            super::runner::run(cli, sink, move |line| parser.parse_line(line)).await
        })
    }
}

/// Where the CLI may write: confined like every agent CLI (`Confinement::for_turn`), with
/// its state directory (`$CODEX_HOME`, else `~/.codex`) made first.
fn confinement(
    workdir: &std::path::Path,
    read_only: bool,
    env: &[(String, String)],
) -> kiln_runtime::sandbox::Confinement {
    let mut confinement = kiln_runtime::sandbox::Confinement::for_turn(workdir, read_only, env);
    if let Some(home) = kiln_runtime::sandbox::AgentState::dir("CODEX_HOME", ".codex", env) {
        confinement.create(home);
    }
    confinement
}

impl CodexDriver {
    /// The CLI as a person runs it, in a terminal of the session working in `workdir`:
    /// `codex`, or `codex resume <thread>` to continue the session's thread, with the
    /// environment and the confinement of a turn. Where Kiln confines it, Codex's own
    /// sandbox is off, as in a turn (it cannot start inside Kiln's).
    pub fn interactive(
        &self,
        workdir: &std::path::Path,
        thread_id: Option<&str>,
        model: Option<&str>,
    ) -> kiln_types::error::Result<super::runner::Interactive> {
        let binary = super::discover::find("codex", self.binary.as_deref())?;
        let mut args: Vec<String> = Vec::new();
        // The session's model, as its turns run with.
        if let Some(model) = model.filter(|m| !m.trim().is_empty()) {
            args.extend(["--model".to_string(), model.to_string()]);
        }
        if kiln_runtime::sandbox::kernel_abi().is_some() {
            args.extend(["--sandbox".to_string(), "danger-full-access".to_string()]);
        }
        for (key, value) in &self.config {
            args.extend(["-c".to_string(), format!("{key}={value}")]);
        }
        // The session's working copy is new to Codex each session: opened here by the user,
        // it is trusted without asking (the user's own config is not written).
        args.extend(["-c".to_string(), trusted(workdir)]);
        if let Some(thread) = thread_id {
            args.extend(["resume".to_string(), thread.to_string()]);
        }
        let mut env: Vec<(String, String)> =
            self.api_key.iter().map(|key| ("CODEX_API_KEY".to_string(), key.clone())).collect();
        env.extend(self.env.iter().cloned());
        let confinement = confinement(workdir, false, &env);
        Ok(super::runner::Interactive { binary, args, env, confinement })
    }
}

/// `projects."<workdir>".trust_level="trusted"`: Codex's trust of one directory, as a `-c`
/// override (the path is a quoted TOML key, so any character in it stays intact).
fn trusted(workdir: &std::path::Path) -> String {
    format!("projects.{}.trust_level=\"trusted\"", toml_string(&workdir.to_string_lossy()))
}

/// A TOML basic string, so `-c key=value` keeps quotes, newlines and backslashes intact.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_trusts_the_sessions_working_copy_by_a_quoted_key() {
        let key = trusted(std::path::Path::new("/repo/.kiln/sessions/a \"b\"/workspace"));
        assert_eq!(key, r#"projects."/repo/.kiln/sessions/a \"b\"/workspace".trust_level="trusted""#);
        let parsed: toml::Table = toml::from_str(&key).unwrap();
        assert_eq!(
            parsed["projects"]["/repo/.kiln/sessions/a \"b\"/workspace"]["trust_level"].as_str(),
            Some("trusted")
        );
    }

    #[test]
    fn the_policy_and_the_confinement_choose_the_sandbox_and_settings() {
        let never = ("approval_policy".to_string(), "\"never\"".to_string());
        let no_shell = ("features.shell_tool".to_string(), "false".to_string());
        // Under Kiln's Landlock, Codex's own (bubblewrap) sandbox could not start.
        assert_eq!(
            permissions(CommandPolicy::Workdir, false, true),
            ("danger-full-access".into(), vec![never.clone()])
        );
        assert_eq!(permissions(CommandPolicy::Workdir, true, true), ("danger-full-access".into(), vec![never.clone()]));
        assert_eq!(
            permissions(CommandPolicy::None, false, true),
            ("danger-full-access".into(), vec![never.clone(), no_shell.clone()])
        );
        // Without it, Codex's own sandbox confines.
        assert_eq!(permissions(CommandPolicy::Workdir, false, false), ("workspace-write".into(), vec![never.clone()]));
        assert_eq!(permissions(CommandPolicy::Workdir, true, false), ("read-only".into(), vec![never.clone()]));
        assert_eq!(permissions(CommandPolicy::None, false, false), ("workspace-write".into(), vec![never, no_shell]));
    }
}
