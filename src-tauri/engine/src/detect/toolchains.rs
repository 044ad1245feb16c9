//! The toolchains a workspace needs and what this machine has: each module's runtime
//! and package manager, its version (`node --version`, `go version`…) and the version
//! the repository asks for (`go 1.23` in go.mod, `rust-version` or a version in
//! `rust-toolchain.toml`, `requires-python` or `.python-version`, `engines.node` or `.nvmrc`).
//! A missing or too old one is named with what to install.

use kiln_runtime::process::{Command, Env};
use std::path::Path;

use super::others::{py_manager, PyManager};
use super::{json, node, Repo};
use crate::modules::{ModuleInfo, Toolchain};
use kiln_types::ToolchainCheck;

/// Every toolchain the modules need, once each, in the modules' order.
pub(crate) fn check(root: &Path, modules: &[ModuleInfo]) -> Vec<ToolchainCheck> {
    let mut out: Vec<ToolchainCheck> = Vec::new();
    let mut add = |check: ToolchainCheck| {
        if !out.iter().any(|c| c.name == check.name) {
            out.push(check);
        }
    };
    for module in modules {
        let repo = Repo::new(root, module);
        match module.toolchain {
            Toolchain::Node => {
                let engines = |text: Option<String>| json(text)["engines"]["node"].as_str().map(str::to_string);
                let wanted = engines(repo.read_module("package.json"))
                    .or_else(|| engines(repo.read_root("package.json")))
                    .or_else(|| pinned(&repo, &[".nvmrc", ".node-version"]));
                add(tool(
                    "node",
                    &["--version"],
                    wanted,
                    "Node.js (https://nodejs.org, or your distribution's nodejs package)",
                ));
                match node::manager(&repo).manager {
                    node::Manager::Pnpm | node::Manager::Yarn => add(tool(
                        "corepack",
                        &["--version"],
                        None,
                        "corepack (it ships with Node.js 16.9 and later; `npm install -g corepack`)",
                    )),
                    node::Manager::Bun => add(tool("bun", &["--version"], None, "bun (https://bun.sh)")),
                    node::Manager::Npm => add(tool("npm", &["--version"], None, "npm (it ships with Node.js)")),
                }
            }
            Toolchain::Rust => {
                let manifest = repo.read_module("Cargo.toml").unwrap_or_default();
                let channel = |name: &str| {
                    let text = repo.read_module(name).or_else(|| repo.read_root(name))?;
                    toml_string(&text, "channel").or_else(|| text.lines().next().map(|l| l.trim().to_string()))
                };
                let wanted = toml_string(&manifest, "rust-version").or_else(|| {
                    // A channel that is a version (`1.80`), not `stable` or `nightly-…`.
                    ["rust-toolchain.toml", "rust-toolchain"]
                        .iter()
                        .find_map(|f| channel(f))
                        .filter(|c| c.starts_with(|ch: char| ch.is_ascii_digit()))
                });
                add(tool("cargo", &["--version"], wanted, "the Rust toolchain (https://rustup.rs)"));
            }
            Toolchain::Python => {
                let pyproject = repo.read_module("pyproject.toml").unwrap_or_default();
                let wanted = toml_string(&pyproject, "requires-python").or_else(|| pinned(&repo, &[".python-version"]));
                add(tool(
                    "python3",
                    &["--version"],
                    wanted,
                    "Python 3 with venv (your distribution's python3 and python3-venv)",
                ));
                match py_manager(&repo).0 {
                    PyManager::Uv => add(tool("uv", &["--version"], None, "uv (https://docs.astral.sh/uv/)")),
                    PyManager::Poetry => {
                        add(tool("poetry", &["--version"], None, "Poetry (https://python-poetry.org)"))
                    }
                    PyManager::Pip => {}
                }
            }
            Toolchain::Go => {
                let go_mod = repo.read_module("go.mod").unwrap_or_default();
                let wanted = go_mod.lines().find_map(|l| l.trim().strip_prefix("go ").map(|v| v.trim().to_string()));
                add(tool("go", &["version"], wanted, "Go (https://go.dev/dl, or your distribution's golang-go)"));
            }
            Toolchain::Generic => {}
        }
        if ["Makefile", "makefile", "GNUmakefile"].iter().any(|f| repo.module_file(f) || repo.root_file(f)) {
            add(tool("make", &["--version"], None, "make (your distribution's make or build-essential)"));
        }
    }
    out
}

