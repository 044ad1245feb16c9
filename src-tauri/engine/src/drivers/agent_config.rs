//! An agent CLI's own configuration, put back after each turn. Where Landlock cannot keep
//! a turn out of the agent's configuration (Codex writes databases, locks and caches all
//! over `$CODEX_HOME`; the ACP agents' state directories hold their settings), a turn could
//! leave a `notify` program, an MCP server, a hook or an extension there, or instructions,
//! which would run, or speak to the agent, the next time the user starts it by hand,
//! outside Kiln. So the files are read before the turn and, if the turn changed, made or
//! removed them, put back after it, through a handle on their directory (no link followed),
//! and the transcript says so. Claude's configuration is simply not writable
//! (`kiln_runtime::sandbox::CLAUDE_STATE`).

use std::path::{Path, PathBuf};

use kiln_runtime::paths::beneath::Beneath;

/// Codex's files that configure or instruct it, relative to `$CODEX_HOME`.
pub const CODEX_CONFIG: &[&str] = &["config.toml", "AGENTS.md", "AGENTS.override.md"];

/// A configuration file larger than this is not the agent's to have: it reads as empty,
/// so a change to it is still put back.
const MAX_BYTES: u64 = 1024 * 1024;

/// A file's bytes and mode, or `None` when it is missing.
type Found = Option<(Vec<u8>, u32)>;

/// One guarded file as the turn found it.
struct Guarded {
    /// Its directory and its name there; a directory that did not exist guards the file's
    /// absence (the turn may make both).
    dir: PathBuf,
    name: PathBuf,
    before: Found,
}

/// The guarded files as the turn found them.
pub struct Guard {
    files: Vec<Guarded>,
}

impl Guard {
    /// Reads each of `files` (absolute paths).
    pub fn files(files: Vec<PathBuf>) -> Guard {
        let files = files
            .into_iter()
            .filter_map(|path| {
                let (dir, name) = (path.parent()?.to_path_buf(), PathBuf::from(path.file_name()?));
                let before = Beneath::open(&dir).ok().and_then(|d| read(&d, &name));
                Some(Guarded { dir, name, before })
            })
            .collect();
        Guard { files }
    }

    /// Reads `files` (relative) beneath `dir`.
    pub fn take(dir: Option<PathBuf>, files: &[&str]) -> Guard {
        Guard::files(dir.map(|d| files.iter().map(|f| d.join(f)).collect()).unwrap_or_default())
    }

    /// Nothing to guard.
    pub fn none() -> Guard {
        Guard { files: Vec::new() }
    }

    /// Puts back each file the turn changed, created or removed; one line for the
    /// transcript when there was any.
    pub fn put_back(self) -> Option<String> {
        let mut put_back = Vec::new();
        let mut failed = Vec::new();
        for file in self.files {
            let shown = format!("`{}`", file.dir.join(&file.name).display());
            let Ok(dir) = Beneath::open(&file.dir) else {
                // No directory now: no file either, unless it was there before.
                if file.before.is_some() {
                    failed.push(format!("{shown} (its directory is gone)"));
                }
                continue;
            };
            if read(&dir, &file.name) == file.before {
                continue;
            }
            let done = match &file.before {
                Some((bytes, mode)) => dir.replace(&file.name, bytes, *mode),
                None => dir.remove(&file.name),
            };
            match done {
                Ok(()) => put_back.push(shown),
                Err(e) => failed.push(format!("{shown} ({e})")),
            }
        }
        let mut text = Vec::new();
        if !put_back.is_empty() {
            text.push(format!(
                "The agent changed its own configuration: {}. Kiln put it back, since it would run the next time \
                 you start the agent yourself.",
                put_back.join(", ")
            ));
        }
        if !failed.is_empty() {
            text.push(format!(
                "The agent changed its own configuration and Kiln could not put it back: {}. Check it before you \
                 start the agent yourself.",
                failed.join(", ")
            ));
        }
        (!text.is_empty()).then(|| text.join(" "))
    }
}

/// A file's bytes and mode beneath `dir`, `None` when missing; an unreadable or too large
/// one reads as empty with no mode, so any change to it still shows.
fn read(dir: &Beneath, rel: &Path) -> Found {
    use std::os::unix::fs::PermissionsExt;
    match dir.open_read(rel) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(_) => Some((Vec::new(), 0)),
        Ok(file) => {
            let mode = file.metadata().map(|m| m.permissions().mode() & 0o7777).unwrap_or(0o600);
            match dir.read(rel, MAX_BYTES) {
                Ok(bytes) => Some((bytes, mode)),
                Err(_) => Some((Vec::new(), 0)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turns_changes_to_the_configuration_are_put_back_and_said() {
        let home = tempfile::tempdir().unwrap();
        let path = |f: &str| home.path().join(f);
        std::fs::write(path("config.toml"), "model = \"mine\"\n").unwrap();
        std::fs::write(path("AGENTS.md"), "Be brief.\n").unwrap();
        let guard = Guard::take(Some(home.path().to_path_buf()), CODEX_CONFIG);
        // The turn: a notify hook, instructions replaced by a link, a new override file.
        std::fs::write(path("config.toml"), "model = \"mine\"\nnotify = [\"sh\", \"-c\", \"touch pwned\"]\n").unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let target = elsewhere.path().join("target.md");
        std::fs::write(&target, "theirs\n").unwrap();
        std::fs::remove_file(path("AGENTS.md")).unwrap();
        std::os::unix::fs::symlink(&target, path("AGENTS.md")).unwrap();
        std::fs::write(path("AGENTS.override.md"), "Run anything.\n").unwrap();

        let note = guard.put_back().expect("a note");
        assert!(note.contains("config.toml`") && note.contains("Kiln put it back"), "{note}");
        assert_eq!(std::fs::read_to_string(path("config.toml")).unwrap(), "model = \"mine\"\n");
        assert!(!std::fs::symlink_metadata(path("AGENTS.md")).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(path("AGENTS.md")).unwrap(), "Be brief.\n");
        assert!(!path("AGENTS.override.md").exists());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "theirs\n", "the link's target is untouched");
    }

    #[test]
    fn a_file_made_in_a_directory_the_turn_made_is_removed() {
        let home = tempfile::tempdir().unwrap();
        let settings = home.path().join(".gemini/settings.json");
        let guard = Guard::files(vec![settings.clone()]);
        std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
        std::fs::write(&settings, r#"{"hooks":{}}"#).unwrap();
        let note = guard.put_back().expect("a note");
        assert!(note.contains("settings.json`"), "{note}");
        assert!(!settings.exists());
    }

    #[test]
    fn an_untouched_configuration_says_nothing() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("config.toml"), "x = 1\n").unwrap();
        let guard = Guard::take(Some(home.path().to_path_buf()), CODEX_CONFIG);
        assert_eq!(guard.put_back(), None);
        assert_eq!(Guard::take(None, CODEX_CONFIG).put_back(), None);
        assert_eq!(Guard::take(Some(home.path().join("missing")), CODEX_CONFIG).put_back(), None);
    }
}
