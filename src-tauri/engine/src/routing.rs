//! Routing (ARCHITECTURE.md: Workflows and the chain): which role takes a turn in a module, and why. The module's state
//! decides first (no specification, not approved, no server code, no screen); otherwise
//! the request's words choose among the roles. Every decision carries its reason, which
//! the transcript shows.

use std::path::Path;

use globset::{Glob, GlobSetBuilder};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// This role takes the turn.
    Role { role: String, reason: String },
    /// The specification must be approved by the operator before anyone builds.
    AwaitApproval { reason: String },
}

/// What routing needs to know about a module in the session's working copy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleState {
    pub has_spec: bool,
    pub spec_approved: bool,
    pub has_server: bool,
    pub has_screen: bool,
}

impl ModuleState {
    /// Reads a module directory: the spec file, and whether any file matches the
    /// workspace's server and screen globs (relative to the module directory).
    pub fn read(module_dir: &Path, spec: &str, server: &[String], screen: &[String], approved: bool) -> ModuleState {
        ModuleState {
            has_spec: module_dir.join(spec).is_file(),
            spec_approved: approved,
            has_server: any_file_matches(module_dir, server),
            has_screen: any_file_matches(module_dir, screen),
        }
    }
}

fn any_file_matches(dir: &Path, globs: &[String]) -> bool {
    let mut builder = GlobSetBuilder::new();
    for g in globs {
        if let Ok(glob) = Glob::new(g) {
            builder.add(glob);
        }
    }
    let Ok(set) = builder.build() else { return false };
    ignore::WalkBuilder::new(dir)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != "node_modules")
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .any(|e| e.path().strip_prefix(dir).is_ok_and(|rel| set.is_match(rel)))
}

/// Words that point at a role, checked in this order when the module's state leaves
/// the choice open.
const WORDS: &[(&str, &[&str])] = &[
    ("business-manager", &["spec", "specification", "requirement", "requirements", "scope", "story", "acceptance"]),
    ("ux-designer", &["ux", "design", "flow", "wireframe", "usability", "copy", "wording"]),
    ("agentic-engineer", &["agent", "agents", "prompt", "prompts", "llm", "model", "ai"]),
    (
        "backend-engineer",
        &["api", "endpoint", "route", "routes", "server", "database", "validation", "validate", "status"],
    ),
    (
        "frontend-engineer",
        &["screen", "page", "button", "ui", "layout", "style", "css", "form", "view", "display", "show"],
    ),
];

pub fn route(state: &ModuleState, request: &str, available: &[&str]) -> Route {
    let pick = |role: &str, reason: String| Route::Role { role: role.to_string(), reason };
    if !state.has_spec {
        return pick("business-manager", "the module has no specification yet".into());
    }
    if !state.spec_approved {
        return Route::AwaitApproval { reason: "the module's specification is not approved".into() };
    }
    if !state.has_server {
        return pick("backend-engineer", "the module has no server code yet".into());
    }
    if !state.has_screen {
        return pick("frontend-engineer", "the module has no screen yet".into());
    }
    let words: Vec<String> = request
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| w.to_ascii_lowercase())
        .collect();
    for (role, cues) in WORDS {
        if !available.contains(role) {
            continue;
        }
        if let Some(word) = words.iter().find(|w| cues.contains(&w.as_str())) {
            return pick(role, format!("the request mentions “{word}”"));
        }
    }
    pick("frontend-engineer", "no role is named by the request; screens are where most requests start".into())
}
