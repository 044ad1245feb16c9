//! The desktop app's menu bar: File (open a workspace, recent workspaces, settings, quit), Edit,
//! View and Help. Actions the UI owns (the folder picker, settings, help, the update check) reach
//! it as a `menu` event to the main window; the rest are done here.

use std::sync::{Arc, Mutex};

use kiln_engine::types::{EmptyArgs, EventBody, OpenWorkspaceArgs};
use kiln_engine::Engine;
use tauri::menu::{AboutMetadata, Menu, MenuEvent, MenuItem, MenuItemKind, PredefinedMenuItem, Submenu};
use tauri::{AppHandle, Emitter, Manager, Runtime};

/// The event the UI listens to for the menu actions it carries out; its payload is the item id.
pub const MENU_EVENT: &str = "menu";

/// Menu ids handled by the UI (sent as the `menu` event's payload).
pub const OPEN_WORKSPACE: &str = "open-workspace";
pub const SETTINGS: &str = "settings";
pub const HELP: &str = "help";
pub const CHECK_UPDATES: &str = "check-updates";
/// Menu ids handled here.
pub const QUIT: &str = "quit";
pub const RELOAD: &str = "reload";
pub const FULLSCREEN: &str = "toggle-fullscreen";
pub const OPEN_RECENT: &str = "open-recent";
/// A recent workspace's item id is this prefix and its path, so a click needs no lookup table.
pub const RECENT_PREFIX: &str = "recent:";
const NO_RECENT: &str = "recent-none";

/// The app's own items: (id, label, accelerator). One table, so the test checks what is built.
pub const ITEMS: &[(&str, &str, Option<&str>)] = &[
    (OPEN_WORKSPACE, "Open Workspace…", Some("CmdOrCtrl+O")),
    (SETTINGS, "Settings…", Some("CmdOrCtrl+,")),
    (QUIT, "Quit Kiln", Some("CmdOrCtrl+Q")),
    (RELOAD, "Reload", Some("CmdOrCtrl+R")),
    (FULLSCREEN, "Toggle Full Screen", Some("F11")),
    (HELP, "Documentation", Some("F1")),
    (CHECK_UPDATES, "Check for Updates…", None),
];

fn item<R: Runtime, M: Manager<R>>(app: &M, id: &str) -> tauri::Result<MenuItem<R>> {
    let (_, label, accelerator) = ITEMS.iter().find(|(i, _, _)| *i == id).expect("a listed menu item");
    MenuItem::with_id(app, id, label, true, *accelerator)
}

/// Holds the Open Recent submenu, so it can be refilled when the engine's list changes.
pub struct RecentMenu<R: Runtime>(pub Mutex<Submenu<R>>);

/// The whole menu bar, with `recent` (the engine's recent workspaces, newest first) under File ▸ Open Recent.
pub fn build<R: Runtime, M: Manager<R>>(app: &M, recent: &[String]) -> tauri::Result<(Menu<R>, Submenu<R>)> {
    let open_recent = Submenu::with_id(app, OPEN_RECENT, "Open Recent", true)?;
    fill_recent(app, &open_recent, recent)?;
    let separator = || PredefinedMenuItem::separator(app);
    let file = Submenu::with_items(
        app,
        "File",
        true,
        &[
            &item(app, OPEN_WORKSPACE)?,
            &open_recent,
            &separator()?,
            &item(app, SETTINGS)?,
            &separator()?,
            &item(app, QUIT)?,
        ],
    )?;
    let edit = Submenu::with_items(
        app,
        "Edit",
        true,
        &[
            &PredefinedMenuItem::undo(app, None)?,
            &PredefinedMenuItem::redo(app, None)?,
            &separator()?,
            &PredefinedMenuItem::cut(app, None)?,
            &PredefinedMenuItem::copy(app, None)?,
            &PredefinedMenuItem::paste(app, None)?,
            &PredefinedMenuItem::select_all(app, None)?,
        ],
    )?;
    let view = Submenu::with_items(app, "View", true, &[&item(app, RELOAD)?, &item(app, FULLSCREEN)?])?;
    let about = AboutMetadata {
        name: Some("Kiln".into()),
        version: Some(env!("CARGO_PKG_VERSION").into()),
        comments: Some(env!("CARGO_PKG_DESCRIPTION").into()),
        license: Some(env!("CARGO_PKG_LICENSE").into()),
        ..Default::default()
    };
    let help = Submenu::with_items(
        app,
        "Help",
        true,
        &[
            &item(app, HELP)?,
            &item(app, CHECK_UPDATES)?,
            &separator()?,
            &PredefinedMenuItem::about(app, Some("About Kiln"), Some(about))?,
        ],
    )?;
    let menu = Menu::with_items(app, &[&file, &edit, &view, &help])?;
    Ok((menu, open_recent))
}