/// A version file's version (`v20.11.0` → `20.11.0`), from the module's directory or the
/// root; an alias (`lts/*`, `system`) says no version.
fn pinned(repo: &Repo, files: &[&str]) -> Option<String> {
    files.iter().find_map(|f| {
        let text = repo.read_module(f).or_else(|| repo.read_root(f))?;
        let line = text.lines().next()?.trim().trim_start_matches('v').to_string();
        line.starts_with(|c: char| c.is_ascii_digit()).then_some(line)
    })
}

/// The first toolchain that stops a session's setup, as a sentence naming what to install.
pub(crate) fn blocking(checks: &[ToolchainCheck]) -> Option<String> {
    checks.iter().find(|c| !c.ok).and_then(|c| c.message.clone())
}

/// `key = "value"` anywhere in a TOML text (the sections differ between tools).
fn toml_string(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches(['"', '\'']).to_string())
    })
}

fn tool(name: &str, args: &[&str], wanted: Option<String>, install: &str) -> ToolchainCheck {
    // From Kiln's own directory, as a shell would: a rustup override file there counts.
    let env = [("GOTOOLCHAIN".to_string(), "local".to_string())];
    let output = Command::new(name, Path::new("."), Env::Operator(&env)).args(args).output_blocking();
    let found = output.ok().filter(|o| o.status.success()).map(|o| {
        let text = String::from_utf8_lossy(if o.stdout.is_empty() { &o.stderr } else { &o.stdout }).into_owned();
        version_in(&text).unwrap_or_else(|| text.lines().next().unwrap_or_default().trim().to_string())
    });
    let (ok, message) = match (&found, &wanted) {
        (None, _) => (false, Some(format!("`{name}` is not installed: install {install}"))),
        (Some(have), Some(want)) if !satisfies(have, want) => (
            false,
            Some(format!("the repository asks for {name} {want} and this machine has {have}: install {install}")),
        ),
        _ => (true, None),
    };
    ToolchainCheck { name: name.into(), found, required: wanted, ok, message }
}

/// The first dotted version number in a tool's output (`go1.19.8` → `1.19.8`).
fn version_in(text: &str) -> Option<String> {
    let re = regex::Regex::new(r"(\d+)\.(\d+)(\.\d+)?").unwrap();
    re.find(text).map(|m| m.as_str().to_string())
}

fn numbers(version: &str) -> Vec<u64> {
    version.split(['.', '-', '+']).map_while(|p| p.parse().ok()).collect()
}

/// Whether `have` meets a simple requirement: a bare version or `>=x.y` is a minimum;
/// `^x`/`~x`/`x.*` need the same major; anything more complex is taken as met.
pub(crate) fn satisfies(have: &str, wanted: &str) -> bool {
    let have = numbers(have);
    let wanted = wanted.trim();
    if wanted.contains([',', '|', '<', ' ']) && !wanted.starts_with(">=") {
        return true;
    }
    let (minimum, same_major) = if let Some(v) = wanted.strip_prefix(">=") {
        (v.split([',', ' ']).next().unwrap_or(v), false)
    } else if let Some(v) = wanted.strip_prefix('^').or_else(|| wanted.strip_prefix('~')) {
        (v, true)
    } else {
        (wanted.trim_start_matches(['v', '=']), false)
    };
    let want = numbers(minimum.trim());
    if want.is_empty() {
        return true;
    }
    if same_major && have.first() != want.first() {
        return false;
    }
    let pad = |v: &[u64]| (0..3).map(|i| v.get(i).copied().unwrap_or(0)).collect::<Vec<_>>();
    pad(&have) >= pad(&want)
}

#[cfg(test)]
mod tests {
    use super::{satisfies, version_in};

    #[test]
    fn versions() {
        assert_eq!(version_in("go version go1.19.8 linux/amd64").as_deref(), Some("1.19.8"));
        assert!(!satisfies("1.19.8", "1.23"));
        assert!(satisfies("1.23.0", "1.23"));
        assert!(satisfies("3.11.7", ">=3.9"));
        assert!(!satisfies("3.8.1", ">=3.9"));
        assert!(satisfies("20.20.2", ">=20.19"));
        assert!(!satisfies("18.1.0", "^20"));
        assert!(satisfies("1.95.0", "1.70"));
    }
}
