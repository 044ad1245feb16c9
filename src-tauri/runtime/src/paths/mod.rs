//! Confinement of a path that a request or an agent names (ARCHITECTURE.md: Recovery, Security). `confine`
//! turns such a relative path into a path inside a root, or refuses it with
//! `PATH_NOT_ALLOWED`. Every place that builds a path from a name it did not make
//! itself goes through here, so the rules live in one place:
//!
//! - empty, absolute, `..` and control characters (NUL included) are refused by their
//!   text, before the file system is asked anything;
//! - `.git` and `.kiln` segments are refused, without case (a case-insensitive disk
//!   sees `.GIT` as `.git`) and ignoring what such disks ignore (trailing dots and
//!   spaces, zero-width characters): the repository's history and Kiln's own state are
//!   never a request's or an agent's to touch;
//! - the part of the path that exists is resolved through its symbolic links and must
//!   stay inside the root, and not lead into `.git` or `.kiln` either; the part that
//!   does not exist yet is plain names, so it cannot be a link.
//!
//! `.` alone names the root itself; dotted names such as `.eslintrc` are ordinary.

pub mod beneath;

use std::ffi::OsStr;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use kiln_types::error::{ApiError, ErrorCode, Result};

/// Names no path may pass through.
const PRIVATE: [&str; 2] = [".git", ".kiln"];

/// `raw` (relative to `root`) as a path inside `root`, or `PATH_NOT_ALLOWED`.
///
/// The answer is built on `root`'s real (canonical) path with the existing part of
/// `raw` resolved, so what the caller then reads, writes or removes is what was
/// checked. A `root` that does not exist yet holds no link: the answer is then `raw`
/// joined to it as given.
pub fn confine(root: &Path, raw: &str) -> Result<PathBuf> {
    let relative = relative(raw)?;
    match root.canonicalize() {
        Ok(real_root) => confine_real(&real_root, raw, &relative),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(root.join(relative)),
        Err(e) => Err(ApiError::internal("resolving a path's root", e)),
    }
}

/// The textual rules alone: `raw` as a relative path of plain names (`.` segments
/// dropped), or `PATH_NOT_ALLOWED`. For a path that is only joined, never resolved
/// against a root that exists yet.
pub fn relative(raw: &str) -> Result<PathBuf> {
    if raw.is_empty() {
        return Err(refused(raw, "the path is empty; `.` names the root"));
    }
    if raw.chars().any(char::is_control) {
        return Err(refused(raw, "control characters are not allowed in a path"));
    }
    let mut relative = PathBuf::new();
    for component in Path::new(raw).components() {
        match component {
            Component::CurDir => {}
            Component::Normal(name) if is_private(name) => {
                return Err(refused(raw, "`.git` and `.kiln` are off limits"))
            }
            Component::Normal(name) => relative.push(name),
            Component::ParentDir => return Err(refused(raw, "`..` is not allowed; paths stay inside their root")),
            Component::RootDir | Component::Prefix(_) => {
                return Err(refused(raw, "absolute paths are not allowed; give a path relative to the root"))
            }
        }
    }
    Ok(relative)
}

/// `confine`, with no symbolic link anywhere on the way: for Kiln's own directories
/// (a session's `attachments/`, the working copy's `reference/attachments/`), where a
/// link is never Kiln's doing, so even one that stays inside is refused rather than
/// followed to some other file of the root.
pub fn confine_no_links(root: &Path, raw: &str) -> Result<PathBuf> {
    let relative = relative(raw)?;
    let real_root = match root.canonicalize() {
        Ok(real_root) => real_root,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(root.join(relative)),
        Err(e) => return Err(ApiError::internal("resolving a path's root", e)),
    };
    let confined = confine_real(&real_root, raw, &relative)?;
    if confined != real_root.join(&relative) {
        return Err(refused(raw, "it goes through a symbolic link"));
    }
    Ok(confined)
}

/// What stands on the way to a path where a real directory should: a symbolic link or a
/// file, by its root-relative name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InTheWay {
    Link(String),
    File(String),
}

