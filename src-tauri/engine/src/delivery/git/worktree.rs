//! The temporary worktree a delivery works in: made from a fresh base, and removed
//! whatever state a crash left it in, never deleting a directory that is not plainly
//! this repository's.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use super::message::summary;
use super::policy::{check_ref_name, check_rev};
use super::transport::{args, Access};
use super::{Git, GitError, GitErrorKind, GitOutput, GitResult};

impl Git {
    // Worktrees

    /// A new worktree at `path` with `new_branch` checked out at `start_ref` (reset to it
    /// if the branch exists, as a second delivery needs). No upstream is set: every push
    /// here names its target.
    pub async fn worktree_add(&self, path: &Path, start_ref: &str, new_branch: &str) -> GitResult<GitOutput> {
        check_ref_name(new_branch).map_err(|m| self.invalid(format!("the branch name: {m}")))?;
        check_rev(start_ref).map_err(|m| self.invalid(m))?;
        let path = self.absolute(path);
        if path.symlink_metadata().is_ok() {
            return Err(self.invalid(format!(
                "{} already exists: remove it first (worktree_remove also cleans one left behind by a crash)",
                path.display()
            )));
        }
        if self.rev_parse(start_ref).await?.is_none() {
            return Err(self.fail(
                GitErrorKind::RefNotFound,
                format!("there is no commit '{start_ref}' in {} (is the base branch fetched?)", self.dir.display()),
                None,
            ));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                self.fail(GitErrorKind::Failed, format!("cannot create {}: {e}", parent.display()), None)
            })?;
        }
        let mut a = args(["worktree", "add", "--no-track", "-B", new_branch, "--"]);
        a.push(path.clone().into_os_string());
        a.push(start_ref.into());
        let ran = self.run(Access::Write, &a, None).await?;
        if !ran.out.success() {
            let message = format!("git could not create the worktree at {}: {}", path.display(), summary(&ran.out));
            return Err(self.fail(GitErrorKind::Failed, message, Some(ran.out)));
        }
        Ok(ran.out)
    }

    /// Removes the worktree at `path`, whatever state a crash left it in: known to git and
    /// present (removed with `--force`, uncommitted changes and all); known but its
    /// directory gone (pruned); a directory git no longer knows (deleted, when it is
    /// plainly one of this repository's: its `.git` file names this repository's
    /// worktrees, or it has no `.git` and lies inside the repository, like
    /// `.kiln/worktrees/<session>`). Anything else is refused with `NotAWorktree`, never
    /// deleted. Ends with `git worktree prune`. Removing nothing is not an error.
    pub async fn worktree_remove(&self, path: &Path) -> GitResult<GitOutput> {
        let path = self.absolute(path);
        let target = normalize(&path);
        let toplevel = self.repo_path("--show-toplevel").await?;
        if toplevel.starts_with(&target) {
            return Err(self.fail(
                GitErrorKind::NotAWorktree,
                format!("refusing to remove {}: it holds the repository itself", path.display()),
                None,
            ));
        }
        // The listing is how Kiln decides, not a step worth showing: it is left out.
        let (known, _) = self.worktree_known(&target).await?;
        let exists = path.symlink_metadata().is_ok();
        let mut note = String::new();

        let out = if known && exists {
            let mut a = args(["worktree", "remove", "--force", "--force", "--"]);
            a.push(path.clone().into_os_string());
            let ran = self.run(Access::Write, &a, None).await?;
            let removed = ran.out.success();
            let out = ran.out;
            if !removed && path.symlink_metadata().is_ok() {
                // A worktree too damaged for git to remove: fall back to what a stray
                // directory gets, with the same checks.
                self.remove_stray(&path, &toplevel).await.map_err(|e| GitError { output: Some(out.clone()), ..e })?;
                note = format!("git could not remove {}; removed its directory\n", path.display());
            }
            Some(out)
        } else if exists {
            self.remove_stray(&path, &toplevel).await?;
            note = format!("removed {}, a worktree directory git no longer knew\n", path.display());
            None
        } else {
            None
        };

        let prune = self.run(Access::Write, &args(["worktree", "prune"]), None).await?;
        let mut out = match out {
            Some(removed) => removed.then(prune.out),
            None => prune.out,
        };
        out.output.insert_str(0, &self.redactor().redact(&note));
        if !out.success() {
            let message = format!("git worktree prune failed: {}", summary(&out));
            return Err(self.fail(GitErrorKind::Failed, message, Some(out)));
        }
        let (still_known, _) = self.worktree_known(&target).await?;
        if still_known || path.symlink_metadata().is_ok() {
            return Err(self.fail(
                GitErrorKind::Failed,
                format!("the worktree at {} could not be removed", path.display()),
                Some(out),
            ));
        }
        Ok(out)
    }

    /// Whether git lists `target` (normalized) as a worktree other than the main one.
    async fn worktree_known(&self, target: &Path) -> GitResult<(bool, GitOutput)> {
        let ran = self.run(Access::Read, &args(["worktree", "list", "--porcelain", "-z"]), None).await?;
        if !ran.out.success() {
            let message = format!("git worktree list failed: {}", summary(&ran.out));
            return Err(self.fail(GitErrorKind::Failed, message, Some(ran.out)));
        }
        let known = String::from_utf8_lossy(&ran.stdout)
            .split('\0')
            .filter_map(|field| field.strip_prefix("worktree "))
            .skip(1) // the main worktree
            .any(|listed| normalize(Path::new(listed)) == target);
        Ok((known, ran.out))
    }

    /// An absolute path from `git rev-parse <flag>`.
    async fn repo_path(&self, flag: &str) -> GitResult<PathBuf> {
        let ran = self.run(Access::Read, &args(["rev-parse", "--path-format=absolute", flag]), None).await?;
        if !ran.out.success() {
            let message = format!("{} is not a git repository: {}", self.dir.display(), summary(&ran.out));
            return Err(self.fail(GitErrorKind::Failed, message, Some(ran.out)));
        }
        Ok(normalize(Path::new(String::from_utf8_lossy(&ran.stdout).trim())))
    }

    /// Deletes a worktree directory git does not know, if it is plainly this repository's.
    async fn remove_stray(&self, path: &Path, toplevel: &Path) -> GitResult<()> {
        let refuse = |why: String| {
            self.fail(GitErrorKind::NotAWorktree, format!("not removing {}: {why}", path.display()), None)
        };
        let meta = path.symlink_metadata().map_err(|e| refuse(e.to_string()))?;
        let removal = if meta.file_type().is_symlink() {
            // A link where the worktree was: remove the link, never what it points to.
            std::fs::remove_file(path)
        } else if !meta.is_dir() {
            return Err(refuse("it is not a directory".into()));
        } else {
            let dot_git = path.join(".git");
            match dot_git.symlink_metadata() {
                Ok(m) if m.is_file() => {
                    let worktrees = self.repo_path("--git-common-dir").await?.join("worktrees");
                    let named =
                        read_gitdir(&dot_git, path).ok_or_else(|| refuse("its .git file cannot be read".into()))?;
                    if !(named.starts_with(&worktrees) || normalize(&named).starts_with(&worktrees)) {
                        return Err(refuse(format!("its .git file names another repository ({})", named.display())));
                    }
                }
                Ok(_) => return Err(refuse("it has a .git of its own: it is a repository, not a worktree".into())),
                Err(_) => {
                    let target = normalize(path);
                    if !(target.starts_with(toplevel) && target != toplevel) {
                        return Err(refuse(
                            "it lies outside the repository and no .git file names this repository".into(),
                        ));
                    }
                }
            }
            // remove_dir_all removes links inside the tree, never what they point to.
            std::fs::remove_dir_all(path)
        };
        removal.map_err(|e| self.fail(GitErrorKind::Failed, format!("could not remove {}: {e}", path.display()), None))
    }
}

/// `path` with links resolved as far as it exists (its parent, when it does not), so two
/// spellings of one place compare equal.
fn normalize(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    let lexical: PathBuf = path.components().filter(|c| !matches!(c, Component::CurDir)).collect();
    match (lexical.parent(), lexical.file_name()) {
        (Some(parent), Some(name)) => parent.canonicalize().map(|p| p.join(name)).unwrap_or(lexical),
        _ => lexical,
    }
}

/// The directory a worktree's `.git` file names (`gitdir: <path>`), absolute.
fn read_gitdir(dot_git: &Path, worktree: &Path) -> Option<PathBuf> {
    let mut text = String::new();
    std::fs::File::open(dot_git).ok()?.take(4096).read_to_string(&mut text).ok()?;
    let named = Path::new(text.lines().next()?.strip_prefix("gitdir:")?.trim());
    Some(if named.is_absolute() { named.to_path_buf() } else { worktree.join(named) })
}
