//! The incremental snapshot: only the paths a watcher saw change are read again, and
//! only the trees above them are written; every other tree is the previous snapshot's.
//!
//! It keeps the stat cache (`sessions/<id>/index`) in step, entry by entry, so the full
//! scan (`snapshot_cached`) that follows a watcher's overflow or a restart still reads
//! only what changed. The trees are built here rather than by the index's
//! `write_tree_to`: libgit2 re-reads the whole cache-tree (one object per directory)
//! after every write, which would cost as much as the rest of a checkpoint.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use git2::{Oid, Repository};
use ignore::gitignore::Gitignore;

use super::{add_from_disk_cached, StatCache};
use kiln_types::error::Result;

const MODE_TREE: i32 = 0o040000;

/// The ignore files of a working copy, read once per directory, answering as the full
/// scan's walker does: `.ignore` before `.gitignore`, the deepest directory's rule first,
/// never `.git` or `.kiln`, never the `skip` directories.
pub struct IgnoreRules {
    root: PathBuf,
    skip: Vec<String>,
    /// Per directory (relative, "" for the root): its `.ignore` and `.gitignore`.
    dirs: HashMap<String, [Option<Gitignore>; 2]>,
}

impl IgnoreRules {
    pub fn new(root: &Path, skip: &[&str]) -> IgnoreRules {
        IgnoreRules {
            root: root.to_path_buf(),
            skip: skip.iter().map(|s| s.to_string()).collect(),
            dirs: HashMap::new(),
        }
    }

    /// Forgets what was read of the ignore files in `rel` and under it (a directory made
    /// again may hold others).
    pub fn forget(&mut self, rel: &str) {
        self.dirs
            .retain(|dir, _| !(dir == rel || (dir.starts_with(rel) && dir.as_bytes().get(rel.len()) == Some(&b'/'))));
    }

    /// Whether no snapshot holds `rel` (relative, `/`-separated) or anything under it.
    pub fn excluded(&mut self, rel: &str, is_dir: bool) -> bool {
        if rel.is_empty() {
            return false;
        }
        if rel.split('/').any(|name| name == ".git" || name == ".kiln") {
            return true;
        }
        if self.skip.iter().any(|s| rel == s || rel.starts_with(&format!("{s}/"))) {
            return true;
        }
        // A path under an ignored directory is never walked to.
        let mut at = 0;
        while let Some(slash) = rel[at..].find('/') {
            let dir = &rel[..at + slash];
            if self.ignored_here(dir, true) {
                return true;
            }
            at += slash + 1;
        }
        self.ignored_here(rel, is_dir)
    }

    /// Whether the ignore files of `rel`'s ancestors ignore `rel` itself.
    fn ignored_here(&mut self, rel: &str, is_dir: bool) -> bool {
        let path = self.root.join(rel);
        let mut ancestors: Vec<&str> = vec![""];
        let mut at = 0;
        while let Some(slash) = rel[at..].find('/') {
            ancestors.push(&rel[..at + slash]);
            at += slash + 1;
        }
        for kind in 0..2 {
            for dir in ancestors.iter().rev() {
                let rules = self.rules(dir);
                if let Some(rules) = &rules[kind] {
                    let m = rules.matched(&path, is_dir);
                    if m.is_ignore() {
                        return true;
                    }
                    if m.is_whitelist() {
                        return false;
                    }
                }
            }
        }
        false
    }

    fn rules(&mut self, dir: &str) -> &[Option<Gitignore>; 2] {
        let root = &self.root;
        self.dirs.entry(dir.to_string()).or_insert_with(|| {
            let read = |name: &str| {
                let file = root.join(dir).join(name);
                fs::symlink_metadata(&file).is_ok_and(|m| m.is_file()).then(|| Gitignore::new(&file).0)
            };
            [read(".ignore"), read(".gitignore")]
        })
    }
}

/// Whether a change to `rel` may change which files are ignored (the watcher then
/// gives up: the next snapshot is a full scan).
pub fn is_ignore_file(rel: &str) -> bool {
    matches!(rel.rsplit('/').next(), Some(".gitignore") | Some(".ignore"))
}

/// Snapshots the working copy at `root` as `base` (the previous snapshot's tree, whose
/// entries the stat cache at `cache` holds) plus whatever is now at each `dirty` path:
/// a file, a link, a directory (read whole) or nothing. Returns the tree.
pub fn snapshot_changed(
    store: &Repository,
    root: &Path,
    cache: &Path,
    base: Oid,
    dirty: &BTreeSet<String>,
    rules: &mut IgnoreRules,
) -> Result<Oid> {
    let mut index = git2::Index::open(cache)?;
    let tops = outermost(dirty);
    // Dirty paths are read whatever their stat says: the watcher saw them change.
    let fresh = StatCache::default();
    for rel in &tops {
        if index.get_path(Path::new(rel), 0).is_some() {
            index.remove(Path::new(rel), 0)?;
        }
        index.remove_dir(Path::new(rel), 0)?;
        add_present(store, &mut index, root, rel, rules, &fresh)?;
    }
    let base = store.find_tree(base)?;
    let tree = match write_dir(store, &index, (0, index.len()), b"", Some(&base), &tops)? {
        Some(tree) => tree,
        None => store.treebuilder(None)?.write()?,
    };
    index.write()?;
    Ok(tree)
}

