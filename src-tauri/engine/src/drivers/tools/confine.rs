//! Where the openai-compatible driver's tools may read and write: inside the session's
//! working copy and nowhere else. A path from the model is refused when it is absolute,
//! climbs with `..`, carries control characters, names `.git` or `.kiln` (the
//! repository's history and Kiln's own state are not the agent's to touch), or when its
//! real location, symbolic links followed, is outside the working copy. A refusal is an
//! error message for the model, never a panic.

use std::ffi::OsStr;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

/// Names no tool may pass through, compared without case: on a case-insensitive disk
/// `.GIT` is the same directory as `.git`.
const PRIVATE: [&str; 2] = [".git", ".kiln"];

/// The working copy, by its real (canonical) path, so every check compares real paths.
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
    /// writing: the part that exists is resolved through any symbolic links and must stay
    /// inside; the part that does not exist yet is plain names, so it cannot be a link.
    pub fn resolve(&self, raw: &str) -> Result<PathBuf, String> {
        let refused = |why: &str| format!("refused `{}`: {why}", raw.escape_debug());
        if raw.chars().any(char::is_control) {
            return Err(refused("control characters are not allowed in a path"));
        }
        let mut relative = PathBuf::new();
        for component in Path::new(raw).components() {
            match component {
                Component::CurDir => {}
                Component::Normal(name) if is_private(name) => return Err(refused("`.git` and `.kiln` are off limits")),
                Component::Normal(name) => relative.push(name),
                Component::ParentDir => return Err(refused("`..` is not allowed; paths stay inside the working copy")),
                Component::RootDir | Component::Prefix(_) => {
                    return Err(refused("absolute paths are not allowed; give a path relative to the working copy"))
                }
            }
        }

        let joined = self.real.join(&relative);
        let mut existing = joined.as_path();
        let mut missing: Vec<&OsStr> = Vec::new();
        // `symlink_metadata`, not `exists`: a link that leads nowhere exists, and writing
        // through it would create its target wherever it points.
        loop {
            match existing.symlink_metadata() {
                Ok(_) => break,
                Err(e) if e.kind() == ErrorKind::NotFound && existing != self.real => {
                    missing.extend(existing.file_name());
                    existing = existing.parent().unwrap_or(&self.real);
                }
                Err(e) => return Err(refused(&e.to_string())),
            }
        }
        let real = existing.canonicalize().map_err(|_| refused("it goes through a symbolic link that leads nowhere"))?;
        let inside = real.strip_prefix(&self.real).map_err(|_| refused("it leads outside the working copy"))?;
        // A link inside the working copy may still point into `.git`.
        if inside.components().any(|c| is_private(c.as_os_str())) {
            return Err(refused("it leads into `.git` or `.kiln`, which are off limits"));
        }
        Ok(missing.into_iter().rev().fold(real, |path, name| path.join(name)))
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

pub fn is_private(name: &OsStr) -> bool {
    let name = name.to_string_lossy();
    PRIVATE.iter().any(|p| name.eq_ignore_ascii_case(p))
}
