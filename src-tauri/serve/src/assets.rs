//! Where the UI's files come from: the desktop binary hands over the assets Tauri
//! embedded in it; tests and development serve a directory.

use std::path::PathBuf;

pub trait Assets: Send + Sync + 'static {
    /// The file at a relative path (`index.html`, `assets/app.js`) and its MIME type.
    fn get(&self, path: &str) -> Option<(Vec<u8>, String)>;
}

/// Files of a directory, normally `ui/dist`.
pub struct DirAssets(pub PathBuf);

impl Assets for DirAssets {
    fn get(&self, path: &str) -> Option<(Vec<u8>, String)> {
        if path.split('/').any(|seg| seg == ".." || seg.is_empty() || seg.starts_with('.')) {
            return None;
        }
        let file = self.0.join(path);
        let bytes = std::fs::read(&file).ok()?;
        Some((bytes, mime_for(path)))
    }
}

/// The Content-Type of a UI file: the rule every listener of Kiln's shares.
pub fn mime_for(path: &str) -> String {
    kiln_runtime::listening::content_type(path)
}
