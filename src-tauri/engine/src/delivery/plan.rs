//! The delivery plan (ARCHITECTURE.md: Delivery): per module, what lands (added, overwritten), what the
//! session deleted, the packages it adds that the workspace lacks, whether it must be
//! enabled; the gates that run first; whether the app must restart; the blockers
//! (review, gates, and the target's own); and a `plan_id` binding a confirmation to it.
//!
//! Links block rather than fail: a file the session has as a symbolic link (delivery
//! carries regular files only), and, for the workspace target, a destination with a
//! link or a file among the directories above it (never written through).
//!
//! In the direct workflow delivery carries every changed file: besides the session's
//! modules, the diff's other groups (a changed module not in the session, the files
//! outside every module) are planned and delivered too. Review and gates stay per module:
//! the files outside every module need none, a changed module not in the session blocks
//! until it joins (so its gates and review run), and a session that changed nothing
//! offers nothing to deliver.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use git2::Oid;
use sha2::{Digest, Sha256};

use crate::gates::MODULE_GATES;
use crate::ids::SessionId;
use crate::workspace::Workspace;
use kiln_records::store::checkpoints::base_commit;
use kiln_runtime::paths::InTheWay;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

/// One module's change against its base: what a target copies and removes. For a
/// group that is not a session module (direct workflow) `module` stands for it: the
/// module's id and directory (or [`OUTSIDE_MODULES_ID`] and an empty directory), kind
/// `edit`, base sequence 0.
#[derive(Debug, Clone)]
pub(crate) struct ModuleChanges {
    pub module: SessionModule,
    /// Which diff group it is.
    pub group: DiffGroup,
    /// The store commit the module's diff starts from (checkpoint `base_sequence`).
    pub base: Oid,
    /// Files the session has now (added or modified), workspace-relative.
    pub written: Vec<String>,
    /// Files of the base the session removed (a rename's old path included).
    pub deleted: Vec<String>,
}

impl ModuleChanges {
    /// Every path the delivery touches in this module.
    pub(crate) fn paths(&self) -> impl Iterator<Item = &String> {
        self.written.iter().chain(self.deleted.iter())
    }
}

/// A step a target will run, known before it starts (shown pending).
#[derive(Debug, Clone)]
pub(crate) struct StepSpec {
    pub id: String,
    pub title: String,
    pub module: Option<String>,
}

impl StepSpec {
    pub(crate) fn new(id: impl Into<String>, title: impl Into<String>, module: Option<&str>) -> StepSpec {
        StepSpec { id: id.into(), title: title.into(), module: module.map(str::to_string) }
    }
}

/// Each module's changes, from the session diff (which already leaves out ignored
/// files, `node_modules` and the attachment copies, as the review shows them): the
/// session's modules in order, then (direct workflow) the diff's other groups.
pub(crate) async fn changes(ws: &Arc<Workspace>, id: &SessionId, session: &SessionView) -> Result<Vec<ModuleChanges>> {
    let diff = crate::diff::changes(ws, GetDiffArgs { session_id: id.to_string(), module_id: None }).await?;
    let mut out = Vec::new();
    for module in &session.modules {
        let files = diff
            .modules
            .iter()
            .find(|m| m.group == DiffGroup::Module && m.module_id == module.id)
            .map(|m| m.files.as_slice())
            .unwrap_or_default();
        let (written, deleted) = split(files);
        let base = base_commit(&ws.pool, id.as_str(), module.base_sequence).await?;
        out.push(ModuleChanges { module: module.clone(), group: DiffGroup::Module, base, written, deleted });
    }
    for g in diff.modules.iter().filter(|m| m.group != DiffGroup::Module) {
        let (written, deleted) = split(&g.files);
        let module = SessionModule {
            id: g.module_id.clone(),
            directory: g.directory.clone(),
            kind: ModuleChange::Edit,
            joined_at: session.created_at.clone(),
            base_sequence: session.base_sequence,
        };
        out.push(ModuleChanges {
            module,
            group: g.group,
            base: base_commit(&ws.pool, id.as_str(), session.base_sequence).await?,
            written,
            deleted,
        });
    }
    Ok(out)
}

