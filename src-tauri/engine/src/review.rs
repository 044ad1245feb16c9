//! Auto-review (ARCHITECTURE.md: Workflows and the chain): when a role reports a module's request satisfied, the same
//! role reviews it in a separate read-only turn and ends with `REVIEW: pass` or
//! `REVIEW: changes - <what>`. Kiln keeps the report itself (the agent's working copy
//! could be edited), bound to the SHA-256 of the module's files at that moment: any
//! later edit makes it stale, and delivery needs a current passing one.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::ids::SessionId;
use crate::workspace::Workspace;
use kiln_records::store::reviews::{self, NewReview};
use kiln_types::error::Result;
use kiln_types::{ModuleChange, ReviewView, SessionModule, SessionView, OUTSIDE_MODULES_ID};

/// Directories never part of a module's reviewed files: dependencies, build output, VCS
/// data and the virtual environment Kiln's setup makes, whatever the ignore files say.
const SKIPPED: &[&str] = &["node_modules", ".git", ".kiln", "target", ".venv"];

/// What a review and a delivery cover: the session's modules, or the repository itself while
/// none has joined, so a change outside every module is still reviewed before it lands.
pub fn covered(session: &SessionView) -> Vec<SessionModule> {
    if session.modules.is_empty() {
        vec![repository(session)]
    } else {
        session.modules.clone()
    }
}

/// The whole repository as a session's module (`(repository)`, directory `.`).
pub(crate) fn repository(session: &SessionView) -> SessionModule {
    SessionModule {
        id: OUTSIDE_MODULES_ID.to_string(),
        directory: ".".into(),
        kind: ModuleChange::Edit,
        joined_at: session.created_at.clone(),
        base_sequence: session.base_sequence,
    }
}

/// SHA-256 over the module's files in the session's working copy, as a checkpoint sees
/// them (ignored files left out, so a test run's caches do not make a review stale):
/// each relative path and content in path order, a link by what it says, so a rename,
/// an edit, an addition or a removal changes it.
pub(crate) fn module_digest(ws: &Workspace, id: &SessionId, module: &SessionModule) -> Result<String> {
    let root = ws.session_workdir(id);
    let dir = kiln_runtime::paths::confine(&root, if module.directory.is_empty() { "." } else { &module.directory })?;
    let mut files = collect(&dir)?;
    files.sort();
    let mut hash = Sha256::new();
    for (rel, link) in files {
        let path = dir.join(&rel);
        let content =
            if link { std::fs::read_link(&path)?.into_os_string().into_encoded_bytes() } else { std::fs::read(&path)? };
        hash.update(rel.as_bytes());
        hash.update([u8::from(link)]);
        hash.update((content.len() as u64).to_le_bytes());
        hash.update(&content);
    }
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Every file and link under `dir` (relative), by the ignore rules; `true` for a link.
fn collect(dir: &Path) -> Result<Vec<(String, bool)>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let walk = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| !(e.file_type().is_some_and(|t| t.is_dir()) && SKIPPED.iter().any(|s| e.file_name() == *s)))
        .build();
    for entry in walk {
        let entry = entry.map_err(|e| kiln_types::error::ApiError::internal("reading the module's files", e))?;
        let Some(kind) = entry.file_type() else { continue };
        if kind.is_file() || kind.is_symlink() {
            let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path()).to_string_lossy().into_owned();
            out.push((rel, kind.is_symlink()));
        }
    }
    Ok(out)
}

/// The verdict a review turn ended with: `Some((passed, reason))`, or `None` without one.
pub(crate) fn verdict(text: &str) -> Option<(bool, String)> {
    text.lines().rev().find_map(|line| {
        let line = line.trim().trim_start_matches(['*', '`', '#', ' ']).trim_end_matches(['*', '`']);
        let rest = line.strip_prefix("REVIEW:").or_else(|| line.strip_prefix("Review:"))?.trim();
        let (word, reason) = match rest.split_once([' ', '-', '—', ':']) {
            Some((w, r)) => (w, r.trim().trim_start_matches(['-', '—', ':']).trim()),
            None => (rest, ""),
        };
        match word.to_ascii_lowercase().as_str() {
            "pass" | "passed" => Some((true, reason.to_string())),
            "changes" | "fail" | "failed" => Some((false, reason.to_string())),
            _ => None,
        }
    })
}