/// The first name on the way to `raw` under `root` (not `raw` itself) that exists but is
/// no real directory, or `None` when every directory on the way that exists is a real
/// one. Nothing is resolved: a link is reported, never followed. For writing into a
/// root (delivery), where a directory link could send a write anywhere, and even a link
/// that stays inside would land a file somewhere its path does not say.
pub fn in_the_way(root: &Path, raw: &str) -> Result<Option<InTheWay>> {
    let relative = relative(raw)?;
    let real_root = match root.canonicalize() {
        Ok(real_root) => real_root,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ApiError::internal("resolving a path's root", e)),
    };
    let names: Vec<&OsStr> = relative.iter().collect();
    let mut at = real_root;
    let mut shown = PathBuf::new();
    for name in names.iter().take(names.len().saturating_sub(1)) {
        at.push(name);
        shown.push(name);
        match at.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => {
                return Ok(Some(InTheWay::Link(shown.to_string_lossy().into_owned())))
            }
            Ok(m) if !m.is_dir() => return Ok(Some(InTheWay::File(shown.to_string_lossy().into_owned()))),
            Ok(_) => {}
            // The rest does not exist yet: plain names, made as directories when written.
            Err(e) if matches!(e.kind(), ErrorKind::NotFound) => break,
            Err(e) => return Err(refused(raw, &e.to_string())),
        }
    }
    Ok(None)
}

/// `raw` under `root`'s real path with no link followed on the way and its last name
/// left as it is: every directory above it that exists is a real one ([`in_the_way`]),
/// so a write or a removal there happens where the path says, and a link in the last
/// place is the thing replaced or removed, never where it points.
pub fn confine_as_named(root: &Path, raw: &str) -> Result<PathBuf> {
    let relative = relative(raw)?;
    match in_the_way(root, raw)? {
        Some(InTheWay::Link(at)) => {
            return Err(refused(raw, &format!("`{at}` is a symbolic link, and a link is never written through")))
        }
        Some(InTheWay::File(at)) => return Err(refused(raw, &format!("`{at}` is a file, not a directory"))),
        None => {}
    }
    match root.canonicalize() {
        Ok(real_root) => Ok(real_root.join(relative)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(root.join(relative)),
        Err(e) => Err(ApiError::internal("resolving a path's root", e)),
    }
}

/// `confine` under a root already known by its real path: the existing part of the
/// path is resolved and must stay inside.
pub(crate) fn confine_real(real_root: &Path, raw: &str, relative: &Path) -> Result<PathBuf> {
    let joined = real_root.join(relative);
    let mut existing = joined.as_path();
    let mut missing: Vec<&OsStr> = Vec::new();
    // `symlink_metadata`, not `exists`: a link that leads nowhere exists, and writing
    // through it would create its target wherever it points. Under a file the rest
    // cannot exist either (`NotADirectory`): what exists is the file.
    loop {
        match existing.symlink_metadata() {
            Ok(_) => break,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) && existing != real_root => {
                missing.extend(existing.file_name());
                existing = existing.parent().unwrap_or(real_root);
            }
            Err(e) => return Err(refused(raw, &e.to_string())),
        }
    }
    let real =
        existing.canonicalize().map_err(|_| refused(raw, "it goes through a symbolic link that leads nowhere"))?;
    let inside = real.strip_prefix(real_root).map_err(|_| refused(raw, "it leads outside its root"))?;
    // A link inside the root may still point into `.git`.
    if inside.components().any(|c| is_private(c.as_os_str())) {
        return Err(refused(raw, "it leads into `.git` or `.kiln`, which are off limits"));
    }
    Ok(missing.into_iter().rev().fold(real, |path, name| path.join(name)))
}

/// Whether `name` is `.git` or `.kiln` as a file system might see it: without case,
/// and without the trailing dots and spaces Windows drops and the zero-width and
/// direction characters macOS drops (git refuses the same spellings).
pub fn is_private(name: &OsStr) -> bool {
    let name = name.to_string_lossy();
    let seen: String = name.chars().filter(|c| !is_ignorable(*c)).collect();
    let seen = seen.trim_end_matches(['.', ' ']);
    PRIVATE.iter().any(|p| seen.eq_ignore_ascii_case(p))
}

/// Code points HFS+ leaves out when it compares names.
fn is_ignorable(c: char) -> bool {
    matches!(c, '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}')
}

