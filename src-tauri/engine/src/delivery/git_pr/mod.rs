//! The `git-pr` delivery target: lands a session's files on a branch made
//! from a fresh `<remote>/<base>` in a temporary worktree, runs install/enable/typecheck
//! there, holds the change to the guardrail (module directories, lockfiles and, in the
//! direct workflow, the files outside every module the session changed; within the
//! limits) before any commit, commits with the session's title in the repository's own
//! commit style, pushes with a lease that never overwrites a
//! branch that is not this session's, and opens (or updates) the pull request through
//! GitHub's REST API, else `gh`, else a compare link. Every step is reported through a
//! [`StepSink`] with redacted output; the worktree is always removed, and a failed run
//! leaves no branch it made, locally or on the remote.
//!
//! The inputs are plain ([`GitPrInput`]) so the delivery core calls this without coupling:
//! it resolves the session, gates, settings and token, and this module does the git work.

//!
//! The parts: `steps` is the run in order, `context` what the run carries from step to
//! step, `landing` the work in the worktree (files, commands, the lease, the undo),
//! `pull_request` opening or updating the pull request; `policy` is what may be delivered
//! and where a token may go; `message` words the branch, the commit and the pull request;
//! `github` talks to GitHub's API and `gh`; `evidence` puts the preview's before and after
//! screenshots in the pull request.

mod context;
mod evidence;
pub(crate) mod github;
mod landing;
mod message;
mod policy;
mod pull_request;
mod steps;

use std::path::PathBuf;

use kiln_types::{DeliverySettingsView, IssueLink};
use std::time::Duration;

pub(crate) use evidence::{Evidence, EvidenceMode, EvidenceShot};
pub(crate) use message::{branch_name, web_root};
pub use policy::available;
pub(crate) use policy::owner_repo;
pub use steps::deliver;

/// The trailer a Kiln commit carries; a remote branch whose tip has this session's is
/// this session's to update.
pub(crate) const SESSION_TRAILER: &str = "Kiln-Session";

/// The lockfiles a delivery may change besides the module directories.
pub(crate) const DEFAULT_LOCKFILES: &[&str] = &["package-lock.json", "pnpm-lock.yaml", "yarn.lock", "Cargo.lock"];

/// One module of the session being delivered.
#[derive(Debug, Clone)]
pub struct GitPrModule {
    /// The module's id (`@shop/wishlist`): the commit subject names it.
    pub id: String,
    /// Its directory, relative to the workspace (`modules/wishlist`): an allowed prefix.
    pub directory: String,
    /// A module the session created (`kiln: add`), not one it changed (`kiln: update`).
    pub is_new: bool,
    /// The workspace's `enable` command for this module, already filled in; run only for new modules.
    pub enable: Option<String>,
}

/// One row of the gate table.
#[derive(Debug, Clone)]
pub struct GateRow {
    /// `None` for a workspace gate.
    pub module: Option<String>,
    pub gate: String,
    /// `passed`, `failed`, `failing before`, `skipped` or `not configured`.
    pub status: String,
    pub duration_ms: u64,
    /// The verdict in words ("1 new failure: `adds`"); empty for none.
    pub note: String,
}

impl GateRow {
    /// The status with its note, as the table and the commit show it.
    pub fn result(&self) -> String {
        match self.note.trim() {
            "" => self.status.clone(),
            note => format!("{} ({note})", self.status),
        }
    }
}

/// What the pull request (and the commit) say.
#[derive(Debug, Clone, Default)]
pub struct GitPrBody {
    /// The title; `None`: the commit subject (see [`commit_subject_for`]).
    pub title: Option<String>,
    /// A short description of the change (markdown).
    pub what_changed: String,
    pub gates: Vec<GateRow>,
    /// Workspace-relative paths.
    pub added: Vec<String>,
    pub modified: Vec<String>,
    pub removed: Vec<String>,
    /// `(module id, SHA-256 of its specification)`.
    pub spec_hashes: Vec<(String, String)>,
    /// The issue the session started from: the body closes it.
    pub closes: Option<IssueLink>,
    /// Delivered past failing gates: the operator's reason and the blockers it went past.
    pub anyway: Option<(String, Vec<String>)>,
}

