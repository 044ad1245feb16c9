//! A session's terminals: a shell, or an agent's own CLI, running in a pseudo-terminal in
//! the session's working copy, that the operator types into from the UI. The registry of
//! them all (`Terminals`, one per engine, so a workspace reopened with a new set-up keeps
//! them), their limits (8 running per session, 32 in all), and the operations on them.
//!
//! A terminal outlives the view that shows it: closing the window or detaching the view
//! leaves it running, and a view attaching later gets the output it kept (`attach`). It
//! ends when its program exits, when it is stopped, when its session is archived, rejected
//! or deleted, and when Kiln shuts down. An exited terminal stays listed for ten minutes,
//! so its view can show how it ended.

mod attachment;
mod launch;
mod running;

use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use attachment::TerminalAttachment;
use running::{Identity, Terminal};

use crate::events::EventBus;
use crate::ids::SessionId;
use crate::workspace::Workspace;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::{
    EventBody, OpenTerminalArgs, ResizeTerminalArgs, TerminalArgs, TerminalInputArgs, TerminalKind, TerminalView,
};

/// Running terminals a session may have.
pub(crate) const PER_SESSION: usize = 8;
/// Running terminals in all.
pub(crate) const IN_ALL: usize = 32;
/// How long an exited terminal stays listed.
const KEPT_EXITED: Duration = Duration::from_secs(10 * 60);
/// The most input one write takes.
pub(crate) const MAX_INPUT: usize = 64 * 1024;
const DEFAULT_SIZE: (u32, u32) = (80, 24);

/// What the engine offers: terminals at all, and the agents' CLIs in them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Offer {
    pub terminals: bool,
    pub agents: bool,
}

impl Offer {
    /// NOT_ALLOWED_IN_MODE unless a terminal of `kind` is offered.
    pub(crate) fn check(&self, kind: TerminalKind) -> Result<()> {
        if !self.terminals {
            return Err(ApiError::new(
                ErrorCode::NotAllowedInMode,
                "this self-hosted server offers no terminals: its operator can start it with --allow-terminals",
            ));
        }
        if kind != TerminalKind::Shell && !self.agents {
            return Err(ApiError::new(
                ErrorCode::NotAllowedInMode,
                "a self-hosted server offers no agent CLI terminals: the local CLIs carry the operator's own login",
            ));
        }
        Ok(())
    }
}

#[derive(Default)]
pub(crate) struct Terminals {
    all: Mutex<Vec<Arc<Terminal>>>,
    /// Opens one at a time, so two cannot both take the last place under a limit.
    opening: tokio::sync::Mutex<()>,
}

fn check_size(cols: u32, rows: u32) -> Result<()> {
    if !(2..=1000).contains(&cols) || !(1..=500).contains(&rows) {
        return Err(ApiError::invalid(format!(
            "a terminal is 2 to 1000 columns by 1 to 500 rows, not {cols} by {rows}"
        )));
    }
    Ok(())
}

impl Terminals {
    /// Opens a terminal of `args.kind` for a session that is neither closed nor deleted.
    pub(crate) async fn open(
        &self,
        ws: &Workspace,
        events: &Arc<EventBus>,
        offer: Offer,
        args: OpenTerminalArgs,
    ) -> Result<TerminalView> {
        offer.check(args.kind)?;
        let size = (args.cols.unwrap_or(DEFAULT_SIZE.0), args.rows.unwrap_or(DEFAULT_SIZE.1));
        check_size(size.0, size.1)?;
        let (id, session) = crate::session::live(ws, &args.session_id).await?;
        crate::session::refuse_closed(&session)?;

        let _opening = self.opening.lock().await;
        self.forget_old();
        let (in_session, in_all) = {
            let all = self.all.lock().unwrap();
            let running: Vec<_> = all.iter().filter(|t| t.is_running()).collect();
            (running.iter().filter(|t| t.identity.session_id == id.as_str()).count(), running.len())
        };
        if in_session >= PER_SESSION {
            return Err(ApiError::new(
                ErrorCode::TerminalLimit,
                format!("session {id} has {PER_SESSION} terminals running: close one first"),
            ));
        }
        if in_all >= IN_ALL {
            return Err(ApiError::new(
                ErrorCode::TerminalLimit,
                format!("{IN_ALL} terminals are running: close one first"),
            ));
        }
        let workdir = ws.session_workdir(&id);
        if !workdir.is_dir() {
            return Err(ApiError::invalid(format!("session {id} has no working copy")));
        }
        let launch = launch::prepare(ws, &id, &session, args.kind, &workdir).await?;
        let dims = (size.0 as u16, size.1 as u16);
        let spawned = tokio::task::spawn_blocking(move || -> std::io::Result<_> {
            // The rules are made before the program starts; when they cannot be, it does not.
            let prepared = launch.confinement.prepare()?;
            let env = match launch.base {
                launch::Base::Only => kiln_runtime::process::Env::Only(&launch.env),
                launch::Base::Operator => kiln_runtime::process::Env::Operator(&launch.env),
            };
            let pty =
                kiln_runtime::process::spawn_pty(&launch.program, &launch.args, &workdir, env, Some(&prepared), dims)?;
            Ok((pty, launch.title, prepared.enforcement()))
        })
        .await
        .map_err(|e| ApiError::internal("starting the terminal", e))?;
        let (pty, title, enforcement) = spawned.map_err(|e| ApiError::internal("starting the terminal", e))?;
        tracing::info!("terminal `{title}` of session {id} runs with confinement: {}", enforcement.as_str());
        let identity = Identity {
            id: uuid::Uuid::new_v4().to_string(),
            session_id: id.as_str().to_string(),
            root: ws.root.clone(),
            kind: args.kind,
            title,
            started_at: kiln_runtime::clock::now(),
        };
        let terminal = Terminal::start(identity, pty, size, events.clone());
        self.all.lock().unwrap().push(terminal.clone());
        let view = terminal.view();
        events.emit(EventBody::Terminal { terminal: view.clone() });
        Ok(view)
    }

