//! The recent-workspaces list on disk: `recent-workspaces.json` in the app's config directory,
//! which the desktop's Open Recent menu and start page read. The engine decides what the list
//! holds (and hides it from a self-hosted server's users); this file only keeps it.

use std::path::PathBuf;

use kiln_engine::RecentWorkspaces;

const RECENT_FILE: &str = "recent-workspaces.json";

/// The list in `dir`, a JSON array of workspace roots, newest first.
pub struct RecentFile {
    dir: PathBuf,
}

impl RecentFile {
    pub fn in_dir(dir: PathBuf) -> RecentFile {
        RecentFile { dir }
    }
}

impl RecentWorkspaces for RecentFile {
    fn load(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join(RECENT_FILE))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    fn store(&self, recent: &[String]) {
        // Written aside and renamed, so a reader never sees half a list.
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(&self.dir)?;
            let tmp = self.dir.join(format!("{RECENT_FILE}.tmp"));
            std::fs::write(&tmp, serde_json::to_vec_pretty(recent)?)?;
            std::fs::rename(tmp, self.dir.join(RECENT_FILE))
        };
        if let Err(e) = write() {
            tracing::warn!("remembering the recent workspace: {e}");
        }
    }
}