/// `(written, deleted)`, each sorted: a rename writes its new path and deletes its old one.
/// A path in both is a change of kind (a link made a file: the diff shows it removed and
/// added): it is only written, since the write replaces what is there, a link included,
/// and removing it afterwards would undo the write.
fn split(files: &[FileDiff]) -> (Vec<String>, Vec<String>) {
    let mut written = Vec::new();
    let mut deleted = Vec::new();
    for f in files {
        match f.status {
            FileStatus::Deleted => deleted.push(f.path.clone()),
            FileStatus::Renamed => {
                deleted.extend(f.old_path.clone());
                written.push(f.path.clone());
            }
            _ => written.push(f.path.clone()),
        }
    }
    written.sort();
    deleted.retain(|p| written.binary_search(p).is_err());
    deleted.sort();
    (written, deleted)
}

/// The module part of the plan, judged against the workspace as it is now.
pub(crate) fn planned(ws: &Workspace, id: &SessionId, c: &ModuleChanges) -> PlannedModule {
    let exists = |p: &String| ws.root.join(p).symlink_metadata().is_ok();
    PlannedModule {
        module_id: c.module.id.clone(),
        directory: c.module.directory.clone(),
        group: c.group,
        kind: c.module.kind,
        added: c.written.iter().filter(|p| !exists(p)).cloned().collect(),
        overwritten: c.written.iter().filter(|p| exists(p)).cloned().collect(),
        deleted: c.deleted.clone(),
        new_packages: new_packages(ws, &ws.session_workdir(id), &c.module),
        enable: c.module.kind == ModuleChange::New
            && ws.config.delivery.enable.as_deref().is_some_and(|e| !e.trim().is_empty()),
    }
}

/// Packages the module's `package.json` (in the session) depends on that the workspace
/// does not know. Known: every name and dependency of the workspace's root
/// `package.json` and of its modules' `package.json` files, and every package in
/// `package-lock.json` (`packages` keys and v1 `dependencies`). Other lockfiles
/// (pnpm, yarn) are not read: their packages show as new, which errs on telling more.
pub(crate) fn new_packages(ws: &Workspace, workdir: &Path, module: &SessionModule) -> Vec<String> {
    let wanted = deps(&read_json(&workdir.join(&module.directory).join("package.json")));
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut known = BTreeSet::new();
    let mut manifests = vec![ws.root.join("package.json")];
    manifests.extend(ws.modules.iter().map(|m| ws.root.join(&m.directory).join("package.json")));
    for path in manifests {
        let json = read_json(&path);
        known.extend(json["name"].as_str().map(str::to_string));
        known.extend(deps(&json));
    }
    let lock = read_json(&ws.root.join("package-lock.json"));
    if let Some(packages) = lock["packages"].as_object() {
        for (key, value) in packages {
            if let Some((_, name)) = key.rsplit_once("node_modules/") {
                known.insert(name.to_string());
            }
            known.extend(value["name"].as_str().map(str::to_string));
        }
    }
    if let Some(v1) = lock["dependencies"].as_object() {
        known.extend(v1.keys().cloned());
    }
    wanted.into_iter().filter(|d| !known.contains(d)).collect()
}

fn read_json(path: &Path) -> serde_json::Value {
    std::fs::read_to_string(path).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
}

fn deps(json: &serde_json::Value) -> BTreeSet<String> {
    ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"]
        .iter()
        .filter_map(|k| json[k].as_object())
        .flat_map(|o| o.keys().cloned())
        .collect()
}

/// Whether the running application must restart: a new module to enable, a changed
/// `package.json` (dependencies are loaded at start), or a changed file matching the
/// `[modules] server` globs (server code is loaded at start; screens are served fresh).
/// Without `server` globs any change counts, since Kiln cannot tell server from screen.
pub(crate) fn restart_needed(ws: &Workspace, modules: &[PlannedModule], changes: &[ModuleChanges]) -> bool {
    if modules.iter().any(|m| m.enable) {
        return true;
    }
    let server = &ws.config.modules.server;
    let mut set = globset::GlobSetBuilder::new();
    for g in server {
        if let Ok(glob) = globset::Glob::new(g) {
            set.add(glob);
        }
    }
    let set = set.build().ok();
    changes.iter().any(|c| {
        let prefix = format!("{}/", c.module.directory.trim_end_matches('/'));
        c.paths().any(|p| {
            let rel = p.strip_prefix(&prefix).unwrap_or(p);
            rel == "package.json" || server.is_empty() || set.as_ref().is_some_and(|s| s.is_match(rel))
        })
    })
}

/// The workspace gates delivery needs: `spec-schema` only where specifications are
/// checked (the specs workflow, or when asked for in direct).
fn workspace_gates(ws: &Workspace) -> Vec<&'static str> {
    if ws.config.checks_specs() {
        vec!["spec-schema", "module-schema"]
    } else {
        vec!["module-schema"]
    }
}

