//! `kiln.toml`: the workspace's configuration (ARCHITECTURE.md: Workspace config). Every key has a default and
//! an unknown key is an error that names it, so a typo never silently does nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use kiln_types::error::{ApiError, ErrorCode, Result};
pub use kiln_types::Workflow;

pub(crate) const FILE_NAME: &str = "kiln.toml";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub workflow: WorkflowConfig,
    pub modules: ModulesConfig,
    pub session: SessionConfig,
    /// Gate commands per toolchain (`node`, `rust`, `python`, `go`, `generic`).
    pub gates: BTreeMap<String, GateCommands>,
    pub preview: PreviewConfig,
    pub delivery: DeliveryConfig,
    /// What the commands Kiln runs get of the user's environment beyond the rules
    /// (`kiln_runtime::sandbox::passing`).
    pub environment: kiln_runtime::sandbox::EnvironmentConfig,
    /// `[mcp.<name>]`: MCP servers every agent is given (`crate::mcp_config`).
    pub mcp: BTreeMap<String, crate::mcp_config::McpServerConfig>,
}

/// `[workflow]`: how turns are taken in this workspace (ARCHITECTURE.md: Workflows and the chain).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkflowConfig {
    pub mode: Workflow,
    /// Run the `spec-schema` gate in the direct workflow too.
    pub spec_schema: bool,
}

impl Config {
    pub fn workflow(&self) -> Workflow {
        self.workflow.mode
    }

