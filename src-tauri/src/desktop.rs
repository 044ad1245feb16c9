//! The desktop window: the engine behind Tauri IPC, the UI embedded in the binary.

use std::sync::Arc;

use kiln_engine::types::{EmptyArgs, OpenWorkspaceArgs, Transport};
use kiln_engine::{Engine, EngineOptions};
use tauri::{Manager, Runtime};

/// The app's context: configuration, capabilities and the embedded UI. Generated in
/// one place so the UI is embedded in the binary once.
fn context() -> tauri::Context<tauri::Wry> {
    tauri::generate_context!("tauri.conf.json")
}

/// `KILN_UI_ROUTE` (debug use): a hash route of the UI, e.g. `#/session/<id>?preview=1`,
/// that the main window opens instead of the dashboard. Only a `#…` route is taken, so
/// the window never leaves the app's own pages.
pub const UI_ROUTE_ENV: &str = "KILN_UI_ROUTE";

/// The main window's start page for `route`: the app's index with that hash.
fn start_url(route: Option<String>) -> Option<tauri::WebviewUrl> {
    let route = route?.trim().to_string();
    if !route.starts_with("#/") || route.chars().any(|c| c.is_control() || c.is_whitespace()) {
        if !route.is_empty() {
            eprintln!("kiln: ignoring {UI_ROUTE_ENV}={route:?}: it must be a route such as #/session/<id>?preview=1");
        }
        return None;
    }
    Some(tauri::WebviewUrl::App(format!("index.html{route}").into()))
}

/// `KILN_NO_UPDATE_CHECK=1` (tests, packagers, offline machines): the UI does not look for an
/// update when it starts; Help ▸ Check for Updates… still does.
pub const NO_UPDATE_CHECK_ENV: &str = "KILN_NO_UPDATE_CHECK";
/// `KILN_UPDATE_ENDPOINT`: replaces the stable channel's endpoints in `plugins.updater` (another
/// channel, or a loopback update server in tests).
pub const UPDATE_ENDPOINT_ENV: &str = "KILN_UPDATE_ENDPOINT";

/// `endpoint` (`KILN_UPDATE_ENDPOINT`'s value) in place of `plugins.updater`'s endpoints, trimmed;
/// none, or a blank one, leaves the shipped endpoints. Public so tests/updater.rs points the
/// app's own config at its loopback update server the way the app does.
pub fn apply_update_endpoint(config: &mut tauri::Config, endpoint: Option<&str>) {
    let Some(endpoint) = endpoint.map(str::trim).filter(|e| !e.is_empty()) else { return };
    if let Some(updater) = config.plugins.0.get_mut("updater") {
        updater["endpoints"] = serde_json::json!([endpoint]);
    }
}

/// The updater plugin as the app adds it: configured by `plugins.updater` (endpoints and the
/// release public key that every download's signature must verify against). Public so
/// tests/updater.rs checks, downloads and verifies through this very plugin.
pub fn updater_plugin<R: Runtime>() -> tauri::plugin::TauriPlugin<R, tauri_plugin_updater::Config> {
    tauri_plugin_updater::Builder::new().build()
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes"))
}

/// What the UI learns about the desktop before its scripts run, as `window.__KILN_DESKTOP__`:
/// whether to check for an update on start. A plugin's init script, so no command and no
/// permission is needed for it (and `kiln serve`'s pages never have it).
fn desktop_info_script(update_check_on_start: bool) -> String {
    format!("Object.defineProperty(window, '__KILN_DESKTOP__', {{ value: Object.freeze({{ updateCheckOnStart: {update_check_on_start} }}) }});")
}

/// The single-instance plugin's D-Bus name (Linux): the identifier, plus a hash of
/// `KILN_CONFIG_DIR` when it is set, so a test app with its own config directory neither
/// hands its arguments to the user's running Kiln nor receives theirs.
fn instance_id(identifier: &str) -> String {
    match std::env::var_os("KILN_CONFIG_DIR") {
        Some(dir) => {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            dir.hash(&mut hasher);
            format!("{identifier}.i{:016x}", hasher.finish())
        }
        None => identifier.to_string(),
    }
}

