//! The desktop window: the engine behind Tauri IPC, the UI embedded in the binary.

use std::sync::Arc;

use kiln_engine::types::{OpenWorkspaceArgs, Transport};
use kiln_engine::{Engine, EngineOptions};

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

/// Opens the window; with `workspace`, that workspace is open when the UI starts.
pub fn run(workspace: Option<String>) -> Result<(), Box<dyn std::error::Error>> {
    let engine = Arc::new(Engine::new(EngineOptions { config_dir: crate::config_dir(), transport: Transport::Desktop, mode: kiln_engine::types::ServeMode::Loopback }));
    if let Some(path) = workspace {
        let opened = tauri::async_runtime::block_on(engine.open_workspace(OpenWorkspaceArgs { path }));
        if let Err(e) = opened {
            eprintln!("kiln: could not open the workspace: {} ({:?})", e.message, e.code);
        }
    }
    let mut context = context();
    if let Some(url) = start_url(std::env::var(UI_ROUTE_ENV).ok()) {
        for window in context.config_mut().app.windows.iter_mut().filter(|w| w.label == "main") {
            window.url = url.clone();
        }
    }
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .manage(engine.clone())
        .invoke_handler(crate::commands::handler())
        .build(context)?;
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
    use super::start_url;

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
}
