//! Work that outlives the window. Closing the main window while a turn, planner, setup, gate or
//! delivery runs hides it instead of quitting: Kiln stays in the tray (Show Kiln, what runs,
//! Quit Kiln) and tells the operator through system notifications when a session's work ends,
//! needs input or fails. Quitting while work runs asks first, then stops everything through the
//! engine's shutdown (`RunEvent::Exit` in desktop.rs). With nothing running, closing quits as
//! it always did.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kiln_engine::types::{DeliveryRun, DeliveryState, EventBody, ListSessionsArgs, SessionState, SessionView};
use kiln_engine::{Activity, Engine};
use tauri::menu::{Menu, MenuEvent, MenuItem, PredefinedMenuItem};
use tauri::tray::{MouseButton, MouseButtonState, TrayIcon, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager, Runtime, Window, WindowEvent};
use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};
use tauri_plugin_notification::NotificationExt;

/// The tray menu's items (their own ids: the app menu's handler sees tray clicks too).
pub const TRAY_SHOW: &str = "tray-show";
pub const TRAY_ACTIVITY: &str = "tray-activity";
pub const TRAY_QUIT: &str = "tray-quit";

/// The notification sent the first time the window closes while work runs.
pub const BACKGROUND_TITLE: &str = "Kiln keeps working in the background";

/// How long a session must stay settled before its notification goes out: between a planner
/// and the turn it starts, or two chained turns, a session is briefly idle, and the operator
/// should hear of the end of the work, not of each pause in it.
const SETTLE: Duration = Duration::from_millis(1500);

/// What closing the main window does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Close {
    /// Nothing runs: the window closes and the app quits, as it always did.
    Quit,
    /// Work runs: the window hides and Kiln stays in the tray.
    Hide,
}

/// Closing the window with `activity` running.
pub fn on_close(activity: &Activity) -> Close {
    if activity.is_idle() {
        Close::Quit
    } else {
        Close::Hide
    }
}

/// What runs, as a sentence: "1 turn is running", "1 turn and 1 delivery are running".
pub fn running_sentence(activity: &Activity) -> String {
    let mut parts = activity.parts();
    let Some(last) = parts.pop() else { return "Nothing is running".into() };
    let named = if parts.is_empty() { last } else { format!("{} and {last}", parts.join(", ")) };
    let verb = if activity.total() == 1 { "is" } else { "are" };
    format!("{named} {verb} running")
}

/// The question asked before quitting stops `activity`, or `None` when nothing runs (quit at once).
pub fn quit_question(activity: &Activity) -> Option<String> {
    if activity.is_idle() {
        return None;
    }
    let them = if activity.total() == 1 { "it" } else { "them" };
    Some(format!("{}. Quit and stop {them}?", running_sentence(activity)))
}

/// The tray menu's line saying what runs.
pub fn tray_summary(activity: &Activity) -> String {
    if activity.is_idle() {
        activity.summary()
    } else {
        format!("Running: {}", activity.summary())
    }
}

/// A system notification: its title and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub title: String,
    pub body: String,
}

/// Where a session stands, as far as the operator is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A planner, a turn or its setup runs.
    Busy,
    /// The turn finished and the session waits for the operator's next message.
    Finished,
    /// The agent asked the operator something (or a chain paused for them).
    Question,
    /// A turn waits for the operator to answer a permission request in the chat.
    Permission,
    /// A specification waits for the operator's approval.
    AwaitingApproval,
    /// Ready for the operator's review.
    Review,
    /// The turn failed.
    Blocked,
    /// Delivered: the delivery's own event tells of it.
    Delivered,
}

/// Where `session` stands.
pub fn outcome(session: &SessionView) -> Outcome {
    // The turn runs, but it waits on the operator: that is news, not work.
    if !session.permissions.is_empty() {
        return Outcome::Permission;
    }
    if session.running {
        return Outcome::Busy;
    }
    match session.state {
        SessionState::Planning | SessionState::Running => Outcome::Busy,
        SessionState::AwaitingApproval => Outcome::AwaitingApproval,
        SessionState::Review => Outcome::Review,
        SessionState::Blocked => Outcome::Blocked,
        SessionState::Delivered => Outcome::Delivered,
        SessionState::Editing if session.pending_role.is_some() => Outcome::Question,
        SessionState::Editing => Outcome::Finished,
    }
}

