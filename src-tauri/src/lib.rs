//! The Kiln app: the desktop window (Tauri), `kiln serve`, and the `kiln session` CLI,
//! all thin adapters over `kiln_engine::Engine`.

pub mod background;
pub mod browser;
pub mod cli;
pub mod commands;
pub mod desktop;
pub mod menu;
pub mod recent;
pub mod serve;

use std::path::PathBuf;

/// Where Kiln keeps its own small state (recent workspaces): `KILN_CONFIG_DIR`, else
/// the platform's config directory.
pub fn config_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("KILN_CONFIG_DIR") {
        return PathBuf::from(dir);
    }
    dirs::config_dir().unwrap_or_else(std::env::temp_dir).join("kiln")
}
