//! The session's git checkout: a `.git` of the working copy's own, so git run in a
//! session (by the agent, in a terminal, by the project's scripts) answers for the
//! session, never for the user's repository.
//!
//! Its object database has the host's as an alternate (read only: nothing of the
//! user's repository is ever written), and gets from `store.git` only the objects the
//! host lacks (the start's uncommitted files). `HEAD` is a branch `kiln/<id>` at the
//! session's base: the host's `HEAD` when the workspace was clean, else a commit on it
//! holding what was uncommitted, so `git status` and `git diff` show the session's
//! change and `git log` the repository's history. The index is written from the stat
//! data `materialize` kept, so the first `git status` reads no file.
//!
//! Kiln's checkpoints stay the authority: a commit made in the checkout is copied into
//! the store by the next checkpoint (`keep`, under `refs/kiln-git/<id>/<sequence>`), a
//! restore moves the branch back to what that checkpoint kept (`move_to`), and a
//! rebuilt working copy gets its checkout again (`attach`). Kiln reads and writes the
//! checkout through libgit2 only: running `git` there would run the hooks and
//! configuration the agent may have written.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use git2::{IndexEntry, IndexTime, ObjectType, Oid, Repository, RepositoryInitOptions, TreeWalkMode, TreeWalkResult};

use kiln_types::error::{ApiError, Result};

/// More objects than this go over as one pack instead of loose files.
const PACK_FROM: usize = 64;

/// What the session starts from in the host repository.
pub struct HostStart<'a> {
    /// The host's object database, the checkout's alternate.
    pub objects: &'a Path,
    /// The host's `HEAD` commit when the workspace is the repository's root (a
    /// workspace in a sub-directory, or an unborn branch, has no history to show).
    pub head: Option<Oid>,
    /// The identity git resolves in the host (`user.name`, `user.email`), so a commit
    /// in the session is the user's, whatever home the agent runs with.
    pub identity: Option<(String, String)>,
}

/// The branch a session's checkout is on.
pub fn branch(session: &str) -> String {
    format!("kiln/{}", &session[..session.len().min(8)])
}

fn kept_ref(session: &str, sequence: i64) -> String {
    format!("refs/kiln-git/{session}/{sequence}")
}

fn base_ref(session: &str) -> String {
    format!("refs/kiln-git/{session}/base")
}

/// Makes the checkout of a working copy just materialized from `start` (checkpoint 0):
/// records the session's base commit in the store, then `attach`es it.
pub fn create(
    store: &Repository,
    workdir: &Path,
    session: &str,
    start: Oid,
    host: Option<&HostStart<'_>>,
    entries: &[IndexEntry],
) -> Result<()> {
    let base = base_for(store, start, host, "when the Kiln session started")?;
    store.reference(&base_ref(session), base, true, "the session's base")?;
    attach(store, workdir, session, base, host.map(|h| h.objects), entries)?;
    if let Some((name, email)) = host.and_then(|h| h.identity.as_ref()) {
        let repo = open(workdir)?;
        let mut config = repo.config()?.open_level(git2::ConfigLevel::Local)?;
        config.set_str("user.name", name)?;
        config.set_str("user.email", email)?;
    }
    Ok(())
}

/// The commit the checkout's branch starts from, for a store commit of the workspace:
/// the host's `HEAD` when it holds just that, else a commit on it holding what was not
/// committed, else (no history to show) a commit of its own.
fn base_for(store: &Repository, workspace: Oid, host: Option<&HostStart<'_>>, when: &str) -> Result<Oid> {
    let tree = store.find_commit(workspace)?.tree_id();
    let head = host.and_then(|h| h.head).and_then(|h| store.find_commit(h).ok());
    match head {
        Some(head) if head.tree_id() == tree => Ok(head.id()),
        Some(head) => write_commit(store, tree, &[&head], &format!("Uncommitted changes in the workspace {when}")),
        None => write_commit(store, tree, &[], &format!("The workspace {when}")),
    }
}

