//! Changing the repository and the remote: staging, the commit, a push or remote delete
//! under a lease, a local branch's deletion, telling why a remote refused, and a ref put
//! back where it was (through libgit2) when a delivery is undone.

use std::ffi::OsString;
use std::path::Path;

use super::message::{short, summary};
use super::policy::{check_ref_name, check_remote, check_sha};
use super::transport::{args, Access, Ran};
use super::{Git, GitError, GitErrorKind, GitOutput, GitResult, DEFAULT_EMAIL, DEFAULT_NAME};

impl Git {
    // Changing

    /// `git add -A`: every change in the worktree, untracked files included, staged.
    pub async fn add_all(&self) -> GitResult<GitOutput> {
        let ran = self.run(Access::Write, &args(["add", "-A"]), None).await?;
        if !ran.out.success() {
            let message = format!("git add failed: {}", summary(&ran.out));
            return Err(self.fail(GitErrorKind::Failed, message, Some(ran.out)));
        }
        Ok(ran.out)
    }

    /// Commits what is staged with `message` (kept as written: lines starting with `#`
    /// stay) and returns the new commit's SHA. `author` is `(name, email)`; without it
    /// git's configured identity is used, and where git has none, Kiln's.
    pub async fn commit(&self, message: &str, author: Option<(&str, &str)>) -> GitResult<(String, GitOutput)> {
        if let Some((name, email)) = author {
            for part in [name, email] {
                if part.trim().is_empty() || part.chars().any(|c| c.is_control() || c == '<' || c == '>') {
                    return Err(self.invalid(format!("the author '{name} <{email}>' is not a valid identity")));
                }
            }
        }
        if message.trim().is_empty() {
            return Err(self.invalid("a commit needs a message".into()));
        }
        // Exit codes, not wording: 0 means nothing staged, 1 means something is.
        let staged = self.run(Access::Read, &args(["diff", "--cached", "--quiet"]), None).await?;
        match staged.out.status {
            Some(0) => {
                return Err(self.fail(
                    GitErrorKind::NothingToCommit,
                    "there is nothing staged to commit".into(),
                    Some(staged.out),
                ))
            }
            Some(1) => {}
            _ => {
                let message = format!("git could not compare the index: {}", summary(&staged.out));
                return Err(self.fail(GitErrorKind::Failed, message, Some(staged.out)));
            }
        }
        let mut a: Vec<OsString> = Vec::new();
        for (key, default) in [("user.name", DEFAULT_NAME), ("user.email", DEFAULT_EMAIL)] {
            if !self.has_config(key).await? {
                a.extend(["-c".into(), format!("{key}={default}").into()]);
            }
        }
        a.extend(args(["commit", "--cleanup=whitespace", "-F", "-"]));
        if let Some((name, email)) = author {
            a.push(format!("--author={name} <{email}>").into());
        }
        let ran = self.run(Access::Write, &a, Some(message.as_bytes().to_vec())).await?;
        if !ran.out.success() {
            let message = format!("git could not commit: {}", summary(&ran.out));
            return Err(self.fail(GitErrorKind::Failed, message, Some(ran.out)));
        }
        let sha = self
            .rev_parse("HEAD")
            .await?
            .ok_or_else(|| self.fail(GitErrorKind::Failed, "the new commit cannot be read back".into(), None))?;
        Ok((sha, ran.out))
    }

    /// Whether git has a non-empty value for `key` (any level: repository, user, system).
    async fn has_config(&self, key: &str) -> GitResult<bool> {
        let ran = self.run(Access::Read, &args(["config", "--get", key]), None).await?;
        Ok(ran.out.success() && !String::from_utf8_lossy(&ran.stdout).trim().is_empty())
    }

    /// Pushes `local_branch` to `remote_branch` on `remote`, replacing it only if it is
    /// still at `expected_remote_sha` (`None`: only if it does not exist). The check and
    /// the update are one step on the remote (`--force-with-lease` with an explicit
    /// expectation), so a branch someone else moved is never overwritten: the push is
    /// refused with `RemoteMoved` and the remote keeps what it had. Pushing exactly what
    /// the remote already has succeeds without changing anything.
    pub async fn push(
        &self,
        remote: &str,
        local_branch: &str,
        remote_branch: &str,
        expected_remote_sha: Option<&str>,
    ) -> GitResult<GitOutput> {
        check_remote(remote).map_err(|m| self.invalid(m))?;
        check_ref_name(local_branch).map_err(|m| self.invalid(format!("the branch name: {m}")))?;
        check_ref_name(remote_branch).map_err(|m| self.invalid(format!("the remote branch name: {m}")))?;
        if let Some(sha) = expected_remote_sha {
            check_sha(sha).map_err(|m| self.invalid(m))?;
        }
        let destination = format!("refs/heads/{remote_branch}");
        let lease = format!("--force-with-lease={destination}:{}", expected_remote_sha.unwrap_or(""));
        let refspec = format!("refs/heads/{local_branch}:{destination}");
        let ran =
            self.run(Access::Remote, &args(["push", "--porcelain", &lease, "--", remote, &refspec]), None).await?;
        if ran.out.success() {
            return Ok(ran.out);
        }
        Err(self.push_failure(remote, remote_branch, expected_remote_sha, ran).await)
    }

