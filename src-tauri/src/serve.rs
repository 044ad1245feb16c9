//! `kiln serve`: the engine and the embedded UI over loopback HTTP.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use kiln_engine::types::{OpenWorkspaceArgs, Transport};
use kiln_engine::{Engine, EngineOptions};

pub struct ServeOptions {
    pub host: IpAddr,
    pub port: u16,
    pub workspace: Option<String>,
    /// Serve the UI from this directory instead of the copy embedded in the binary.
    pub ui_dir: Option<std::path::PathBuf>,
}

pub fn run(options: ServeOptions) -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        let engine = Arc::new(Engine::new(EngineOptions { config_dir: crate::config_dir(), transport: Transport::Serve, mode: kiln_engine::types::ServeMode::Loopback }));
        if let Some(path) = options.workspace {
            engine
                .open_workspace(OpenWorkspaceArgs { path })
                .await
                .map_err(|e| format!("could not open the workspace: {} ({:?})", e.message, e.code))?;
        }
        let assets: Arc<dyn kiln_serve::Assets> = match options.ui_dir {
            Some(dir) => Arc::new(kiln_serve::DirAssets(dir)),
            None => crate::desktop::embedded_assets(),
        };
        let addr = SocketAddr::new(options.host, options.port);
        kiln_serve::serve(engine, assets, addr, |bound| {
            let host = if bound.ip().is_ipv6() { format!("[{}]", bound.ip()) } else { bound.ip().to_string() };
            println!("Kiln is serving http://{host}:{}/", bound.port());
        })
        .await?;
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}