/// After an update from the workspace: the session's branch goes onto the workspace as
/// taken in (`workspace`, a store commit), its index to that tree, so `git diff` in the
/// session shows the session's change on top of it. Commits made in the session before
/// stay in the store (`keep`), off the branch.
pub fn rebase(
    store: &Repository,
    workdir: &Path,
    session: &str,
    workspace: Oid,
    host: Option<&HostStart<'_>>,
) -> Result<()> {
    let base = base_for(store, workspace, host, "when the Kiln session took it in")?;
    store.reference(&base_ref(session), base, true, "the session's base, updated")?;
    let Some(repo) = open_own(workdir) else {
        if fs::symlink_metadata(workdir.join(".git")).is_ok() {
            return Err(ApiError::internal("the session's checkout", "its .git is not a directory Kiln made"));
        }
        return attach(store, workdir, session, base, host.map(|h| h.objects), &[]);
    };
    point_branch(store, &repo, session, base, "Kiln took in the workspace")
}

/// Gives `workdir` (a working copy with no `.git`) a checkout on the session's branch at
/// `commit` (a commit in the store), its index taking the stat data of `entries` (the
/// files just materialized) where they hold what the commit does.
pub fn attach(
    store: &Repository,
    workdir: &Path,
    session: &str,
    commit: Oid,
    host_objects: Option<&Path>,
    entries: &[IndexEntry],
) -> Result<()> {
    let dot_git = workdir.join(".git");
    if fs::symlink_metadata(&dot_git).is_ok() {
        return Err(ApiError::internal("the session's checkout", "the working copy has a .git already"));
    }
    let mut options = RepositoryInitOptions::new();
    options.no_reinit(true).mkdir(false).external_template(false).initial_head(&branch(session));
    let repo = Repository::init_opts(workdir, &options)?;
    if let Some(objects) = host_objects {
        let info = dot_git.join("objects/info");
        fs::create_dir_all(&info)?;
        fs::write(info.join("alternates"), format!("{}\n", objects.display()))?;
    }
    let repo = reopen(repo)?;
    copy_missing(store, &repo, commit)?;
    repo.reference(&format!("refs/heads/{}", branch(session)), commit, true, "the session's base")?;
    let tree = repo.find_commit(commit)?.tree()?;
    write_index(&repo, &tree, entries)?;
    Ok(())
}

/// Copies into the store what the checkout's `HEAD` holds beyond it (commits the agent
/// or the user made in the session) and names it for checkpoint `sequence`. A checkout
/// still at its base, or one that is gone or damaged, keeps nothing: the checkpoint
/// itself (the files) never depends on it.
pub fn keep(store: &Repository, workdir: &Path, session: &str, sequence: i64) -> Result<Option<Oid>> {
    let Some(repo) = open_own(workdir) else { return Ok(None) };
    let Ok(head) = repo.head().and_then(|h| h.peel_to_commit()) else { return Ok(None) };
    let base = store.find_reference(&base_ref(session)).ok().and_then(|r| r.target());
    if Some(head.id()) == base {
        return Ok(None);
    }
    copy_missing(&repo, store, head.id())?;
    store.reference(&kept_ref(session, sequence), head.id(), true, "a commit made in the session")?;
    Ok(Some(head.id()))
}

/// The commit checkpoint `sequence` leaves the checkout on: what the latest checkpoint
/// up to it kept, else the base.
pub fn commit_at(store: &Repository, session: &str, sequence: i64) -> Option<Oid> {
    let kept = store
        .references_glob(&format!("refs/kiln-git/{session}/*"))
        .ok()?
        .flatten()
        .filter_map(|r| {
            let n: i64 = r.name()?.rsplit('/').next()?.parse().ok()?;
            (n <= sequence).then_some((n, r.target()?))
        })
        .max_by_key(|(n, _)| *n)
        .map(|(_, id)| id);
    kept.or_else(|| store.find_reference(&base_ref(session)).ok()?.target())
}

