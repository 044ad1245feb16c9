//! Reading a repository and its remote: what a revision names, a fetch, a remote
//! branch's SHA, the worktree's status and the paths it changes against a base, and
//! the recent commit subjects (read through libgit2: no process for a history walk).

use std::path::Path;

use super::message::summary;
use super::policy::{check_ref_name, check_remote, check_rev};
use super::transport::{args, Access};
use super::{Git, GitError, GitErrorKind, GitOutput, GitResult};

impl Git {
    // Reading

    /// The commit `rev` names, if it names one.
    pub async fn rev_parse(&self, rev: &str) -> GitResult<Option<String>> {
        check_rev(rev).map_err(|m| self.invalid(m))?;
        let ran = self
            .run(
                Access::Read,
                &args(["rev-parse", "--verify", "--quiet", "--end-of-options", &format!("{rev}^{{commit}}")]),
                None,
            )
            .await?;
        Ok(ran.out.success().then(|| String::from_utf8_lossy(&ran.stdout).trim().to_string()))
    }

    /// Fetches `branch` from `remote` (a configured remote's name) into
    /// `refs/remotes/<remote>/<branch>`, forced: it mirrors the remote.
    pub async fn fetch(&self, remote: &str, branch: &str) -> GitResult<GitOutput> {
        check_ref_name(remote).map_err(|m| self.invalid(format!("the remote name: {m}")))?;
        check_ref_name(branch).map_err(|m| self.invalid(format!("the branch name: {m}")))?;
        let refspec = format!("+refs/heads/{branch}:refs/remotes/{remote}/{branch}");
        let ran = self.run(Access::Remote, &args(["fetch", "--no-tags", "--", remote, &refspec]), None).await?;
        if ran.out.success() {
            return Ok(ran.out);
        }
        // ls-remote tells a missing branch from an unreadable remote without reading
        // git's (translated) wording.
        match self.remote_branch_sha(remote, branch).await {
            Ok((None, _)) => Err(self.fail(
                GitErrorKind::RefNotFound,
                format!("the remote '{remote}' has no branch '{branch}'"),
                Some(ran.out),
            )),
            Err(e) => Err(GitError { output: Some(ran.out), ..e }),
            Ok((Some(_), _)) => {
                let message = format!("fetching '{branch}' from '{remote}' failed: {}", summary(&ran.out));
                Err(self.fail(GitErrorKind::Failed, message, Some(ran.out)))
            }
        }
    }

    /// The SHA of `branch` on `remote` (a name, URL or path), or `None` when the remote has
    /// no such branch. Asks the remote itself (`ls-remote`), not a local copy.
    pub async fn remote_branch_sha(&self, remote: &str, branch: &str) -> GitResult<(Option<String>, GitOutput)> {
        check_remote(remote).map_err(|m| self.invalid(m))?;
        check_ref_name(branch).map_err(|m| self.invalid(format!("the branch name: {m}")))?;
        let wanted = format!("refs/heads/{branch}");
        let ran = self.run(Access::Remote, &args(["ls-remote", "--", remote, &wanted]), None).await?;
        if !ran.out.success() {
            return Err(self.network_error(format!("cannot read the remote '{remote}'"), ran.out));
        }
        // ls-remote matches patterns by their tail: keep the exact ref only.
        let sha = String::from_utf8_lossy(&ran.stdout).lines().find_map(|line| {
            let (sha, name) = line.split_once('\t')?;
            (name == wanted).then(|| sha.to_string())
        });
        Ok((sha, ran.out))
    }

    /// `git status --porcelain`: `(XY, path)` for every changed or untracked file (a rename
    /// lists its new path).
    pub async fn status_porcelain(&self) -> GitResult<(Vec<(String, String)>, GitOutput)> {
        let ran =
            self.run(Access::Read, &args(["status", "--porcelain=v1", "-z", "--untracked-files=all"]), None).await?;
        if !ran.out.success() {
            let message = format!("git status failed in {}: {}", self.dir.display(), summary(&ran.out));
            return Err(self.fail(GitErrorKind::Failed, message, Some(ran.out)));
        }
        let mut entries = Vec::new();
        let mut records = ran.stdout.split(|&b| b == 0).filter(|r| !r.is_empty());
        while let Some(record) = records.next() {
            if record.len() < 4 {
                continue;
            }
            let code = String::from_utf8_lossy(&record[..2]).into_owned();
            let path = String::from_utf8_lossy(&record[3..]).into_owned();
            // A rename or copy is followed by its original path, as a record of its own.
            if code.starts_with('R') || code.starts_with('C') {
                records.next();
            }
            entries.push((code, path));
        }
        Ok((entries, ran.out))
    }

    /// Every path this worktree changes relative to its merge base with `base_ref`: `git
    /// add -A` first, so untracked files count, then the index against the merge base.
    /// `(status, path)` with status `A`, `M`, `D` or `T`; a rename is a `D` and an `A`, so
    /// a guardrail sees both paths. Committed and staged changes both count.
    pub async fn changed_paths(&self, base_ref: &str) -> GitResult<(Vec<(String, String)>, GitOutput)> {
        check_rev(base_ref).map_err(|m| self.invalid(m))?;
        let Some(base) = self.rev_parse(base_ref).await? else {
            return Err(self.fail(
                GitErrorKind::RefNotFound,
                format!("there is no commit '{base_ref}' in {}", self.dir.display()),
                None,
            ));
        };
        let added = self.add_all().await?;
        let merge_base = self.run(Access::Read, &args(["merge-base", "HEAD", &base]), None).await?;
        if !merge_base.out.success() {
            let out = added.then(merge_base.out);
            return Err(self.fail(
                GitErrorKind::Failed,
                format!("HEAD and '{base_ref}' have no commit in common"),
                Some(out),
            ));
        }
        let merge_base_sha = String::from_utf8_lossy(&merge_base.stdout).trim().to_string();
        let diff = self
            .run(
                Access::Read,
                &args(["diff", "--cached", "--name-status", "--no-renames", "-z", &merge_base_sha]),
                None,
            )
            .await?;
        let out = added.then(merge_base.out).then(diff.out.clone());
        if !diff.out.success() {
            return Err(self.fail(GitErrorKind::Failed, format!("git diff failed: {}", summary(&diff.out)), Some(out)));
        }
        let mut fields = diff.stdout.split(|&b| b == 0).filter(|f| !f.is_empty());
        let mut paths = Vec::new();
        while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
            paths.push((String::from_utf8_lossy(status).into_owned(), String::from_utf8_lossy(path).into_owned()));
        }
        Ok((paths, out))
    }
}

/// The recent commit subjects of `rev` in `repo`, most recent first (at most 20).
pub(crate) fn recent_subjects(repo: &Path, rev: &str) -> Vec<String> {
    let read = || -> std::result::Result<Vec<String>, git2::Error> {
        let repo = git2::Repository::open(repo)?;
        let mut walk = repo.revwalk()?;
        walk.push(repo.revparse_single(rev)?.peel_to_commit()?.id())?;
        let mut out = Vec::new();
        for oid in walk.take(40) {
            let commit = repo.find_commit(oid?)?;
            if commit.parent_count() > 1 {
                continue;
            }
            out.push(commit.summary().unwrap_or_default().to_string());
            if out.len() == 20 {
                break;
            }
        }
        Ok(out)
    };
    read().unwrap_or_default()
}