/// `--workspace DIR` or `--workspace=DIR` in a second launch's arguments, resolved against its
/// working directory.
fn workspace_arg(argv: &[String], cwd: &str) -> Option<String> {
    let mut args = argv.iter().skip(1);
    while let Some(arg) = args.next() {
        let value = if arg == "--workspace" {
            args.next().cloned()
        } else {
            arg.strip_prefix("--workspace=").map(String::from)
        };
        if let Some(value) = value.filter(|v| !v.trim().is_empty()) {
            return Some(std::path::Path::new(cwd).join(value).to_string_lossy().into_owned());
        }
    }
    None
}

/// Opens the window; with `workspace`, that workspace is open when the UI starts.
pub fn run(workspace: Option<String>) -> Result<(), Box<dyn std::error::Error>> {
    let engine = Arc::new(
        Engine::new(EngineOptions {
            config_dir: crate::config_dir(),
            transport: Transport::Desktop,
            mode: kiln_engine::types::ServeMode::Loopback,
            allow_agent_commands: false,
            allow_terminals: true,
        })
        .remembering_in(Arc::new(crate::recent::RecentFile::in_dir(crate::config_dir()))),
    );
    let mut context = context();
    // First, before the engine touches anything: a second launch hands over and exits here.
    let single_instance = tauri_plugin_single_instance::Builder::new()
        .dbus_id(instance_id(&context.config().identifier))
        .callback(|app, argv, cwd| {
            crate::background::focus_main(app);
            if let Some(path) = workspace_arg(&argv, &cwd) {
                crate::menu::open_workspace(app, path);
            }
        })
        .build();
    if let Some(url) = start_url(std::env::var(UI_ROUTE_ENV).ok()) {
        for window in context.config_mut().app.windows.iter_mut().filter(|w| w.label == "main") {
            window.url = url.clone();
        }
    }
    apply_update_endpoint(context.config_mut(), std::env::var(UPDATE_ENDPOINT_ENV).ok().as_deref());
    // The window's size, position and maximized state, kept in Kiln's config directory (so
    // KILN_CONFIG_DIR isolates it too); an absolute name replaces the plugin's own directory.
    let window_state = tauri_plugin_window_state::Builder::new()
        .with_state_flags(
            tauri_plugin_window_state::StateFlags::SIZE
                | tauri_plugin_window_state::StateFlags::POSITION
                | tauri_plugin_window_state::StateFlags::MAXIMIZED,
        )
        .with_filename(crate::config_dir().join("window-state.json").to_string_lossy())
        .build();
    let desktop_info = tauri::plugin::Builder::<tauri::Wry>::new("kiln-desktop")
        .js_init_script(desktop_info_script(!env_flag(NO_UPDATE_CHECK_ENV)))
        .build();
    let app = tauri::Builder::default()
        .plugin(single_instance)
        .plugin(window_state)
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .plugin(tauri_plugin_shell::init())
        .plugin(updater_plugin())
        .plugin(tauri_plugin_process::init())
        .plugin(desktop_info)
        .manage(engine.clone())
        .setup(move |app| {
            // Here, after the single-instance plugin let this process go on: a second launch
            // must not open the workspace in its own engine (that would close the turns the
            // running one is doing in it as orphans).
            let engine = app.state::<Arc<Engine>>().inner().clone();
            if let Some(path) = workspace {
                let opened = tauri::async_runtime::block_on(engine.open_workspace(OpenWorkspaceArgs { path }));
                if let Err(e) = opened {
                    eprintln!("kiln: could not open the workspace: {} ({:?})", e.message, e.code);
                }
            }
            let recent = tauri::async_runtime::block_on(engine.get_state(EmptyArgs::default()))
                .map(|s| s.recent_workspaces)
                .unwrap_or_default();
            let (menu, open_recent) = crate::menu::build(app.handle(), &recent)?;
            app.set_menu(menu)?;
            app.manage(crate::menu::RecentMenu(std::sync::Mutex::new(open_recent)));
            app.on_menu_event(crate::menu::on_event);
            app.manage(crate::background::Background::<tauri::Wry>::default());
            Ok(())
        })
        // Closing the window while work runs keeps Kiln in the tray (background.rs).
        .on_window_event(crate::background::on_window_event)
        .invoke_handler(crate::commands::handler())
        .build(context)?;
    crate::menu::follow_recent(app.handle().clone(), engine.clone());
    crate::background::follow(app.handle().clone(), engine.clone());
    exit_on_signal(app.handle().clone());
    app.run(move |_, event| {
        if let tauri::RunEvent::Exit = event {
            // Turns and setups run in process groups of their own: stop them with the app.
            tauri::async_runtime::block_on(engine.shutdown());
        }
    });
    Ok(())
}