/// The review turn's instruction: read-only, the six areas, evidence, one verdict line.
/// `modules` are the ones the verdict covers: the turn's module, or in the direct
/// workflow every module of the session (one change, reviewed as one).
pub(crate) fn instruction(role_name: &str, session: &SessionView, modules: &[SessionModule]) -> String {
    let named: Vec<String> = modules.iter().map(|m| format!("`{}` (`{}`)", m.id, m.directory)).collect();
    let what = if modules.len() == 1 {
        "the module's files and its specification, if it has one"
    } else {
        "the changed files of each module"
    };
    format!(
        "## Kiln review\nYou are the {role_name}, reviewing the change made in {} for this request: {}\n\n\
         This turn is read-only: any file you write is put back. Read {what}, run its \
         tests or checks if useful, and report on each of: correctness, security, compatibility, lifecycle (setup, \
         migrations, enabling), tests, and UI. For each, give evidence (file and line, command and output) or say it \
         does not apply.\n\nEnd with exactly one line: `REVIEW: pass - <one sentence>` when the change is ready to \
         deliver, or `REVIEW: changes - <the findings to fix>` when it is not.",
        named.join(", "),
        session.brief
    )
}

pub async fn store(
    ws: &Workspace,
    id: &SessionId,
    module: &SessionModule,
    passed: bool,
    summary: &str,
    report: &str,
) -> Result<()> {
    let digest = module_digest(ws, id, module)?;
    let at = kiln_runtime::clock::now();
    let row = NewReview { session: id.as_str(), module: &module.id, digest: &digest, passed, summary, report, at: &at };
    reviews::upsert(&ws.pool, row).await
}

/// The session's stored reviews, each checked against the module's files as they are now.
pub(crate) async fn list(ws: &Workspace, id: &SessionId, session: &SessionView) -> Result<Vec<ReviewView>> {
    let rows = reviews::list(&ws.pool, id.as_str()).await?;
    let mut out = Vec::new();
    for (module_id, digest, passed, summary, report, created_at) in rows {
        let current = match covered(session).iter().find(|m| m.id == module_id) {
            Some(module) => module_digest(ws, id, module).ok(),
            None => None,
        };
        out.push(ReviewView {
            stale: current.as_deref() != Some(digest.as_str()),
            module_id,
            passed,
            summary,
            report,
            created_at,
        });
    }
    Ok(out)
}

/// Whether the module has a passing review of its files as they are now.
pub(crate) async fn current_pass(ws: &Workspace, id: &SessionId, module: &SessionModule) -> Result<bool> {
    let row = reviews::verdict(&ws.pool, id.as_str(), &module.id).await?;
    Ok(match row {
        Some((digest, true)) => module_digest(ws, id, module)? == digest,
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::verdict;

    #[test]
    fn verdicts() {
        assert_eq!(verdict("All good.\nREVIEW: pass - ready"), Some((true, "ready".into())));
        assert_eq!(
            verdict("x\n**REVIEW: changes - the total ignores discounts**"),
            Some((false, "the total ignores discounts".into()))
        );
        assert_eq!(verdict("REVIEW: pass"), Some((true, String::new())));
        assert_eq!(verdict("REVIEW: changes — no tests\nthanks"), Some((false, "no tests".into())));
        // The last verdict line counts.
        assert_eq!(verdict("REVIEW: changes - a\nREVIEW: pass - fixed"), Some((true, "fixed".into())));
        assert_eq!(verdict("I reviewed it and it is fine."), None);
        assert_eq!(verdict("REVIEW: maybe"), None);
    }
}
