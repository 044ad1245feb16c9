//! An opened workspace: its root, configuration, modules, records and object store.
//! Opening validates everything first, so a bad path or a bad `kiln.toml` changes
//! nothing on disk.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use regex::Regex;

use crate::config::{self, Config};
use crate::ids::SessionId;
use crate::modules::{self, ModuleInfo};
use crate::registry::{Memo, Registry, Sent};
use kiln_records::workspace_lock::{HolderKind, WorkspaceLock};
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::{DiffView, SessionView, WorkspaceView};

/// The directory inside a session's own that holds the copy of its base (`Workspace::baseline_dir`).
pub(crate) const BASELINE_DIR: &str = "baseline";

pub struct Workspace {
    pub root: PathBuf,
    pub config_path: Option<PathBuf>,
    pub config: Config,
    pub id_pattern: Option<Regex>,
    pub modules: Vec<ModuleInfo>,
    /// The git work tree holding the workspace, and the workspace's path inside it.
    pub git: Option<GitHost>,
    /// The records: SQLite beside the workspace, or the team's PostgreSQL.
    pub pool: kiln_records::store::Db,
    /// The command running per session (its setup or a gate) and the messages waiting for
    /// it, to report, stop and wait for them.
    pub busy: crate::busy::Busy,
    /// The work running in the background (chains, setups, planners, deliveries, shots),
    /// owned so shutdown can wait for it; the engine's, shared by every workspace it opens.
    pub background: Arc<crate::background::Background>,
    /// The OpenAI-compatible driver's conversations, with the settings (endpoint, model,
    /// key) they were held under: a turn on other settings starts them afresh.
    pub openai: Mutex<Option<(String, crate::registry::Conversations)>>,
    /// The engine's turn slots (`[session] max_parallel_turns`); the engine hands every
    /// workspace it opens its own, so the limit holds across them.
    pub slots: Arc<crate::slots::Slots>,
    /// The last diff per session, valid while its working copy is unchanged.
    pub diffs: Memo<DiffView>,
    /// The last view of each session sent to the views: one is sent per change.
    pub published: Sent<SessionView>,
    /// Serializes writes to `store.git`.
    pub store_lock: tokio::sync::Mutex<()>,
    /// The running preview per session.
    pub previews: Registry,
    /// The permission requests waiting for the operator, per session.
    pub permissions: crate::permissions::Pending,
    /// The server's mode: a self-hosted workspace runs bring-your-own-key drivers only.
    pub mode: kiln_types::ServeMode,
    /// Whether agents may run commands at all. Always in loopback mode and on the
    /// desktop; in self-hosted mode only when the operator started the server with
    /// `--allow-agent-commands`, since a command is a shell for whoever holds a token.
    pub agent_commands: bool,
    /// Where its records and objects live.
    pub backing: kiln_records::backing::Backing,
    /// The bucket `backing.objects` names, opened (and found to answer) when the
    /// workspace was.
    pub objects: Option<Arc<kiln_records::objects::Bucket>>,
    /// This host, and the sessions other hosts on the team's database run.
    pub hosts: Arc<crate::hosts::Hosts>,
    /// This process's hold on the workspace (`.kiln/engine.lock`), shared by a reopening
    /// of the same workspace and released when the last of them is dropped.
    pub lock: Arc<WorkspaceLock>,
}

/// What an operation works with: the open workspace, and the bus that tells the views of
/// each change it makes. Every function the operation table names takes one.
#[derive(Clone)]
pub(crate) struct Context {
    pub ws: Arc<Workspace>,
    pub events: Arc<crate::events::EventBus>,
}

#[derive(Debug, Clone)]
pub struct GitHost {
    pub workdir: PathBuf,
    /// The workspace root relative to `workdir`: empty, or ending in `/`.
    pub prefix: String,
    /// The object database shared by every worktree of the repository.
    pub objects: PathBuf,
    pub common_dir: PathBuf,
}

impl Workspace {
    /// Opens the workspace at `path` for a process of `kind`. `held` is the lock this
    /// process already holds on the workspace it has open: reopening that workspace keeps
    /// it, any other takes the new workspace's own lock (`WORKSPACE_IN_USE` when another
    /// process has it).
    /// `backing` says where its records and objects live (the default: beside it).
    pub async fn open(
        path: &str,
        kind: HolderKind,
        held: Option<&Arc<WorkspaceLock>>,
        backing: &kiln_records::backing::Backing,
    ) -> Result<Workspace> {
        if path.trim().is_empty() {
            return Err(ApiError::invalid("give the path of the workspace to open"));
        }
        let opened = Path::new(path.trim());
        let opened = opened.canonicalize().map_err(|_| {
            ApiError::new(ErrorCode::WorkspaceNotFound, format!("no directory at `{}`", opened.display()))
        })?;
        if !opened.is_dir() {
            return Err(ApiError::new(
                ErrorCode::WorkspaceNotFound,
                format!("`{}` is not a directory", opened.display()),
            ));
        }
        let (root, config_path) = config::find_root(&opened);
        let config = match &config_path {
            Some(p) => Config::load(p)?,
            None => Config::default(),
        };
        let id_pattern = config.modules.id_pattern.as_deref().map(|p| Regex::new(p).expect("validated when parsed"));
        let modules = modules::discover(&root, &config)?;
        let git = git_host(&root);
        // A bucket that does not answer is refused here, before anything is written.
        let objects = kiln_records::objects::open(backing)?;
        if let Some(bucket) = &objects {
            bucket.probe().await?;
        }

        // Everything is valid: from here on the workspace gains its `.kiln/`.
        let kiln = root.join(".kiln");
        std::fs::create_dir_all(kiln.join("sessions"))?;
        // Before the database: its migrations run under the lock, so two processes started
        // together on a fresh workspace never apply one twice.
        let lock = match held {
            Some(held) if held.guards(&kiln) => held.clone(),
            _ => Arc::new(WorkspaceLock::take(&kiln, kind).await?),
        };
        if let Some(git) = &git {
            exclude_kiln_dir(&git.common_dir)?;
        }
        let pool = kiln_records::store::open(&kiln.join("kiln.db"), backing.database.as_deref()).await?;
        let hosts = Arc::new(crate::hosts::Hosts::open(&kiln, backing.database.is_some())?);
        // Its own slots at its config's limit; an engine hands it the engine's (`api::Engine`).
        let slots = Arc::new(crate::slots::Slots::default());
        slots.set_limit(config.session.parallel_turns(cores()));
        Ok(Workspace {
            root,
            config_path,
            config,
            id_pattern,
            modules,
            git,
            pool,
            busy: Default::default(),
            background: Default::default(),
            openai: Mutex::new(None),
            slots,
            diffs: Default::default(),
            published: Default::default(),
            store_lock: tokio::sync::Mutex::new(()),
            previews: Registry::default(),
            permissions: Default::default(),
            mode: Default::default(),
            agent_commands: true,
            backing: backing.clone(),
            objects,
            hosts,
            lock,
        })
    }

