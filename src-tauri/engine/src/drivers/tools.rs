//! The tools of Kiln's own agent loop (the openai-compatible driver): read, write and
//! edit a file, list a directory, glob, grep and run a command, all confined to the
//! session's working copy. Each tool answers the model with a result, failed or not;
//! a bad argument or a refused path is a failed result the model can correct, never a
//! panic and never a write outside the working copy. `run_command` runs under the OS
//! confinement (`kiln_runtime::sandbox`), and the command policy "no commands" takes it away.

mod command;
mod confine;
mod files;
mod search;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use super::events::{title_line, FileChangeKind, ToolKind, ToolStatus};
use confine::Root;
use kiln_types::CommandPolicy;

/// What a tool call came to: the result the model reads, and the file it changed.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    pub status: ToolStatus,
    pub output: String,
    /// The changed file, relative to the working copy.
    pub change: Option<(String, FileChangeKind)>,
}

impl ToolOutcome {
    pub fn completed(output: impl Into<String>) -> Self {
        ToolOutcome { status: ToolStatus::Completed, output: output.into(), change: None }
    }

    pub fn failed(output: impl Into<String>) -> Self {
        ToolOutcome { status: ToolStatus::Failed, output: output.into(), change: None }
    }
}

/// A tool's own failures are messages for the model.
type ToolResult = Result<ToolOutcome, String>;

/// One tool as offered to the model.
struct Spec {
    name: &'static str,
    description: &'static str,
    /// (name, JSON type, description, required)
    parameters: &'static [(&'static str, &'static str, &'static str, bool)],
    /// Whether a read-only turn may use it.
    reads_only: bool,
}

const PATH: &str = "Path relative to the working copy.";

const SPECS: &[Spec] = &[
    Spec {
        name: "read_file",
        description: "Read a text file of the working copy. Long files come in pages: pass `offset` (first line, from 1) and `limit` (lines) to read on.",
        parameters: &[("path", "string", PATH, true), ("offset", "integer", "First line to read, from 1.", false), ("limit", "integer", "How many lines to read.", false)],
        reads_only: true,
    },
    Spec {
        name: "write_file",
        description: "Create or overwrite a file with `content`; missing parent directories are created.",
        parameters: &[("path", "string", PATH, true), ("content", "string", "The whole new content of the file.", true)],
        reads_only: false,
    },
    Spec {
        name: "edit_file",
        description: "Replace `old_string` with `new_string` in a file. `old_string` must occur exactly once: copy it from the file with enough surrounding lines to name one place.",
        parameters: &[("path", "string", PATH, true), ("old_string", "string", "The exact text to replace.", true), ("new_string", "string", "The text to put in its place.", true)],
        reads_only: false,
    },
    Spec {
        name: "list_dir",
        description: "List a directory of the working copy; directories end with `/`.",
        parameters: &[("path", "string", "Directory relative to the working copy; `.` is its root.", true)],
        reads_only: true,
    },
    Spec {
        name: "glob",
        description: "Find files by glob pattern (e.g. `**/*.rs`, `src/*.ts`), relative to the working copy. Files ignored by .gitignore are skipped.",
        parameters: &[("pattern", "string", "Glob pattern; `*` stays within one directory, `**` crosses them.", true)],
        reads_only: true,
    },
    Spec {
        name: "grep",
        description: "Search file contents with a regular expression; answers `path:line: text`. Files ignored by .gitignore are skipped.",
        parameters: &[("pattern", "string", "Regular expression (Rust regex syntax).", true), ("path", "string", "File or directory to search; the whole working copy when left out.", false)],
        reads_only: true,
    },
    Spec {
        name: "run_command",
        description: "Run a shell command (`sh -c`) in the working copy's root, with no input, and answer its exit code and output. A command that runs too long is killed.",
        parameters: &[("command", "string", "The command line.", true)],
        reads_only: false,
    },
];

