//! Snapshots of a working tree into `.kiln/store.git` (written back out by `materialize`).
//!
//! A git workspace is read as HEAD plus uncommitted tracked changes plus untracked
//! files that are not ignored, without touching the host repository's index, HEAD,
//! refs, stash or worktree list: the host is only read, and its object database is an
//! alternate of the store, so unchanged blobs are never copied. A workspace that is
//! not a git repository is read with gitignore rules.

use std::fs;
use std::io::Write;
use std::path::Path;

use git2::{IndexEntry, IndexTime, ObjectType, Oid, Repository, Status, StatusOptions};

use kiln_types::error::{ApiError, Result};

mod changed;
pub use changed::{is_ignore_file, snapshot_changed, IgnoreRules};

const MODE_FILE: u32 = 0o100644;
const MODE_EXEC: u32 = 0o100755;
const MODE_LINK: u32 = 0o120000;

/// Opens the bare store, creating it on first use; `host_objects` becomes an alternate.
pub fn open_store(path: &Path, host_objects: Option<&Path>) -> Result<Repository> {
    let repo = match Repository::open_bare(path) {
        Ok(repo) => repo,
        Err(_) => Repository::init_bare(path)?,
    };
    if let Some(objects) = host_objects {
        let alternates = path.join("objects/info/alternates");
        let line = objects.display().to_string();
        let current = fs::read_to_string(&alternates).unwrap_or_default();
        if !current.lines().any(|l| l == line) {
            fs::create_dir_all(alternates.parent().unwrap())?;
            let mut f = fs::OpenOptions::new().create(true).append(true).open(&alternates)?;
            writeln!(f, "{line}")?;
            // The alternate must be visible to this handle too: reopen.
            return Ok(Repository::open_bare(path)?);
        }
    }
    Ok(repo)
}

/// Where a workspace's files come from.
pub enum Source<'a> {
    /// A git repository; `prefix` is the workspace root relative to its work tree
    /// (empty, or ending in `/`).
    Git { repo: &'a Repository, prefix: &'a str },
    /// A plain directory read with gitignore rules, less the `skip` directories
    /// (relative, `/`-separated).
    Plain { root: &'a Path, skip: &'a [&'a str] },
}

/// Writes the workspace's current state as a tree in `store`; returns the tree id.
pub fn snapshot(store: &Repository, source: Source<'_>) -> Result<Oid> {
    let mut index = git2::Index::new()?;
    match source {
        Source::Git { repo, prefix } => snapshot_git(store, repo, prefix, &mut index)?,
        Source::Plain { root, skip } => snapshot_plain(store, root, skip, &mut index, &StatCache::default())?,
    }
    Ok(index.write_tree_to(store)?)
}

fn skip_path(rel: &str) -> bool {
    rel == ".kiln" || rel.starts_with(".kiln/") || rel == ".git" || rel.starts_with(".git/")
}

fn snapshot_git(store: &Repository, host: &Repository, prefix: &str, index: &mut git2::Index) -> Result<()> {
    let workdir = host.workdir().ok_or_else(|| ApiError::internal("git", "the repository has no work tree"))?;
    // Reading the index and statuses never writes them back (no UPDATE_INDEX flag).
    let host_index = host.index()?;
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true)
        .renames_head_to_index(false)
        .update_index(false);
    if !prefix.is_empty() {
        opts.pathspec(prefix);
    }
    let statuses = host.statuses(Some(&mut opts))?;
    let mut changed = std::collections::HashMap::new();
    for s in statuses.iter() {
        if let Some(path) = s.path() {
            changed.insert(path.to_string(), s.status());
        }
    }
    let wt_changed = Status::WT_MODIFIED | Status::WT_TYPECHANGE | Status::WT_RENAMED;
    for entry in host_index.iter() {
        let path = String::from_utf8_lossy(&entry.path).into_owned();
        let stage = (entry.flags >> 12) & 0x3;
        if stage != 0 || entry.mode == 0o160000 {
            continue; // conflicts are read from disk below; submodules are not snapshotted
        }
        let Some(rel) = path.strip_prefix(prefix) else { continue };
        if skip_path(rel) {
            continue;
        }
        match changed.get(&path) {
            Some(st) if st.contains(Status::WT_DELETED) => {}
            Some(st) if st.intersects(wt_changed) => {
                add_from_disk(store, index, &workdir.join(&path), rel)?;
            }
            _ => add_entry(index, rel, entry.id, entry.mode)?,
        }
    }
    // Untracked files, and conflicted ones (which have no stage-0 entry), come from disk.
    for (path, st) in &changed {
        if !(st.contains(Status::WT_NEW) || st.contains(Status::CONFLICTED)) {
            continue;
        }
        let Some(rel) = path.strip_prefix(prefix) else { continue };
        if !skip_path(rel) && index.get_path(Path::new(rel), 0).is_none() {
            add_from_disk(store, index, &workdir.join(path), rel)?;
        }
    }
    Ok(())
}