    pub fn view(&self) -> WorkspaceView {
        WorkspaceView {
            root: self.root.display().to_string(),
            name: self.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            is_git: self.git.is_some(),
            config_path: self.config_path.as_ref().map(|p| p.display().to_string()),
            workflow: self.config.workflow(),
            roles: self
                .roles()
                .map(|roles| roles.into_iter().map(|r| kiln_types::RoleSummary { id: r.id, name: r.name }).collect())
                .unwrap_or_default(),
            id_pattern: self.config.modules.id_pattern.clone(),
            modules: self.modules.clone(),
        }
    }

    pub fn kiln_dir(&self) -> PathBuf {
        self.root.join(".kiln")
    }

    pub fn store_path(&self) -> PathBuf {
        self.kiln_dir().join("store.git")
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.kiln_dir().join("sessions")
    }

    /// `.kiln/sessions/<id>`; the id type guarantees it is one plain path segment.
    pub fn session_dir(&self, id: &SessionId) -> PathBuf {
        self.sessions_dir().join(id.as_str())
    }

    /// Where a session's base is copied to compare its failing gates with (`gates::baseline`).
    pub fn baseline_dir(&self, id: &SessionId) -> PathBuf {
        self.session_dir(id).join(BASELINE_DIR)
    }

    pub fn session_workdir(&self, id: &SessionId) -> PathBuf {
        self.session_dir(id).join("workspace")
    }

    pub fn open_store(&self) -> Result<git2::Repository> {
        kiln_records::snapshot::open_store(&self.store_path(), self.git.as_ref().map(|g| g.objects.as_path()))
    }

    /// The roles of this workspace's workflow, its own documents included.
    pub fn roles(&self) -> Result<Vec<crate::roles::Role>> {
        crate::roles::load(&self.root, self.config.workflow())
    }

    pub fn module(&self, id: &str) -> Option<&ModuleInfo> {
        self.modules.iter().find(|m| m.id == id)
    }

    /// Copies `[session] copy` files (ignored, so not in the snapshot) into the working copy.
    /// An entry is a path relative to both roots by the rules of `paths`: never `.kiln`
    /// (Kiln's secret key must not reach an agent) nor `.git`. The source may be a link
    /// (a `.env` kept elsewhere is common); the destination may not lead out of the working
    /// copy, whatever links the materialized files hold.
    pub fn copy_session_files(&self, workdir: &Path) {
        for rel in &self.config.session.copy {
            let to = match kiln_runtime::paths::confine(workdir, rel) {
                Ok(to) => to,
                Err(e) => {
                    tracing::warn!("skipping session copy entry: {}", e.message);
                    continue;
                }
            };
            // The same text passed the rules above: relative, no `..`, `.git` or `.kiln`.
            let from = self.root.join(rel);
            if from.is_file() {
                if let Some(parent) = to.parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                if let Err(e) = std::fs::copy(&from, &to) {
                    tracing::warn!("copying {rel} into the session: {e}");
                }
            }
        }
    }

    pub fn is_running(&self, id: &str) -> bool {
        self.busy.is_busy(id) || self.hosts.running_elsewhere(id)
    }
}

/// The cores this machine offers Kiln, for the defaults that follow them.
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2)
}

fn git_host(root: &Path) -> Option<GitHost> {
    let repo = git2::Repository::discover(root).ok()?;
    let workdir = repo.workdir()?.canonicalize().ok()?;
    let rel = root.strip_prefix(&workdir).ok()?;
    let mut prefix = rel.to_string_lossy().replace('\\', "/");
    if !prefix.is_empty() {
        prefix.push('/');
    }
    let common_dir = repo.commondir().canonicalize().ok()?;
    Some(GitHost { workdir, prefix, objects: common_dir.join("objects"), common_dir })
}

/// Adds `.kiln/` to the repository's `info/exclude` once, so Kiln's state never shows
/// up as untracked in the user's repository.
fn exclude_kiln_dir(common_dir: &Path) -> Result<()> {
    let exclude = common_dir.join("info").join("exclude");
    let current = std::fs::read_to_string(&exclude).unwrap_or_default();
    if current.lines().any(|l| l.trim() == ".kiln/" || l.trim() == ".kiln") {
        return Ok(());
    }
    std::fs::create_dir_all(exclude.parent().unwrap())?;
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# Kiln's sessions, checkpoints and records\n.kiln/\n");
    std::fs::write(&exclude, text)?;
    Ok(())
}