/// The dirty paths none of whose ancestors is dirty too (a dirty directory is read whole).
fn outermost(dirty: &BTreeSet<String>) -> BTreeSet<String> {
    let mut tops: BTreeSet<String> = BTreeSet::new();
    for rel in dirty {
        let rel = rel.trim_end_matches('/');
        if rel.is_empty() {
            continue;
        }
        let covered = tops.iter().any(|t| rel.starts_with(t.as_str()) && rel.as_bytes().get(t.len()) == Some(&b'/'));
        if !covered {
            // Sorted, so a path's descendants come after it: drop those already kept.
            tops.retain(|t| !(t.starts_with(rel) && t.as_bytes().get(rel.len()) == Some(&b'/')));
            tops.insert(rel.to_string());
        }
    }
    tops
}

/// Adds what is at `rel` now (a file, a link, or a directory's every file) to `index`.
fn add_present(
    store: &Repository,
    index: &mut git2::Index,
    root: &Path,
    rel: &str,
    rules: &mut IgnoreRules,
    fresh: &StatCache,
) -> Result<()> {
    let path = root.join(rel);
    let meta = match fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if rules.excluded(rel, meta.is_dir()) {
        return Ok(());
    }
    if !meta.is_dir() {
        return add_from_disk_cached(store, index, &path, rel, fresh);
    }
    let mut names: Vec<String> = match fs::read_dir(&path) {
        Ok(read) => read.filter_map(|e| e.ok()).filter_map(|e| e.file_name().to_str().map(str::to_string)).collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    names.sort();
    for name in names {
        add_present(store, index, root, &format!("{rel}/{name}"), rules, fresh)?;
    }
    Ok(())
}

/// Whether the tree of `dir` ("" or ending in `/`) may differ from the previous one: it
/// holds a dirty path, or is one, or lies under one.
fn touched(dir: &str, tops: &BTreeSet<String>) -> bool {
    let dir = dir.trim_end_matches('/');
    dir.is_empty()
        || tops.iter().any(|t| {
            let under = |a: &str, b: &str| a.starts_with(b) && a.as_bytes().get(b.len()) == Some(&b'/');
            t == dir || under(t, dir) || under(dir, t)
        })
}

/// Writes the tree of `dir` ("" or ending in `/`) from the index's entries in `range`
/// (all under `dir`; the index is sorted by path), reusing `base`'s subtree for every
/// directory no dirty path touches, whose entries are then never read: the cost follows
/// the touched directories, not the tree. `None` when the directory holds nothing (git
/// keeps no empty trees).
fn write_dir(
    store: &Repository,
    index: &git2::Index,
    range: (usize, usize),
    dir: &[u8],
    base: Option<&git2::Tree<'_>>,
    tops: &BTreeSet<String>,
) -> Result<Option<Oid>> {
    let mut builder = store.treebuilder(None)?;
    let (mut i, end) = range;
    while i < end {
        let Some(entry) = index.get(i) else { break };
        let rest = &entry.path[dir.len()..];
        let Some(slash) = rest.iter().position(|&b| b == b'/') else {
            builder.insert(rest, entry.id, entry.mode as i32)?;
            i += 1;
            continue;
        };
        let name = &rest[..slash];
        let prefix = &entry.path[..dir.len() + slash + 1];
        let sub_end = end_of_prefix(index, i, end, prefix);
        let previous = base
            .and_then(|b| b.get_name_bytes(name).filter(|e| e.kind() == Some(git2::ObjectType::Tree)).map(|e| e.id()));
        let id = match previous {
            Some(id) if !touched(&String::from_utf8_lossy(prefix), tops) => Some(id),
            Some(id) => write_dir(store, index, (i, sub_end), prefix, Some(&store.find_tree(id)?), tops)?,
            None => write_dir(store, index, (i, sub_end), prefix, None, tops)?,
        };
        if let Some(id) = id {
            builder.insert(name, id, MODE_TREE)?;
        }
        i = sub_end;
    }
    if builder.is_empty() {
        return Ok(None);
    }
    Ok(Some(builder.write()?))
}

/// The first position in `from..end` whose path does not start with `prefix` (those that
/// do are one run, starting at `from`): a binary search, reading a few entries.
fn end_of_prefix(index: &git2::Index, from: usize, end: usize, prefix: &[u8]) -> usize {
    let (mut lo, mut hi) = (from, end);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if index.get(mid).is_some_and(|e| e.path.starts_with(prefix)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(paths: &[&str]) -> BTreeSet<String> {
        paths.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn a_dirty_directory_covers_what_is_under_it() {
        assert_eq!(outermost(&set(&["a/b/c", "a/b", "a/bc", "d"])), set(&["a/b", "a/bc", "d"]));
        assert_eq!(outermost(&set(&["a/b", "a/b/c"])), set(&["a/b"]));
    }

    #[test]
    fn only_directories_on_the_way_to_a_dirty_path_are_rebuilt() {
        let tops = set(&["src/lib/a.ts"]);
        assert!(touched("", &tops));
        assert!(touched("src/", &tops));
        assert!(touched("src/lib/", &tops));
        assert!(!touched("src/libs/", &tops));
        assert!(!touched("docs/", &tops));
        assert!(touched("new/deep/", &set(&["new"])));
    }
}