/// The messages of the commits made in the session's checkout (on its `HEAD`, since its
/// base), oldest first: what a delivery says besides the change itself. None when the
/// checkout is gone or was never made.
pub fn commits_made(store: &Repository, workdir: &Path, session: &str) -> Vec<String> {
    let Some(repo) = open_own(workdir) else { return Vec::new() };
    let Some(base) = store.find_reference(&base_ref(session)).ok().and_then(|r| r.target()) else {
        return Vec::new();
    };
    let Ok(mut walk) = repo.revwalk() else { return Vec::new() };
    if walk.push_head().is_err() || walk.hide(base).is_err() {
        return Vec::new();
    }
    let _ = walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE);
    walk.flatten().filter_map(|id| Some(repo.find_commit(id).ok()?.message()?.trim_end().to_string())).collect()
}

/// After a restore to checkpoint `sequence`: the session's branch goes back to the
/// commit that checkpoint kept, and the index to its tree (entries of unchanged files
/// keep their stat data). A working copy without its own checkout gets one.
pub fn move_to(
    store: &Repository,
    workdir: &Path,
    session: &str,
    sequence: i64,
    host_objects: Option<&Path>,
) -> Result<()> {
    let Some(commit) = commit_at(store, session, sequence) else { return Ok(()) };
    let Some(repo) = open_own(workdir) else {
        if fs::symlink_metadata(workdir.join(".git")).is_ok() {
            return Err(ApiError::internal("the session's checkout", "its .git is not a directory Kiln made"));
        }
        return attach(store, workdir, session, commit, host_objects, &[]);
    };
    point_branch(store, &repo, session, commit, "Kiln restored a checkpoint")
}

/// Puts the checkout's branch (the one `HEAD` is on, else the session's) at `commit`, a
/// store commit copied in first, and its index on that commit's tree.
fn point_branch(store: &Repository, repo: &Repository, session: &str, commit: Oid, why: &str) -> Result<()> {
    copy_missing(store, repo, commit)?;
    let name = match repo.head() {
        Ok(head) if head.is_branch() => head.name().map(str::to_string),
        _ => None,
    };
    let name = name.unwrap_or_else(|| format!("refs/heads/{}", branch(session)));
    repo.reference(&name, commit, true, why)?;
    repo.set_head(&name)?;
    let tree = repo.find_commit(commit)?.tree()?;
    write_index(repo, &tree, &[])
}

/// The working copy's own checkout: `.git` a real directory inside it, never a link or a
/// `gitdir:` file that could lead Kiln into another repository.
fn open_own(workdir: &Path) -> Option<Repository> {
    let dot_git = workdir.join(".git");
    if !fs::symlink_metadata(&dot_git).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let repo =
        Repository::open_ext(&dot_git, git2::RepositoryOpenFlags::NO_SEARCH, std::iter::empty::<&Path>()).ok()?;
    let real = |p: &Path| fs::canonicalize(p).ok();
    (real(repo.path()) == real(&dot_git) && real(&dot_git).is_some()).then_some(repo)
}

fn open(workdir: &Path) -> Result<Repository> {
    open_own(workdir).ok_or_else(|| ApiError::internal("the session's checkout", "the working copy has no checkout"))
}

/// A handle that sees an alternate added since it opened.
fn reopen(repo: Repository) -> Result<Repository> {
    let path: PathBuf = repo.path().to_path_buf();
    drop(repo);
    Ok(Repository::open_ext(&path, git2::RepositoryOpenFlags::NO_SEARCH, std::iter::empty::<&Path>())?)
}

