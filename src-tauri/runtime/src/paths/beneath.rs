//! Files touched for someone else (an agent's tool call, an ACP request, a copied home
//! file) through a handle on their root directory, never through a path string checked
//! and then opened (SECURITY.md: Files by handle).
//!
//! A path checked by its text and its links, then opened by name, can be raced: a command
//! the agent left running swaps a directory on the way for a link between the check and
//! the open, and the write lands wherever the link points, as Kiln's own user. Here the
//! root is held open, and a name is resolved beneath that handle by the kernel:
//!
//! - writes walk the directories one plain name at a time, each opened with `O_NOFOLLOW`
//!   from the one before, so no link is ever followed, whatever is swapped meanwhile; a
//!   link where the file should be is refused, never written through;
//! - reads use `openat2` with `RESOLVE_BENEATH`: a link that stays beneath the root is
//!   followed as the repository means it (`CLAUDE.md -> AGENTS.md`), one leading out is
//!   refused by the kernel, races included; what was opened is then checked not to be in
//!   `.git` or `.kiln`. Where `openat2` is missing (Linux before 5.6) reads follow no link.
//!
//! Names are checked by `paths::relative` first: plain names, no `..`, no `.git`/`.kiln`.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io::{Error, ErrorKind, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A root directory held open.
#[derive(Debug)]
pub struct Beneath {
    dir: OwnedFd,
    real: PathBuf,
}

/// What a write found at the file's place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Created,
    Replaced,
}

impl Beneath {
    /// Holds `root` open. The directories above it are Kiln's own and may be links (as
    /// `/tmp` is on some systems); `root` itself must be a real directory, since what the
    /// commands Kiln runs may replace (a session's home) could be a link they planted.
    pub fn open(root: &Path) -> std::io::Result<Beneath> {
        let dir = open_at(libc::AT_FDCWD, root, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW)
            .map_err(|e| explained(root, e))?;
        let real = std::fs::read_link(opened_path(&dir))?;
        Ok(Beneath { dir, real })
    }

    /// The directory `rel` beneath the root (links followed as `open_read` does), held
    /// open as a root of its own.
    pub fn sub(&self, rel: &Path) -> std::io::Result<Beneath> {
        let dir = self.open_read(rel)?;
        if !dir.metadata()?.is_dir() {
            return Err(Error::new(ErrorKind::NotADirectory, format!("`{}` is not a directory", rel.display())));
        }
        let real = std::fs::read_link(opened_path(&dir))?;
        Ok(Beneath { dir: OwnedFd::from(dir), real })
    }

    /// The root's real path (for showing and for walking tools; never to open a name).
    pub fn real(&self) -> &Path {
        &self.real
    }

    /// Opens the file or directory `rel` for reading (see the module's rules on links).
    pub fn open_read(&self, rel: &Path) -> std::io::Result<File> {
        let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY;
        let fd = if rel.as_os_str().is_empty() {
            open_at(self.dir.as_raw_fd(), Path::new("."), flags)?
        } else {
            match openat2_beneath(self.dir.as_raw_fd(), rel, flags) {
                Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => self.walk_open(rel, flags)?,
                other => other.map_err(|e| explained(rel, e))?,
            }
        };
        let file = File::from(fd);
        let meta = file.metadata()?;
        if !meta.is_file() && !meta.is_dir() {
            return Err(refused(rel, "it is not a regular file"));
        }
        self.refuse_private(&file, rel)?;
        Ok(file)
    }

