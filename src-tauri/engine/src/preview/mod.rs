//! Live preview (ARCHITECTURE.md: Preview): the session's application, run from its working copy with
//! `[preview] command` on a free `$PORT`, behind a gateway that only Kiln's own view can
//! enter. A supervisor starts it, waits for `ready`, restarts it when it exits (with a
//! backoff, giving up after repeated failures: the crashed state shows why and the log),
//! and stops it when it goes unvisited, when the session closes, and when Kiln exits.
//! Without a command, `[preview] root` is served as static files.

pub(crate) mod capture;
pub(crate) mod evidence;
pub(crate) mod gateway;
pub(crate) mod pointed;
pub(crate) mod shots;
mod supervisor;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use gateway::{Activity, BridgeTarget, Gateway, GatewayOptions, Upstream};

use crate::events::EventBus;
use crate::ids::SessionId;
use crate::workspace::{Context, Workspace};
use kiln_runtime::paths::beneath::Beneath;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::{BridgeActivity, ModuleUrl, PreviewKind, PreviewState, PreviewView, ServeMode, SessionIdArgs};

/// Lines of the process's output kept for the UI.
const LOG_LINES: usize = 400;

/// A running preview: its gateway, and what the supervisor reports.
pub(crate) struct Preview {
    session_id: String,
    kind: PreviewKind,
    gateway: Mutex<Option<Gateway>>,
    origin: String,
    enter_base: String,
    activity: Arc<Activity>,
    status: Mutex<Status>,
    log: Mutex<VecDeque<String>>,
    /// Tells the supervisor to stop the process (and itself).
    stop: tokio::sync::watch::Sender<bool>,
    /// True once no supervisor (and so no process) runs for it.
    finished: tokio::sync::watch::Sender<bool>,
    data: String,
    bridge_url: Option<String>,
    module_urls: Vec<ModuleUrl>,
}

#[derive(Clone)]
struct Status {
    state: PreviewState,
    port: Option<u16>,
    message: Option<String>,
    restarts: u32,
}

impl Preview {
    pub(crate) fn view(&self) -> PreviewView {
        let status = self.status.lock().unwrap().clone();
        let running = status.state != PreviewState::Stopped;
        let counts = |n: &std::sync::atomic::AtomicU64| n.load(std::sync::atomic::Ordering::Relaxed);
        PreviewView {
            session_id: self.session_id.clone(),
            kind: self.kind,
            state: status.state,
            origin: running.then(|| self.origin.clone()),
            enter_url: running.then(|| self.enter_base.clone()),
            port: status.port,
            message: status.message,
            log: self.log.lock().unwrap().iter().cloned().collect(),
            restarts: status.restarts,
            data: self.data.clone(),
            bridge: self.bridge_url.as_ref().map(|url| BridgeActivity {
                url: url.clone(),
                forwarded: counts(&self.activity.forwarded),
                unavailable: counts(&self.activity.unavailable),
                refused: counts(&self.activity.refused),
            }),
            module_urls: self.module_urls.clone(),
        }
    }

    fn set(&self, events: &EventBus, change: impl FnOnce(&mut Status)) {
        change(&mut self.status.lock().unwrap());
        events.emit(kiln_types::EventBody::Preview { preview: self.view() });
    }

    fn log_line(&self, line: String) {
        let mut log = self.log.lock().unwrap();
        if log.len() == LOG_LINES {
            log.pop_front();
        }
        log.push_back(line);
    }

    fn state(&self) -> PreviewState {
        self.status.lock().unwrap().state
    }
}

fn kind(ws: &Workspace) -> PreviewKind {
    let preview = &ws.config.preview;
    if preview.command.as_deref().is_some_and(|c| !c.trim().is_empty()) {
        PreviewKind::Command
    } else if preview.root.as_deref().is_some_and(|r| !r.trim().is_empty()) {
        PreviewKind::Static
    } else {
        PreviewKind::None
    }
}

