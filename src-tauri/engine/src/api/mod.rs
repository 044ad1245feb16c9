//! The engine's one API. Every operation is an async method of `Engine` named in the
//! operation table (`kiln-types`' `operations.rs`, `for_each_operation!`); the desktop app turns that table
//! into Tauri commands and `kiln serve` into `POST /api/<command>` routes, so the two cannot
//! drift.

mod activity;
mod check;
mod hosts;
mod recovery;
mod settings;

pub use activity::Activity;
pub use check::{check_backing, Finding};

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use serde::de::DeserializeOwned;

use crate::events::{EventBus, Subscription};
use crate::session;
use crate::workspace::Workspace;
use crate::workspace_lock::HolderKind;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

macro_rules! define_dispatch {
    ($($(#[doc = $doc:literal])* $name:ident($args:ty) -> $ret:ty $(, body_limit: $limit:expr)?;)*) => {
        /// The name of every operation, as commands and routes spell it.
        pub const OPERATIONS: &[&str] = &[$(stringify!($name)),*];

        /// The largest request body `command` takes when its table line sets one (an HTTP
        /// transport's concern, kept in the table so an operation's line says everything).
        pub fn body_limit(command: &str) -> Option<usize> {
            match command {
                $($(stringify!($name) => Some($limit),)?)*
                _ => None,
            }
        }

        impl Engine {
            /// Runs an operation by name with JSON arguments on this host (`dispatch` routes
            /// it to a session's owner first).
            pub(crate) async fn dispatch_here(&self, command: &str, args: serde_json::Value) -> Result<serde_json::Value> {
                match command {
                    $(stringify!($name) => {
                        let args: $args = parse_args(command, args)?;
                        let out: $ret = self.$name(args).await?;
                        serde_json::to_value(out).map_err(|e| ApiError::internal("encoding the result", e))
                    })*
                    _ => Err(ApiError::new(ErrorCode::UnknownCommand, format!("there is no operation `{command}`"))),
                }
            }
        }
    };
}

kiln_types::for_each_operation!(define_dispatch);

fn parse_args<T: DeserializeOwned>(command: &str, args: serde_json::Value) -> Result<T> {
    let args = if args.is_null() { serde_json::json!({}) } else { args };
    serde_json::from_value(args).map_err(|e| ApiError::invalid(format!("arguments of `{command}`: {e}")))
}

pub struct EngineOptions {
    /// The app's config directory: Kiln's own state, which the commands sessions run may not
    /// read (see `sandbox::hidden`).
    pub config_dir: PathBuf,
    pub transport: Transport,
    /// What the server trusts; decides, among other things, which drivers are offered.
    pub mode: ServeMode,
    /// Self-hosted only (`kiln serve --allow-agent-commands`): let agents run commands,
    /// which makes an access token worth a shell on the server. Ignored in loopback mode
    /// and on the desktop, where they always may.
    pub allow_agent_commands: bool,
    /// Self-hosted only (`kiln serve --allow-terminals`): offer shell terminals, which make
    /// an access token worth a shell on the server (confined to a session). Ignored in
    /// loopback mode and on the desktop, where terminals are always offered.
    pub allow_terminals: bool,
}

/// Where the workspaces opened recently are kept, newest first. The app keeps them in a file
/// of its config directory (`src-tauri/src/recent.rs`); an engine given none keeps them in
/// memory for its life. The engine decides what the list holds; this only stores it.
pub trait RecentWorkspaces: Send + Sync {
    fn load(&self) -> Vec<String>;
    fn store(&self, recent: &[String]);
}

/// The list for an engine that was given no store: this process's opens only.
#[derive(Default)]
struct RememberedInMemory(std::sync::Mutex<Vec<String>>);

impl RecentWorkspaces for RememberedInMemory {
    fn load(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    fn store(&self, recent: &[String]) {
        *self.0.lock().unwrap() = recent.to_vec();
    }
}

pub struct Engine {
    options: EngineOptions,
    recent: Arc<dyn RecentWorkspaces>,
    workspace: RwLock<Option<Arc<Workspace>>>,
    events: Arc<EventBus>,
    /// What this process is, as a workspace's lock names it to another process.
    holder: HolderKind,
    /// Every session's terminals; the engine's, so a workspace reopened keeps them.
    terminals: crate::terminal::Terminals,
    /// The turn slots every workspace this engine opens shares (`[session] max_parallel_turns`).
    slots: Arc<crate::slots::Slots>,
    /// Where the workspaces it opens keep their records and objects (`backed_by`).
    backing: crate::backing::Backing,
    /// This host's part among the hosts of a team's database (`join_team`).
    team: std::sync::OnceLock<Arc<hosts::Team>>,
}

/// How many recent workspaces the list keeps.
const RECENT_MAX: usize = 10;

impl Engine {
    pub fn new(options: EngineOptions) -> Engine {
        let holder = match options.transport {
            Transport::Desktop => HolderKind::Desktop,
            Transport::Serve => HolderKind::Serve,
        };
        Engine {
            options,
            recent: Arc::new(RememberedInMemory::default()),
            workspace: RwLock::new(None),
            events: Arc::new(EventBus::default()),
            holder,
            terminals: crate::terminal::Terminals::default(),
            slots: Default::default(),
            backing: Default::default(),
            team: Default::default(),
        }
    }

    /// The same engine, keeping its workspaces' records and objects where `backing` says
    /// (`kiln serve --database … --objects …`) instead of beside them.
    pub fn backed_by(mut self, backing: crate::backing::Backing) -> Engine {
        self.backing = backing;
        self
    }

    /// The same engine, keeping its recent workspaces in `recent` (the app's file).
    pub fn remembering_in(mut self, recent: Arc<dyn RecentWorkspaces>) -> Engine {
        self.recent = recent;
        self
    }

    /// Whether agents may run commands in this engine's workspaces (see
    /// `EngineOptions::allow_agent_commands`).
    fn agent_commands(&self) -> bool {
        self.options.mode != ServeMode::SelfHosted || self.options.allow_agent_commands
    }

    /// What this engine offers of terminals (see `EngineOptions::allow_terminals`): the
    /// agents' CLIs never in self-hosted mode, as they carry the operator's login.
    fn terminal_offer(&self) -> crate::terminal::Offer {
        let self_hosted = self.options.mode == ServeMode::SelfHosted;
        crate::terminal::Offer { terminals: !self_hosted || self.options.allow_terminals, agents: !self_hosted }
    }

    /// A view's hold on a terminal's output: the replay of what it kept, then its output as
    /// it comes, then its exit (`TerminalAttachment::next`). Not an operation: the desktop's
    /// `attach_terminal` command and `GET /api/terminal_stream` stream it.
    pub fn attach_terminal(&self, terminal_id: &str) -> Result<crate::terminal::TerminalAttachment> {
        self.terminals.attach(terminal_id)
    }

    /// The same engine, naming itself `kind` in the workspace lock (`kiln session` runs
    /// the serve transport but is a command, not a server).
    pub fn held_by(mut self, kind: HolderKind) -> Engine {
        self.holder = kind;
        self
    }

    /// Stops everything the open workspace runs (turns, planners, setups), each with its
    /// process group, so nothing outlives Kiln.
    pub async fn shutdown(&self) {
        let Ok(ws) = self.workspace() else { return };
        for running in [ws.turns.all(), ws.planning.all()].concat() {
            running.stop(&self.events).await;
        }
        for running in ws.running.lock().unwrap().values() {
            running.kill();
        }
        crate::preview::stop_all(&ws, &self.events).await;
        self.terminals.stop_all().await;
        self.leave_team().await;
    }

    pub fn subscribe(&self, since: Option<u64>) -> Subscription {
        self.events.subscribe(since)
    }

    pub fn events(&self) -> &Arc<EventBus> {
        &self.events
    }

    /// The open workspace, or `WORKSPACE_NOT_OPEN`.
    pub fn workspace(&self) -> Result<Arc<Workspace>> {
        self.workspace
            .read()
            .unwrap()
            .clone()
            .ok_or_else(|| ApiError::new(ErrorCode::WorkspaceNotOpen, "open a workspace first"))
    }

    fn recent(&self) -> Vec<String> {
        self.recent.load()
    }

    fn remember(&self, root: &str) {
        let mut recent = self.recent();
        recent.retain(|r| r != root);
        recent.insert(0, root.to_string());
        recent.truncate(RECENT_MAX);
        self.recent.store(&recent);
    }

    /// Gives a workspace being opened the engine's turn slots, at the limit its config sets,
    /// so the limit holds for every turn of the engine.
    fn share_slots(&self, opened: &mut Workspace) {
        self.slots.set_limit(opened.config.session.parallel_turns(crate::workspace::cores()));
        opened.slots = self.slots.clone();
    }

    /// Before an operation works on a session: its working copy is checked whole, and
    /// rebuilt when it is not (`recovery::ready`).
    async fn ready(&self, session_id: &str) -> Result<()> {
        recovery::ready(&self.workspace()?, &self.events, session_id).await
    }

    // ---- operations (one per line of the table in `kiln-types`' `operations.rs`) ----

    pub async fn get_state(&self, _: EmptyArgs) -> Result<AppState> {
        Ok(AppState {
            version: env!("CARGO_PKG_VERSION").to_string(),
            transport: self.options.transport,
            mode: self.options.mode,
            connected: None,
            workspace: self.workspace.read().unwrap().as_ref().map(|w| w.view()),
            // The operator's other projects are none of a remote user's business.
            recent_workspaces: if self.options.mode == ServeMode::SelfHosted { Vec::new() } else { self.recent() },
            terminals: self.terminal_offer().terminals,
            agent_terminals: self.terminal_offer().agents,
        })
    }

    pub async fn open_workspace(&self, args: OpenWorkspaceArgs) -> Result<WorkspaceView> {
        if self.options.mode == ServeMode::SelfHosted {
            // A self-hosted server serves the one workspace it was started with; opening
            // another would hand a remote user any directory of the host.
            let current = self.workspace.read().unwrap().clone();
            if let Some(current) = current {
                let asked = std::path::Path::new(args.path.trim()).canonicalize().ok();
                if asked.as_deref() != Some(current.root.as_path()) {
                    return Err(ApiError::new(
                        ErrorCode::NotAllowedInMode,
                        "a self-hosted server serves only the workspace it was started with",
                    ));
                }
            }
        }
        let current = self.workspace.read().unwrap().clone();
        if let (Some(_), Some(current)) = (&self.backing.database, &current) {
            // A team's database holds one workspace's records: another workspace's would mix in.
            let asked = std::path::Path::new(args.path.trim()).canonicalize().ok();
            if asked.as_deref() != Some(current.root.as_path()) {
                return Err(ApiError::new(
                    ErrorCode::NotAllowedInMode,
                    "a server on a team database (--database) serves only the workspace it opened first",
                ));
            }
        }
        // Reopening the open workspace keeps this process's lock on it; another workspace
        // takes its own, and the one open now lets its lock go once nothing of it is left.
        let mut opened =
            Workspace::open(&args.path, self.holder, current.as_ref().map(|c| &c.lock), &self.backing).await?;
        opened.mode = self.options.mode;
        opened.agent_commands = self.agent_commands();
        self.share_slots(&mut opened);
        let (ws, fresh) = match current {
            // Opening the open workspace again keeps it, and the turns it runs.
            Some(current) if current.root == opened.root => (current, None),
            _ => {
                // No turn survives the process that ran it: one still marked running
                // when this process opens the workspace was cut short. On a team's
                // database, the sessions another host holds are that host's (or, when it
                // stopped, the one taking them over's: `hosts`).
                let elsewhere = hosts::leased_elsewhere(&opened).await?;
                let cut = crate::recover::interrupted::Interrupted::read(&opened.pool).await?;
                let at = crate::clock::now();
                let stranded = crate::review_comments::STRANDED;
                let mine: Vec<Option<String>> = if elsewhere.is_empty() {
                    vec![None]
                } else {
                    let all = crate::store::sessions::not_deleted(&opened.pool).await?;
                    all.into_iter().map(|(id, _)| id).filter(|id| !elsewhere.contains(id)).map(Some).collect()
                };
                for only in mine.iter().map(Option::as_deref) {
                    crate::store::turns::close_orphans(&opened.pool, &at, only).await?;
                    // Nor does the turn review comments were sent with: they are open again.
                    crate::store::review_comments::reopen_stranded(&opened.pool, stranded, &at, only).await?;
                }
                settings::hold_secrets(&opened).await;
                (Arc::new(opened), Some((cut, elsewhere)))
            }
        };
        if let Some((cut, elsewhere)) = fresh {
            // What Kiln stopping cut short is explained, and every working copy checked.
            recovery::at_open(&ws, &self.events, cut, &elsewhere).await?;
        }
        let view = ws.view();
        self.remember(&view.root);
        // The commands sessions run may not read Kiln's own state (see `sandbox::hidden`).
        crate::sandbox::hidden::hide(&self.options.config_dir);
        crate::sandbox::hidden::hide(&ws.kiln_dir());
        let root = ws.root.clone();
        let previous = self.workspace.write().unwrap().replace(ws);
        // The working copies of a workspace no longer open are watched no more.
        if let Some(previous) = previous.filter(|p| p.root != root) {
            crate::watch::stop_under(&previous.sessions_dir());
        }
        // The terminals of the workspace open before work on code no longer shown.
        self.terminals.stop_other_workspaces(&root).await;
        self.events.emit(EventBody::Workspace { workspace: view.clone() });
        Ok(view)
    }

    pub async fn list_sessions(&self, args: ListSessionsArgs) -> Result<Vec<SessionView>> {
        session::list(&*self.workspace()?, args.include_archived.unwrap_or(false)).await
    }

    pub async fn get_session(&self, args: SessionIdArgs) -> Result<SessionView> {
        let id = crate::ids::SessionId::parse(&args.session_id)?;
        session::view(&*self.workspace()?, &id).await
    }

    pub async fn create_session(&self, mut args: CreateSessionArgs) -> Result<SessionView> {
        let ws = self.workspace()?;
        // An issue is read (and every refusal made) before anything of the session exists.
        let Some(reference) = args.issue.take().filter(|reference| !reference.trim().is_empty()) else {
            return crate::chain::create(&ws, &self.events, args).await;
        };
        let fetched = crate::delivery::issues::fetch(&ws, &reference, &args.brief).await?;
        args.brief = fetched.brief;
        if args.title.as_deref().is_none_or(|title| title.trim().is_empty()) {
            args.title = Some(crate::chain::title_from(&fetched.title));
        }
        crate::chain::create_from(&ws, &self.events, args, Some(fetched.link)).await
    }

    pub async fn get_transcript(&self, args: GetTranscriptArgs) -> Result<Vec<TranscriptEntry>> {
        session::get_transcript(&*self.workspace()?, args).await
    }

    pub async fn add_module(&self, args: AddModuleArgs) -> Result<SessionView> {
        self.ready(&args.session_id).await?;
        session::add_module(&*self.workspace()?, &self.events, args).await
    }

    pub async fn archive_session(&self, args: StopArgs) -> Result<SessionView> {
        let view = session::archive(&*self.workspace()?, &self.events, args).await?;
        self.terminals.stop_session(&view.id).await;
        Ok(view)
    }

    /// Un-archives (or un-rejects) a session; its working copy is checked once it is open
    /// again, so a copy the clean-up removed comes back with its setup run.
    pub async fn restore_session(&self, args: SessionIdArgs) -> Result<SessionView> {
        let id = args.session_id.clone();
        session::restore(&*self.workspace()?, &self.events, args).await?;
        self.ready(&id).await?;
        let id = crate::ids::SessionId::parse(&id)?;
        session::publish(&*self.workspace()?, &self.events, &id).await
    }

    pub async fn reject_session(&self, args: StopArgs) -> Result<SessionView> {
        let view = session::reject(&*self.workspace()?, &self.events, args).await?;
        self.terminals.stop_session(&view.id).await;
        Ok(view)
    }

    pub async fn delete_session(&self, args: DeleteSessionArgs) -> Result<Option<SessionView>> {
        let session_id = args.session_id.clone();
        let view = session::delete(&*self.workspace()?, &self.events, args).await?;
        // Parsed by the delete, which succeeded: the terminals of that session stop.
        if let Ok(id) = crate::ids::SessionId::parse(&session_id) {
            self.terminals.stop_session(id.as_str()).await;
        }
        Ok(view)
    }

    pub async fn send_message(&self, args: SendMessageArgs) -> Result<SessionView> {
        self.ready(&args.session_id).await?;
        crate::chain::send_message(&self.workspace()?, &self.events, args).await
    }

    pub async fn stop_turn(&self, args: SessionIdArgs) -> Result<SessionView> {
        crate::chain::stop_turn(&self.workspace()?, &self.events, args).await
    }

    /// Runs again the turn that blocked the session, as it ran.
    pub async fn retry_turn(&self, args: SessionIdArgs) -> Result<SessionView> {
        self.ready(&args.session_id).await?;
        crate::chain::retry_turn(&self.workspace()?, &self.events, args).await
    }

    /// Runs the session's failed setup again.
    pub async fn retry_setup(&self, args: SessionIdArgs) -> Result<SessionView> {
        self.ready(&args.session_id).await?;
        crate::chain::start::retry_setup(&self.workspace()?, &self.events, args).await
    }

    pub async fn approve_spec(&self, args: ApproveSpecArgs) -> Result<SessionView> {
        self.ready(&args.session_id).await?;
        crate::chain::approve_spec(&self.workspace()?, &self.events, args).await
    }

    pub async fn add_attachment(&self, args: AddAttachmentArgs) -> Result<AttachmentView> {
        self.ready(&args.session_id).await?;
        crate::attach::add(&*self.workspace()?, &self.events, args).await
    }

    pub async fn remove_attachment(&self, args: RemoveAttachmentArgs) -> Result<SessionView> {
        crate::attach::remove(&*self.workspace()?, &self.events, args).await
    }

    pub async fn update_session(&self, args: UpdateSessionArgs) -> Result<SessionView> {
        session::update(&*self.workspace()?, &self.events, args).await
    }

    /// Tokens and cost of every turn in the workspace, in total and per role.
    pub async fn workspace_usage(&self, _: EmptyArgs) -> Result<UsageView> {
        crate::store::turns::usage(&self.workspace()?.pool, None).await
    }

    /// Starts a read-only review turn of a module (auto-review runs one by itself).
    pub async fn review_module(&self, args: ModuleArgs) -> Result<SessionView> {
        self.ready(&args.session_id).await?;
        crate::chain::review_module(&self.workspace()?, &self.events, args).await
    }

    /// A session's preview as it stands.
    pub async fn get_preview(&self, args: SessionIdArgs) -> Result<PreviewView> {
        let id = crate::ids::SessionId::parse(&args.session_id)?;
        crate::preview::get(&*self.workspace()?, &id).await
    }

    /// Starts the session's preview (a no-op when it runs) and its gateway.
    pub async fn start_preview(&self, args: SessionIdArgs) -> Result<PreviewView> {
        self.ready(&args.session_id).await?;
        let id = crate::ids::SessionId::parse(&args.session_id)?;
        crate::preview::start(&self.workspace()?, &self.events, &id).await
    }

    pub async fn stop_preview(&self, args: SessionIdArgs) -> Result<PreviewView> {
        let id = crate::ids::SessionId::parse(&args.session_id)?;
        crate::preview::stop(&self.workspace()?, &self.events, &id).await
    }

    /// Stops it and starts it again, crashed or not, behind a fresh gateway.
    pub async fn restart_preview(&self, args: SessionIdArgs) -> Result<PreviewView> {
        self.ready(&args.session_id).await?;
        let id = crate::ids::SessionId::parse(&args.session_id)?;
        crate::preview::restart(&self.workspace()?, &self.events, &id).await
    }

    /// Captures the session's preview (the page, an element or a region) and keeps it.
    pub async fn capture_preview(&self, args: CapturePreviewArgs) -> Result<ScreenshotView> {
        self.ready(&args.session_id).await?;
        crate::preview::shots::capture_preview(&self.workspace()?, &self.events, args).await
    }

    pub async fn get_screenshot(&self, args: ScreenshotArgs) -> Result<ScreenshotImage> {
        crate::preview::shots::image(&*self.workspace()?, args).await
    }

    /// Each module's changes against its base, from the cache while the working copy is unchanged.
    pub async fn get_diff(&self, args: GetDiffArgs) -> Result<DiffView> {
        self.ready(&args.session_id).await?;
        crate::diff::get(&self.workspace()?, args).await
    }

    pub async fn restore_checkpoint(&self, args: RestoreCheckpointArgs) -> Result<SessionView> {
        self.ready(&args.session_id).await?;
        crate::checkpoint::restore(&*self.workspace()?, &self.events, args).await
    }

    pub async fn update_from_workspace(&self, args: SessionIdArgs) -> Result<SessionView> {
        self.ready(&args.session_id).await?;
        crate::update::update_from_workspace(&self.workspace()?, &self.events, args).await
    }

    pub async fn get_conflicts(&self, args: SessionIdArgs) -> Result<ConflictsView> {
        crate::update::resolve::get(&*self.workspace()?, args).await
    }

    pub async fn resolve_conflict(&self, args: ResolveConflictArgs) -> Result<ConflictsView> {
        self.ready(&args.session_id).await?;
        crate::update::resolve::resolve(&self.workspace()?, &self.events, args).await
    }

    pub async fn get_gates(&self, args: SessionIdArgs) -> Result<Vec<GateResultView>> {
        crate::gates::latest(&*self.workspace()?, args).await
    }

    pub async fn check_modules(&self, args: SessionIdArgs) -> Result<Vec<GateResultView>> {
        self.ready(&args.session_id).await?;
        crate::gates::check_modules(&self.workspace()?, &self.events, args).await
    }

    pub async fn get_spec(&self, args: ModuleArgs) -> Result<SpecView> {
        crate::chain::get_spec(&*self.workspace()?, args).await
    }

    pub async fn save_spec(&self, args: SaveSpecArgs) -> Result<SpecView> {
        crate::chain::save_spec(&*self.workspace()?, &self.events, args).await
    }

    /// What delivering the session to a target would do, with its blockers and `plan_id`.
    pub async fn plan_delivery(&self, args: PlanDeliveryArgs) -> Result<DeliveryPlan> {
        self.ready(&args.session_id).await?;
        crate::delivery::run::plan_delivery(&self.workspace()?, args).await
    }

    /// Starts a confirmed delivery in the background; its steps arrive as `Delivery` events.
    pub async fn deliver(&self, args: DeliverArgs) -> Result<DeliveryRun> {
        self.ready(&args.session_id).await?;
        crate::delivery::run::deliver(&self.workspace()?, &self.events, args).await
    }

    /// The session's latest delivery run.
    pub async fn get_delivery(&self, args: SessionIdArgs) -> Result<Option<DeliveryRun>> {
        crate::delivery::run::latest(&*self.workspace()?, args).await
    }

    pub async fn list_issues(&self, _: EmptyArgs) -> Result<Vec<IssueSummary>> {
        crate::delivery::issues::list(&*self.workspace()?).await
    }

    pub async fn get_issue(&self, args: GetIssueArgs) -> Result<IssueSummary> {
        crate::delivery::issues::get(&*self.workspace()?, &args.issue).await
    }

    pub async fn get_settings(&self, _: EmptyArgs) -> Result<SettingsView> {
        settings::view(&*self.workspace()?).await
    }

    pub async fn update_settings(&self, args: UpdateSettingsArgs) -> Result<SettingsView> {
        settings::update(&*self.workspace()?, args).await
    }

    pub async fn list_models(&self, args: ListModelsArgs) -> Result<ModelListView> {
        crate::drivers::models::list(&*self.workspace()?, args.driver.as_deref()).await
    }

    /// What Kiln detects in the open workspace's own tooling: modules, toolchains, the
    /// setup step and every gate's command with its source, and the same as kiln.toml.
    pub async fn detect_workspace(&self, _: EmptyArgs) -> Result<DetectionView> {
        let ws = self.workspace()?;
        tokio::task::spawn_blocking(move || crate::detect::view(&ws))
            .await
            .map_err(|e| ApiError::internal("detecting", e))?
    }

    /// Saves the set-up as `kiln.toml` and reopens the workspace with it. Refused while
    /// anything of the workspace runs: its turns, setups and gates would lose their
    /// configuration mid-way.
    pub async fn save_config(&self, args: SaveConfigArgs) -> Result<DetectionView> {
        if self.options.mode == ServeMode::SelfHosted {
            return Err(ApiError::new(
                ErrorCode::NotAllowedInMode,
                "a self-hosted server's kiln.toml is changed on the server, not over HTTP",
            ));
        }
        let ws = self.workspace()?;
        let busy = !ws.turns.is_empty()
            || !ws.running.lock().unwrap().is_empty()
            || !ws.planning.is_empty()
            || !ws.queued.lock().unwrap().is_empty();
        if busy {
            return Err(ApiError::new(
                ErrorCode::SessionRunning,
                "a session is running: save the set-up when it has stopped",
            ));
        }
        crate::detect::save(&ws, &args)?;
        crate::preview::stop_all(&ws, &self.events).await;
        let root = ws.root.display().to_string();
        let mut reopened = Workspace::open(&root, self.holder, Some(&ws.lock), &self.backing).await?;
        reopened.mode = self.options.mode;
        reopened.agent_commands = self.agent_commands();
        self.share_slots(&mut reopened);
        let view = reopened.view();
        drop(ws);
        *self.workspace.write().unwrap() = Some(Arc::new(reopened));
        self.events.emit(EventBody::Workspace { workspace: view });
        self.detect_workspace(EmptyArgs {}).await
    }

    /// What `.kiln/` takes on disk, per session and in all.
    pub async fn disk_usage(&self, _: EmptyArgs) -> Result<DiskUsageView> {
        crate::disk::usage(&*self.workspace()?).await
    }

    /// Removes (or lists, in a dry run) archived and rejected sessions' working copies.
    pub async fn clean_up(&self, args: CleanUpArgs) -> Result<CleanUpView> {
        crate::disk::clean_up(&*self.workspace()?, &self.events, args).await
    }

    /// Opens a terminal of the session (see `crate::terminal`).
    pub async fn open_terminal(&self, args: OpenTerminalArgs) -> Result<TerminalView> {
        let offer = self.terminal_offer();
        // Refused before anything else is looked at, the workspace included.
        offer.check(args.kind)?;
        // A shell in a working copy that is gone would start nowhere: rebuild it first.
        self.ready(&args.session_id).await?;
        self.terminals.open(&*self.workspace()?, &self.events, offer, args).await
    }

    pub async fn list_terminals(&self, args: SessionIdArgs) -> Result<Vec<TerminalView>> {
        let id = crate::ids::SessionId::parse(&args.session_id)?;
        session::view(&*self.workspace()?, &id).await?;
        Ok(self.terminals.list(&id))
    }

    pub async fn write_terminal(&self, args: TerminalInputArgs) -> Result<TerminalView> {
        self.terminals.write(args).await
    }

    pub async fn resize_terminal(&self, args: ResizeTerminalArgs) -> Result<TerminalView> {
        self.terminals.resize(&self.events, args)
    }

    pub async fn stop_terminal(&self, args: TerminalArgs) -> Result<TerminalView> {
        self.terminals.stop(args).await
    }

    /// The operator's answer to a permission request waiting in the chat.
    pub async fn answer_permission(&self, args: AnswerPermissionArgs) -> Result<SessionView> {
        crate::operator::answer(&*self.workspace()?, &self.events, args).await
    }

    /// Comments lines of a file of the session's working copy, quoting them.
    pub async fn add_review_comment(&self, args: AddReviewCommentArgs) -> Result<SessionView> {
        self.ready(&args.session_id).await?;
        crate::review_comments::add(&*self.workspace()?, &self.events, args).await
    }

    pub async fn update_review_comment(&self, args: UpdateReviewCommentArgs) -> Result<SessionView> {
        crate::review_comments::update(&*self.workspace()?, &self.events, args).await
    }

    pub async fn delete_review_comment(&self, args: ReviewCommentArgs) -> Result<SessionView> {
        crate::review_comments::delete(&*self.workspace()?, &self.events, args).await
    }

    pub async fn resolve_review_comment(&self, args: ResolveReviewCommentArgs) -> Result<SessionView> {
        crate::review_comments::resolve(&*self.workspace()?, &self.events, args).await
    }

    /// Sends the session's open review comments to the agent as one turn.
    pub async fn send_review(&self, args: SendReviewArgs) -> Result<SessionView> {
        self.ready(&args.session_id).await?;
        crate::chain::send_review(&self.workspace()?, &self.events, args).await
    }

    // ---- issue 20: best-of-N candidate sessions ----

    /// Makes the group's candidate sessions and sends each the brief.
    pub async fn create_session_group(&self, args: CreateSessionGroupArgs) -> Result<GroupView> {
        crate::groups::create(&self.workspace()?, &self.events, args).await
    }

    pub async fn list_groups(&self, _: EmptyArgs) -> Result<Vec<GroupSummary>> {
        crate::groups::list(&*self.workspace()?).await
    }

    /// The comparison of the group's candidates.
    pub async fn get_group(&self, args: GroupIdArgs) -> Result<GroupView> {
        crate::groups::view(&self.workspace()?, &args.group_id).await
    }

    /// One candidate's tree against another's; both working copies are checked first.
    pub async fn compare_candidates(&self, args: CompareCandidatesArgs) -> Result<DiffView> {
        let ws = self.workspace()?;
        crate::groups::load(&ws, &args.group_id).await?;
        for session in [&args.left, &args.right] {
            crate::groups::member(&ws, &args.group_id, session).await?;
            self.ready(session).await?;
        }
        crate::groups::compare_candidates(&ws, &args).await
    }

    /// Picks the winner; the other candidates are archived and their terminals stopped.
    pub async fn pick_candidate(&self, args: PickCandidateArgs) -> Result<GroupView> {
        let (view, archived) = crate::groups::pick(&self.workspace()?, &self.events, args).await?;
        for id in archived {
            self.terminals.stop_session(&id).await;
        }
        Ok(view)
    }
}