/// The tools for one turn, over one working copy.
#[derive(Debug, Clone)]
pub struct Toolbox {
    root: Root,
    /// The session's directory, for the home and temp of `run_command` (see `TurnRequest`).
    session_dir: PathBuf,
    read_only: bool,
    command_timeout: Duration,
    commands: CommandPolicy,
    environment: kiln_runtime::sandbox::EnvironmentConfig,
    /// The user's MCP servers that answered, by name, each with its tools offered as
    /// `mcp__<server>__<tool>` (`with_mcp`).
    mcp: Vec<(String, std::sync::Arc<super::mcp::client::McpClient>)>,
}

/// What the model reads when it calls `run_command` under "no commands".
pub const NO_COMMANDS: &str =
    "`run_command` is not available: Kiln's command policy is \"no commands\" (Settings), so this turn runs no commands; read and edit files with the other tools";

impl Toolbox {
    /// Fails when the working copy cannot be resolved (it does not exist). Commands are
    /// allowed ("commands in the working copy") until `with_commands` says otherwise.
    pub fn new(
        workdir: &Path,
        session_dir: &Path,
        read_only: bool,
        command_timeout: Duration,
    ) -> std::io::Result<Toolbox> {
        let session_dir = session_dir.to_path_buf();
        Ok(Toolbox {
            root: Root::new(workdir)?,
            session_dir,
            read_only,
            command_timeout,
            commands: CommandPolicy::Workdir,
            environment: Default::default(),
            mcp: Vec::new(),
        })
    }

    /// The same tools, whose commands get the user's environment as `environment` says.
    pub fn with_environment(mut self, environment: kiln_runtime::sandbox::EnvironmentConfig) -> Toolbox {
        self.environment = environment;
        self
    }

    /// The same tools under the command policy `commands`.
    pub fn with_commands(mut self, commands: CommandPolicy) -> Toolbox {
        self.commands = commands;
        self
    }

    /// The same tools and the tools of these MCP servers (by the server's name). A read-only
    /// turn gets none of them: what a server's tool does is its own.
    pub(crate) fn with_mcp(mut self, servers: Vec<(String, std::sync::Arc<super::mcp::client::McpClient>)>) -> Toolbox {
        if !self.read_only {
            self.mcp = servers;
        }
        self
    }

    /// The tools offered this turn, as Chat Completions `tools`: a read-only turn gets
    /// only those that read.
    pub fn definitions(&self) -> Vec<Value> {
        let mine = self.offered().map(definition);
        let theirs = self.mcp.iter().flat_map(|(server, client)| {
            client.tools.iter().filter_map(move |tool| {
                let name = mcp_name(server, &tool.name)?;
                Some(json!({
                    "type": "function",
                    "function": {"name": name, "description": tool.description, "parameters": tool.input_schema},
                }))
            })
        });
        mine.chain(theirs).collect()
    }

    /// The MCP server and tool a function name of `definitions` stands for.
    fn mcp_tool(&self, name: &str) -> Option<(&super::mcp::client::McpClient, &str)> {
        self.mcp.iter().find_map(|(server, client)| {
            let tool = client.tools.iter().find(|t| mcp_name(server, &t.name).as_deref() == Some(name))?;
            Some((client.as_ref(), tool.name.as_str()))
        })
    }

    fn offered(&self) -> impl Iterator<Item = &'static Spec> + '_ {
        let commands = self.commands != CommandPolicy::None;
        SPECS
            .iter()
            .filter(move |spec| (spec.reads_only || !self.read_only) && (commands || spec.name != "run_command"))
    }

    /// Runs one call. A tool that was not offered fails like any other mistake, so a
    /// model that calls `write_file` in a read-only turn is told, not obeyed.
    #[cfg(feature = "test-support")]
    pub async fn run(&self, name: &str, input: &Value) -> ToolOutcome {
        self.run_watched(name, input, None).await
    }