fn module_urls(ws: &Workspace, session: &kiln_types::SessionView) -> Vec<ModuleUrl> {
    let template = ws.config.preview.module_url.as_deref().unwrap_or("/");
    session
        .modules
        .iter()
        .map(|m| ModuleUrl {
            module_id: m.id.clone(),
            path: template
                .replace("{directory}", m.directory.rsplit('/').next().unwrap_or(&m.directory))
                .replace("{id}", &m.id),
        })
        .collect()
}

fn data_mode(ws: &Workspace) -> String {
    ws.config.preview.data.clone().unwrap_or_else(|| "fixtures".into())
}

/// The preview of a session that is not running.
fn stopped(ws: &Workspace, session: &kiln_types::SessionView, message: Option<String>) -> PreviewView {
    PreviewView {
        session_id: session.id.clone(),
        kind: kind(ws),
        state: PreviewState::Stopped,
        origin: None,
        enter_url: None,
        port: None,
        message,
        log: Vec::new(),
        restarts: 0,
        data: data_mode(ws),
        bridge: None,
        module_urls: module_urls(ws, session),
    }
}

pub(crate) async fn get(cx: &Context, args: SessionIdArgs) -> Result<PreviewView> {
    let (ws, id) = (&cx.ws, &SessionId::parse(&args.session_id)?);
    let session = crate::session::view(ws, id).await?;
    let running = ws.previews.get::<Preview>(id.as_str());
    Ok(match running {
        Some(preview) => preview.view(),
        None => stopped(ws, &session, None),
    })
}

/// Starts the session's preview (answers the running one when it runs) and its gateway.
pub(crate) async fn start(cx: &Context, args: SessionIdArgs) -> Result<PreviewView> {
    launch(&cx.ws, &cx.events, &SessionId::parse(&args.session_id)?).await
}

/// What `start` does, for a session already named.
pub(crate) async fn launch(ws: &Arc<Workspace>, events: &Arc<EventBus>, id: &SessionId) -> Result<PreviewView> {
    let session = crate::session::view(ws, id).await?;
    if session.deleted_at.is_some() {
        return Err(ApiError::new(ErrorCode::SessionDeleted, format!("session {id} was deleted")));
    }
    crate::session::refuse_closed(&session)?;
    if ws.mode == ServeMode::SelfHosted {
        return Err(ApiError::new(
            ErrorCode::NotAllowedInMode,
            "the preview's gateway listens on this machine's loopback address, which a remote browser cannot reach",
        ));
    }
    let kind = kind(ws);
    if kind == PreviewKind::None {
        return Err(ApiError::new(
            ErrorCode::PreviewNotConfigured,
            "this workspace has no preview: set `[preview] command` (or `root` for static files) in kiln.toml",
        ));
    }
    if let Some(existing) = ws.previews.get::<Preview>(id.as_str()) {
        if existing.state() != PreviewState::Stopped {
            return Ok(existing.view());
        }
    }
    let workdir = ws.session_workdir(id);
    let (port_tx, port_rx) = tokio::sync::watch::channel(None);
    let upstream = match kind {
        PreviewKind::Static => {
            let root = ws.config.preview.root.clone().unwrap_or_default();
            // Held open beneath the working copy's handle: whatever the agent's commands
            // swap for a link later, requests resolve beneath this directory.
            let relative = kiln_runtime::paths::relative(root.trim())?;
            let opened = Beneath::open(&workdir).and_then(|copy| copy.sub(&relative)).map_err(|e| {
                kiln_runtime::paths::refused(root.trim(), &format!("the preview's root cannot be opened: {e}"))
            })?;
            Upstream::Static(Arc::new(opened))
        }
        _ => Upstream::App(port_rx),
    };
    let data = data_mode(ws);
    let bridge = match (data.as_str(), crate::settings::bridge_url(ws).await?) {
        ("bridge", Some(url)) => Some(BridgeTarget { token: crate::settings::bridge_token(ws).await?, url }),
        _ => None,
    };
    let activity = Arc::new(Activity::default());
    activity.touch();
    let bridge_url = bridge.as_ref().map(|b| b.url.clone());
    let gateway = Gateway::start(GatewayOptions { upstream, bridge, activity: activity.clone() }).await?;
    let module_urls = module_urls(ws, &session);
    let first = module_urls.first().map(|m| m.path.clone()).unwrap_or_else(|| "/".into());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let preview = Arc::new(Preview {
        session_id: id.to_string(),
        kind,
        origin: gateway.origin(),
        enter_base: gateway.enter_url(&first),
        gateway: Mutex::new(Some(gateway)),
        activity,
        status: Mutex::new(Status { state: PreviewState::Starting, port: None, message: None, restarts: 0 }),
        log: Mutex::default(),
        stop: stop_tx,
        finished: tokio::sync::watch::Sender::new(kind == PreviewKind::Static),
        data,
        bridge_url,
        module_urls,
    });
    let previous = ws.previews.insert(id.as_str(), preview.clone());
    if let Some(previous) = previous {
        shut(&previous).await;
    }
    match kind {
        PreviewKind::Static => preview.set(events, |s| s.state = PreviewState::Ready),
        _ => {
            events.emit(kiln_types::EventBody::Preview { preview: preview.view() });
            let command = ws.config.preview.command.clone().unwrap_or_default();
            let ready = ws.config.preview.ready.clone();
            let idle =
                std::time::Duration::from_secs_f64(ws.config.preview.idle_minutes.unwrap_or(15.0).max(0.0) * 60.0);
            let ready_timeout = std::time::Duration::from_secs(ws.config.preview.ready_timeout_seconds.unwrap_or(60));
            tokio::spawn(supervisor::run(supervisor::Job {
                ws: ws.clone(),
                events: events.clone(),
                preview: preview.clone(),
                session_id: id.clone(),
                command,
                ready,
                idle,
                ready_timeout,
                workdir,
                port: port_tx,
                stop: stop_rx,
            }));
        }
    }
    Ok(preview.view())
}