/// What to tell the operator when a session comes to `outcome`; `None` for the outcomes that
/// are no news (it runs, or its delivery already said so).
pub fn notice(title: &str, outcome: Outcome) -> Option<Notice> {
    let body = match outcome {
        Outcome::Busy | Outcome::Delivered => return None,
        Outcome::Finished => "The turn finished. The session waits for your next message.",
        Outcome::Question => "The agent has a question for you.",
        Outcome::Permission => "The agent asks your permission. Open Kiln to answer it in the chat.",
        Outcome::AwaitingApproval => "A specification waits for your approval.",
        Outcome::Review => "The work is done and ready for your review.",
        Outcome::Blocked => "The turn failed and the session is blocked. Open Kiln to retry.",
    };
    Some(Notice { title: session_title(title), body: body.into() })
}

fn session_title(title: &str) -> String {
    let title = title.trim();
    if title.is_empty() {
        "A Kiln session".into()
    } else {
        title.into()
    }
}

/// Follows sessions and deliveries through the engine's events and says which transitions are
/// worth a notification: one per change of a session's outcome (never for a session first seen
/// already settled), and one when a delivery seen running ends.
#[derive(Debug, Default)]
pub struct Tracker {
    sessions: HashMap<String, (String, Outcome)>,
    deliveries: HashMap<String, DeliveryState>,
}

impl Tracker {
    /// Takes the sessions as they stand (at start, when a workspace opens, after missed events)
    /// without notifying.
    pub fn seed(&mut self, sessions: &[SessionView]) {
        self.sessions = sessions.iter().map(|s| (s.id.clone(), (s.title.clone(), outcome(s)))).collect();
    }

    /// A session changed: the outcome it came to, when that is news.
    pub fn session(&mut self, session: &SessionView) -> Option<Outcome> {
        let now = outcome(session);
        let before = self.sessions.insert(session.id.clone(), (session.title.clone(), now)).map(|(_, o)| o);
        match before {
            Some(before) if before != now && notice(&session.title, now).is_some() => Some(now),
            _ => None,
        }
    }

    /// Whether `session` still stands at `outcome` (the check after `SETTLE`).
    pub fn still(&self, session: &str, outcome: Outcome) -> bool {
        self.sessions.get(session).is_some_and(|(_, o)| *o == outcome)
    }

    pub fn forget(&mut self, session: &str) {
        self.sessions.remove(session);
    }

    /// A delivery moved: the notice when a run this tracker saw running has ended.
    pub fn delivery(&mut self, run: &DeliveryRun) -> Option<Notice> {
        let before = self.deliveries.insert(run.id.clone(), run.state);
        if before != Some(DeliveryState::Running) || run.state == DeliveryState::Running {
            return None;
        }
        let title = session_title(self.sessions.get(&run.session_id).map(|(t, _)| t.as_str()).unwrap_or(""));
        let body = match run.state {
            DeliveryState::Delivered => match &run.pull_request {
                Some(pr) => format!("Delivered: the pull request is open at {}.", pr.url),
                None => "Delivered into the workspace.".into(),
            },
            _ => match &run.error {
                Some(e) => format!("The delivery failed: {}", e.message),
                None => "The delivery failed.".into(),
            },
        };
        Some(Notice { title, body })
    }
}

/// The app's background state: the tray (built the first time the window hides), whether the
/// operator was told Kiln keeps working, and the tracker of sessions.
pub struct Background<R: Runtime> {
    tray: Mutex<Option<(TrayIcon<R>, MenuItem<R>)>>,
    /// The tray's line of what runs, as last set.
    tray_line: Mutex<String>,
    told: Mutex<bool>,
    tracker: Mutex<Tracker>,
}

impl<R: Runtime> Default for Background<R> {
    fn default() -> Self {
        Background {
            tray: Mutex::new(None),
            tray_line: Mutex::new(String::new()),
            told: Mutex::new(false),
            tracker: Mutex::new(Tracker::default()),
        }
    }
}

fn engine<R: Runtime>(app: &AppHandle<R>) -> Option<Arc<Engine>> {
    app.try_state::<Arc<Engine>>().map(|e| e.inner().clone())
}

