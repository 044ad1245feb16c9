//! What the commands Kiln runs for a session may not even read: Kiln's own state. The
//! config directory (access tokens, browser sessions) and every open workspace's `.kiln`
//! (the database, `secret.key` that opens the stored provider keys, the checkpoint store
//! and the other sessions) are registered here when the engine starts and a workspace
//! opens; a scope then shows only its own session's directory inside them.
//!
//! Landlock only grants, it cannot deny a path beneath a granted one. So reads are
//! granted on everything *around* what is hidden: walking down from `/` along each hidden
//! path, every sibling is granted whole, and the hidden path itself is not. The price:
//! the directories on the way (`/`, the home directory, the workspace root) cannot be
//! listed, though everything in them but the hidden part can be read, and an entry
//! created in one of them after the command started cannot be read by it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

static HIDDEN: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Hides `path` from every scoped command from now on (it must exist: a path that does
/// not is left alone, as there is nothing to read).
pub fn hide(path: &Path) {
    let Ok(real) = std::fs::canonicalize(path) else { return };
    let mut hidden = HIDDEN.lock().unwrap();
    if !hidden.contains(&real) {
        hidden.push(real);
    }
}

/// The paths hidden so far.
pub fn hidden() -> Vec<PathBuf> {
    HIDDEN.lock().unwrap().clone()
}

/// The paths to grant reads beneath so that everything is readable except `hidden`,
/// with `shown` (paths inside a hidden one) readable again. All paths are canonical.
pub fn readable_roots(hidden: &[PathBuf], shown: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    visit(Path::new("/"), hidden, shown, &mut out);
    out
}

fn visit(dir: &Path, hidden: &[PathBuf], shown: &[PathBuf], out: &mut Vec<PathBuf>) {
    if hidden.iter().any(|h| h == dir) {
        out.extend(shown.iter().filter(|s| s.starts_with(dir)).cloned());
        return;
    }
    if !hidden.iter().any(|h| h.starts_with(dir)) {
        out.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        // A link is granted as what it leads to (the rule opens it): never one that
        // leads into a hidden path, unless into a shown one.
        if entry.file_type().map(|t| t.is_symlink()).unwrap_or(true) {
            let Ok(target) = std::fs::canonicalize(&path) else { continue };
            let inside = |list: &[PathBuf]| list.iter().any(|p| target.starts_with(p));
            if !inside(hidden) || inside(shown) {
                out.push(path);
            }
            continue;
        }
        visit(&path, hidden, shown, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_around_the_hidden_path_is_granted_and_the_shown_one_again() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        for dir in ["ws/.kiln/sessions/a/workspace", "ws/.kiln/sessions/b", "ws/src", "config/kiln", "other"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::fs::write(root.join("ws/.kiln/secret.key"), "k").unwrap();
        std::os::unix::fs::symlink(root.join("ws/.kiln"), root.join("link-in")).unwrap();
        std::os::unix::fs::symlink(root.join("ws/.kiln/sessions/a"), root.join("link-shown")).unwrap();
        std::os::unix::fs::symlink(root.join("other"), root.join("link-out")).unwrap();
        let hidden = [root.join("ws/.kiln"), root.join("config/kiln")];
        let shown = [root.join("ws/.kiln/sessions/a")];
        let granted = readable_roots(&hidden, &shown);
        let has = |p: &Path| granted.contains(&p.to_path_buf());
        for path in ["ws/src", "other", "ws/.kiln/sessions/a", "link-out", "link-shown"] {
            assert!(has(&root.join(path)), "{path} readable: {granted:?}");
        }
        for path in ["ws", "ws/.kiln", "ws/.kiln/sessions/b", "config", "config/kiln", "link-in"] {
            assert!(!has(&root.join(path)), "{path} not granted: {granted:?}");
        }
        // No grant leads into a hidden path other than through the shown one.
        for path in &granted {
            let real = path.canonicalize().unwrap_or(path.clone());
            assert!(!hidden.iter().any(|h| real.starts_with(h)) || real.starts_with(&shown[0]), "{}", path.display());
        }
        assert!(has(Path::new("/usr")) && !has(Path::new("/")), "the rest of the system stays readable");
    }
}