/// Stops the process and the gateway.
async fn shut(preview: &Preview) {
    let _ = preview.stop.send(true);
    let gateway = preview.gateway.lock().unwrap().take();
    if let Some(gateway) = gateway {
        gateway.stop().await;
    }
}

pub(crate) async fn stop(cx: &Context, args: SessionIdArgs) -> Result<PreviewView> {
    let Context { ws, events } = cx;
    let id = &SessionId::parse(&args.session_id)?;
    let session = crate::session::view(ws, id).await?;
    stop_quietly(ws, events, id).await;
    Ok(stopped(ws, &session, Some("stopped".into())))
}

/// Stops a session's preview if one runs: when it is stopped, archived, rejected or
/// deleted, and when Kiln exits.
pub(crate) async fn stop_quietly(ws: &Workspace, events: &EventBus, id: &SessionId) {
    let preview = ws.previews.take(id.as_str());
    if let Some(preview) = preview {
        preview.stop(events).await;
    }
}

impl crate::registry::Handle for Preview {
    fn stop<'a>(&'a self, events: &'a EventBus) -> futures_util::future::BoxFuture<'a, ()> {
        Box::pin(async move {
            shut(self).await;
            // Wait for the supervisor to see the process gone, so nothing outlives this call.
            supervisor::wait_stopped(self).await;
            self.set(events, |s| {
                s.state = PreviewState::Stopped;
                s.port = None;
            });
        })
    }
}

/// Stops every preview of the workspace.
pub(crate) async fn stop_all(ws: &Workspace, events: &EventBus) {
    let ids: Vec<String> = ws.previews.sessions();
    for id in ids {
        if let Ok(id) = SessionId::parse(&id) {
            stop_quietly(ws, events, &id).await;
        }
    }
}

pub(crate) async fn restart(cx: &Context, args: SessionIdArgs) -> Result<PreviewView> {
    let Context { ws, events } = cx;
    let id = &SessionId::parse(&args.session_id)?;
    stop_quietly(ws, events, id).await;
    launch(ws, events, id).await
}