    /// The session's terminals, running and recently exited, oldest first.
    pub(crate) fn list(&self, session_id: &SessionId) -> Vec<TerminalView> {
        self.forget_old();
        let all = self.all.lock().unwrap();
        all.iter().filter(|t| t.identity.session_id == session_id.as_str()).map(|t| t.view()).collect()
    }

    pub(crate) async fn write(&self, args: TerminalInputArgs) -> Result<TerminalView> {
        if args.data.len() > MAX_INPUT {
            return Err(ApiError::invalid(format!(
                "at most {MAX_INPUT} bytes of input at a time, not {}",
                args.data.len()
            )));
        }
        let terminal = self.get(&args.terminal_id)?;
        terminal.write(args.data).await?;
        Ok(terminal.view())
    }

    pub(crate) fn resize(&self, events: &EventBus, args: ResizeTerminalArgs) -> Result<TerminalView> {
        check_size(args.cols, args.rows)?;
        let terminal = self.get(&args.terminal_id)?;
        if terminal.is_running() {
            terminal.resize(args.cols, args.rows)?;
            let view = terminal.view();
            events.emit(EventBody::Terminal { terminal: view.clone() });
            return Ok(view);
        }
        Ok(terminal.view())
    }

    /// Kills the terminal's program and everything it started; answers the exited view.
    pub(crate) async fn stop(&self, args: TerminalArgs) -> Result<TerminalView> {
        let terminal = self.get(&args.terminal_id)?;
        terminal.stop().await;
        Ok(terminal.view())
    }

    /// How many terminals run now (the desktop keeps Kiln in the tray while any does).
    pub(crate) fn running(&self) -> usize {
        self.all.lock().unwrap().iter().filter(|t| t.is_running()).count()
    }

    /// A view's hold on the terminal's output (`TerminalAttachment`).
    pub(crate) fn attach(&self, terminal_id: &str) -> Result<TerminalAttachment> {
        Ok(self.get(terminal_id)?.attach())
    }

    /// Stops every terminal of the session (archived, rejected or deleted).
    pub(crate) async fn stop_session(&self, session_id: &str) {
        self.stop_where(|t| t.identity.session_id == session_id).await;
    }

    /// Stops every terminal of a workspace other than the one at `root` (another opened).
    pub(crate) async fn stop_other_workspaces(&self, root: &std::path::Path) {
        self.stop_where(|t| t.identity.root != root).await;
    }

    /// Stops them all (Kiln shuts down).
    pub(crate) async fn stop_all(&self) {
        self.stop_where(|_| true).await;
    }

    async fn stop_where(&self, which: impl Fn(&Terminal) -> bool) {
        let chosen: Vec<Arc<Terminal>> =
            self.all.lock().unwrap().iter().filter(|t| t.is_running() && which(t)).cloned().collect();
        // All killed first, then each waited for: they end together.
        for terminal in &chosen {
            terminal.kill();
        }
        for terminal in &chosen {
            terminal.stop().await;
        }
    }

    fn get(&self, terminal_id: &str) -> Result<Arc<Terminal>> {
        let id = uuid::Uuid::parse_str(terminal_id.trim())
            .map_err(|_| ApiError::invalid(format!("`{terminal_id}` is not a terminal id")))?
            .to_string();
        let all = self.all.lock().unwrap();
        all.iter().find(|t| t.identity.id == id).cloned().ok_or_else(|| {
            ApiError::new(ErrorCode::TerminalNotFound, format!("there is no terminal {id}: it ended, or never was"))
        })
    }

    /// Drops the terminals that exited more than `KEPT_EXITED` ago.
    fn forget_old(&self) {
        self.all.lock().unwrap().retain(|t| t.ended().is_none_or(|e| e.when.elapsed() < KEPT_EXITED));
    }
}