fn write_commit(store: &Repository, tree: Oid, parents: &[&git2::Commit<'_>], message: &str) -> Result<Oid> {
    let sig = git2::Signature::now("Kiln", "kiln@localhost")?;
    let tree = store.find_tree(tree)?;
    Ok(store.commit(None, &sig, &sig, message, &tree, parents)?)
}

/// Copies into `to` every object reachable from `commit` that `to` lacks (through its
/// alternates too): commits back to the first one `to` has, and of their trees only the
/// parts it lacks (a tree `to` has, it has whole).
fn copy_missing(from: &Repository, to: &Repository, commit: Oid) -> Result<usize> {
    let have = to.odb()?;
    let mut wanted: Vec<Oid> = Vec::new();
    let mut seen: HashSet<Oid> = HashSet::new();
    let mut commits = vec![commit];
    while let Some(id) = commits.pop() {
        if have.exists(id) || !seen.insert(id) {
            continue;
        }
        let c = from.find_commit(id)?;
        wanted.push(id);
        commits.extend(c.parent_ids());
        let mut trees = vec![c.tree_id()];
        while let Some(tree) = trees.pop() {
            if have.exists(tree) || !seen.insert(tree) {
                continue;
            }
            wanted.push(tree);
            for entry in from.find_tree(tree)?.iter() {
                match entry.kind() {
                    Some(ObjectType::Tree) => trees.push(entry.id()),
                    Some(ObjectType::Blob) if !have.exists(entry.id()) && seen.insert(entry.id()) => {
                        wanted.push(entry.id())
                    }
                    // Submodules' commits live in their own repositories.
                    _ => {}
                }
            }
        }
    }
    if wanted.len() > PACK_FROM {
        let mut pack = from.packbuilder()?;
        for id in &wanted {
            pack.insert_object(*id, None)?;
        }
        let mut buf = git2::Buf::new();
        pack.write_buf(&mut buf)?;
        let mut writer = have.packwriter()?;
        std::io::Write::write_all(&mut writer, &buf)?;
        writer.commit()?;
    } else {
        let source = from.odb()?;
        for id in &wanted {
            let object = source.read(*id)?;
            have.write(object.kind(), object.data())?;
        }
    }
    Ok(wanted.len())
}

/// Writes the checkout's index for `tree` (what `HEAD` holds), each entry with the stat
/// data of a file known to hold just that blob: from `fresh` (a materialization's, when
/// the working copy was just written) or else the current index. Any other entry has no
/// stat data, so git reads that file once to compare it.
fn write_index(repo: &Repository, tree: &git2::Tree<'_>, fresh: &[IndexEntry]) -> Result<()> {
    let mut index = repo.index()?;
    let mut known: HashMap<Vec<u8>, IndexEntry> = index.iter().map(|e| (e.path.clone(), e)).collect();
    for entry in fresh {
        known.insert(entry.path.clone(), copy(entry));
    }
    index.clear()?;
    let mut failed = None;
    tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
        if entry.kind() != Some(ObjectType::Blob) && entry.kind() != Some(ObjectType::Commit) {
            return TreeWalkResult::Ok;
        }
        let path = format!("{dir}{}", entry.name().unwrap_or_default()).into_bytes();
        let mode = entry.filemode() as u32;
        let row = match known.get(&path) {
            Some(seen) if seen.id == entry.id() && seen.mode == mode => copy(seen),
            _ => IndexEntry {
                ctime: IndexTime::new(0, 0),
                mtime: IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode,
                uid: 0,
                gid: 0,
                file_size: 0,
                id: entry.id(),
                flags: (path.len().min(0xfff)) as u16,
                flags_extended: 0,
                path,
            },
        };
        if let Err(e) = index.add(&row) {
            failed = Some(e);
            return TreeWalkResult::Abort;
        }
        TreeWalkResult::Ok
    })?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    index.write()?;
    Ok(())
}

fn copy(entry: &IndexEntry) -> IndexEntry {
    IndexEntry {
        ctime: entry.ctime,
        mtime: entry.mtime,
        dev: entry.dev,
        ino: entry.ino,
        mode: entry.mode,
        uid: entry.uid,
        gid: entry.gid,
        file_size: entry.file_size,
        id: entry.id,
        flags: entry.flags,
        flags_extended: entry.flags_extended,
        path: entry.path.clone(),
    }
}