/// The gates delivery runs first, as the plan names them (`tests (@shop/cart)`); one
/// whose latest result is `not-configured` says so (`lint (@shop/cart): not configured`),
/// so the plan shows it without it blocking.
pub(crate) fn gate_names(ws: &Workspace, session: &SessionView, latest: &[GateResultView]) -> Vec<String> {
    let name = |module: Option<&str>, gate: &str| {
        let mut text = match module {
            Some(m) => format!("{gate} ({m})"),
            None => gate.to_string(),
        };
        if latest
            .iter()
            .any(|r| r.gate == gate && r.module.as_deref() == module && r.status == GateStatus::NotConfigured)
        {
            text.push_str(": not configured");
        }
        text
    };
    let mut out: Vec<String> = workspace_gates(ws).into_iter().map(|g| name(None, g)).collect();
    for m in &session.modules {
        out.extend(MODULE_GATES.iter().map(|g| name(Some(&m.id), g)));
    }
    out
}

fn blocked(message: String, module: Option<&str>) -> Blocker {
    Blocker {
        code: ErrorCode::DeliveryBlocked,
        message,
        module_id: module.map(str::to_string),
        paths: Vec::new(),
        overridable: false,
    }
}

/// What the changes themselves block: a session that changed no file has nothing to
/// deliver; a changed module that is not in the session (direct workflow) must join it
/// first, so its gates and review run like every delivered module's.
pub(crate) fn change_blockers(changes: &[ModuleChanges]) -> Vec<Blocker> {
    let mut out = Vec::new();
    if changes.iter().all(|c| c.written.is_empty() && c.deleted.is_empty()) {
        out.push(blocked("nothing to deliver: the session changed no file".into(), None));
    }
    for c in changes.iter().filter(|c| c.group == DiffGroup::OtherModule) {
        let mut b = blocked(
            format!("`{}` changed but is not in the session: add it to the session so its gates and review run, or undo its changes", c.module.id),
            Some(&c.module.id),
        );
        b.paths = c.paths().cloned().collect();
        b.paths.sort();
        out.push(b);
    }
    out
}

/// What the session's own files block, for every target: delivery carries regular
/// files, so a written path the session has as a symbolic link (say one an agent left to
/// a directory), or as anything else but a file, is a blocker naming it.
pub(crate) fn session_file_blockers(workdir: &Path, changes: &[ModuleChanges]) -> Vec<Blocker> {
    let mut out = Vec::new();
    for c in changes {
        for path in &c.written {
            let what = match kiln_runtime::paths::confine_as_named(workdir, path).map(|f| f.symlink_metadata()) {
                Ok(Ok(meta)) if meta.is_file() => continue,
                Ok(Ok(meta)) if meta.file_type().is_symlink() => "is a symbolic link in the session, not a file",
                Ok(Ok(_)) => "is not a regular file in the session",
                Ok(Err(_)) => "is gone from the session since its diff was taken",
                Err(_) => "lies behind a symbolic link (or a file) in the session",
            };
            out.push(Blocker {
                code: ErrorCode::PathNotAllowed,
                message: format!("`{path}` {what}: delivery carries regular files only; replace it with the file it stands for, or remove it"),
                module_id: Some(c.module.id.clone()),
                paths: vec![path.clone()],
                overridable: false,
            });
        }
    }
    out
}

/// What the workspace blocks as a destination: a path with a symbolic link or a file
/// among the directories above it there. A link would send the write (or the removal)
/// wherever it leads, outside the module or the workspace, so it is never followed, even
/// when the session replaced it with a directory: the user changes it in the workspace.
/// One blocker per link or file in the way, naming it and the session's paths behind it.
pub(crate) fn destination_blockers(root: &Path, changes: &[ModuleChanges]) -> Vec<Blocker> {
    let mut out: Vec<Blocker> = Vec::new();
    for c in changes {
        for path in c.paths() {
            let message = match kiln_runtime::paths::in_the_way(root, path) {
                Ok(None) => continue,
                Ok(Some(InTheWay::Link(at))) => format!(
                    "`{at}` is a symbolic link in the workspace: delivery never writes through a link; replace it with a directory, or remove it, in the workspace first"
                ),
                Ok(Some(InTheWay::File(at))) => {
                    format!("`{at}` is a file in the workspace where the session has a directory: move or remove it in the workspace first")
                }
                Err(e) => e.message,
            };
            match out.iter_mut().find(|b| b.message == message) {
                Some(b) => b.paths.push(path.clone()),
                None => out.push(Blocker {
                    code: ErrorCode::PathNotAllowed,
                    message,
                    module_id: Some(c.module.id.clone()),
                    paths: vec![path.clone()],
                    overridable: false,
                }),
            }
        }
    }
    for b in &mut out {
        b.paths.sort();
        b.paths.dedup();
    }
    out
}