/// Replaces the Open Recent items with `recent` (a disabled "No recent workspaces" when empty).
pub fn fill_recent<R: Runtime, M: Manager<R>>(app: &M, submenu: &Submenu<R>, recent: &[String]) -> tauri::Result<()> {
    for old in submenu.items()? {
        submenu.remove(&old)?;
    }
    if recent.is_empty() {
        submenu.append(&MenuItem::with_id(app, NO_RECENT, "No recent workspaces", false, None::<&str>)?)?;
    }
    for path in recent {
        submenu.append(&MenuItem::with_id(app, format!("{RECENT_PREFIX}{path}"), path, true, None::<&str>)?)?;
    }
    Ok(())
}

/// The ids and labels of a submenu's items (tests; separators have empty ids).
pub fn describe<R: Runtime>(items: &[MenuItemKind<R>]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|kind| {
            let text = match kind {
                MenuItemKind::MenuItem(i) => i.text(),
                MenuItemKind::Submenu(i) => i.text(),
                MenuItemKind::Predefined(i) => i.text(),
                MenuItemKind::Check(i) => i.text(),
                MenuItemKind::Icon(i) => i.text(),
            };
            (kind.id().0.clone(), text.unwrap_or_default())
        })
        .collect()
}

/// What a click does: the UI's items become a `menu` event to the main window; a recent
/// workspace is opened through the engine (whose `workspace` event the UI follows).
pub fn on_event<R: Runtime>(app: &AppHandle<R>, event: MenuEvent) {
    let id = event.id().0.as_str();
    match id {
        OPEN_WORKSPACE | SETTINGS | HELP | CHECK_UPDATES => {
            crate::background::focus_main(app);
            if let Err(e) = app.emit_to("main", MENU_EVENT, id) {
                eprintln!("kiln: menu: {e}");
            }
        }
        // Asks first while work runs (background.rs).
        QUIT => crate::background::quit(app),
        RELOAD => {
            if let Some(window) = app.get_webview_window("main") {
                let _ = window.reload();
            }
        }
        FULLSCREEN => {
            if let Some(window) = app.get_webview_window("main") {
                let full = window.is_fullscreen().unwrap_or(false);
                let _ = window.set_fullscreen(!full);
            }
        }
        _ => {
            if let Some(path) = id.strip_prefix(RECENT_PREFIX) {
                open_workspace(app, path.to_string());
            }
        }
    }
}

/// Refills Open Recent whenever the engine opens a workspace (that is when its list changes).
pub fn follow_recent<R: Runtime>(app: AppHandle<R>, engine: Arc<Engine>) {
    let mut sub = engine.subscribe(None);
    tauri::async_runtime::spawn(async move {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            match sub.receiver.recv().await {
                Ok(event) if matches!(event.body, EventBody::Workspace { .. }) => {}
                Ok(_) => continue,
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => break,
            }
            let recent = engine.get_state(EmptyArgs::default()).await.map(|s| s.recent_workspaces).unwrap_or_default();
            if let Some(state) = app.try_state::<RecentMenu<R>>() {
                let submenu = state.0.lock().unwrap().clone();
                if let Err(e) = fill_recent(&app, &submenu, &recent) {
                    eprintln!("kiln: updating Open Recent: {e}");
                }
            }
        }
    });
}