    /// Reads the regular file `rel` whole, unless it is larger than `max` bytes
    /// (`ErrorKind::FileTooLarge`, its size in the message).
    pub fn read(&self, rel: &Path, max: u64) -> std::io::Result<Vec<u8>> {
        use std::io::Read;
        let mut file = self.open_read(rel)?;
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(Error::new(ErrorKind::IsADirectory, format!("`{}` is a directory", rel.display())));
        }
        if meta.len() > max {
            return Err(Error::new(ErrorKind::FileTooLarge, format!("{} bytes", meta.len())));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        Read::by_ref(&mut file).take(max + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > max {
            return Err(Error::new(ErrorKind::FileTooLarge, format!("more than {max} bytes")));
        }
        Ok(bytes)
    }

    /// The entries of the directory `rel`, read through its handle.
    pub fn read_dir(&self, rel: &Path) -> std::io::Result<std::fs::ReadDir> {
        let dir = self.open_read(rel)?;
        std::fs::read_dir(opened_path(&dir))
    }

    /// Writes `bytes` as the file `rel`, making the directories on the way. An existing
    /// file is truncated and rewritten in place (its mode kept); a link at its place, or
    /// anywhere on the way, is refused.
    pub fn write(&self, rel: &Path, bytes: &[u8]) -> std::io::Result<Written> {
        let (dir, name) = self.parent_of(rel, true)?;
        let existed = mode_at(dir.as_raw_fd(), Path::new(name)).is_some();
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;
        let fd = open_at(dir.as_raw_fd(), Path::new(name), flags).map_err(|e| explained(rel, e))?;
        let mut file = File::from(fd);
        if !file.metadata()?.is_file() {
            return Err(refused(rel, "it is not a regular file"));
        }
        file.write_all(bytes)?;
        Ok(if existed { Written::Replaced } else { Written::Created })
    }

    /// Writes `bytes` as a new file `rel` whatever stood at its place (a link is removed
    /// itself, never followed), made with `mode`, exclusively.
    pub fn replace(&self, rel: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
        let (dir, name) = self.parent_of(rel, true)?;
        let c = c_path(name)?;
        // SAFETY: `dir` is an open directory, `c` a NUL-terminated plain name within it.
        if unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) } != 0 {
            let e = Error::last_os_error();
            if e.raw_os_error() != Some(libc::ENOENT) {
                return Err(e);
            }
        }
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        // SAFETY: as above; the descriptor is owned by the `File` at once.
        let fd = unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags | libc::O_CLOEXEC, mode as libc::c_uint) };
        if fd < 0 {
            return Err(Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        let mut file = unsafe { File::from_raw_fd(fd) };
        file.write_all(bytes)
    }

    /// Removes the file (or link) `rel`, never what a link points to; one already gone is
    /// not an error.
    pub fn remove(&self, rel: &Path) -> std::io::Result<()> {
        let (dir, name) = match self.parent_of(rel, false) {
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            other => other?,
        };
        let c = c_path(name)?;
        // SAFETY: `dir` is an open directory, `c` a NUL-terminated plain name within it.
        if unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) } != 0 {
            let e = Error::last_os_error();
            if e.raw_os_error() != Some(libc::ENOENT) {
                return Err(e);
            }
        }
        Ok(())
    }

    /// The directory holding `rel` (opened name by name, no link followed, made when
    /// `create`) and `rel`'s last name.
    fn parent_of<'a>(&self, rel: &'a Path, create: bool) -> std::io::Result<(OwnedFd, &'a OsStr)> {
        let parts: Vec<&OsStr> = rel.iter().collect();
        let Some((name, dirs)) = parts.split_last() else {
            return Err(Error::new(ErrorKind::InvalidInput, "the root itself is not a file"));
        };
        let mut held = self.dir.try_clone()?;
        for dir in dirs {
            held = open_dir(held.as_raw_fd(), Path::new(dir), create).map_err(|e| explained(rel, e))?;
        }
        Ok((held, name))
    }

    /// `open_read` where `openat2` is missing: name by name, no link followed at all.
    fn walk_open(&self, rel: &Path, flags: libc::c_int) -> std::io::Result<OwnedFd> {
        let (dir, name) = self.parent_of(rel, false)?;
        open_at(dir.as_raw_fd(), Path::new(name), flags | libc::O_NOFOLLOW).map_err(|e| explained(rel, e))
    }

    /// Refuses a file opened through a link that led into `.git` or `.kiln`.
    fn refuse_private(&self, file: &File, rel: &Path) -> std::io::Result<()> {
        let opened = std::fs::read_link(opened_path(file))?;
        let inside = opened.strip_prefix(&self.real).map_err(|_| refused(rel, "it leads outside its root"))?;
        if inside.iter().any(super::is_private) {
            return Err(refused(rel, "it leads into `.git` or `.kiln`, which are off limits"));
        }
        Ok(())
    }
}

