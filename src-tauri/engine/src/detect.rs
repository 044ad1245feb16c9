//! Gate and setup detection (ARCHITECTURE.md: Gates): what a repository's own tooling says its
//! install step, typecheck, tests, format and lint commands are, each with where it came
//! from, so a repository with no `kiln.toml` still gets real gates. `kiln.toml` overrides
//! any of it (per module, then per toolchain); a gate with no command is *not
//! configured*, shown with a hint, and never blocks.
//!
//! Commands run from the module's directory. One that must run from the repository
//! root (a root vitest or jest config, prettier reading the root's ignore file) starts
//! with `cd <up> &&`. `{changed}` stands for the files the session changed, relative to
//! the repository root; `{changed:ts,js}` for those with one of the extensions.

use std::path::Path;

use crate::config::Config;
use crate::modules::{ModuleInfo, Toolchain};
use kiln_types::{DetectedCommand, DetectedGate};

/// The gates every module has, in the order they run.
pub(crate) const MODULE_GATES: &[&str] = &["dependencies", "typecheck", "tests", "format", "lint"];

mod node;
mod others;
mod toml_out;
pub(crate) mod toolchains;
mod view;

pub use view::detect_path;
pub(crate) use view::{save, view};

/// What Kiln detects in the open workspace's own tooling (`detect_workspace`): read off the
/// async runtime, as it walks the repository.
pub(crate) async fn detect_workspace(
    cx: &crate::workspace::Context,
    _: kiln_types::EmptyArgs,
) -> kiln_types::error::Result<kiln_types::DetectionView> {
    let ws = cx.ws.clone();
    tokio::task::spawn_blocking(move || view(&ws))
        .await
        .map_err(|e| kiln_types::error::ApiError::internal("detecting", e))?
}

/// A detected command and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub command: String,
    pub source: String,
}

impl Found {
    pub(crate) fn new(command: impl Into<String>, source: impl Into<String>) -> Found {
        Found { command: command.into(), source: source.into() }
    }
}

/// The command a module's gate runs in the working copy `root`, with its source, or
/// why there is none: `kiln.toml` (module override, then toolchain) first, then detection.
pub(crate) fn gate(root: &Path, config: &Config, module: &ModuleInfo, gate: &str) -> DetectedGate {
    let configured = |commands: Option<&String>, source: String| {
        commands.map(|c| {
            let c = c.trim();
            DetectedGate {
                gate: gate.into(),
                command: (!c.is_empty()).then(|| c.to_string()),
                hint: c.is_empty().then(|| format!("turned off in {source}")),
                source,
            }
        })
    };
    if let Some(g) =
        config.modules.overrides.get(&module.id).and_then(|o| {
            configured(o.gates.get(gate), format!("kiln.toml [modules.overrides.\"{}\".gates]", module.id))
        })
    {
        return g;
    }
    let toolchain = module.toolchain.as_str();
    if let Some(g) =
        config.gates.get(toolchain).and_then(|set| configured(set.get(gate), format!("kiln.toml [gates.{toolchain}]")))
    {
        return g;
    }
    match detect(root, module, gate) {
        Ok(found) => DetectedGate { gate: gate.into(), command: Some(found.command), source: found.source, hint: None },
        Err(hint) => DetectedGate { gate: gate.into(), command: None, source: "not detected".into(), hint: Some(hint) },
    }
}

/// Detection alone, for one gate of one module: the command, or a hint saying what
/// would give the gate one.
pub(crate) fn detect(root: &Path, module: &ModuleInfo, gate: &str) -> Result<Found, String> {
    let repo = Repo::new(root, module);
    let found = match module.toolchain {
        Toolchain::Node => node::gate(&repo, gate),
        Toolchain::Rust => others::rust(&repo, gate),
        Toolchain::Python => others::python(&repo, gate),
        Toolchain::Go => others::go(&repo, gate),
        Toolchain::Generic => Err(String::new()),
    };
    // Anything: a Makefile or justfile target stands in for tests (and `check` for typecheck).
    found.or_else(|hint| match others::task_target(&repo, gate) {
        Some(found) => Ok(found),
        None if hint.is_empty() => Err(generic_hint(gate)),
        None => Err(hint),
    })
}

fn generic_hint(gate: &str) -> String {
    match gate {
        "tests" => {
            "no test runner found: add a `test` target to the Makefile or justfile, or set `tests` in kiln.toml".into()
        }
        "typecheck" => {
            "no type checker found: add a `check` target to the Makefile, or set `typecheck` in kiln.toml".into()
        }
        other => format!("nothing detected for {other}: set `{other}` in kiln.toml to add it"),
    }
}