/// Everything one git-pr delivery needs, resolved by the delivery core. Its `Debug`
/// never shows the token.
#[derive(Clone)]
pub struct GitPrInput {
    /// The git work tree that holds the workspace (the repository that has the remote).
    pub host_repo: PathBuf,
    /// The workspace's directory inside `host_repo`, relative (`""` when it is the root;
    /// an absolute path under `host_repo` is taken too).
    pub workspace_dir: PathBuf,
    /// Where the temporary worktree goes: `<host>/.kiln/worktrees/<session>` (absolute,
    /// or relative to `host_repo`). Whatever a crash left there is cleaned first.
    pub worktree_dir: PathBuf,
    /// Where `install` and `typecheck` get their home and temporary directory
    /// (`kiln_runtime::sandbox::Scope`): the session's directory; by default beside the worktree.
    pub session_dir: PathBuf,
    /// What those commands get of the user's environment (`kiln.toml [environment]`).
    pub environment: kiln_runtime::sandbox::EnvironmentConfig,
    pub session_id: String,
    /// The files to land: `(workspace-relative path, Some(file in the session's working
    /// copy) | None for a deletion)`.
    pub files: Vec<(String, Option<PathBuf>)>,
    /// The session's modules; the first names the branch.
    pub modules: Vec<GitPrModule>,
    /// Lockfile names allowed to change at the workspace root (see [`DEFAULT_LOCKFILES`]).
    pub lockfiles: Vec<String>,
    /// Direct workflow: the workspace-relative files outside every module that the session
    /// changed (a root lockfile, `CHANGELOG.md`, `.github/…`). The guardrail allows exactly
    /// these besides the module directories and lockfiles; empty in the specs workflow.
    pub root_files: Vec<String>,
    /// The session's title: the commit subject is made from it (else from the brief's first
    /// line), in the base branch's commit style. With neither: `kiln: add|update <module>`.
    pub title: Option<String>,
    /// The session's brief: the commit body carries it.
    pub brief: Option<String>,
    /// The messages of the commits made in the session's own checkout (by the agent or in
    /// a terminal), oldest first: the commit body lists them.
    pub session_commits: Vec<String>,
    pub max_changed_files: usize,
    pub max_new_dependencies: usize,
    /// The packages the session adds that the workspace lacks.
    pub new_dependencies: Vec<String>,
    /// Shell commands run in the worktree's workspace directory; `None`: skipped.
    pub install: Option<String>,
    pub typecheck: Option<String>,
    /// How long one of those commands may run.
    pub command_timeout: Duration,
    pub settings: DeliverySettingsView,
    /// The provider token for `settings.api_url`, opened.
    pub token: Option<String>,
    pub body: GitPrBody,
    /// The before and after screenshots of the preview, and how the pull request carries them.
    pub evidence: Evidence,
    /// Another git (a path from Settings; a test's recording wrapper). `None`: `git` on PATH.
    pub git_program: Option<PathBuf>,
    /// Extra variables for every git process (tests point `HOME` at an empty directory).
    pub git_env: Vec<(String, String)>,
    /// Another `gh`; `None`: `gh` on PATH, when there is one.
    pub gh_program: Option<PathBuf>,
}

impl std::fmt::Debug for GitPrInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitPrInput")
            .field("host_repo", &self.host_repo)
            .field("workspace_dir", &self.workspace_dir)
            .field("worktree_dir", &self.worktree_dir)
            .field("session_id", &self.session_id)
            .field("files", &self.files.len())
            .field("modules", &self.modules)
            .field("settings", &self.settings)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .finish_non_exhaustive()
    }
}

impl GitPrInput {
    /// An input with the defaults (lockfiles, limits, timeout) for the rest to be filled.
    pub fn new(
        host_repo: impl Into<PathBuf>,
        session_id: impl Into<String>,
        settings: DeliverySettingsView,
    ) -> GitPrInput {
        let host_repo = host_repo.into();
        let session_id = session_id.into();
        GitPrInput {
            worktree_dir: host_repo.join(".kiln/worktrees").join(&session_id),
            session_dir: host_repo.join(".kiln/worktrees").join(format!("{session_id}.session")),
            host_repo,
            environment: Default::default(),
            workspace_dir: PathBuf::new(),
            session_id,
            files: Vec::new(),
            modules: Vec::new(),
            lockfiles: DEFAULT_LOCKFILES.iter().map(|s| s.to_string()).collect(),
            root_files: Vec::new(),
            title: None,
            brief: None,
            session_commits: Vec::new(),
            max_changed_files: 50,
            max_new_dependencies: 5,
            new_dependencies: Vec::new(),
            install: None,
            typecheck: None,
            command_timeout: Duration::from_secs(600),
            settings,
            token: None,
            body: GitPrBody::default(),
            evidence: Evidence::default(),
            git_program: None,
            git_env: Vec::new(),
            gh_program: None,
        }
    }
}
