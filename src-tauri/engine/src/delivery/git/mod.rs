//! The git layer of the `git-pr` delivery target: fetch, a temporary worktree, the
//! changed paths, a commit, a push that never overwrites a branch that moved, and the
//! clean-up. It runs the real `git` CLI rather than libgit2 so SSH remotes, credential
//! helpers and the user's agent behave as they do in a terminal, with an allowlisted
//! environment. A token reaches git only through the environment of the one git process
//! that needs it, never an argument or a URL, and every command line, output and message
//! is redacted before it leaves this module.
//!
//! The parts: `transport` starts git (through `kiln_runtime::process`) and shows what it ran;
//! `read`, `worktree` and `change` are the operations, in the order a delivery takes them;
//! `policy` is what a name or address must be before git sees it; `message` words the
//! one-line reasons.

mod change;
mod message;
mod policy;
mod read;
mod transport;
mod worktree;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use kiln_types::error::{ApiError, ErrorCode};

pub(crate) use change::put_back_ref;
pub use kiln_runtime::redact::Redactor;
pub(crate) use read::recent_subjects;
pub use transport::Git;

/// The variable that carries a token to the credential helper. It is set only in the
/// environment of a git process that talks to a remote, and only when a token was given.
pub(crate) const TOKEN_ENV: &str = "KILN_GIT_TOKEN";

/// The committer (and author) used when git has no identity configured at all: a commit
/// must not fail on a fresh machine, and must not invent a name when the user has one.
pub(crate) const DEFAULT_NAME: &str = "Kiln";
pub(crate) const DEFAULT_EMAIL: &str = "kiln@localhost";

/// How long one git command may run before its process group is killed. Long enough
/// for a large push on a slow link; a hung SSH or HTTP connection still ends.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// One git command as the user may see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GitOutput {
    /// The command line, redacted (`git fetch --no-tags -- origin …`). When an operation
    /// ran several commands that matter, they are joined with ` && `.
    pub command: String,
    /// The exit code; `None` when git was killed (a timeout).
    pub status: Option<i32>,
    /// stdout and stderr as they interleaved, redacted, with only the first and last
    /// `process::HEAD_BYTES`/`TAIL_BYTES` kept of a long run.
    pub output: String,
}

impl GitOutput {
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }

    /// This command followed by `next`: the step list shows both as one.
    fn then(self, next: GitOutput) -> GitOutput {
        let output = match (self.output.is_empty(), next.output.is_empty()) {
            (true, _) => next.output,
            (false, true) => self.output,
            (false, false) => {
                format!("{}{}{}", self.output, if self.output.ends_with('\n') { "" } else { "\n" }, next.output)
            }
        };
        GitOutput { command: format!("{} && {}", self.command, next.command), status: next.status, output }
    }
}

/// Why a git operation failed, so the delivery target can tell the cases apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum GitErrorKind {
    /// A branch name, ref, SHA or path that is not acceptable; nothing was run.
    InvalidInput,
    /// `git` could not be started.
    NotInstalled,
    /// The remote does not exist or cannot be read.
    RemoteUnreachable,
    /// The remote wants credentials it did not get, or refused them.
    AuthenticationFailed,
    /// A branch or ref that does not exist (a missing base branch).
    RefNotFound,
    /// A push or delete refused because the remote branch is not where it was expected:
    /// someone else moved (or created, or deleted) it. Nothing was changed remotely.
    RemoteMoved,
    /// A push the remote refused for another reason (a hook, a protected branch).
    PushRejected,
    /// A commit with nothing staged.
    NothingToCommit,
    /// A directory that worktree clean-up will not delete: it is not this repository's.
    NotAWorktree,
    /// A command that ran past its timeout and was killed.
    TimedOut,
    /// Any other failure; the message carries git's own words.
    Failed,
}

/// A failed git operation: its kind, a message for the person reading it (redacted), and
/// the output of the command that failed, when one ran.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct GitError {
    pub kind: GitErrorKind,
    pub message: String,
    pub output: Option<GitOutput>,
}

impl From<GitError> for ApiError {
    // ErrorCode has no git codes yet; the delivery target may add stable ones (e.g. for
    // RemoteMoved). Until then the message, already redacted, says what happened.
    fn from(err: GitError) -> Self {
        let code = match err.kind {
            GitErrorKind::InvalidInput => ErrorCode::InvalidInput,
            GitErrorKind::NotAWorktree => ErrorCode::PathNotAllowed,
            _ => ErrorCode::Internal,
        };
        ApiError::new(code, err.message)
    }
}

pub(crate) type GitResult<T> = std::result::Result<T, GitError>;