/// The install step run after a session's working copy is made, and as the
/// `dependencies` gate: every module's, once per directory, offline first.
pub(crate) fn setup(root: &Path, config: &Config, modules: &[ModuleInfo]) -> Option<DetectedCommand> {
    if let Some(setup) = &config.session.setup {
        let setup = setup.trim();
        return (!setup.is_empty())
            .then(|| DetectedCommand { command: setup.into(), source: "kiln.toml [session] setup".into() });
    }
    let mut steps: Vec<Found> = Vec::new();
    for module in modules {
        let g = gate(root, config, module, "dependencies");
        let Some(command) = g.command else { continue };
        // A module's step runs in its directory; setup runs at the root.
        let up = Repo::new(root, module).to_root();
        let command = match command.strip_prefix(&up) {
            _ if up.is_empty() => command,
            Some(at_root) => at_root.to_string(),
            None => format!("cd {} && {command}", shell_word(&module.directory)),
        };
        if !steps.iter().any(|s| s.command == command) {
            steps.push(Found::new(command, g.source));
        }
    }
    match steps.len() {
        0 => None,
        1 => Some(DetectedCommand { command: steps[0].command.clone(), source: steps[0].source.clone() }),
        _ => Some(DetectedCommand {
            command: steps.iter().map(|s| format!("( {} )", s.command)).collect::<Vec<_>>().join(" && "),
            source: steps.iter().map(|s| s.source.as_str()).collect::<Vec<_>>().join("; "),
        }),
    }
}

/// A module inside the repository being detected: its directory and the root's.
pub(crate) struct Repo<'a> {
    pub root: &'a Path,
    pub dir: std::path::PathBuf,
    pub module: &'a ModuleInfo,
}

impl<'a> Repo<'a> {
    pub(crate) fn new(root: &'a Path, module: &'a ModuleInfo) -> Repo<'a> {
        Repo { root, dir: root.join(&module.directory), module }
    }

    pub(crate) fn at_root(&self) -> bool {
        self.module.directory == "." || self.module.directory.is_empty()
    }

    /// `cd ../.. && ` from the module's directory to the root, empty at the root.
    pub(crate) fn to_root(&self) -> String {
        if self.at_root() {
            return String::new();
        }
        let depth = self.module.directory.split('/').filter(|p| !p.is_empty() && *p != ".").count();
        format!("cd {} && ", vec![".."; depth].join("/"))
    }

    pub(crate) fn module_file(&self, name: &str) -> bool {
        self.dir.join(name).is_file()
    }

    pub(crate) fn root_file(&self, name: &str) -> bool {
        self.root.join(name).is_file()
    }

    pub(crate) fn read_module(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(name)).ok()
    }

    pub(crate) fn read_root(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(name)).ok()
    }

    /// "at the repository root" or "in `packages/a`", for sources.
    pub(crate) fn where_module(&self) -> String {
        if self.at_root() {
            String::new()
        } else {
            format!(" in `{}`", self.module.directory)
        }
    }
}

/// A JSON file's text parsed, or `null` when it is missing or does not parse.
pub(crate) fn json(text: Option<String>) -> serde_json::Value {
    text.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
}

/// `text` as one shell word: plain when it is safe, else single-quoted.
pub(crate) fn shell_word(text: &str) -> String {
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "-_./@+=:,".contains(c)) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// `command` with `{changed}` and `{changed:ext,…}` replaced by the changed files
/// (repository-relative, shell-quoted). `None` when the command asks for changed files
/// and none apply: there is nothing for it to check.
pub(crate) fn with_changed(command: &str, changed: &[String]) -> Option<String> {
    let pattern = regex::Regex::new(r"\{changed(?::([A-Za-z0-9,]+))?\}").unwrap();
    if !pattern.is_match(command) {
        return Some(command.to_string());
    }
    let mut empty = false;
    let out = pattern.replace_all(command, |caps: &regex::Captures| {
        let exts: Option<Vec<&str>> = caps.get(1).map(|m| m.as_str().split(',').collect());
        let files: Vec<String> = changed
            .iter()
            .filter(|f| match &exts {
                Some(exts) => Path::new(f).extension().is_some_and(|e| exts.iter().any(|x| e == *x)),
                None => true,
            })
            .map(|f| shell_word(f))
            .collect();
        empty |= files.is_empty();
        files.join(" ")
    });
    (!empty).then(|| out.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_files_fill_the_placeholder() {
        let changed = vec!["src/a.ts".to_string(), "README.md".into(), "odd name.ts".into()];
        assert_eq!(
            with_changed("prettier --check {changed}", &changed).unwrap(),
            "prettier --check src/a.ts README.md 'odd name.ts'"
        );
        assert_eq!(with_changed("eslint {changed:ts,js}", &changed).unwrap(), "eslint src/a.ts 'odd name.ts'");
        assert_eq!(with_changed("gofmt -l {changed:go}", &changed), None);
        assert_eq!(with_changed("npm test", &[]).unwrap(), "npm test");
    }
}