/// Refuses a program to run (an agent CLI's path, an ACP command) that lives in the
/// workspace, `.kiln` and every session's working copy included: what an agent writes
/// there would run outside its confinement, with the operator's whole environment, the
/// next time Kiln starts it. Links are followed: a link from elsewhere into the
/// workspace is refused too.
pub fn program_outside(workspace: &Path, program: &str) -> Result<()> {
    let path = Path::new(program);
    if program.is_empty() || !path.is_absolute() {
        return Ok(()); // a name found on PATH, or nothing
    }
    if resolved(path).starts_with(resolved(workspace)) {
        return Err(ApiError::new(
            ErrorCode::PathNotAllowed,
            format!(
                "`{program}` is inside the workspace, where agents write: a program Kiln runs must live outside it (install it, or give the path of an installed copy)"
            ),
        ));
    }
    Ok(())
}

/// `path` as the file system resolves it: its longest existing part through its links,
/// the rest (not there yet) by its names, `..` taking one back.
fn resolved(path: &Path) -> PathBuf {
    for ancestor in path.ancestors() {
        let Ok(mut real) = ancestor.canonicalize() else { continue };
        for part in path.strip_prefix(ancestor).unwrap_or(Path::new("")).components() {
            match part {
                Component::ParentDir => {
                    real.pop();
                }
                Component::Normal(name) => real.push(name),
                _ => {}
            }
        }
        return real;
    }
    path.to_path_buf()
}

