//! The desktop window: the engine behind Tauri IPC, the UI embedded in the binary.

use std::sync::Arc;

use kiln_engine::types::{OpenWorkspaceArgs, Transport};
use kiln_engine::{Engine, EngineOptions};

/// The app's context: configuration, capabilities and the embedded UI. Generated in
/// one place so the UI is embedded in the binary once.
fn context() -> tauri::Context<tauri::Wry> {
    tauri::generate_context!("tauri.conf.json")
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
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .manage(engine.clone())
        .invoke_handler(crate::commands::handler())
        .build(context())?;
    app.run(move |_, event| {
        if let tauri::RunEvent::Exit = event {
            // Turns and setups run in process groups of their own: stop them with the app.
            tauri::async_runtime::block_on(engine.shutdown());
        }
    });
    Ok(())
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
