//! Reading branches from the git repository a [`crate::RepoConfig::git_dir`] points at
//! (the tests' bare remote), with the `git` CLI and a cleared git environment.

use std::path::Path;
use std::process::Command;

fn git(git_dir: &Path) -> Command {
    let mut command = Command::new("git");
    // A test run from inside a git hook would otherwise aim these at the outer repository.
    for name in ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR"] {
        command.env_remove(name);
    }
    command.arg("--git-dir").arg(git_dir);
    command
}

/// The commit `refs/heads/<branch>` points at, or `None` when there is no such branch.
pub fn branch_sha(git_dir: &Path, branch: &str) -> Option<String> {
    let output = git(git_dir)
        .args(["rev-parse", "--verify", "--quiet"])
        .arg(format!("refs/heads/{branch}^{{commit}}"))
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let sha = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (!sha.is_empty()).then_some(sha)
}

/// Whether `ancestor` is reachable from `descendant` (so a pull request from `ancestor`
/// into `descendant` would have no commits).
pub fn is_ancestor(git_dir: &Path, ancestor: &str, descendant: &str) -> bool {
    git(git_dir)
        .args(["merge-base", "--is-ancestor", ancestor, descendant])
        .status()
        .map(|status| status.success())
        .unwrap_or(false)
}

/// Whether `sha` names a commit in the repository.
pub fn has_commit(git_dir: &Path, sha: &str) -> bool {
    git(git_dir)
        .args(["cat-file", "-e"])
        .arg(format!("{sha}^{{commit}}"))
        .status()
        .map(|status| status.success())
        .unwrap_or(false)
}