/// Snapshots a plain directory through a stat cache kept in the index file at `cache`:
/// a file whose size, modification time, inode and mode are what the cache recorded is
/// not read again, so the cost grows with what changed, not with the tree.
pub fn snapshot_cached(store: &Repository, root: &Path, skip: &[&str], cache: &Path) -> Result<Oid> {
    let mut index = git2::Index::open(cache)?;
    // Files changed in the same second the cache was written may look unchanged: those
    // are always read again ("racily clean", as git calls them).
    let written = fs::metadata(cache).and_then(|m| m.modified()).ok();
    let known = StatCache {
        entries: index.iter().map(|e| (e.path.clone(), e)).collect(),
        written_secs: written.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map(|d| d.as_secs() as i64),
    };
    index.clear()?;
    snapshot_plain(store, root, skip, &mut index, &known)?;
    index.write()?;
    Ok(index.write_tree_to(store)?)
}

/// What the last snapshot recorded of each file.
#[derive(Default)]
struct StatCache {
    entries: std::collections::HashMap<Vec<u8>, IndexEntry>,
    written_secs: Option<i64>,
}

impl StatCache {
    /// The recorded blob when `meta` says the file is unchanged.
    fn unchanged(&self, rel: &str, meta: &fs::Metadata, mode: u32) -> Option<Oid> {
        use std::os::unix::fs::MetadataExt;
        let known = self.entries.get(rel.as_bytes())?;
        let written = self.written_secs?;
        let same = known.mtime.seconds() as i64 == meta.mtime()
            && known.mtime.nanoseconds() == meta.mtime_nsec() as u32
            && known.file_size == meta.size() as u32
            && known.ino == meta.ino() as u32
            && known.mode == mode
            && meta.mtime() < written;
        same.then_some(known.id)
    }
}

/// Every file and directory of a working copy a snapshot may hold, by gitignore rules
/// (`.ignore` and `.gitignore` files, no parents', none of git's global ones), never
/// `.git` or `.kiln`: the full scan reads its files, the watcher watches its directories.
pub fn walk(root: &Path) -> ignore::Walk {
    ignore::WalkBuilder::new(root)
        .hidden(false)
        .git_ignore(true)
        .git_exclude(false)
        .git_global(false)
        .require_git(false)
        .parents(false)
        .follow_links(false)
        .filter_entry(|e| !matches!(e.file_name().to_str(), Some(".git") | Some(".kiln")))
        .build()
}

fn snapshot_plain(
    store: &Repository,
    root: &Path,
    skip: &[&str],
    index: &mut git2::Index,
    cache: &StatCache,
) -> Result<()> {
    for entry in walk(root) {
        let entry = entry.map_err(|e| ApiError::internal("reading the workspace", e))?;
        let Some(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            continue;
        }
        let rel = entry.path().strip_prefix(root).unwrap_or(entry.path()).to_string_lossy().replace('\\', "/");
        if rel.is_empty() || skip_path(&rel) || skip.iter().any(|s| rel.starts_with(&format!("{s}/"))) {
            continue;
        }
        add_from_disk_cached(store, index, entry.path(), &rel, cache)?;
    }
    Ok(())
}

fn add_from_disk_cached(
    store: &Repository,
    index: &mut git2::Index,
    path: &Path,
    rel: &str,
    cache: &StatCache,
) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    let mode = if meta.file_type().is_symlink() {
        MODE_LINK
    } else if meta.is_file() {
        if meta.mode() & 0o111 != 0 {
            MODE_EXEC
        } else {
            MODE_FILE
        }
    } else {
        return Ok(()); // sockets, fifos and devices are not content
    };
    let id = match cache.unchanged(rel, &meta, mode) {
        Some(id) => id,
        None => {
            let content = if mode == MODE_LINK {
                fs::read_link(path)?.to_string_lossy().into_owned().into_bytes()
            } else {
                fs::read(path)?
            };
            store.blob(&content)?
        }
    };
    let entry = crate::materialize::stat_entry(rel.as_bytes(), id, mode, &meta);
    Ok(index.add(&entry)?)
}

fn add_from_disk(store: &Repository, index: &mut git2::Index, path: &Path, rel: &str) -> Result<()> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    let (content, mode) = if meta.file_type().is_symlink() {
        let target = fs::read_link(path)?;
        (target.to_string_lossy().into_owned().into_bytes(), MODE_LINK)
    } else if meta.is_file() {
        use std::os::unix::fs::PermissionsExt;
        let mode = if meta.permissions().mode() & 0o111 != 0 { MODE_EXEC } else { MODE_FILE };
        (fs::read(path)?, mode)
    } else {
        return Ok(()); // sockets, fifos and devices are not content
    };
    let oid = store.blob(&content)?;
    add_entry(index, rel, oid, mode)
}

fn add_entry(index: &mut git2::Index, rel: &str, id: Oid, mode: u32) -> Result<()> {
    let zero = IndexTime::new(0, 0);
    let entry = IndexEntry {
        ctime: zero,
        mtime: zero,
        dev: 0,
        ino: 0,
        mode,
        uid: 0,
        gid: 0,
        file_size: 0,
        id,
        flags: (rel.len().min(0xfff)) as u16,
        flags_extended: 0,
        path: rel.as_bytes().to_vec(),
    };
    Ok(index.add(&entry)?)
}