/// The refusal, naming the path (short, control characters escaped) and why.
pub fn refused(raw: &str, why: &str) -> ApiError {
    let shown: String = raw.chars().take(120).collect();
    ApiError::new(ErrorCode::PathNotAllowed, format!("refused `{}`: {why}", shown.escape_debug()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn code(root: &Path, raw: &str) -> Option<ErrorCode> {
        confine(root, raw).err().map(|e| e.code)
    }

    /// A root with a file, a directory, and links that stay in, lead out, lead into
    /// `.git`, and lead nowhere; plus a directory outside it.
    fn fixture() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("src/a.txt"), "a").unwrap();
        std::fs::write(outside.join("secret.txt"), "secret").unwrap();
        symlink("src", root.join("inner")).unwrap();
        symlink(&outside, root.join("out")).unwrap();
        symlink(outside.join("secret.txt"), root.join("secret")).unwrap();
        symlink(outside.join("nothing"), root.join("dangling")).unwrap();
        symlink(".git", root.join("git-alias")).unwrap();
        symlink("loop", root.join("loop")).unwrap();
        (tmp, root, outside)
    }

    #[test]
    fn plain_names_resolve_inside_the_real_root() {
        let (_tmp, root, _) = fixture();
        let real = root.canonicalize().unwrap();
        assert_eq!(confine(&root, "src/a.txt").unwrap(), real.join("src/a.txt"));
        assert_eq!(confine(&root, "./src//a.txt").unwrap(), real.join("src/a.txt"));
        assert_eq!(confine(&root, "src/new/deeper.txt").unwrap(), real.join("src/new/deeper.txt"));
        assert_eq!(confine(&root, ".").unwrap(), real);
        // Dotted names are ordinary files; only the two private names are refused.
        for name in [".eslintrc", ".github/workflows/ci.yml", ".gitignore", ".kilnrc", "a..b", "..a", "gitx/.git-keep"]
        {
            assert_eq!(confine(&root, name).unwrap(), real.join(name), "{name}");
        }
        // A link that stays inside resolves to where it points.
        assert_eq!(confine(&root, "inner/a.txt").unwrap(), real.join("src/a.txt"));
        // Under a file nothing exists; the answer is still inside.
        assert_eq!(confine(&root, "src/a.txt/x").unwrap(), real.join("src/a.txt/x"));
    }

    #[test]
    fn refuses_by_the_text_of_the_path() {
        let (_tmp, root, _) = fixture();
        for raw in [
            "",
            "/etc/passwd",
            "//x",
            "..",
            "../x",
            "src/../../x",
            "src/..",
            "a\0b",
            "a\nb",
            "a\u{7f}b",
            "a\u{85}b",
            ".git",
            ".git/config",
            "src/.git/hooks/pre-commit",
            ".GIT/config",
            ".Kiln/kiln.db",
            ".kiln",
            ".git./config",
            ".git /config",
            ".g\u{200c}it/config",
            "\u{feff}.kiln/x",
        ] {
            assert_eq!(code(&root, raw), Some(ErrorCode::PathNotAllowed), "{raw:?}");
            assert_eq!(relative(raw).unwrap_err().code, ErrorCode::PathNotAllowed, "{raw:?}");
        }
    }

    #[test]
    fn refuses_links_that_lead_out_into_private_dirs_or_nowhere() {
        let (_tmp, root, outside) = fixture();
        for raw in [
            "out",
            "out/secret.txt",
            "out/new.txt",
            "out/new/dir/file",
            "secret",
            "dangling",
            "git-alias/config",
            "git-alias",
            "loop/x",
        ] {
            assert_eq!(code(&root, raw), Some(ErrorCode::PathNotAllowed), "{raw:?}");
        }
        // Asking changed nothing.
        assert!(
            !outside.join("new.txt").exists() && !outside.join("new").exists() && !outside.join("nothing").exists()
        );
    }

    #[test]
    fn no_links_refuses_even_a_link_that_stays_inside() {
        let (_tmp, root, _) = fixture();
        let real = root.canonicalize().unwrap();
        assert_eq!(confine_no_links(&root, "src/new.txt").unwrap(), real.join("src/new.txt"));
        assert_eq!(confine_no_links(&root, "inner/a.txt").unwrap_err().code, ErrorCode::PathNotAllowed);
        assert_eq!(confine_no_links(&root, "out/x").unwrap_err().code, ErrorCode::PathNotAllowed);
        assert_eq!(confine_no_links(&root, "../x").unwrap_err().code, ErrorCode::PathNotAllowed);
    }

    #[test]
    fn as_named_follows_no_link_on_the_way_and_leaves_the_last_name_as_it_is() {
        let (_tmp, root, outside) = fixture();
        let real = root.canonicalize().unwrap();
        assert_eq!(confine_as_named(&root, "src/a.txt").unwrap(), real.join("src/a.txt"));
        assert_eq!(confine_as_named(&root, "src/new/deeper.txt").unwrap(), real.join("src/new/deeper.txt"));
        // A link in the last place is named, not resolved: it is what a write replaces.
        for last in ["inner", "out", "secret", "dangling", "loop"] {
            assert_eq!(confine_as_named(&root, last).unwrap(), real.join(last), "{last}");
        }
        // A link or a file on the way is refused, naming it, wherever the link leads.
        assert_eq!(in_the_way(&root, "inner/a.txt").unwrap(), Some(InTheWay::Link("inner".into())));
        assert_eq!(in_the_way(&root, "out/new/x.txt").unwrap(), Some(InTheWay::Link("out".into())));
        assert_eq!(in_the_way(&root, "src/a.txt/x").unwrap(), Some(InTheWay::File("src/a.txt".into())));
        assert_eq!(in_the_way(&root, "src/new/x").unwrap(), None);
        for raw in [
            "inner/a.txt",
            "inner/new.txt",
            "out/new.txt",
            "dangling/x",
            "git-alias/config",
            "src/a.txt/x",
            "../x",
            ".git/config",
        ] {
            let err = confine_as_named(&root, raw).unwrap_err();
            assert_eq!(err.code, ErrorCode::PathNotAllowed, "{raw}");
        }
        assert!(confine_as_named(&root, "inner/a.txt").unwrap_err().message.contains("`inner` is a symbolic link"));
        assert!(!outside.join("new.txt").exists() && !outside.join("new").exists());
    }

    #[test]
    fn a_root_that_does_not_exist_yet_joins_plain_names() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("later");
        assert_eq!(confine(&root, "a/b.txt").unwrap(), root.join("a/b.txt"));
        assert_eq!(code(&root, "../b.txt"), Some(ErrorCode::PathNotAllowed));
    }

    #[test]
    fn the_refusal_names_the_path_escaped() {
        let err = relative("bad\u{0}name").unwrap_err();
        assert!(err.message.starts_with("refused `bad\\0name`"), "{}", err.message);
        assert_eq!(ErrorCode::PathNotAllowed.as_str(), "PATH_NOT_ALLOWED");
    }
}
