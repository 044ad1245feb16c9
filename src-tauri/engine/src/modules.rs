//! Module discovery (ARCHITECTURE.md: Concepts, Workspace config): which units of change a workspace holds, each with
//! an id, a directory and a toolchain. Sources, first match wins: `[modules] globs`,
//! pnpm-workspace.yaml, package.json `workspaces`, Cargo `[workspace] members`, go.work
//! `use` directories, and otherwise the whole repository as one module (a package, a
//! crate, a Python project, a Go module, or a Makefile project).

use std::path::Path;

use crate::config::Config;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use kiln_types::error::{ApiError, ErrorCode, Result};
pub use kiln_types::{ModuleInfo, Toolchain};

/// Directories never searched for modules.
const SKIP_DIRS: &[&str] = &["node_modules", ".git", ".kiln", "target", "dist", ".venv", "__pycache__"];
const MAX_DEPTH: usize = 4;

pub(crate) fn discover(root: &Path, config: &Config) -> Result<Vec<ModuleInfo>> {
    let patterns = if !config.modules.globs.is_empty() {
        config.modules.globs.clone()
    } else if let Some(p) = pnpm_patterns(root) {
        p
    } else if let Some(p) = npm_patterns(root) {
        p
    } else if let Some(p) = cargo_patterns(root) {
        p
    } else {
        go_work_patterns(root).unwrap_or_default()
    };
    let mut modules = Vec::new();
    if patterns.is_empty() {
        modules.push(describe(root, ".", &config.modules.spec, root_name(root)));
    } else {
        let (include, exclude) = compile(&patterns)?;
        let mut dirs = Vec::new();
        collect_dirs(root, root, 0, &mut dirs);
        dirs.sort();
        for rel in dirs {
            if include.is_match(&rel) && !exclude.is_match(&rel) {
                let dir = root.join(&rel);
                if is_module_dir(&dir) {
                    let fallback = rel.rsplit('/').next().unwrap_or(&rel).to_string();
                    modules.push(describe(&dir, &rel, &config.modules.spec, fallback));
                }
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    for m in &modules {
        if !seen.insert(m.id.clone()) {
            return Err(ApiError::new(
                ErrorCode::ConfigInvalid,
                format!("two modules share the id `{}`; give each a unique package name", m.id),
            ));
        }
    }
    Ok(modules)
}

fn root_name(root: &Path) -> String {
    root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "workspace".into())
}

fn compile(patterns: &[String]) -> Result<(GlobSet, GlobSet)> {
    let mut include = GlobSetBuilder::new();
    let mut exclude = GlobSetBuilder::new();
    for raw in patterns {
        let (negated, pattern) = match raw.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, raw.as_str()),
        };
        let pattern = pattern.trim_start_matches("./").trim_end_matches('/');
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| ApiError::new(ErrorCode::ConfigInvalid, format!("module pattern `{raw}`: {e}")))?;
        if negated {
            exclude.add(glob)
        } else {
            include.add(glob)
        };
    }
    let build = |b: GlobSetBuilder| b.build().map_err(|e| ApiError::new(ErrorCode::ConfigInvalid, e.to_string()));
    Ok((build(include)?, build(exclude)?))
}

fn collect_dirs(root: &Path, dir: &Path, depth: usize, out: &mut Vec<String>) {
    if depth >= MAX_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if SKIP_DIRS.contains(&name.as_str()) || !entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            continue;
        }
        let path = entry.path();
        if let Ok(rel) = path.strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
        collect_dirs(root, &path, depth + 1, out);
    }
}

fn is_module_dir(dir: &Path) -> bool {
    ["package.json", "Cargo.toml", "pyproject.toml", "module.json", "setup.py", "go.mod"]
        .iter()
        .any(|f| dir.join(f).is_file())
}

/// A module the workspace does not have yet (one a session creates), read from its
/// directory in the session's working copy: its toolchain from the manifests there.
pub(crate) fn describe_new(workdir: &Path, id: &str, directory: &str, config: &Config) -> ModuleInfo {
    let mut info = describe(&workdir.join(directory), directory, &config.modules.spec, id.to_string());
    info.id = id.to_string();
    info
}