/// Records `tree` as a commit (parented on `parent`) under `refname`.
pub fn commit(store: &Repository, tree: Oid, parent: Option<Oid>, message: &str, refname: &str) -> Result<Oid> {
    let oid = write_commit(store, tree, parent, message)?;
    store.reference(refname, oid, true, message)?;
    Ok(oid)
}

/// Writes the commit object of `tree` (parented on `parent`) without naming it: until a
/// ref names it, nothing reaches it.
pub fn write_commit(store: &Repository, tree: Oid, parent: Option<Oid>, message: &str) -> Result<Oid> {
    let sig = git2::Signature::now("Kiln", "kiln@localhost")?;
    let tree = store.find_tree(tree)?;
    let parents = match parent {
        Some(p) => vec![store.find_commit(p)?],
        None => Vec::new(),
    };
    let parent_refs: Vec<&git2::Commit> = parents.iter().collect();
    Ok(store.commit(None, &sig, &sig, message, &tree, &parent_refs)?)
}

/// Makes `rel` under `workdir` what it is in `tree`: its content, mode or symbolic
/// link, a directory, or nothing when the tree has none. Directories left empty are
/// removed, as git does not keep them.
///
/// The working copy is the agent's, so any part of `rel` may be a link by now, and an
/// ignored one is in no snapshot, so no restore puts it back first. A link is never
/// followed: `workdir` itself must be a real directory (`PATH_NOT_ALLOWED` otherwise);
/// to write, every directory on the way is made a real one, a link in its place
/// removed (the tree says a directory is there); to remove, a path under a link or a
/// file is not in the working copy, so there is nothing to remove.
pub fn put_path(store: &Repository, tree: &git2::Tree<'_>, workdir: &Path, rel: &str) -> Result<()> {
    let rel_path = Path::new(rel);
    let names: Vec<&std::ffi::OsStr> = rel_path
        .components()
        .map(|c| match c {
            std::path::Component::Normal(name) => Ok(name),
            _ => Err(kiln_runtime::paths::refused(rel, "a path in a snapshot is relative plain names")),
        })
        .collect::<Result<_>>()?;
    let Some((_, parents)) = names.split_last() else {
        return Err(kiln_runtime::paths::refused(rel, "the path is empty"));
    };
    if !fs::symlink_metadata(workdir).is_ok_and(|m| m.is_dir()) {
        return Err(kiln_runtime::paths::refused(
            &workdir.display().to_string(),
            "the working copy is not a real directory",
        ));
    }
    let target = workdir.join(rel_path);
    let wanted = tree.get_path(rel_path).ok();
    match wanted.as_ref().and_then(|e| e.kind()) {
        Some(ObjectType::Blob) => {
            let entry = wanted.as_ref().expect("matched");
            make_real_dirs(workdir, parents)?;
            let blob = store.find_blob(entry.id())?;
            crate::materialize::write_blob(&target, blob.content(), entry.filemode() as u32)
        }
        Some(ObjectType::Tree) => {
            make_real_dirs(workdir, &names)?;
            Ok(())
        }
        _ => {
            if !real_dirs_on_the_way(workdir, parents) {
                return Ok(());
            }
            crate::materialize::remove_entry(&target)?;
            let mut dir = target.parent();
            while let Some(d) = dir.filter(|d| *d != workdir) {
                if fs::remove_dir(d).is_err() {
                    break; // not empty
                }
                dir = d.parent();
            }
            Ok(())
        }
    }
}

/// Makes `workdir/names[0]/names[1]/…` real directories, one level at a time.
fn make_real_dirs(workdir: &Path, names: &[&std::ffi::OsStr]) -> std::io::Result<()> {
    let mut dir = workdir.to_path_buf();
    for name in names {
        dir.push(name);
        crate::materialize::real_dir(&dir)?;
    }
    Ok(())
}

/// Whether each of `workdir/names[0]/…` is a real directory (no link, no file).
fn real_dirs_on_the_way(workdir: &Path, names: &[&std::ffi::OsStr]) -> bool {
    let mut dir = workdir.to_path_buf();
    names.iter().all(|name| {
        dir.push(name);
        fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir())
    })
}

/// Removes every ref of a session (its checkpoints) from the store.
pub fn remove_session_refs(store: &Repository, session: &str) -> Result<usize> {
    let mut removed = 0;
    // The checkpoints, and the commits made in the session's checkout that they kept.
    let mut names: Vec<String> = Vec::new();
    for glob in [format!("refs/kiln/{session}/*"), format!("refs/kiln-git/{session}/*")] {
        names.extend(store.references_glob(&glob)?.filter_map(|r| r.ok().and_then(|r| r.name().map(str::to_string))));
    }
    for name in names {
        store.find_reference(&name)?.delete()?;
        removed += 1;
    }
    Ok(removed)
}
