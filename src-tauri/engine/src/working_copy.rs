//! A session's working copy as the store sees it: its snapshot (what a checkpoint, a diff or
//! a turn's starting state reads, leaving out what is never snapshotted), and the put-back
//! that keeps one turn in one module (ARCHITECTURE.md: Sessions and isolation): what a turn
//! changed outside its module's allowed paths is put back from the turn's starting state, and
//! each path is named. The starting state is a snapshot in the store, so nothing is lost: even
//! a put-back file's content stays in the store.

use std::path::Path;

use git2::{Oid, Repository};
use globset::{Glob, GlobSetBuilder};

use kiln_records::snapshot::{self, Source};
use kiln_types::error::Result;

/// Snapshots a session's working copy (gitignore rules apply; attachment copies are
/// never part of it) and returns the tree.
///
/// While the session's watcher is trusted (`crate::watch`), only the paths it saw change
/// are read and only the trees above them written; with nothing changed the last tree
/// is the answer. Otherwise, or when that fails, the stat-cache scan reads the whole
/// copy, and the copy is watched afresh first, so the scan's result is the next baseline.
pub fn snapshot_workdir(store: &Repository, workdir: &Path) -> Result<Oid> {
    // `sessions/<id>/index` beside `sessions/<id>/workspace` is the stat cache.
    let Some(cache) = workdir.parent().map(|d| d.join("index")) else {
        return snapshot::snapshot(store, Source::Plain { root: workdir, skip: &NOT_SNAPSHOTTED });
    };
    let watch = crate::watch::session(workdir, &NOT_SNAPSHOTTED);
    if let Some(watch) = &watch {
        if let crate::watch::Changes::Trusted { base, dirty } = watch.changes(&cache) {
            let tree = if dirty.is_empty() && store.odb()?.exists(base) {
                Ok(base)
            } else {
                watch.with_rules(|rules| snapshot::snapshot_changed(store, workdir, &cache, base, &dirty, rules))
            };
            match tree {
                Ok(tree) => {
                    watch.settle(tree, &cache);
                    return Ok(tree);
                }
                Err(e) => tracing::warn!("reading the changed paths failed ({e}); reading the whole working copy"),
            }
        }
        watch.restart();
    }
    let tree = snapshot::snapshot_cached(store, workdir, &NOT_SNAPSHOTTED, &cache)?;
    if let Some(watch) = &watch {
        watch.settle(tree, &cache);
    }
    Ok(tree)
}

/// Starts watching a working copy just materialized from `commit`, so its first
/// checkpoint reads only what changed. Only when the stat cache beside it was primed with
/// the copy's entries: without one the first snapshot scans (and starts the watch) anyway.
pub(crate) fn watch_materialized(store: &Repository, workdir: &Path, commit: Oid) {
    let Some(cache) = workdir.parent().map(|d| d.join("index")).filter(|c| c.is_file()) else { return };
    let Ok(tree) = store.find_commit(commit).map(|c| c.tree_id()) else { return };
    let Some(watch) = crate::watch::session(workdir, &NOT_SNAPSHOTTED) else { return };
    if watch.restart() {
        watch.settle(tree, &cache);
    }
}

/// Directories of a working copy no snapshot holds: the attachment copies, and `.venv`,
/// the virtual environment Kiln's setup makes for a Python project (never part of the
/// change, even in a repository that does not ignore it).
pub const NOT_SNAPSHOTTED: [&str; 2] = [crate::attachment_rules::IN_WORKDIR, ".venv"];

/// Puts back every path changed between `before` and `after` that is not under
/// `module_dir` matching one of `allowed` (globs relative to the module directory).
/// Reports every changed path and those put back.
pub(crate) fn put_back_outside(
    store: &Repository,
    workdir: &Path,
    before: Oid,
    after: Oid,
    module_dir: &str,
    allowed: &[String],
) -> Result<Confined> {
    let mut set = GlobSetBuilder::new();
    for glob in allowed {
        if let Ok(g) = Glob::new(glob) {
            set.add(g);
        }
    }
    let set = set.build().map_err(|e| kiln_types::error::ApiError::internal("allowed paths", e))?;
    let inside = |path: &str| -> bool {
        let rel = if module_dir == "." {
            Some(path)
        } else {
            path.strip_prefix(module_dir).and_then(|r| r.strip_prefix('/'))
        };
        rel.is_some_and(|rel| set.is_match(rel))
    };

    let before_tree = store.find_tree(before)?;
    let after_tree = store.find_tree(after)?;
    let diff = store.diff_tree_to_tree(Some(&before_tree), Some(&after_tree), None)?;
    let mut out = Confined::default();
    for delta in diff.deltas() {
        let path = delta
            .new_file()
            .path()
            .or_else(|| delta.old_file().path())
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        if path.is_empty() {
            continue;
        }
        out.changed.push(path.clone());
        if inside(&path) || path.starts_with("reference/attachments/") {
            continue;
        }
        snapshot::put_path(store, &before_tree, workdir, &path)?;
        out.put_back.push(path);
    }
    Ok(out)
}

#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Confined {
    /// Every path the turn changed, inside its module or not.
    pub changed: Vec<String>,
    /// The changes outside the module's allowed paths, undone.
    pub put_back: Vec<String>,
}