/// A name refused by the rules above (not a failure of the file system): its message
/// reads "refused `<name>`: <why>", as `paths::refused` does.
#[derive(Debug)]
pub struct Refused(String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

fn refused(rel: &Path, why: &str) -> Error {
    Error::new(ErrorKind::PermissionDenied, Refused(format!("refused `{}`: {why}", rel.display())))
}

/// Whether `e` is a refusal by the rules, whose message names the path and says why.
pub fn is_refusal(e: &Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Refused>())
}

/// The error a refused resolution gives, in words.
fn explained(rel: &Path, e: Error) -> Error {
    const LINK: &str =
        "it is a symbolic link or goes through one, and Kiln does not write through links; use the path it points to";
    match e.raw_os_error() {
        Some(libc::ELOOP) => refused(rel, LINK),
        Some(libc::EXDEV) => refused(rel, "it leads outside its root"),
        Some(libc::ENOTDIR) => {
            Error::new(ErrorKind::NotADirectory, format!("a name on the way to `{}` is a file", rel.display()))
        }
        _ => e,
    }
}

fn c_path(path: impl AsRef<OsStr>) -> std::io::Result<CString> {
    CString::new(path.as_ref().as_bytes()).map_err(|_| Error::new(ErrorKind::InvalidInput, "a path with a NUL byte"))
}

