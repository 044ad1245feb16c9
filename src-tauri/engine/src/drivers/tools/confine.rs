//! Where the openai-compatible driver's tools may read and write: inside the session's
//! working copy and nowhere else, by the same rules as every request (`crate::paths`):
//! no absolute path, no `..`, no control characters, no `.git` or `.kiln` (the
//! repository's history and Kiln's own state are not the agent's to touch), and no
//! symbolic link leading out. A refusal is an error message for the model, never a panic.

use std::path::{Path, PathBuf};

pub use crate::paths::is_private;

/// The working copy, by its real (canonical) path, taken once when the turn starts: a
/// working copy later swapped for a link does not move where the tools may go.
#[derive(Debug, Clone)]
pub struct Root {
    real: PathBuf,
}

impl Root {
    pub fn new(workdir: &Path) -> std::io::Result<Root> {
        Ok(Root { real: workdir.canonicalize()? })
    }

    pub fn path(&self) -> &Path {
        &self.real
    }

    /// The real location of `raw` (relative to the working copy), for reading or for
    /// writing; `.` is the working copy itself. The refusal is the model's message.
    pub fn resolve(&self, raw: &str) -> Result<PathBuf, String> {
        crate::paths::relative(raw)
            .and_then(|relative| crate::paths::confine_real(&self.real, raw, &relative))
            .map_err(|e| e.message)
    }

    /// `real` as the model should see it: relative to the working copy, `/`-separated.
    pub fn relative(&self, real: &Path) -> String {
        let relative = real.strip_prefix(&self.real).unwrap_or(real).to_string_lossy().replace('\\', "/");
        if relative.is_empty() {
            ".".into()
        } else {
            relative
        }
    }
}
