//! The session diff (SPEC §9): each module's base (checkpoint 0, or the checkpoint it
//! joined at) against the working copy now, restricted to the module's directory.
//! Files added, modified, deleted and renamed, binary ones marked, hunks with line
//! numbers, workspace-relative paths only. The last view per session is cached by
//! the ids it was computed from, so any change to the working copy invalidates it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use git2::{Delta, Diff, DiffFindOptions, DiffLineType, DiffOptions, Oid, Patch, Repository};

use crate::api::types::*;
use crate::error::{ApiError, ErrorCode, Result};
use crate::ids::SessionId;
use crate::session;
use crate::workspace::Workspace;

/// A side of a file over this many bytes is counted but not shown line by line: a
/// review cannot read it, and the view would be megabytes of JSON.
const MAX_SHOWN_BYTES: u64 = 1024 * 1024;

/// What a view was computed from: the working copy's tree and every module's base.
#[derive(Clone, PartialEq)]
struct Key {
    workdir: Oid,
    bases: Vec<Base>,
}

#[derive(Clone, PartialEq)]
struct Base {
    module: SessionModule,
    commit: Oid,
}

/// The last diff computed per session. A session has one working copy, so one entry
/// each is enough: an unchanged working copy is answered without diffing again.
#[derive(Default)]
pub struct DiffCache {
    views: Mutex<HashMap<String, (Key, DiffView)>>,
    computed: AtomicU64,
}

impl DiffCache {
    /// How many views were computed rather than answered from the cache.
    pub fn computed(&self) -> u64 {
        self.computed.load(Ordering::Relaxed)
    }
}

pub async fn get(ws: &Arc<Workspace>, args: GetDiffArgs) -> Result<DiffView> {
    // A deleted session has no working copy and no checkpoints left to compare.
    let (id, session) = session::live(ws, &args.session_id).await?;
    if let Some(wanted) = &args.module_id {
        if !session.modules.iter().any(|m| &m.id == wanted) {
            return Err(ApiError::new(ErrorCode::ModuleNotFound, format!("`{wanted}` is not a module of this session")));
        }
    }
    let mut bases = Vec::new();
    for module in &session.modules {
        bases.push(Base { module: module.clone(), commit: base_commit(ws, &id, module.base_sequence).await? });
    }
    let workdir = snapshot(ws, &id).await?;
    let key = Key { workdir, bases };

    let cached = ws.diffs.views.lock().unwrap().get(id.as_str()).filter(|(k, _)| *k == key).map(|(_, v)| v.clone());
    let view = match cached {
        Some(view) => view,
        None => {
            let ws2 = ws.clone();
            let key2 = key.clone();
            let view = tokio::task::spawn_blocking(move || compute(&ws2.open_store()?, &key2))
                .await
                .map_err(|e| ApiError::internal("diff", e))??;
            ws.diffs.computed.fetch_add(1, Ordering::Relaxed);
            ws.diffs.views.lock().unwrap().insert(id.to_string(), (key, view.clone()));
            view
        }
    };
    Ok(match args.module_id {
        Some(wanted) => DiffView { modules: view.modules.into_iter().filter(|m| m.module_id == wanted).collect() },
        None => view,
    })
}

/// The commit a module's diff starts from. The checkpoint cap never prunes the start,
/// but may prune a late module's join point; no turn wrote in the module before it
/// joined, so the nearest earlier checkpoint holds the same files.
async fn base_commit(ws: &Workspace, id: &SessionId, sequence: i64) -> Result<Oid> {
    let commit: Option<String> = sqlx::query_scalar(
        "SELECT commit_id FROM checkpoints WHERE session_id = ? AND sequence <= ? ORDER BY sequence DESC LIMIT 1",
    )
    .bind(id.as_str())
    .bind(sequence)
    .fetch_optional(&ws.pool)
    .await?;
    let commit = commit.ok_or_else(|| ApiError::internal("checkpoints", format!("session {id} has no checkpoint {sequence}")))?;
    Oid::from_str(&commit).map_err(|e| ApiError::internal("checkpoint id", e))
}

/// The working copy as a tree in the store (written under the store's lock).
async fn snapshot(ws: &Arc<Workspace>, id: &SessionId) -> Result<Oid> {
    let _guard = ws.store_lock.lock().await;
    let ws2 = ws.clone();
    let dir = ws.session_workdir(id);
    tokio::task::spawn_blocking(move || crate::confine::snapshot_workdir(&ws2.open_store()?, &dir))
        .await
        .map_err(|e| ApiError::internal("snapshot", e))?
}

fn compute(store: &Repository, key: &Key) -> Result<DiffView> {
    let workdir = store.find_tree(key.workdir)?;
    let mut modules = Vec::new();
    for base in &key.bases {
        let tree = store.find_commit(base.commit)?.tree()?;
        modules.push(ModuleDiff {
            module_id: base.module.id.clone(),
            directory: base.module.directory.clone(),
            base_sequence: base.module.base_sequence,
            files: module_files(store, &tree, &workdir, &base.module.directory)?,
        });
    }
    Ok(DiffView { modules })
}