/// Review and gate blockers, the same for every target: each module needs a current
/// passing review, and every gate's latest result must be `passed`, `not-configured` (no
/// command applies) or `failing-before` (it fails the same way at the session's base);
/// missing, failed or skipped block (skipped is not success). Gate blockers are
/// overridable: the operator may deliver past them with a reason.
/// `latest` is every gate's latest result in the session.
pub(crate) async fn common_blockers(
    ws: &Workspace,
    id: &SessionId,
    session: &SessionView,
    latest: &[GateResultView],
) -> Result<Vec<Blocker>> {
    let mut out = Vec::new();
    if !session.conflicts.is_empty() {
        out.push(Blocker {
            code: ErrorCode::ConflictsUnresolved,
            message: format!(
                "{} file{} still hold{} the conflict markers of the update from the workspace: resolve them, or ask the agent to",
                session.conflicts.len(),
                if session.conflicts.len() == 1 { "" } else { "s" },
                if session.conflicts.len() == 1 { "s" } else { "" }
            ),
            module_id: None,
            paths: session.conflicts.clone(),
            overridable: false,
        });
    }
    for m in &crate::review::covered(session) {
        if !crate::review::current_pass(ws, id, m).await? {
            let stored = session.reviews.iter().find(|r| r.module_id == m.id);
            let why = match stored {
                None => format!("`{}` needs a review", m.id),
                Some(r) if !r.passed => format!("`{}` needs a review: its last review asked for changes", m.id),
                Some(_) => format!("`{}`: its review is stale (the files changed since); review it again", m.id),
            };
            out.push(blocked(why, Some(&m.id)));
        }
    }
    let mut wanted: Vec<(Option<&str>, &str)> = workspace_gates(ws).into_iter().map(|g| (None, g)).collect();
    for m in &session.modules {
        wanted.extend(MODULE_GATES.iter().map(|g| (Some(m.id.as_str()), *g)));
    }
    for (module, gate) in wanted {
        let result = latest.iter().find(|r| r.gate == gate && r.module.as_deref() == module);
        let whom = module.map(|m| format!(" in `{m}`")).unwrap_or_default();
        let note = result.map(|r| r.note.as_str()).filter(|n| !n.is_empty());
        let why = match (result.map(|r| r.status), note) {
            (Some(GateStatus::Passed | GateStatus::NotConfigured | GateStatus::FailingBefore), _) => continue,
            (None, _) => format!("the `{gate}` gate{whom} has not run: check the modules"),
            (Some(GateStatus::Failed), Some(note)) => format!("the `{gate}` gate{whom} failed: {note}"),
            (Some(GateStatus::Failed), None) => format!("the `{gate}` gate{whom} failed"),
            (Some(GateStatus::Skipped), Some(note)) => format!("the `{gate}` gate{whom} did not run ({note})"),
            (Some(GateStatus::Skipped), None) => {
                format!("the `{gate}` gate{whom} was skipped (skipped is not success)")
            }
        };
        out.push(Blocker { overridable: true, ..blocked(why, module) });
    }
    Ok(out)
}

/// SHA-256 over the plan (its `plan_id` empty), each module's file digest and the
/// content of every other file that lands (the direct workflow's other groups), so a
/// change to what would land, to the blockers or to any file makes it another plan.
pub(crate) fn plan_id(
    ws: &Workspace,
    id: &SessionId,
    session: &SessionView,
    plan: &DeliveryPlan,
    changes: &[ModuleChanges],
) -> Result<String> {
    let mut plan = plan.clone();
    plan.plan_id = String::new();
    let mut hash = Sha256::new();
    hash.update(serde_json::to_vec(&plan).map_err(|e| ApiError::internal("plan", e))?);
    for m in &crate::review::covered(session) {
        hash.update([0]);
        hash.update(crate::review::module_digest(ws, id, m)?.as_bytes());
    }
    let workdir = ws.session_workdir(id);
    for c in changes.iter().filter(|c| c.group != DiffGroup::Module) {
        for path in &c.written {
            hash.update([1]);
            hash.update(path.as_bytes());
            hash.update([0]);
            let file = kiln_runtime::paths::confine_no_links(&workdir, path).ok();
            hash.update(file.and_then(|f| std::fs::read(f).ok()).unwrap_or_default());
        }
    }
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}
