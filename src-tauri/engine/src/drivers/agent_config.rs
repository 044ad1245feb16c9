//! An agent CLI's own configuration, put back after each turn. Where Landlock cannot keep
//! a turn out of the agent's configuration (Codex writes databases, locks and caches all
//! over `$CODEX_HOME`, so the whole directory must stay writable), a turn could leave a
//! `notify` program or an MCP server in `config.toml`, or instructions in `AGENTS.md`,
//! which would run, or speak to the agent, the next time the user starts it by hand,
//! outside Kiln. So the files are read before the turn and, if the turn changed them, put
//! back after it, through a handle on the directory (no link followed), and the transcript
//! says so. Claude's configuration is simply not writable (`crate::sandbox::CLAUDE_STATE`).

use std::path::{Path, PathBuf};

use crate::paths::beneath::Beneath;

/// Codex's files that configure or instruct it, relative to `$CODEX_HOME`.
pub const CODEX_CONFIG: &[&str] = &["config.toml", "AGENTS.md", "AGENTS.override.md"];

/// A configuration file larger than this is not Codex's to have: it is not guarded (and
/// the note says so if a turn changes it).
const MAX_BYTES: u64 = 1024 * 1024;

/// A file's bytes and mode, or `None` when it is missing.
type Found = Option<(Vec<u8>, u32)>;

/// The guarded files as the turn found them.
pub struct Guard {
    dir: Option<Beneath>,
    before: Vec<(PathBuf, Found)>,
}

impl Guard {
    /// Reads `files` beneath `dir` (a missing directory guards nothing: a turn that makes it
    /// makes the files too, and they are removed after).
    pub fn take(dir: Option<PathBuf>, files: &[&str]) -> Guard {
        let dir = dir.and_then(|d| Beneath::open(&d).ok());
        let before = match &dir {
            Some(dir) => files.iter().map(|f| (PathBuf::from(f), read(dir, Path::new(f)))).collect(),
            None => Vec::new(),
        };
        Guard { dir, before }
    }

    /// Nothing to guard.
    pub fn none() -> Guard {
        Guard { dir: None, before: Vec::new() }
    }

    /// Puts back each file the turn changed, created or removed; one line for the
    /// transcript when there was any.
    pub fn put_back(self) -> Option<String> {
        let dir = self.dir?;
        let mut put_back = Vec::new();
        let mut failed = Vec::new();
        for (rel, before) in self.before {
            let now = read(&dir, &rel);
            if now == before {
                continue;
            }
            let done = match &before {
                Some((bytes, mode)) => dir.replace(&rel, bytes, *mode),
                None => dir.remove(&rel),
            };
            match done {
                Ok(()) => put_back.push(format!("`{}`", rel.display())),
                Err(e) => failed.push(format!("`{}` ({e})", rel.display())),
            }
        }
        if put_back.is_empty() && failed.is_empty() {
            return None;
        }
        let home = dir.real().display();
        let mut text = String::new();
        if !put_back.is_empty() {
            text.push_str(&format!(
                "The agent changed its own configuration in `{home}`: {}. Kiln put it back, since it would run \
                 the next time you start the agent yourself.",
                put_back.join(", ")
            ));
        }
        if !failed.is_empty() {
            text.push_str(&format!(
                "{}The agent changed its own configuration in `{home}` and Kiln could not put it back: {}. Check \
                 it before you start the agent yourself.",
                if text.is_empty() { "" } else { " " },
                failed.join(", ")
            ));
        }
        Some(text)
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
        assert!(note.contains("`config.toml`") && note.contains("Kiln put it back"), "{note}");
        assert_eq!(std::fs::read_to_string(path("config.toml")).unwrap(), "model = \"mine\"\n");
        assert!(!std::fs::symlink_metadata(path("AGENTS.md")).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(path("AGENTS.md")).unwrap(), "Be brief.\n");
        assert!(!path("AGENTS.override.md").exists());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "theirs\n", "the link's target is untouched");
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