    /// Whether `spec-schema` runs: always in specs, on request in direct.
    pub fn checks_specs(&self) -> bool {
        self.workflow.mode == Workflow::Specs || self.workflow.spec_schema
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModulesConfig {
    pub globs: Vec<String>,
    pub id_pattern: Option<String>,
    pub spec: String,
    pub server: Vec<String>,
    pub screen: Vec<String>,
    pub scaffold: Option<String>,
    pub schema: Option<String>,
    pub overrides: BTreeMap<String, ModuleOverride>,
}

impl Default for ModulesConfig {
    fn default() -> Self {
        ModulesConfig {
            globs: Vec::new(),
            id_pattern: None,
            spec: "SPEC.md".into(),
            server: vec!["src/server/**".into()],
            screen: vec!["src/client/**".into()],
            scaffold: None,
            schema: None,
            overrides: BTreeMap::new(),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModuleOverride {
    pub gates: GateCommands,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GateCommands {
    pub dependencies: Option<String>,
    pub typecheck: Option<String>,
    pub tests: Option<String>,
    pub format: Option<String>,
    pub lint: Option<String>,
}

impl GateCommands {
    /// The command set for `gate`: `Some("")` turns a gate off, `None` leaves it to detection.
    pub fn get(&self, gate: &str) -> Option<&String> {
        match gate {
            "dependencies" => self.dependencies.as_ref(),
            "typecheck" => self.typecheck.as_ref(),
            "tests" => self.tests.as_ref(),
            "format" => self.format.as_ref(),
            "lint" => self.lint.as_ref(),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SessionConfig {
    /// Ignored files carried into every session's working copy (`.env`, …).
    pub copy: Vec<String>,
    /// The dependencies step, run in the background after materializing.
    pub setup: Option<String>,
    /// Seconds between autosave checkpoints while a turn runs.
    pub autosave_seconds: u64,
    /// Checkpoints kept per session; the oldest go first, never the start.
    pub max_checkpoints: u32,
    /// Seconds a gate may run before its process group is killed.
    pub gate_timeout_seconds: u64,
    /// Agent turns the engine runs at once; more wait in order (`slots.rs`). Unset:
    /// `default_parallel_turns` of the machine's cores.
    pub max_parallel_turns: Option<usize>,
}

impl SessionConfig {
    /// The turn limit this config asks for, on a machine with `cores` cores.
    pub fn parallel_turns(&self, cores: usize) -> usize {
        self.max_parallel_turns.unwrap_or_else(|| default_parallel_turns(cores))
    }
}

/// The default turn limit for a machine with `cores` cores: one turn per core plus one. A
/// turn spends most of its time waiting for its model, but the commands it runs (tests,
/// builds) and the gates after it want a core each; 2 cores give 3, and more than 8 at
/// once is more than one operator can follow.
pub(crate) fn default_parallel_turns(cores: usize) -> usize {
    (cores + 1).clamp(2, 8)
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            copy: Vec::new(),
            setup: None,
            autosave_seconds: 180,
            max_checkpoints: 100,
            gate_timeout_seconds: 600,
            max_parallel_turns: None,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PreviewConfig {
    pub command: Option<String>,
    pub ready: Option<String>,
    pub module_url: Option<String>,
    pub bridge: Option<String>,
    pub data: Option<String>,
    pub root: Option<String>,
    /// Minutes without a visit before a running preview is stopped (default 15).
    pub idle_minutes: Option<f64>,
    /// Seconds a start may take to become ready (default 60).
    pub ready_timeout_seconds: Option<u64>,
    /// Screenshots of the page before the first turn and after each turn that changed
    /// files (default true).
    pub screenshots: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeliveryConfig {
    pub default: String,
    pub targets: Vec<String>,
    pub install: Option<String>,
    pub enable: Option<String>,
    pub after: Vec<String>,
    pub typecheck: Option<String>,
    pub build: Option<String>,
    pub max_changed_files: u32,
    pub max_new_dependencies: u32,
    /// How a pull request carries the preview's before and after screenshots: `upload`
    /// (to the `kiln/evidence` branch through the API), `commit` (into the pull request's
    /// branch under `screenshots_path`) or `off`.
    pub screenshots: String,
    /// `screenshots = "commit"`: the workspace-relative directory they go under.
    pub screenshots_path: String,
    pub git: DeliveryGitConfig,
}

impl Default for DeliveryConfig {
    fn default() -> Self {
        DeliveryConfig {
            default: "workspace".into(),
            targets: vec!["workspace".into(), "git-pr".into()],
            install: None,
            enable: None,
            after: Vec::new(),
            typecheck: None,
            build: None,
            max_changed_files: 18,
            max_new_dependencies: 3,
            screenshots: "upload".into(),
            screenshots_path: ".github/kiln-screenshots".into(),
            git: DeliveryGitConfig::default(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeliveryGitConfig {
    pub remote: String,
    pub base: String,
    pub branch_prefix: String,
    pub provider: String,
    pub reviewers: Vec<String>,
}

impl Default for DeliveryGitConfig {
    fn default() -> Self {
        DeliveryGitConfig {
            remote: "origin".into(),
            base: "main".into(),
            branch_prefix: "kiln".into(),
            provider: "github".into(),
            reviewers: Vec::new(),
        }
    }
}

const TOOLCHAINS: &[&str] = &["node", "rust", "python", "go", "generic"];
const DATA_MODES: &[&str] = &["fixtures", "bridge"];
const TARGETS: &[&str] = &["workspace", "git-pr"];

impl Config {
    /// Parses and validates the text of a `kiln.toml`; `origin` names it in errors.
    pub fn parse(text: &str, origin: &Path) -> Result<Config> {
        let invalid = |msg: String| ApiError::new(ErrorCode::ConfigInvalid, format!("{}: {msg}", origin.display()));
        let config: Config =
            toml::from_str(text).map_err(|e| invalid(e.message().to_string() + &span_note(text, e.span())))?;
        for key in config.gates.keys() {
            if !TOOLCHAINS.contains(&key.as_str()) {
                return Err(invalid(format!(
                    "unknown key `gates.{key}`: gates are set per toolchain, one of {}",
                    TOOLCHAINS.join(", ")
                )));
            }
        }
        if let Some(pattern) = &config.modules.id_pattern {
            regex::Regex::new(pattern)
                .map_err(|e| invalid(format!("`modules.id_pattern` is not a valid regular expression: {e}")))?;
        }
        if let Some(data) = &config.preview.data {
            if !DATA_MODES.contains(&data.as_str()) {
                return Err(invalid(format!("`preview.data` must be one of {}, not `{data}`", DATA_MODES.join(", "))));
            }
        }
        for target in config.delivery.targets.iter().chain([&config.delivery.default]) {
            if !TARGETS.contains(&target.as_str()) {
                return Err(invalid(format!("unknown delivery target `{target}`: one of {}", TARGETS.join(", "))));
            }
        }
        if config.session.max_parallel_turns == Some(0) {
            return Err(invalid("`session.max_parallel_turns` must be at least 1".into()));
        }
        let shots = config.delivery.screenshots.as_str();
        if !["upload", "commit", "off"].contains(&shots) {
            return Err(invalid(format!("`delivery.screenshots` must be upload, commit or off, not `{shots}`")));
        }
        kiln_runtime::paths::relative(config.delivery.screenshots_path.trim_matches('/'))
            .map_err(|e| invalid(format!("`delivery.screenshots_path`: {}", e.message)))?;
        if let Some(problem) = config.environment.problems().into_iter().next() {
            return Err(invalid(problem));
        }
        for (name, server) in &config.mcp {
            if let Some(problem) = crate::mcp_config::problem(name, server) {
                return Err(invalid(problem));
            }
        }
        if config.mcp.len() > crate::mcp_config::MAX_SERVERS {
            return Err(invalid(format!("at most {} MCP servers", crate::mcp_config::MAX_SERVERS)));
        }
        for glob in &config.modules.globs {
            globset::Glob::new(glob).map_err(|e| invalid(format!("`modules.globs` entry `{glob}`: {e}")))?;
        }
        Ok(config)
    }

    pub fn load(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ApiError::new(ErrorCode::ConfigInvalid, format!("{}: {e}", path.display())))?;
        Config::parse(&text, path)
    }
}

/// " (line N)" for a byte span, so the user can find the offending key.
fn span_note(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    match span {
        Some(span) => format!(" (line {})", text[..span.start.min(text.len())].matches('\n').count() + 1),
        None => String::new(),
    }
}

/// Where the workspace is rooted for an opened path: the nearest directory holding a
/// `kiln.toml` walking up, else the git work tree's root, else the path itself.
pub(crate) fn find_root(opened: &Path) -> (PathBuf, Option<PathBuf>) {
    for dir in opened.ancestors() {
        let candidate = dir.join(FILE_NAME);
        if candidate.is_file() {
            return (dir.to_path_buf(), Some(candidate));
        }
    }
    if let Ok(repo) = git2::Repository::discover(opened) {
        if let Some(workdir) = repo.workdir() {
            let root = workdir.canonicalize().unwrap_or_else(|_| workdir.to_path_buf());
            return (root, None);
        }
    }
    (opened.to_path_buf(), None)
}