/// Opens `path` in the app's engine (a recent workspace, a second launch's `--workspace`), off
/// the main thread; a failure is logged (the UI keeps its workspace).
pub fn open_workspace<R: Runtime>(app: &AppHandle<R>, path: String) {
    let Some(engine) = app.try_state::<Arc<Engine>>() else { return };
    let engine = engine.inner().clone();
    tauri::async_runtime::spawn(async move {
        if let Err(e) = engine.open_workspace(OpenWorkspaceArgs { path }).await {
            eprintln!("kiln: could not open the workspace: {} ({:?})", e.message, e.code);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use tauri::test::mock_app;

    fn submenu<R: Runtime>(menu: &Menu<R>, title: &str) -> Submenu<R> {
        menu.items()
            .unwrap()
            .into_iter()
            .find_map(|k| k.as_submenu().filter(|s| s.text().unwrap() == title).cloned())
            .unwrap_or_else(|| panic!("no {title} menu"))
    }

    #[test]
    fn the_menu_has_the_usual_entries() {
        let app = mock_app();
        let recent = vec!["/home/u/shop".to_string(), "/srv/api".to_string()];
        let (menu, open_recent) = build(app.handle(), &recent).unwrap();
        let titles: Vec<_> = describe(&menu.items().unwrap()).into_iter().map(|(_, t)| t).collect();
        assert_eq!(titles, ["File", "Edit", "View", "Help"]);

        let file = describe(&submenu(&menu, "File").items().unwrap());
        let ids: Vec<_> = file.iter().map(|(id, _)| id.as_str()).filter(|id| !id.is_empty()).collect();
        assert!(ids.starts_with(&[OPEN_WORKSPACE, OPEN_RECENT]), "{ids:?}");
        assert!(ids.contains(&SETTINGS) && ids.last() == Some(&QUIT), "{ids:?}");
        let recent_items = describe(&open_recent.items().unwrap());
        assert_eq!(
            recent_items,
            [("recent:/home/u/shop".into(), "/home/u/shop".into()), ("recent:/srv/api".into(), "/srv/api".into())]
        );

        let edit: Vec<_> = describe(&submenu(&menu, "Edit").items().unwrap())
            .into_iter()
            .map(|(_, t)| t)
            .filter(|t| !t.is_empty())
            .collect();
        assert_eq!(edit.len(), 6, "undo, redo, cut, copy, paste, select all: {edit:?}");
        let view: Vec<_> = describe(&submenu(&menu, "View").items().unwrap()).into_iter().map(|(id, _)| id).collect();
        assert_eq!(view, [RELOAD, FULLSCREEN]);
        let help: Vec<_> = describe(&submenu(&menu, "Help").items().unwrap()).into_iter().map(|(_, t)| t).collect();
        assert!(help.starts_with(&["Documentation".to_string(), "Check for Updates…".to_string()]), "{help:?}");
        assert!(help.iter().any(|t| t == "About Kiln"), "{help:?}");

        // The shortcuts the issue asks for.
        let accel = |id: &str| ITEMS.iter().find(|(i, _, _)| *i == id).and_then(|(_, _, a)| *a);
        assert_eq!(accel(OPEN_WORKSPACE), Some("CmdOrCtrl+O"));
        assert_eq!(accel(SETTINGS), Some("CmdOrCtrl+,"));
        assert_eq!(accel(QUIT), Some("CmdOrCtrl+Q"));
    }

    #[test]
    fn open_recent_is_refilled() {
        let app = mock_app();
        let (_, open_recent) = build(app.handle(), &[]).unwrap();
        assert_eq!(describe(&open_recent.items().unwrap()), [(NO_RECENT.into(), "No recent workspaces".into())]);
        fill_recent(app.handle(), &open_recent, &["/a".to_string()]).unwrap();
        assert_eq!(describe(&open_recent.items().unwrap()), [("recent:/a".into(), "/a".into())]);
    }
}