/// Every changed file under `directory` (`.` is the whole tree), sorted by path.
fn module_files(store: &Repository, base: &git2::Tree<'_>, now: &git2::Tree<'_>, directory: &str) -> Result<Vec<FileDiff>> {
    let directory = directory.trim_end_matches('/');
    let mut opts = DiffOptions::new();
    // An exact pathspec matches the directory and everything below it, and nothing
    // else: a directory whose name holds `*` or `[` is not read as a glob.
    opts.disable_pathspec_match(true);
    if !directory.is_empty() && directory != "." {
        opts.pathspec(directory);
    }
    let mut diff = store.diff_tree_to_tree(Some(base), Some(now), Some(&mut opts))?;
    diff.find_similar(Some(DiffFindOptions::new().renames(true)))?;
    let mut files = Vec::new();
    for index in 0..diff.deltas().len() {
        if let Some(file) = file_diff(store, &diff, index)? {
            files.push(file);
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

fn file_diff(store: &Repository, diff: &Diff<'_>, index: usize) -> Result<Option<FileDiff>> {
    let Some(delta) = diff.get_delta(index) else { return Ok(None) };
    let status = match delta.status() {
        Delta::Added | Delta::Untracked | Delta::Copied => FileStatus::Added,
        Delta::Deleted => FileStatus::Deleted,
        Delta::Renamed => FileStatus::Renamed,
        Delta::Modified | Delta::Typechange => FileStatus::Modified,
        _ => return Ok(None),
    };
    let old_path = delta.old_file().path().map(rel_path);
    let Some(path) = delta.new_file().path().map(rel_path).or_else(|| old_path.clone()) else { return Ok(None) };
    if hidden(&path) {
        return Ok(None);
    }
    let too_large = [delta.old_file().id(), delta.new_file().id()].into_iter().any(|id| blob_size(store, id) > MAX_SHOWN_BYTES);
    let Some(patch) = Patch::from_diff(diff, index)? else { return Ok(None) };
    // Binary detection reads the content, so it is known once the patch is made.
    let binary = patch.delta().flags().is_binary();
    let (_, additions, deletions) = if binary { (0, 0, 0) } else { patch.line_stats()? };
    let hunks = if binary || too_large { Vec::new() } else { hunks(&patch)? };
    Ok(Some(FileDiff {
        path,
        old_path: if status == FileStatus::Renamed { old_path } else { None },
        status,
        binary,
        too_large,
        additions: additions as i64,
        deletions: deletions as i64,
        hunks,
    }))
}

fn hunks(patch: &Patch<'_>) -> Result<Vec<Hunk>> {
    let mut out = Vec::new();
    for h in 0..patch.num_hunks() {
        let (hunk, count) = patch.hunk(h)?;
        let mut lines = Vec::with_capacity(count);
        for l in 0..count {
            let line = patch.line_in_hunk(h, l)?;
            let kind = match line.origin_value() {
                DiffLineType::Context => LineKind::Context,
                DiffLineType::Addition => LineKind::Add,
                DiffLineType::Deletion => LineKind::Delete,
                // "No newline at end of file" markers are not lines of the file.
                _ => continue,
            };
            lines.push(DiffLine {
                kind,
                old_line: line.old_lineno().map(i64::from),
                new_line: line.new_lineno().map(i64::from),
                text: without_newline(&String::from_utf8_lossy(line.content())).to_string(),
            });
        }
        out.push(Hunk {
            old_start: hunk.old_start().into(),
            old_lines: hunk.old_lines().into(),
            new_start: hunk.new_start().into(),
            new_lines: hunk.new_lines().into(),
            header: without_newline(&String::from_utf8_lossy(hunk.header())).to_string(),
            lines,
        });
    }
    Ok(out)
}

/// Paths a review never shows, even when a workspace forgets to ignore them: installed
/// dependencies and the attachment copies the agent reads.
fn hidden(path: &str) -> bool {
    path.starts_with(&format!("{}/", crate::attach::IN_WORKDIR)) || path.split('/').any(|segment| segment == "node_modules")
}

/// A blob's size from its header, without reading it; 0 for a side that has no file.
fn blob_size(store: &Repository, id: Oid) -> u64 {
    if id.is_zero() {
        return 0;
    }
    store.odb().and_then(|odb| odb.read_header(id)).map(|(size, _)| size as u64).unwrap_or(0)
}

/// Tree paths are relative to the workspace root already; only the separator is fixed.
fn rel_path(path: &std::path::Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

fn without_newline(text: &str) -> &str {
    let text = text.strip_suffix('\n').unwrap_or(text);
    text.strip_suffix('\r').unwrap_or(text)
}
