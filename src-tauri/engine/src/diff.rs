//! The session diff (ARCHITECTURE.md: Diff): each module's base (checkpoint 0, or the checkpoint it
//! joined at) against the working copy now, restricted to the module's directory.
//! Files added, modified, deleted and renamed, binary ones marked, hunks with line
//! numbers, workspace-relative paths only. The last view per session is cached by
//! the ids it was computed from, so any change to the working copy invalidates it.
//!
//! In the direct workflow the engineer may write anywhere, so the view also holds every
//! other changed file, against checkpoint 0, in groups after the session's modules:
//! - one per workspace module the session has not taken in whose files changed
//!   ([`DiffGroup::OtherModule`]): grouped by the workspace's modules rather than thrown
//!   in with the root files, because a change to `packages/b` is that module's change
//!   (its gates and review apply once it joins the session, and the plan says so);
//! - one for the files in no module at all ([`DiffGroup::Outside`], id
//!   [`OUTSIDE_MODULES_ID`]): a root lockfile, `CHANGELOG.md`, `.github/…`.
//!
//! A file belongs to one group only: a session module's when it lies under one, else the
//! deepest workspace module holding it, else the outside group. Renames are found within a
//! group. In the specs workflow only the session's modules are shown, as turns cannot
//! write outside them.

use std::sync::Arc;

use git2::{Delta, Diff, DiffFindOptions, DiffLineType, DiffOptions, Oid, Patch, Repository};

use crate::ids::SessionId;
use crate::session;
use crate::workspace::{Context, Workspace};
use kiln_records::store::checkpoints::base_commit;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

/// A side of a file over this many bytes is counted but not shown line by line: a
/// review cannot read it, and the view would be megabytes of JSON.
const MAX_SHOWN_BYTES: u64 = 1024 * 1024;

/// What a view was computed from: the working copy's tree and every module's base.
#[derive(Clone, PartialEq)]
struct Key {
    workdir: Oid,
    bases: Vec<Base>,
    /// Direct workflow: what the groups beyond the session's modules are computed from.
    rest: Option<Rest>,
}

/// Checkpoint 0 and the workspace's modules that are not the session's `(id, directory)`.
#[derive(Clone, PartialEq)]
struct Rest {
    start: Oid,
    modules: Vec<(String, String)>,
}

#[derive(Clone, PartialEq)]
struct Base {
    module: SessionModule,
    commit: Oid,
}

/// Each module's changes against its base, from the cache while the working copy is
/// unchanged (`get_diff`).
pub(crate) async fn get(cx: &Context, args: GetDiffArgs) -> Result<DiffView> {
    changes(&cx.ws, args).await
}

/// What `get` answers, for the chain, the gates and delivery.
pub(crate) async fn changes(ws: &Arc<Workspace>, args: GetDiffArgs) -> Result<DiffView> {
    // A deleted session has no working copy and no checkpoints left to compare.
    let (id, session) = session::live(ws, &args.session_id).await?;
    let direct = ws.config.workflow() == Workflow::Direct;
    if let Some(wanted) = &args.module_id {
        // Direct: the outside group and any workspace module are groups too.
        let known = session.modules.iter().any(|m| &m.id == wanted)
            || direct && (wanted == OUTSIDE_MODULES_ID || ws.modules.iter().any(|m| &m.id == wanted));
        if !known {
            return Err(ApiError::new(
                ErrorCode::ModuleNotFound,
                format!("`{wanted}` is not a module of this session"),
            ));
        }
    }
    let mut bases = Vec::new();
    for module in &session.modules {
        bases.push(Base {
            module: module.clone(),
            commit: base_commit(&ws.pool, id.as_str(), module.base_sequence).await?,
        });
    }
    let rest = match direct {
        true => Some(Rest {
            start: base_commit(&ws.pool, id.as_str(), session.base_sequence).await?,
            modules: ws
                .modules
                .iter()
                .filter(|m| !session.modules.iter().any(|s| s.id == m.id))
                .map(|m| (m.id.clone(), m.directory.clone()))
                .collect(),
        }),
        false => None,
    };
    let workdir = snapshot(ws, &id).await?;
    let key = Key { workdir, bases, rest };

    let cached = ws.diffs.get(id.as_str(), &key);
    let view = match cached {
        Some(view) => view,
        None => {
            let ws2 = ws.clone();
            let key2 = key.clone();
            let view = tokio::task::spawn_blocking(move || compute(&ws2.open_store()?, &key2))
                .await
                .map_err(|e| ApiError::internal("diff", e))??;
            ws.diffs.put(id.as_str(), key, view.clone());
            view
        }
    };
    Ok(match args.module_id {
        Some(wanted) => DiffView { modules: view.modules.into_iter().filter(|m| m.module_id == wanted).collect() },
        None => view,
    })
}