fn describe(dir: &Path, rel: &str, spec: &str, fallback: String) -> ModuleInfo {
    let read_json = |name: &str| -> Option<serde_json::Value> {
        serde_json::from_str(&std::fs::read_to_string(dir.join(name)).ok()?).ok()
    };
    let read_toml =
        |name: &str| -> Option<toml::Value> { toml::from_str(&std::fs::read_to_string(dir.join(name)).ok()?).ok() };
    let string_at = |v: &serde_json::Value, key: &str| v.get(key).and_then(|s| s.as_str()).map(str::to_string);

    let module_json_id = read_json("module.json").and_then(|v| string_at(&v, "id"));
    let package = read_json("package.json");
    let cargo = read_toml("Cargo.toml");
    let pyproject = read_toml("pyproject.toml");
    let cargo_name = cargo.as_ref().and_then(|c| c.get("package")?.get("name")?.as_str().map(str::to_string));
    let py_name = pyproject.as_ref().and_then(|c| c.get("project")?.get("name")?.as_str().map(str::to_string));
    let go_mod = std::fs::read_to_string(dir.join("go.mod")).ok();
    let go_name = go_mod.as_deref().and_then(|t| {
        t.lines().find_map(|l| l.trim().strip_prefix("module ").map(|m| m.trim().trim_matches('"').to_string()))
    });

    let id = module_json_id
        .or_else(|| package.as_ref().and_then(|p| string_at(p, "name")))
        .or(cargo_name)
        .or(py_name)
        .or(go_name)
        .unwrap_or(fallback);
    let toolchain = if package.is_some() {
        Toolchain::Node
    } else if cargo.is_some() {
        Toolchain::Rust
    } else if pyproject.is_some() || dir.join("setup.py").is_file() {
        Toolchain::Python
    } else if go_mod.is_some() {
        Toolchain::Go
    } else {
        Toolchain::Generic
    };
    let spec_status = std::fs::read_to_string(dir.join(spec)).ok().and_then(|t| spec_status(&t));
    ModuleInfo { id, directory: rel.to_string(), toolchain, spec_status }
}

/// The `status:` value of a Markdown document's front matter.
pub(crate) fn spec_status(text: &str) -> Option<String> {
    let mut lines = text.lines();
    if lines.next()?.trim() != "---" {
        return None;
    }
    for line in lines {
        let line = line.trim();
        if line == "---" {
            break;
        }
        if let Some(value) = line.strip_prefix("status:") {
            return Some(value.trim().trim_matches(['"', '\'']).to_string());
        }
    }
    None
}

fn pnpm_patterns(root: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(root.join("pnpm-workspace.yaml")).ok()?;
    let mut in_packages = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if !line.starts_with([' ', '\t', '-']) {
            in_packages = trimmed.starts_with("packages:");
            continue;
        }
        if in_packages {
            if let Some(item) = trimmed.strip_prefix('-') {
                out.push(item.trim().trim_matches(['"', '\'']).to_string());
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

fn npm_patterns(root: &Path) -> Option<Vec<String>> {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(root.join("package.json")).ok()?).ok()?;
    let ws = v.get("workspaces")?;
    let list = ws.as_array().or_else(|| ws.get("packages")?.as_array())?;
    let out: Vec<String> = list.iter().filter_map(|s| s.as_str().map(str::to_string)).collect();
    (!out.is_empty()).then_some(out)
}

/// The directories of a `go.work` file's `use` lines (one-line and block form).
fn go_work_patterns(root: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(root.join("go.work")).ok()?;
    let mut out = Vec::new();
    let mut in_block = false;
    for line in text.lines().map(|l| l.split("//").next().unwrap_or_default().trim()) {
        if in_block {
            if line == ")" {
                in_block = false;
            } else if !line.is_empty() {
                out.push(line.trim_matches('"').to_string());
            }
        } else if let Some(rest) = line.strip_prefix("use") {
            let rest = rest.trim();
            if rest == "(" {
                in_block = true;
            } else if !rest.is_empty() {
                out.push(rest.trim_matches('"').to_string());
            }
        }
    }
    let out: Vec<String> =
        out.into_iter().map(|d| d.trim_start_matches("./").to_string()).filter(|d| !d.is_empty() && d != ".").collect();
    (!out.is_empty()).then_some(out)
}

fn cargo_patterns(root: &Path) -> Option<Vec<String>> {
    let v: toml::Value = toml::from_str(&std::fs::read_to_string(root.join("Cargo.toml")).ok()?).ok()?;
    let ws = v.get("workspace")?;
    let strings = |key: &str| -> Vec<String> {
        ws.get(key)
            .and_then(|m| m.as_array())
            .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    };
    let mut out: Vec<String> = strings("members").into_iter().filter(|m| m != ".").collect();
    out.extend(strings("exclude").into_iter().map(|e| format!("!{e}")));
    (!out.is_empty()).then_some(out)
}
