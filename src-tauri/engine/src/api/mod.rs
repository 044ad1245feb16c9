//! The engine's one API. Every operation is an async method of `Engine`, generated from its
//! line of the operation table (`kiln-types`' `operations.rs`, `for_each_operation!`): the
//! policy the line names, then the function it names, given the open workspace's `Context`
//! (or, for the operations on the engine's own state, the one of its name in `own.rs`). The
//! desktop app turns the same table into Tauri commands and `kiln serve` into
//! `POST /api/<command>` routes, so the two cannot drift.

mod activity;
mod check;
mod mcp;
mod own;
mod recovery;
mod settings;
mod team;

pub use activity::Activity;
pub use check::{check_backing, Finding};

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use serde::de::DeserializeOwned;

use crate::events::{EventBus, Subscription};
use crate::session;
use crate::workspace::Workspace;
use kiln_records::workspace_lock::HolderKind;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

/// One part of an operation's policy, as code: what the generated method does first (`ready`),
/// its body limit, and whether it runs on the session's owner (see `for_each_operation!`).
/// Every part is named in each rule, so a misspelled one does not compile.
macro_rules! policy {
    (before $engine:tt $args:ident ready) => {
        $engine.ready(&$args.session_id).await?;
    };
    (before $engine:tt $args:ident any_host) => {};
    (before $engine:tt $args:ident body_limit: $value:expr) => {};
    (body_limit body_limit: $value:expr) => {
        Some($value)
    };
    (body_limit ready) => {
        None
    };
    (body_limit any_host) => {
        None
    };
    (on_owner any_host) => {
        false
    };
    (on_owner ready) => {
        true
    };
    (on_owner body_limit: $value:expr) => {
        true
    };
}

/// The call an operation's method ends with: the function its table line names, given the
/// open workspace's context, or the engine's own (`own.rs`) given the engine.
macro_rules! call {
    ($engine:tt $args:ident $name:ident) => {
        own::$name($engine, $args).await
    };
    ($engine:tt $args:ident $name:ident $($function:ident)::+) => {
        crate::$($function)::+(&$engine.context()?, $args).await
    };
}

macro_rules! define_operations {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident($args:ty) -> $ret:ty
        $({ $($key:ident $(: $value:expr)?),* $(,)? })?
        $(=> $($function:ident)::+)?;
    )*) => {
        /// The name of every operation, as commands and routes spell it.
        pub const OPERATIONS: &[&str] = &[$(stringify!($name)),*];

        /// The largest request body `command` takes when its table line sets one (an HTTP
        /// transport's concern, kept in the table so an operation's line says everything).
        pub fn body_limit(command: &str) -> Option<usize> {
            match command {
                $(stringify!($name) => None $($(.or(policy!(body_limit $key $(: $value)?)))*)?,)*
                _ => None,
            }
        }

        /// Whether `command`, naming a session, runs on the host that owns the session
        /// (every operation but those its table line marks `any_host`).
        pub(crate) fn runs_on_owner(command: &str) -> bool {
            match command {
                $(stringify!($name) => true $($(&& policy!(on_owner $key $(: $value)?))*)?,)*
                _ => true,
            }
        }

        impl Engine {
            $(
                $(#[doc = $doc])*
                pub async fn $name(&self, args: $args) -> Result<$ret> {
                    $($(policy!(before self args $key $(: $value)?);)*)?
                    call!(self args $name $($($function)::+)?)
                }
            )*

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

kiln_types::for_each_operation!(define_operations);

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
    /// The background work of every workspace this engine opens.
    background: Arc<crate::background::Background>,
    /// Where the workspaces it opens keep their records and objects (`backed_by`).
    backing: kiln_records::backing::Backing,
    /// This host's part among the hosts of a team's database (`join_team`).
    team: std::sync::OnceLock<Arc<team::Team>>,
}

/// How many recent workspaces the list keeps.
const RECENT_MAX: usize = 10;
/// How long shutting down waits for the background work it stopped to finish.
const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

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
            background: Default::default(),
            backing: Default::default(),
            team: Default::default(),
        }
    }

    /// The same engine, keeping its workspaces' records and objects where `backing` says
    /// (`kiln serve --database … --objects …`) instead of beside them.
    pub fn backed_by(mut self, backing: kiln_records::backing::Backing) -> Engine {
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
        for work in ws.busy.all_work() {
            work.stop().await;
        }
        // A message waiting for its setup would start its turn once the setup is killed: it
        // stays unstarted, and its session says so.
        for id in ws.busy.unqueue_all() {
            let Ok(id) = crate::ids::SessionId::parse(&id) else { continue };
            let note = "Kiln shut down before the turn for your message started; send it again when you are back.";
            let _ = session::record(&ws, &self.events, &id, EntryKind::System, None, note).await;
        }
        ws.busy.kill_all();
        // The chains and setups just stopped write their last entries before the engine goes;
        // one that outlives the wait is aborted (its turn or command goes with it).
        let aborted = self.background.end_all(SHUTDOWN_WAIT).await;
        if aborted > 0 {
            tracing::warn!(aborted, "background work still ran at shutdown and was aborted");
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
    /// so the limit holds for every turn of the engine, and the engine's background, so
    /// shutdown waits for the work of every workspace it opened (one replaced by opening
    /// another, or by saving its set-up, included).
    fn share(&self, opened: &mut Workspace) {
        self.slots.set_limit(opened.config.session.parallel_turns(crate::workspace::cores()));
        opened.slots = self.slots.clone();
        opened.background = self.background.clone();
    }

    /// Before an operation works on a session: its working copy is checked whole, and
    /// rebuilt when it is not (`recovery::ready`).
    async fn ready(&self, session_id: &str) -> Result<()> {
        recovery::ready(&self.workspace()?, &self.events, session_id).await
    }

    /// The open workspace's context, which every operation of the table that names a
    /// function is given.
    fn context(&self) -> Result<crate::workspace::Context> {
        Ok(crate::workspace::Context { ws: self.workspace()?, events: self.events.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The policies the table declares reach the code generated from it.
    #[test]
    fn each_operation_carries_the_policy_of_its_table_line() {
        assert_eq!(body_limit("add_attachment"), Some(7 * 1024 * 1024 + 64 * 1024));
        assert_eq!(body_limit("send_message"), None);
        assert_eq!(body_limit("no_such_operation"), None);
        let any_host: Vec<&str> = OPERATIONS.iter().copied().filter(|op| !runs_on_owner(op)).collect();
        assert_eq!(any_host, ["get_session", "get_transcript"]);
    }
}