    /// Deletes `branch` on `remote` only if it is still at `expected_sha` (a lease, as for
    /// a push): a branch someone else moved since is left alone, with `RemoteMoved`.
    pub async fn delete_remote_branch(&self, remote: &str, branch: &str, expected_sha: &str) -> GitResult<GitOutput> {
        check_remote(remote).map_err(|m| self.invalid(m))?;
        check_ref_name(branch).map_err(|m| self.invalid(format!("the branch name: {m}")))?;
        check_sha(expected_sha).map_err(|m| self.invalid(m))?;
        let destination = format!("refs/heads/{branch}");
        let lease = format!("--force-with-lease={destination}:{expected_sha}");
        let refspec = format!(":{destination}");
        let ran =
            self.run(Access::Remote, &args(["push", "--porcelain", &lease, "--", remote, &refspec]), None).await?;
        if ran.out.success() {
            return Ok(ran.out);
        }
        Err(self.push_failure(remote, branch, Some(expected_sha), ran).await)
    }

    /// Why a push (or remote delete) failed.
    async fn push_failure(&self, remote: &str, branch: &str, expected: Option<&str>, ran: Ran) -> GitError {
        // `--porcelain` marks each refused ref with `!`; these lines are not translated.
        let stdout = String::from_utf8_lossy(&ran.stdout).into_owned();
        let refused: Vec<&str> = stdout.lines().filter(|l| l.starts_with('!')).collect();
        if refused.is_empty() {
            return self.network_error(format!("cannot push to '{remote}'"), ran.out);
        }
        let stale = refused.iter().any(|l| l.contains("(stale info)"));
        // Where the branch really is now, for the message (and to tell a move from a hook).
        let actual = self.remote_branch_sha(remote, branch).await.ok().map(|(sha, _)| sha);
        let moved = stale || matches!(&actual, Some(now) if now.as_deref() != expected);
        if moved {
            let found = match &actual {
                Some(Some(sha)) => format!("it is at {}", short(sha)),
                Some(None) => "it does not exist".into(),
                None => "it has moved".into(),
            };
            let wanted = expected.map(|s| format!("at {}", short(s))).unwrap_or_else(|| "not to exist".into());
            return self.fail(
                GitErrorKind::RemoteMoved,
                format!(
                    "the branch '{branch}' on '{remote}' changed since Kiln last saw it (expected {wanted}; {found}): nothing was pushed, so that work is kept"
                ),
                Some(ran.out),
            );
        }
        let reason = refused.iter().map(|l| l.rsplit('\t').next().unwrap_or(l).trim()).collect::<Vec<_>>().join("; ");
        let message = format!("the remote '{remote}' refused the push to '{branch}': {reason} ({})", summary(&ran.out));
        self.fail(GitErrorKind::PushRejected, message, Some(ran.out))
    }

    /// Deletes the local branch `branch`, merged or not.
    #[cfg(feature = "test-support")]
    pub async fn delete_local_branch(&self, branch: &str) -> GitResult<GitOutput> {
        check_ref_name(branch).map_err(|m| self.invalid(format!("the branch name: {m}")))?;
        let ran = self.run(Access::Write, &args(["branch", "-D", "--", branch]), None).await?;
        if ran.out.success() {
            return Ok(ran.out);
        }
        let exists = self.rev_parse(&format!("refs/heads/{branch}")).await?.is_some();
        let (kind, message) = if exists {
            (GitErrorKind::Failed, format!("git could not delete the branch '{branch}': {}", summary(&ran.out)))
        } else {
            (GitErrorKind::RefNotFound, format!("there is no local branch '{branch}'"))
        };
        Err(self.fail(kind, message, Some(ran.out)))
    }

    /// A failure to reach or read a remote: credentials refused or missing, or anything else.
    pub(super) fn network_error(&self, what: String, out: GitOutput) -> GitError {
        let text = out.output.to_ascii_lowercase();
        // Only the kind depends on these (English) phrases; the message always quotes git.
        let auth = [
            "authentication failed",
            "could not read username",
            "could not read password",
            "terminal prompts disabled",
            "permission denied (publickey",
            "returned error: 401",
            "returned error: 403",
            "invalid username or password",
        ];
        let kind = if auth.iter().any(|p| text.contains(p)) {
            GitErrorKind::AuthenticationFailed
        } else {
            GitErrorKind::RemoteUnreachable
        };
        let message = format!("{what}: {}", summary(&out));
        self.fail(kind, message, Some(out))
    }
}

/// `name` back to `before` (deleted when it did not exist); a line saying what changed.
pub(crate) fn put_back_ref(
    repo: &Path,
    name: &str,
    before: Option<&str>,
) -> std::result::Result<Option<String>, git2::Error> {
    let repo = git2::Repository::open(repo)?;
    let now = repo.find_reference(name).ok().and_then(|r| r.target()).map(|o| o.to_string());
    if now.as_deref() == before {
        return Ok(None);
    }
    match before {
        None => {
            repo.find_reference(name)?.delete()?;
            Ok(Some(format!("removed {name}")))
        }
        Some(sha) => {
            repo.reference(name, git2::Oid::from_str(sha)?, true, "kiln: put back after a failed delivery")?;
            Ok(Some(format!("put {name} back to {sha}")))
        }
    }
}