/// The main window's events: a close while work runs hides it instead.
pub fn on_window_event<R: Runtime>(window: &Window<R>, event: &WindowEvent) {
    let WindowEvent::CloseRequested { api, .. } = event else { return };
    if window.label() != "main" {
        return;
    }
    let app = window.app_handle();
    let Some(engine) = engine(app) else { return };
    let activity = engine.activity();
    let close = on_close(&activity);
    tracing::info!("the main window closes with {}: {close:?}", activity.summary());
    if close == Close::Hide {
        api.prevent_close();
        let _ = window.hide();
        to_background(app, &activity);
    }
}

/// The window is hidden with `activity` running: the tray shows, and the first time, a
/// notification says so.
fn to_background<R: Runtime>(app: &AppHandle<R>, activity: &Activity) {
    let Some(state) = app.try_state::<Background<R>>() else { return };
    {
        let mut tray = state.tray.lock().unwrap();
        match tray.as_ref() {
            Some((icon, _)) => {
                let _ = icon.set_visible(true);
            }
            None => match build_tray(app) {
                Ok(built) => *tray = Some(built),
                Err(e) => eprintln!("kiln: the tray icon: {e}"),
            },
        }
    }
    refresh_tray(app);
    let mut told = state.told.lock().unwrap();
    if !*told {
        *told = true;
        notify(
            app,
            &Notice {
                title: BACKGROUND_TITLE.into(),
                body: format!("{}. Kiln stays in the tray: open it or quit from there.", running_sentence(activity)),
            },
        );
    }
}

/// Brings the main window to the front (a second launch, a menu action, the tray).
pub fn focus_main<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
    shown(app);
}

/// The window is back: the tray icon goes.
fn shown<R: Runtime>(app: &AppHandle<R>) {
    if let Some(state) = app.try_state::<Background<R>>() {
        if let Some((icon, _)) = state.tray.lock().unwrap().as_ref() {
            let _ = icon.set_visible(false);
        }
    }
}

fn build_tray<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<(TrayIcon<R>, MenuItem<R>)> {
    let activity = MenuItem::with_id(app, TRAY_ACTIVITY, "Nothing running", false, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &MenuItem::with_id(app, TRAY_SHOW, "Show Kiln", true, None::<&str>)?,
            &activity,
            &PredefinedMenuItem::separator(app)?,
            &MenuItem::with_id(app, TRAY_QUIT, "Quit Kiln", true, None::<&str>)?,
        ],
    )?;
    let mut builder = TrayIconBuilder::with_id("main")
        .tooltip("Kiln")
        .menu(&menu)
        .show_menu_on_left_click(false)
        .on_menu_event(on_tray_menu)
        .on_tray_icon_event(|tray, event| {
            if let TrayIconEvent::Click { button: MouseButton::Left, button_state: MouseButtonState::Up, .. } = event {
                focus_main(tray.app_handle());
            }
        });
    if let Some(icon) = app.default_window_icon() {
        builder = builder.icon(icon.clone());
    }
    Ok((builder.build(app)?, activity))
}

fn on_tray_menu<R: Runtime>(app: &AppHandle<R>, event: MenuEvent) {
    match event.id().0.as_str() {
        TRAY_SHOW => focus_main(app),
        TRAY_QUIT => quit(app),
        _ => {}
    }
}

/// The tray's line of what runs, brought up to date.
fn refresh_tray<R: Runtime>(app: &AppHandle<R>) {
    let (Some(state), Some(engine)) = (app.try_state::<Background<R>>(), engine(app)) else { return };
    let item = state.tray.lock().unwrap().as_ref().map(|(_, item)| item.clone());
    let Some(item) = item else { return };
    // Setting it is a round trip to the main thread: only when the line changes.
    let summary = tray_summary(&engine.activity());
    let mut line = state.tray_line.lock().unwrap();
    if *line != summary {
        let _ = item.set_text(&summary);
        *line = summary;
    }
}

