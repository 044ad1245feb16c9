//! What one git-pr run carries from step to step: its input, the branch and worktree it
//! works in, the steps' reporting with every text redacted, and what a failure must put back.
//! Below the steps, so each step's file reads it without reaching back into the run's order.

use std::path::{Path, PathBuf};

use super::message::shown;
use super::GitPrInput;
use crate::delivery::git::{Git, GitError, GitErrorKind, Redactor};
use crate::delivery::StepSink;
use kiln_types::error::{ApiError, ErrorCode};

/// Reports steps with every text redacted.
pub(super) struct Steps<'a> {
    pub(super) sink: &'a dyn StepSink,
    pub(super) redactor: Redactor,
}

impl Steps<'_> {
    pub(super) fn start(&self, id: &str, title: &str, module: Option<&str>) {
        self.sink.start(id, &self.redactor.redact(title), module);
    }
    pub(super) fn pass(&self, id: &str, output: &str) {
        self.sink.pass(id, &self.redactor.redact(output));
    }
    pub(super) fn fail(&self, id: &str, output: &str) {
        self.sink.fail(id, &self.redactor.redact(output));
    }
    pub(super) fn skip(&self, id: &str, why: &str) {
        self.sink.skip(id, &self.redactor.redact(why));
    }
    /// Fails step `id` with `output` and returns the error to stop with.
    pub(super) fn stop(&self, id: &str, code: ErrorCode, message: &str, output: &str) -> ApiError {
        let message = self.redactor.redact(message);
        let shown =
            if output.trim().is_empty() { message.clone() } else { format!("{message}\n\n{}", output.trim_end()) };
        self.fail(id, &shown);
        ApiError::new(code, message)
    }
    /// A git failure at step `id`.
    pub(super) fn git_stop(&self, id: &str, err: GitError) -> ApiError {
        let code = match err.kind {
            GitErrorKind::RemoteMoved => ErrorCode::BranchMoved,
            GitErrorKind::InvalidInput => ErrorCode::InvalidInput,
            GitErrorKind::NotAWorktree => ErrorCode::PathNotAllowed,
            GitErrorKind::RemoteUnreachable
            | GitErrorKind::AuthenticationFailed
            | GitErrorKind::RefNotFound
            | GitErrorKind::NotInstalled => ErrorCode::TargetUnavailable,
            _ => ErrorCode::Internal,
        };
        let output = err.output.as_ref().map(shown).unwrap_or_default();
        self.stop(id, code, &err.message, &output)
    }
}

/// What a run changed that a failure must put back.
#[derive(Default)]
pub(super) struct Undo {
    /// The local branch before the run (a previous delivery's), if it existed.
    pub(super) local_before: Option<String>,
    /// The remote-tracking ref before the run.
    pub(super) tracking_before: Option<String>,
    /// The run reached the worktree step (so a local branch may exist).
    pub(super) branch_touched: bool,
}

pub(super) struct Ctx<'a> {
    pub(super) input: &'a GitPrInput,
    pub(super) steps: Steps<'a>,
    pub(super) branch: String,
    pub(super) base_ref: String,
    pub(super) worktree: PathBuf,
    pub(super) workspace_rel: PathBuf,
    pub(super) owner: String,
    pub(super) repo: String,
    pub(super) token_for_git: Option<String>,
}

impl Ctx<'_> {
    pub(super) fn git(&self, dir: &Path) -> Git {
        let mut git = Git::new(dir).with_redactor(&self.steps.redactor);
        if let Some(program) = &self.input.git_program {
            git = git.with_program(program);
        }
        for (k, v) in &self.input.git_env {
            git = git.with_env(k, v);
        }
        if let (Some(token), Some(url)) = (&self.input.token, &self.token_for_git) {
            // Checked before the run: bound to the remote's own origin only.
            if let Ok(with) = git.clone().with_token(token, url) {
                git = with;
            }
        }
        git
    }

    pub(super) fn host(&self) -> Git {
        self.git(&self.input.host_repo)
    }

    pub(super) fn wt(&self) -> Git {
        self.git(&self.worktree)
    }

    pub(super) fn wt_workspace(&self) -> PathBuf {
        self.worktree.join(&self.workspace_rel)
    }

    /// A workspace-relative path as a repository-relative one (git's paths).
    pub(super) fn repo_path(&self, rel: &str) -> String {
        let joined = self.workspace_rel.join(rel);
        joined.to_string_lossy().trim_start_matches("./").to_string()
    }
}