/// SIGTERM, SIGINT or SIGHUP close the app as its window would: through `RunEvent::Exit`,
/// so the engine stops previews, turns and setups. Without it the signal would end the
/// process at once, and a preview's server (a grandchild, under `sh -c`) would outlive it.
fn exit_on_signal(handle: tauri::AppHandle) {
    #[cfg(unix)]
    tauri::async_runtime::spawn(async move {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut term), Ok(mut int), Ok(mut hup)) =
            (signal(SignalKind::terminate()), signal(SignalKind::interrupt()), signal(SignalKind::hangup()))
        else {
            eprintln!("kiln: could not listen for termination signals");
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
            _ = hup.recv() => {}
        }
        handle.exit(0);
    });
    #[cfg(not(unix))]
    let _ = handle;
}

/// The UI files Tauri embedded, for `kiln serve` to serve the very same build.
pub fn embedded_assets() -> Arc<dyn kiln_serve::Assets> {
    struct Embedded(Box<dyn tauri::Assets<tauri::Wry>>);
    impl kiln_serve::Assets for Embedded {
        fn get(&self, path: &str) -> Option<(Vec<u8>, String)> {
            let key = tauri::utils::assets::AssetKey::from(path);
            let bytes = self.0.get(&key)?;
            Some((bytes.into_owned(), kiln_serve::assets_mime(path).to_string()))
        }
    }
    Arc::new(Embedded(context().assets))
}

#[cfg(test)]
mod tests {
    use super::{desktop_info_script, instance_id, start_url, workspace_arg};

    #[test]
    fn only_hash_routes_are_taken() {
        let url = |r: &str| start_url(Some(r.into())).map(|u| u.to_string());
        assert_eq!(url("#/session/abc?preview=1").as_deref(), Some("index.html#/session/abc?preview=1"));
        assert_eq!(url(" #/settings ").as_deref(), Some("index.html#/settings"));
        for bad in ["", "//evil.example/", "https://evil.example/#/", "#/a b", "#/a\nb", "/#/x", "../x#/"] {
            assert_eq!(url(bad), None, "{bad:?}");
        }
        assert_eq!(start_url(None).map(|u| u.to_string()), None);
    }

    #[test]
    fn a_second_launch_names_its_workspace() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(workspace_arg(&argv(&["kiln", "--workspace", "shop"]), "/home/u").as_deref(), Some("/home/u/shop"));
        assert_eq!(workspace_arg(&argv(&["kiln", "--workspace=/srv/app"]), "/home/u").as_deref(), Some("/srv/app"));
        assert_eq!(workspace_arg(&argv(&["kiln"]), "/home/u"), None);
        assert_eq!(workspace_arg(&argv(&["kiln", "--workspace"]), "/home/u"), None);
        // The program's own name is never taken for an argument.
        assert_eq!(workspace_arg(&argv(&["--workspace=x"]), "/"), None);
    }

    #[test]
    fn the_instance_id_follows_the_config_dir() {
        // KILN_CONFIG_DIR is set for every test run (or not): either way the id starts with the identifier.
        let id = instance_id("dev.kiln.desktop");
        assert!(id.starts_with("dev.kiln.desktop"), "{id}");
        assert_eq!(std::env::var_os("KILN_CONFIG_DIR").is_some(), id != "dev.kiln.desktop");
    }

    #[test]
    fn the_desktop_info_script_only_carries_the_flag() {
        assert!(desktop_info_script(false).contains("updateCheckOnStart: false"));
        assert!(desktop_info_script(true).contains("updateCheckOnStart: true"));
    }
}