/// One session's working copy (`right`) against another's (`left`), both of this workspace:
/// every changed file, grouped by the deepest workspace module holding it, then the files
/// in no module. Two candidates of one brief are compared this way.
pub(crate) async fn between(ws: &Arc<Workspace>, left: &SessionId, right: &SessionId) -> Result<DiffView> {
    let from = snapshot(ws, left).await?;
    let to = snapshot(ws, right).await?;
    let modules: Vec<(String, String)> = ws.modules.iter().map(|m| (m.id.clone(), m.directory.clone())).collect();
    let ws2 = ws.clone();
    tokio::task::spawn_blocking(move || {
        let store = ws2.open_store()?;
        let (from, to) = (store.find_tree(from)?, store.find_tree(to)?);
        let files = files_under(&store, &from, &to, &[])?;
        let mut groups: Vec<ModuleDiff> = Vec::new();
        for file in files {
            let holder = modules.iter().filter(|(_, dir)| in_directory(&file.path, dir)).max_by_key(|(_, dir)| {
                if whole(dir) {
                    0
                } else {
                    dir.trim_end_matches('/').len() + 1
                }
            });
            let (id, directory, group) = match holder {
                Some((id, dir)) => (id.clone(), dir.clone(), DiffGroup::Module),
                None => (OUTSIDE_MODULES_ID.to_string(), String::new(), DiffGroup::Outside),
            };
            match groups.iter_mut().find(|g| g.module_id == id) {
                Some(g) => g.files.push(file),
                None => {
                    groups.push(ModuleDiff { module_id: id, directory, group, base_sequence: 0, files: vec![file] })
                }
            }
        }
        // The files outside every module go last, as in a session's diff.
        groups.sort_by_key(|g| g.group == DiffGroup::Outside);
        Ok::<_, ApiError>(DiffView { modules: groups })
    })
    .await
    .map_err(|e| ApiError::internal("diff", e))?
}

/// The working copy as a tree in the store (written under the store's lock).
async fn snapshot(ws: &Arc<Workspace>, id: &SessionId) -> Result<Oid> {
    let _guard = ws.store_lock.lock().await;
    let ws2 = ws.clone();
    let dir = ws.session_workdir(id);
    tokio::task::spawn_blocking(move || crate::working_copy::snapshot_workdir(&ws2.open_store()?, &dir))
        .await
        .map_err(|e| ApiError::internal("snapshot", e))?
}

fn compute(store: &Repository, key: &Key) -> Result<DiffView> {
    let workdir = store.find_tree(key.workdir)?;
    let mut modules = Vec::new();
    for base in &key.bases {
        let tree = store.find_commit(base.commit)?.tree()?;
        let directory = base.module.directory.trim_end_matches('/');
        modules.push(ModuleDiff {
            module_id: base.module.id.clone(),
            directory: base.module.directory.clone(),
            group: DiffGroup::Module,
            base_sequence: base.module.base_sequence,
            files: files_under(
                store,
                &tree,
                &workdir,
                if whole(directory) { &[][..] } else { std::slice::from_ref(&directory) },
            )?,
        });
    }
    if let Some(rest) = &key.rest {
        modules.extend(rest_groups(store, key, rest, &workdir)?);
    }
    Ok(DiffView { modules })
}