/// Quit Kiln (the tray, the app menu, Ctrl+Q): at once when nothing runs, else after the
/// operator confirms; the exit stops everything through the engine's shutdown.
pub fn quit<R: Runtime>(app: &AppHandle<R>) {
    let activity = engine(app).map(|e| e.activity()).unwrap_or_default();
    let Some(question) = quit_question(&activity) else {
        app.exit(0);
        return;
    };
    let handle = app.clone();
    app.dialog()
        .message(question)
        .title("Quit Kiln")
        .kind(MessageDialogKind::Warning)
        .buttons(MessageDialogButtons::OkCancelCustom("Quit".into(), "Keep working".into()))
        .show(move |confirmed| {
            if confirmed {
                handle.exit(0);
            }
        });
}

fn notify<R: Runtime>(app: &AppHandle<R>, notice: &Notice) {
    if let Err(e) = app.notification().builder().title(&notice.title).body(&notice.body).show() {
        eprintln!("kiln: a notification: {e}");
    }
}

/// Whether the operator may not be looking at the window (hidden, minimized or in the background).
fn unwatched<R: Runtime>(app: &AppHandle<R>) -> bool {
    let Some(window) = app.get_webview_window("main") else { return true };
    !window.is_visible().unwrap_or(false)
        || window.is_minimized().unwrap_or(false)
        || !window.is_focused().unwrap_or(false)
}

async fn seed<R: Runtime>(app: &AppHandle<R>, engine: &Engine) {
    let sessions = engine.list_sessions(ListSessionsArgs { include_archived: Some(false) }).await.unwrap_or_default();
    if let Some(state) = app.try_state::<Background<R>>() {
        state.tracker.lock().unwrap().seed(&sessions);
    }
}

/// Follows the engine's events for the app's lifetime: keeps the tray's line current and
/// sends a notification when a session's work ends, needs input or fails while the window is
/// unwatched.
pub fn follow<R: Runtime>(app: AppHandle<R>, engine: Arc<Engine>) {
    let mut sub = engine.subscribe(None);
    tauri::async_runtime::spawn(async move {
        use tokio::sync::broadcast::error::RecvError;
        seed(&app, &engine).await;
        loop {
            let event = match sub.receiver.recv().await {
                Ok(event) => event,
                Err(RecvError::Lagged(_)) => {
                    seed(&app, &engine).await;
                    continue;
                }
                Err(RecvError::Closed) => break,
            };
            let Some(state) = app.try_state::<Background<R>>() else { continue };
            match &event.body {
                EventBody::Workspace { .. } | EventBody::Resync => seed(&app, &engine).await,
                EventBody::SessionRemoved { session_id } => state.tracker.lock().unwrap().forget(session_id),
                EventBody::Session { session } => {
                    let settled = state.tracker.lock().unwrap().session(session);
                    if let Some(outcome) = settled {
                        announce_when_settled(app.clone(), session.id.clone(), session.title.clone(), outcome);
                    }
                }
                EventBody::Delivery { run } => {
                    let notice = state.tracker.lock().unwrap().delivery(run);
                    if let Some(notice) = notice.filter(|_| unwatched(&app)) {
                        notify(&app, &notice);
                    }
                }
                _ => {}
            }
            // A session's live text streams many events a second and changes nothing that runs.
            if !matches!(event.body, EventBody::Live { .. }) {
                refresh_tray(&app);
            }
        }
    });
}

