//! Where the openai-compatible driver's tools may read and write: inside the session's
//! working copy and nowhere else. A name is checked by the same rules as every request
//! (`kiln_runtime::paths::relative`: no absolute path, no `..`, no control characters, no `.git`
//! or `.kiln`), then opened beneath a handle of the working copy (`kiln_runtime::paths::beneath`),
//! never by a path string: a directory swapped for a link between a check and an open
//! cannot send a write out. A refusal is an error message for the model, never a panic.

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(super) use kiln_runtime::paths::beneath::Beneath;
pub(super) use kiln_runtime::paths::is_private;

/// The working copy, held open when the turn starts: a working copy later swapped for a
/// link does not move where the tools may go.
#[derive(Debug, Clone)]
pub(super) struct Root {
    beneath: Arc<Beneath>,
}

impl Root {
    pub(super) fn new(workdir: &Path) -> std::io::Result<Root> {
        Ok(Root { beneath: Arc::new(Beneath::open(&workdir.canonicalize()?)?) })
    }

    /// The working copy's real path: for walking and for commands, never to open a name.
    pub(super) fn path(&self) -> &Path {
        self.beneath.real()
    }

    /// The handle every file of the working copy is opened through.
    pub(super) fn beneath(&self) -> &Beneath {
        &self.beneath
    }

    /// `raw` (relative to the working copy) as a checked relative path (empty: the working
    /// copy itself), to open beneath it. The refusal is the model's message.
    pub(super) fn resolve(&self, raw: &str) -> Result<PathBuf, String> {
        kiln_runtime::paths::relative(raw).map_err(|e| e.message)
    }

    /// `path` (relative, or a real path inside the working copy) as the model should see
    /// it: relative to the working copy, `/`-separated.
    pub(super) fn relative(&self, path: &Path) -> String {
        let relative = path.strip_prefix(self.path()).unwrap_or(path).to_string_lossy().replace('\\', "/");
        if relative.is_empty() {
            ".".into()
        } else {
            relative
        }
    }
}
