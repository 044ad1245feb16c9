//! ACP names files by absolute paths; Kiln confines every path it did not make with
//! `kiln_runtime::paths`, which takes paths relative to a root. Here an agent's path becomes one
//! relative to the session's working copy (as the turn was given it, or by its real path),
//! is checked by its text, and is then opened beneath a handle of the working copy
//! (`kiln_runtime::paths::beneath`): outside the working copy, `.git`, `.kiln` or a link leading
//! out are refused, and so is a write through any link, however the tree changes meanwhile.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kiln_runtime::paths::beneath::Beneath;

use kiln_types::error::Result;

#[derive(Debug, Clone)]
pub struct Workdir {
    given: PathBuf,
    real: PathBuf,
    /// The working copy held open when the session started (none when it could not be).
    beneath: Option<Arc<Beneath>>,
}

impl Workdir {
    pub fn new(given: &Path) -> Workdir {
        let real = given.canonicalize().unwrap_or_else(|_| given.to_path_buf());
        let beneath = Beneath::open(&real).ok().map(Arc::new);
        Workdir { given: given.to_path_buf(), real, beneath }
    }

    pub fn path(&self) -> &Path {
        &self.given
    }

    /// `raw` relative to the working copy (`/`-separated), when it names a place inside
    /// it by its text; a relative path is taken as relative to it already.
    pub fn relative(&self, raw: &str) -> Option<String> {
        let path = Path::new(raw);
        if path.is_relative() {
            return Some(raw.to_string());
        }
        let rest = path.strip_prefix(&self.given).or_else(|_| path.strip_prefix(&self.real)).ok()?;
        let rest = rest.to_string_lossy().replace('\\', "/");
        Some(if rest.is_empty() { ".".into() } else { rest })
    }

    /// Whether `raw` is inside the working copy and allowed there (`confine`'s rules).
    pub fn contains(&self, raw: &str) -> bool {
        self.confine(raw).is_ok()
    }

    /// The real location of `raw`, confined to the working copy.
    pub fn confine(&self, raw: &str) -> Result<PathBuf> {
        kiln_runtime::paths::confine(&self.real, &self.inside(raw)?)
    }

    /// `raw` checked as a name inside the working copy, relative to it, with the handle to
    /// open it beneath.
    pub fn beneath(&self, raw: &str) -> Result<(&Beneath, PathBuf)> {
        let relative = kiln_runtime::paths::relative(&self.inside(raw)?)?;
        let beneath = self.beneath.as_deref().ok_or_else(|| {
            kiln_runtime::paths::refused(raw, "the session's working copy could not be opened when the session started")
        })?;
        Ok((beneath, relative))
    }

    /// `relative`, or the refusal of a path outside the working copy.
    fn inside(&self, raw: &str) -> Result<String> {
        self.relative(raw).ok_or_else(|| kiln_runtime::paths::refused(raw, "it is outside the session's working copy"))
    }

    /// `raw` as the transcript shows it: relative when inside, else as the agent sent it.
    pub fn shown(&self, raw: &str) -> String {
        self.relative(raw).unwrap_or_else(|| raw.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_paths_inside_are_confined_and_others_refused() {
        let dir = tempfile::tempdir().unwrap();
        let work = Workdir::new(dir.path());
        let inside = format!("{}/src/a.rs", dir.path().display());
        assert_eq!(work.relative(&inside).as_deref(), Some("src/a.rs"));
        assert!(work.confine(&inside).unwrap().ends_with("src/a.rs"));
        assert!(work.contains("src/a.rs"));
        for outside in ["/etc/passwd", "../x", &format!("{}/.git/config", dir.path().display())] {
            assert!(!work.contains(outside), "{outside}");
        }
        assert_eq!(work.shown("/etc/passwd"), "/etc/passwd");
    }
}