/// Sends the session's notice once it has stood at `outcome` for `SETTLE`, if the window is
/// unwatched then.
fn announce_when_settled<R: Runtime>(app: AppHandle<R>, session: String, title: String, outcome: Outcome) {
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(SETTLE).await;
        let Some(state) = app.try_state::<Background<R>>() else { return };
        if !state.tracker.lock().unwrap().still(&session, outcome) || !unwatched(&app) {
            return;
        }
        if let Some(notice) = notice(&title, outcome) {
            notify(&app, &notice);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_engine::types::{DeliveryTarget, PullRequestView};

    fn session(id: &str, state: SessionState, running: bool, pending_role: Option<&str>) -> SessionView {
        let mut view: SessionView = serde_json::from_value(serde_json::json!({
            "id": id, "kind": "edit-module", "modules": [], "title": "Wishlist for the catalog", "brief": "",
            "role": null, "driver": null, "model": null, "resumeIds": {}, "autoContinue": true, "chainDepth": 0,
            "state": "editing", "running": false, "setup": "none", "createdAt": "", "updatedAt": "",
            "deliveredAt": null, "archivedAt": null, "rejectedAt": null, "deletedAt": null, "attachments": [],
            "checkpoints": [], "pendingRole": null, "usage": {"total": {"turns": 0, "inputTokens": 0,
            "outputTokens": 0, "cacheReadTokens": 0, "cacheWriteTokens": 0, "costUsd": null,
            "unknownCostTurns": 0}, "byRole": []}, "reviews": [], "changed": false
        }))
        .expect("a session view");
        view.state = state;
        view.running = running;
        view.pending_role = pending_role.map(String::from);
        view
    }

    fn run(id: &str, state: DeliveryState) -> DeliveryRun {
        DeliveryRun {
            id: id.into(),
            session_id: "s1".into(),
            target: DeliveryTarget::Workspace,
            state,
            steps: vec![],
            started_at: String::new(),
            ended_at: None,
            pull_request: None,
            landed: vec![],
            error: None,
        }
    }

    #[test]
    fn closing_hides_only_while_work_runs() {
        assert_eq!(on_close(&Activity::default()), Close::Quit);
        assert_eq!(on_close(&Activity { turns: 1, ..Default::default() }), Close::Hide);
        assert_eq!(on_close(&Activity { deliveries: 1, ..Default::default() }), Close::Hide);
        assert_eq!(on_close(&Activity { checks: 2, ..Default::default() }), Close::Hide);
    }

    #[test]
    fn quitting_asks_only_while_work_runs() {
        assert_eq!(quit_question(&Activity::default()), None);
        assert_eq!(
            quit_question(&Activity { turns: 1, ..Default::default() }).as_deref(),
            Some("1 turn is running. Quit and stop it?")
        );
        assert_eq!(
            quit_question(&Activity { turns: 2, ..Default::default() }).as_deref(),
            Some("2 turns are running. Quit and stop them?")
        );
        assert_eq!(
            quit_question(&Activity { turns: 1, planners: 1, deliveries: 1, ..Default::default() }).as_deref(),
            Some("1 turn, 1 planner and 1 delivery are running. Quit and stop them?")
        );
        assert_eq!(running_sentence(&Activity::default()), "Nothing is running");
        assert_eq!(running_sentence(&Activity { checks: 1, ..Default::default() }), "1 setup or gate is running");
        assert_eq!(tray_summary(&Activity::default()), "Nothing running");
        assert_eq!(
            tray_summary(&Activity { turns: 1, deliveries: 1, ..Default::default() }),
            "Running: 1 turn, 1 delivery"
        );
    }

    #[test]
    fn a_session_notifies_once_when_its_work_ends() {
        let mut tracker = Tracker::default();
        tracker.seed(&[session("s1", SessionState::Editing, false, None)]);
        // The operator's message starts a turn: no news.
        assert_eq!(tracker.session(&session("s1", SessionState::Editing, true, None)), None);
        assert_eq!(tracker.session(&session("s1", SessionState::Running, true, None)), None);
        // It ends in review: one notification, not two for the same state.
        assert_eq!(tracker.session(&session("s1", SessionState::Review, false, None)), Some(Outcome::Review));
        assert!(tracker.still("s1", Outcome::Review));
        assert_eq!(tracker.session(&session("s1", SessionState::Review, false, None)), None);
        let n = notice("Wishlist for the catalog", Outcome::Review).unwrap();
        assert_eq!(n.title, "Wishlist for the catalog");
        assert!(n.body.contains("review"), "{n:?}");
    }

    #[test]
    fn input_and_failure_notify_and_running_does_not() {
        let mut tracker = Tracker::default();
        tracker.seed(&[session("s1", SessionState::Running, true, None)]);
        assert_eq!(
            tracker.session(&session("s1", SessionState::AwaitingApproval, false, None)),
            Some(Outcome::AwaitingApproval)
        );
        tracker.session(&session("s1", SessionState::Running, true, None));
        assert_eq!(
            tracker.session(&session("s1", SessionState::Editing, false, Some("architect"))),
            Some(Outcome::Question)
        );
        tracker.session(&session("s1", SessionState::Running, true, None));
        assert_eq!(tracker.session(&session("s1", SessionState::Blocked, false, None)), Some(Outcome::Blocked));
        tracker.session(&session("s1", SessionState::Running, true, None));
        assert_eq!(tracker.session(&session("s1", SessionState::Editing, false, None)), Some(Outcome::Finished));
        // A workspace delivery marks the session delivered: its own event tells, not this.
        assert_eq!(tracker.session(&session("s1", SessionState::Delivered, false, None)), None);
        for outcome in [Outcome::Busy, Outcome::Delivered] {
            assert_eq!(notice("x", outcome), None);
        }
        assert!(notice("x", Outcome::Blocked).unwrap().body.contains("blocked"));
        assert!(notice("x", Outcome::AwaitingApproval).unwrap().body.contains("approval"));
        assert!(notice("x", Outcome::Question).unwrap().body.contains("question"));
    }

    #[test]
    fn a_permission_request_notifies_while_the_turn_waits_on_it() {
        let mut tracker = Tracker::default();
        tracker.seed(&[session("s1", SessionState::Running, true, None)]);
        let mut asking = session("s1", SessionState::Running, true, None);
        asking.permissions = serde_json::from_value(serde_json::json!([{
            "id": "p1", "title": "Fetch https://example.com", "kind": "fetch", "locations": [],
            "why": "The command policy does not decide fetches.", "askedAt": "",
            "options": [{ "id": "allow", "name": "Allow once", "kind": "allow_once" }],
        }]))
        .unwrap();
        assert_eq!(tracker.session(&asking), Some(Outcome::Permission));
        assert_eq!(tracker.session(&asking), None, "once per request, not per event");
        // Answered: the turn runs on, which is no news.
        assert_eq!(tracker.session(&session("s1", SessionState::Running, true, None)), None);
        assert!(notice("x", Outcome::Permission).unwrap().body.contains("permission"));
    }

    #[test]
    fn a_session_first_seen_settled_is_no_news() {
        let mut tracker = Tracker::default();
        tracker.seed(&[]);
        assert_eq!(tracker.session(&session("s2", SessionState::Review, false, None)), None);
        assert_eq!(tracker.session(&session("s2", SessionState::Editing, true, None)), None);
        assert_eq!(tracker.session(&session("s2", SessionState::Blocked, false, None)), Some(Outcome::Blocked));
        tracker.forget("s2");
        assert!(!tracker.still("s2", Outcome::Blocked));
    }

    #[test]
    fn a_delivery_notifies_when_a_run_seen_running_ends() {
        let mut tracker = Tracker::default();
        tracker.seed(&[session("s1", SessionState::Review, false, None)]);
        // An ended run never seen running (an old one): no news.
        assert_eq!(tracker.delivery(&run("r0", DeliveryState::Failed)), None);
        assert_eq!(tracker.delivery(&run("r1", DeliveryState::Running)), None);
        assert_eq!(tracker.delivery(&run("r1", DeliveryState::Running)), None);
        let done = tracker.delivery(&run("r1", DeliveryState::Delivered)).unwrap();
        assert_eq!(
            done,
            Notice { title: "Wishlist for the catalog".into(), body: "Delivered into the workspace.".into() }
        );
        assert_eq!(tracker.delivery(&run("r1", DeliveryState::Delivered)), None, "one notification per run");

        tracker.delivery(&run("r2", DeliveryState::Running));
        let mut failed = run("r2", DeliveryState::Failed);
        failed.error = Some(kiln_engine::ApiError::new(kiln_engine::ErrorCode::Internal, "the push was refused"));
        assert_eq!(tracker.delivery(&failed).unwrap().body, "The delivery failed: the push was refused");

        tracker.delivery(&run("r3", DeliveryState::Running));
        let mut pr = run("r3", DeliveryState::Delivered);
        pr.pull_request = Some(PullRequestView {
            url: "https://example.test/pr/1".into(),
            number: Some(1),
            branch: "kiln/wishlist".into(),
            via: "api".into(),
            created: true,
        });
        assert!(tracker.delivery(&pr).unwrap().body.contains("https://example.test/pr/1"));
    }

    #[test]
    fn the_tray_items_have_their_own_ids() {
        // The app menu's handler sees the tray's clicks too: a shared id would act twice.
        for id in [TRAY_SHOW, TRAY_ACTIVITY, TRAY_QUIT] {
            assert!(crate::menu::ITEMS.iter().all(|(i, _, _)| *i != id), "{id}");
        }
    }
}