    /// `run`, with a command's output heard by `watch` as it arrives.
    pub async fn run_watched(
        &self,
        name: &str,
        input: &Value,
        watch: Option<kiln_runtime::process::Watch>,
    ) -> ToolOutcome {
        if let Some((client, tool)) = self.mcp_tool(name) {
            // A tool that never answers must not hold the turn: the limit of a command.
            let limit = self.command_timeout;
            let output = tokio::time::timeout(limit, client.call(tool, input))
                .await
                .unwrap_or_else(|_| Err(format!("the tool did not answer within {} seconds", limit.as_secs())));
            let clip = |text: String| kiln_runtime::redact::redact(&clip(&text, MCP_OUTPUT)).into_owned();
            return match output {
                Ok(text) => ToolOutcome::completed(clip(text)),
                Err(why) => ToolOutcome::failed(clip(why)),
            };
        }
        if !self.offered().any(|spec| spec.name == name) {
            if name == "run_command" && self.commands == CommandPolicy::None && !self.read_only {
                return ToolOutcome::failed(NO_COMMANDS);
            }
            let why = if SPECS.iter().any(|spec| spec.name == name) {
                "is not available in a read-only turn"
            } else {
                "is not a tool here"
            };
            return ToolOutcome::failed(format!("`{name}` {why}"));
        }
        let result = if name == "run_command" {
            match string(input, "command") {
                Ok(line) => {
                    let (root, dir, timeout) = (self.root.path(), &self.session_dir, self.command_timeout);
                    Ok(command::run(root, dir, line, timeout, &self.environment, watch).await)
                }
                Err(e) => Err(e),
            }
        } else {
            // File tools are plain blocking IO: off the async threads.
            let (root, name, input) = (self.root.clone(), name.to_string(), input.clone());
            tokio::task::spawn_blocking(move || run_file_tool(&root, &name, &input))
                .await
                .unwrap_or_else(|e| Err(format!("the tool stopped unexpectedly: {e}")))
        };
        result.unwrap_or_else(ToolOutcome::failed)
    }
}

/// The most of an MCP tool's answer the model is given.
const MCP_OUTPUT: usize = 64 * 1024;

/// `text`, cut at a character boundary within `limit` bytes, saying so when it was.
fn clip(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_string();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n(cut: the answer was {} bytes)", &text[..end], text.len())
}

/// The function name of an MCP server's tool, when the model's function names can hold it.
fn mcp_name(server: &str, tool: &str) -> Option<String> {
    let name = format!("mcp__{server}__{tool}");
    let usable = name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    usable.then_some(name)
}

fn run_file_tool(root: &Root, name: &str, input: &Value) -> ToolResult {
    match name {
        "read_file" => files::read(root, input),
        "write_file" => files::write(root, input),
        "edit_file" => files::edit(root, input),
        "list_dir" => files::list(root, input),
        "glob" => search::glob(root, input),
        "grep" => search::grep(root, input),
        _ => Err(format!("`{name}` is not a tool here")),
    }
}

fn definition(spec: &Spec) -> Value {
    let properties: serde_json::Map<String, Value> = spec
        .parameters
        .iter()
        .map(|(name, kind, description, _)| (name.to_string(), json!({"type": kind, "description": description})))
        .collect();
    let required: Vec<&str> = spec.parameters.iter().filter(|p| p.3).map(|p| p.0).collect();
    json!({
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    })
}

/// What a tool does, for the UI.
pub(crate) fn kind(name: &str) -> ToolKind {
    match name {
        "read_file" | "list_dir" => ToolKind::Read,
        "write_file" | "edit_file" => ToolKind::Edit,
        "run_command" => ToolKind::Execute,
        "glob" | "grep" => ToolKind::Search,
        _ => ToolKind::Other,
    }
}

/// One line for people: the command itself for `run_command`, else the tool and what
/// it acts on.
pub(crate) fn title(name: &str, input: &Value) -> String {
    let field = |key: &str| input[key].as_str();
    let detail = match name {
        "run_command" => return title_line(field("command").unwrap_or(name)),
        "grep" => field("pattern").map(|p| match field("path") {
            Some(path) => format!("{p} in {path}"),
            None => p.to_string(),
        }),
        "glob" => field("pattern").map(String::from),
        _ => field("path").map(String::from),
    };
    title_line(&detail.map_or_else(|| name.to_string(), |d| format!("{name} {d}")))
}

/// A required string argument.
fn string<'a>(input: &'a Value, key: &str) -> Result<&'a str, String> {
    input[key].as_str().ok_or_else(|| format!("missing the string argument `{key}`"))
}