/// `openat(at, path, flags | O_CLOEXEC)`, mode 0666 (less the umask) when it creates.
fn open_at(at: libc::c_int, path: &Path, flags: libc::c_int) -> std::io::Result<OwnedFd> {
    let c = c_path(path)?;
    // SAFETY: `c` is NUL-terminated; `at` is an open directory or AT_FDCWD.
    let fd = unsafe { libc::openat(at, c.as_ptr(), flags | libc::O_CLOEXEC, 0o666 as libc::c_uint) };
    if fd < 0 {
        return Err(Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens the directory `name` (one plain name) in `at` without following a link, making
/// it first when `create`.
fn open_dir(at: libc::c_int, name: &Path, create: bool) -> std::io::Result<OwnedFd> {
    if create {
        let c = c_path(name)?;
        // SAFETY: `c` is a NUL-terminated name; `at` is an open directory.
        if unsafe { libc::mkdirat(at, c.as_ptr(), 0o777) } != 0 {
            let e = Error::last_os_error();
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(e);
            }
        }
    }
    open_at(at, name, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW).map_err(|e| {
        // A link where a directory should be fails as "not a directory": say it is a link.
        if e.raw_os_error() == Some(libc::ENOTDIR) && is_link(at, name) {
            Error::from_raw_os_error(libc::ELOOP)
        } else {
            e
        }
    })
}

/// Whether `name` in `at` is a symbolic link itself.
fn is_link(at: libc::c_int, name: &Path) -> bool {
    mode_at(at, name).is_some_and(|mode| mode & libc::S_IFMT == libc::S_IFLNK)
}

/// The mode of `name` in `at` itself (a link is not followed), when it exists.
fn mode_at(at: libc::c_int, name: &Path) -> Option<libc::mode_t> {
    let c = c_path(name).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `c` is NUL-terminated, `at` an open directory, `stat` written by the call.
    let found = unsafe { libc::fstatat(at, c.as_ptr(), stat.as_mut_ptr(), libc::AT_SYMLINK_NOFOLLOW) } == 0;
    // SAFETY: the call succeeded, so `stat` is initialised.
    found.then(|| unsafe { stat.assume_init() }.st_mode)
}

/// The path the kernel names for what `fd` opened, whatever its path has become since.
fn opened_path(fd: &impl AsRawFd) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

/// `openat2(at, rel, flags, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`, retried while the
/// kernel reports a rename racing the lookup.
#[cfg(target_os = "linux")]
fn openat2_beneath(at: libc::c_int, rel: &Path, flags: libc::c_int) -> std::io::Result<OwnedFd> {
    let c = c_path(rel)?;
    // SAFETY: `open_how` is plain data; all-zero is its documented default.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
    for _ in 0..64 {
        // SAFETY: `c` is NUL-terminated, `how` lives across the call and its size is given.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                at,
                c.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if fd >= 0 {
            // SAFETY: the call returned a new descriptor owned by nothing else.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) });
        }
        let e = Error::last_os_error();
        if e.raw_os_error() != Some(libc::EAGAIN) {
            return Err(e);
        }
    }
    Err(Error::other(format!("`{}` kept moving while it was opened", rel.display())))
}

#[cfg(not(target_os = "linux"))]
fn openat2_beneath(_: libc::c_int, _: &Path, _: libc::c_int) -> std::io::Result<OwnedFd> {
    Err(Error::from_raw_os_error(libc::ENOSYS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    fn setup() -> (tempfile::TempDir, PathBuf, Beneath) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(tmp.path().join("outside")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/config"), "secret").unwrap();
        std::fs::write(tmp.path().join("outside/secret"), "secret").unwrap();
        std::fs::write(root.join("AGENTS.md"), "agents").unwrap();
        let beneath = Beneath::open(&root).unwrap();
        (tmp, root, beneath)
    }

    #[test]
    fn writes_make_directories_and_keep_an_existing_files_mode() {
        let (_tmp, root, b) = setup();
        assert_eq!(b.write(Path::new("a/b/c.txt"), b"one").unwrap(), Written::Created);
        std::fs::set_permissions(root.join("a/b/c.txt"), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(b.write(Path::new("a/b/c.txt"), b"two").unwrap(), Written::Replaced);
        assert_eq!(std::fs::read_to_string(root.join("a/b/c.txt")).unwrap(), "two");
        assert_eq!(std::fs::metadata(root.join("a/b/c.txt")).unwrap().permissions().mode() & 0o777, 0o755);
        assert_eq!(b.read(Path::new("a/b/c.txt"), 100).unwrap(), b"two");
        assert_eq!(b.read(Path::new("a/b/c.txt"), 2).unwrap_err().kind(), ErrorKind::FileTooLarge);
    }

    #[test]
    fn no_write_goes_through_a_link_and_no_read_leads_out() {
        let (tmp, root, b) = setup();
        let outside = tmp.path().join("outside");
        symlink(&outside, root.join("out")).unwrap();
        symlink("../outside/secret", root.join("src/leak")).unwrap();
        symlink(".git", root.join("git")).unwrap();
        symlink("AGENTS.md", root.join("CLAUDE.md")).unwrap();
        for rel in ["out/pwned.txt", "src/leak", "CLAUDE.md", "git/hooks"] {
            let e = b.write(Path::new(rel), b"x").unwrap_err();
            assert!(is_refusal(&e) && e.to_string().contains("symbolic link"), "{rel}: {e}");
        }
        assert!(!outside.join("pwned.txt").exists());
        assert_eq!(std::fs::read_to_string(outside.join("secret")).unwrap(), "secret");
        // A link that stays beneath is read as the repository means it; none leading out or into .git.
        assert_eq!(b.read(Path::new("CLAUDE.md"), 100).unwrap(), b"agents");
        for rel in ["out/secret", "src/leak", "git/config"] {
            assert!(b.read(Path::new(rel), 100).is_err(), "{rel}");
        }
        // A file on the way.
        assert_eq!(b.write(Path::new("AGENTS.md/x"), b"x").unwrap_err().kind(), ErrorKind::NotADirectory);
        assert_eq!(b.write(Path::new("src"), b"x").unwrap_err().kind(), ErrorKind::IsADirectory);
    }

    #[test]
    fn replace_removes_a_link_itself() {
        let (tmp, root, b) = setup();
        symlink(tmp.path().join("outside/secret"), root.join("npmrc")).unwrap();
        b.replace(Path::new("npmrc"), b"mine", 0o600).unwrap();
        assert_eq!(std::fs::read_to_string(tmp.path().join("outside/secret")).unwrap(), "secret");
        assert!(!std::fs::symlink_metadata(root.join("npmrc")).unwrap().file_type().is_symlink());
    }
}
