//! Roles (ARCHITECTURE.md: Workflows and the chain): who takes turns. Each is a Markdown document with front matter
//! (`id`, `name`, `allowed_paths`, `scope`, `handoff`, `gates`, `read_only`) and an
//! instruction body. The defaults in `src-tauri/engine/roles/` ship inside the binary: the
//! direct workflow's `engineer` and the specs workflow's specialists. A workspace adds
//! roles, or overrides one, by placing a document with that id in `kiln/roles/`; they
//! take part in either workflow.

use std::path::Path;

use crate::config::Workflow;
use kiln_types::error::{ApiError, ErrorCode, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Role {
    pub id: String,
    pub name: String,
    /// Globs where this role may write, relative to the module directory (or to the
    /// working copy's root when `scope` is `repository`).
    pub allowed_paths: Vec<String>,
    /// `module` (the default): one turn writes in one module. `repository`: the whole
    /// working copy is the role's to change.
    pub scope: Scope,
    /// The roles this one may hand a turn to.
    pub handoff: Vec<String>,
    pub gates: Vec<String>,
    pub read_only: bool,
    pub instruction: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    #[default]
    Module,
    Repository,
}

/// The role that takes every turn of the direct workflow.
pub(crate) const ENGINEER: &str = "engineer";

/// The bundled default documents, by file name. A test checks this list against the
/// directory, so a document cannot be added or changed without shipping.
pub const BUNDLED: &[(&str, &str)] = &[
    ("agentic-engineer.md", include_str!("../roles/agentic-engineer.md")),
    ("backend-engineer.md", include_str!("../roles/backend-engineer.md")),
    ("business-manager.md", include_str!("../roles/business-manager.md")),
    ("engineer.md", include_str!("../roles/engineer.md")),
    ("frontend-engineer.md", include_str!("../roles/frontend-engineer.md")),
    ("ux-designer.md", include_str!("../roles/ux-designer.md")),
];

const KEYS: &[&str] = &["id", "name", "allowed_paths", "scope", "handoff", "gates", "read_only"];

impl Role {
    /// Parses a role document; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Role> {
        let invalid = |msg: String| ApiError::new(ErrorCode::ConfigInvalid, format!("role `{origin}`: {msg}"));
        let rest =
            text.strip_prefix("---\n").ok_or_else(|| invalid("must start with a `---` front matter block".into()))?;
        let (front, body) =
            rest.split_once("\n---\n").ok_or_else(|| invalid("the front matter is not closed by `---`".into()))?;
        let mut fields = std::collections::BTreeMap::new();
        for (n, line) in front.lines().enumerate() {
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            let (key, value) =
                line.split_once(':').ok_or_else(|| invalid(format!("line {}: expected `key: value`", n + 2)))?;
            let key = key.trim();
            if !KEYS.contains(&key) {
                return Err(invalid(format!("unknown key `{key}`; the keys are {}", KEYS.join(", "))));
            }
            fields.insert(key.to_string(), value.trim().to_string());
        }
        let text_field = |key: &str| fields.get(key).cloned().ok_or_else(|| invalid(format!("missing `{key}`")));
        let list = |key: &str| -> Result<Vec<String>> {
            let raw = text_field(key)?;
            let inner = raw
                .strip_prefix('[')
                .and_then(|r| r.strip_suffix(']'))
                .ok_or_else(|| invalid(format!("`{key}` must be a list like [a, b]")))?;
            Ok(inner
                .split(',')
                .map(|s| s.trim().trim_matches(['"', '\'']).to_string())
                .filter(|s| !s.is_empty())
                .collect())
        };
        let read_only = match text_field("read_only")?.as_str() {
            "true" => true,
            "false" => false,
            other => return Err(invalid(format!("`read_only` must be true or false, not `{other}`"))),
        };
        let scope = match fields.get("scope").map(String::as_str) {
            None | Some("module") => Scope::Module,
            Some("repository") => Scope::Repository,
            Some(other) => return Err(invalid(format!("`scope` must be module or repository, not `{other}`"))),
        };
        let role = Role {
            id: text_field("id")?,
            name: text_field("name")?,
            allowed_paths: list("allowed_paths")?,
            scope,
            handoff: list("handoff")?,
            gates: list("gates")?,
            read_only,
            instruction: body.trim().to_string(),
        };
        if role.handoff.contains(&role.id) {
            return Err(invalid("a role cannot hand off to itself".into()));
        }
        Ok(role)
    }
}

/// The roles in force for a workspace in `workflow`: the direct workflow's `engineer`
/// or the specs workflow's specialists, and the workspace's own documents in
/// `<root>/kiln/roles/` (each replacing a bundled role of the same id), in a stable order.
pub fn load(root: &Path, workflow: Workflow) -> Result<Vec<Role>> {
    let (all, own) = load_all(root)?;
    Ok(all
        .into_iter()
        .filter(|r| {
            own.contains(&r.id)
                || match workflow {
                    Workflow::Direct => r.id == ENGINEER,
                    Workflow::Specs => r.id != ENGINEER,
                }
        })
        .collect())
}

/// Every bundled role and the workspace's own, checked together (a workspace role may
/// hand off to any bundled one), with the ids the workspace defines.
fn load_all(root: &Path) -> Result<(Vec<Role>, Vec<String>)> {
    let mut roles: Vec<Role> = BUNDLED.iter().map(|(name, text)| Role::parse(text, name)).collect::<Result<_>>()?;
    let mut own = Vec::new();
    let dir = root.join("kiln").join("roles");
    if let Ok(entries) = std::fs::read_dir(&dir) {
        let mut paths: Vec<_> =
            entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "md")).collect();
        paths.sort();
        for path in paths {
            let text = std::fs::read_to_string(&path)?;
            let role = Role::parse(&text, &path.display().to_string())?;
            own.push(role.id.clone());
            match roles.iter_mut().find(|r| r.id == role.id) {
                Some(slot) => *slot = role,
                None => roles.push(role),
            }
        }
    }
    for role in &roles {
        for target in &role.handoff {
            if !roles.iter().any(|r| &r.id == target) {
                return Err(ApiError::new(
                    ErrorCode::ConfigInvalid,
                    format!("role `{}` hands off to `{target}`, which is not a role", role.id),
                ));
            }
        }
    }
    Ok((roles, own))
}

/// Finds a role by id or display name, forgiving case (`Frontend Engineer`, `frontend-engineer`).
pub fn find<'a>(roles: &'a [Role], name: &str) -> Option<&'a Role> {
    let wanted = name.trim().to_ascii_lowercase().replace([' ', '_'], "-");
    roles.iter().find(|r| r.id == wanted || r.name.to_ascii_lowercase().replace(' ', "-") == wanted)
}