/// Whether a module directory is the whole repository (`.`).
fn whole(directory: &str) -> bool {
    matches!(directory.trim_end_matches('/'), "" | ".")
}

/// Whether workspace-relative `path` lies in module `directory` (`.` holds everything).
pub(crate) fn in_directory(path: &str, directory: &str) -> bool {
    let directory = directory.trim_end_matches('/');
    whole(directory) || path == directory || path.strip_prefix(directory).is_some_and(|rest| rest.starts_with('/'))
}

/// The direct workflow's groups beyond the session's modules: each changed workspace
/// module not in the session, then the files in no module (only those that changed).
fn rest_groups(store: &Repository, key: &Key, rest: &Rest, now: &git2::Tree<'_>) -> Result<Vec<ModuleDiff>> {
    let session_dirs: Vec<&str> = key.bases.iter().map(|b| b.module.directory.as_str()).collect();
    if session_dirs.iter().any(|d| whole(d)) {
        return Ok(Vec::new()); // a whole-repository module holds every file already
    }
    let start = store.find_commit(rest.start)?.tree()?;
    // Every path that changed since the start, before renames pair them (so each side of
    // a rename lands in its own group).
    let mut opts = DiffOptions::new();
    let changed = store.diff_tree_to_tree(Some(&start), Some(now), Some(&mut opts))?;
    let mut paths: Vec<String> = Vec::new();
    for delta in changed.deltas() {
        for side in [delta.old_file().path(), delta.new_file().path()].into_iter().flatten() {
            let path = rel_path(side);
            if !hidden(&path) && !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    let mut by_module: Vec<Vec<&str>> = vec![Vec::new(); rest.modules.len()];
    let mut outside: Vec<&str> = Vec::new();
    for path in &paths {
        if session_dirs.iter().any(|d| in_directory(path, d)) {
            continue;
        }
        // The deepest module holding it: `packages/a/sub` over `packages/a`.
        let holder = rest
            .modules
            .iter()
            .enumerate()
            .filter(|(_, (_, dir))| in_directory(path, dir))
            .max_by_key(|(_, (_, dir))| if whole(dir) { 0 } else { dir.trim_end_matches('/').len() + 1 })
            .map(|(i, _)| i);
        match holder {
            Some(i) => by_module[i].push(path),
            None => outside.push(path),
        }
    }
    let mut out = Vec::new();
    for ((id, directory), paths) in rest.modules.iter().zip(by_module) {
        if !paths.is_empty() {
            out.push(ModuleDiff {
                module_id: id.clone(),
                directory: directory.clone(),
                group: DiffGroup::OtherModule,
                base_sequence: 0,
                files: files_under(store, &start, now, &paths)?,
            });
        }
    }
    if !outside.is_empty() {
        out.push(ModuleDiff {
            module_id: OUTSIDE_MODULES_ID.to_string(),
            directory: String::new(),
            group: DiffGroup::Outside,
            base_sequence: 0,
            files: files_under(store, &start, now, &outside)?,
        });
    }
    Ok(out.into_iter().filter(|g| !g.files.is_empty()).collect())
}

/// Every changed file under the given paths (none: the whole tree), sorted by path.
fn files_under(
    store: &Repository,
    base: &git2::Tree<'_>,
    now: &git2::Tree<'_>,
    pathspecs: &[&str],
) -> Result<Vec<FileDiff>> {
    let mut opts = DiffOptions::new();
    // An exact pathspec matches the path and everything below it, and nothing else: a
    // directory whose name holds `*` or `[` is not read as a glob.
    opts.disable_pathspec_match(true);
    for path in pathspecs {
        opts.pathspec(path);
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
    let too_large =
        [delta.old_file().id(), delta.new_file().id()].into_iter().any(|id| blob_size(store, id) > MAX_SHOWN_BYTES);
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
    path.starts_with(&format!("{}/", crate::attachment_rules::IN_WORKDIR))
        || path.split('/').any(|segment| segment == "node_modules")
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
