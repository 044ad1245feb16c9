//! Materializing a snapshot: every file of a commit's tree written under a directory,
//! as a session's working copy, by a few threads at once.
//!
//! A file the host workspace holds unchanged is taken from the host's own copy instead
//! of the store: cloned (a reflink, on file systems that share blocks copy-on-write:
//! btrfs, xfs) or else copied by the kernel (`copy_file_range`), so neither inflates
//! the object nor passes its bytes through Kiln. Hard links are never used: an agent
//! edits files in place, and a link would let it write into the user's workspace. A
//! host file counts as unchanged only as git itself would trust it: the host's index
//! names the same blob and the file's stat is what the index recorded, before and after
//! the copy, in a second before the index was written.
//!
//! Each file written is stamped with a modification time a second before the
//! materialization began, and its stat kept (`Materialized::entries`), so the session's
//! stat cache can be primed (`crate::prime`): no later change can carry that time, so
//! every entry is trusted at once, and any edit, even in the same second, is seen.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use git2::{FileMode, IndexEntry, IndexTime, ObjectType, Oid, Repository, TreeWalkMode, TreeWalkResult};

use kiln_types::error::{ApiError, Result};

/// At most this many threads write one working copy: file creation is mostly the
/// kernel's work, and a few threads are enough to keep it busy.
const MAX_WORKERS: usize = 4;
/// About how many files a thread takes at a time: consecutive ones, so mostly one
/// directory's (`chunks`).
const CHUNK: usize = 32;

/// A working copy just written, and what the stat cache needs to know of it.
pub struct Materialized {
    /// The tree written.
    pub tree: Oid,
    /// Files and symbolic links written.
    pub files: usize,
    /// Of those, files taken from the host workspace (cloned or copied by the kernel).
    pub from_host: usize,
    /// Of those, files cloned (reflinks).
    pub cloned: usize,
    /// One stat-cache entry per file written, in the index's order.
    pub entries: Vec<IndexEntry>,
}

/// Writes every file of a commit's tree under `dest` (which must not hold other files);
/// returns how many. See `working_copy`.
pub fn materialize(store: &Repository, commit: Oid, dest: &Path) -> Result<usize> {
    Ok(working_copy(store, commit, dest, None)?.files)
}

/// Writes every file of a commit's tree under `dest` (which must not hold other files),
/// taking unchanged files from `host` when there is one.
///
/// Nothing is written through a symbolic link, whoever put it there: `dest` must be a
/// real directory (a link in its place is refused, `PATH_NOT_ALLOWED`), each directory
/// is made with `create_dir` and a link or file in its place is replaced, and each file
/// is created new (`place`). Directories are made a level at a time, each level once
/// the one above it is done, and every directory before any file is written, so every
/// directory and file lands in a directory this function checked.
pub fn working_copy(store: &Repository, commit: Oid, dest: &Path, host: Option<&HostFiles>) -> Result<Materialized> {
    let tree = store.find_commit(commit)?.tree()?;
    if fs::symlink_metadata(dest).is_ok_and(|m| !m.is_dir()) {
        return Err(kiln_runtime::paths::refused(
            &dest.display().to_string(),
            "the working copy's place holds a link or a file",
        ));
    }
    fs::create_dir_all(dest)?;
    // A whole second before now: the stat cache trusts only times before the second it
    // is written in, and no edit from now on can be stamped with it.
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let stamp = UNIX_EPOCH + Duration::from_secs(now.as_secs().saturating_sub(1));

    // Directories by depth (`levels[0]` at the top), files in the tree's order.
    let mut levels: Vec<Vec<PathBuf>> = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    let mut failure: Option<ApiError> = None;
    tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
        let name = entry.name_bytes();
        if name.is_empty() || name == b"." || name == b".." || name.contains(&b'/') {
            failure = Some(kiln_runtime::paths::refused(
                &String::from_utf8_lossy(name),
                "a name in a snapshot is one plain name",
            ));
            return TreeWalkResult::Abort;
        }
        let mut rel = dir.as_bytes().to_vec();
        rel.extend_from_slice(name);
        match entry.kind() {
            Some(ObjectType::Tree) => {
                let depth = dir.bytes().filter(|&b| b == b'/').count();
                if levels.len() <= depth {
                    levels.resize_with(depth + 1, Vec::new);
                }
                levels[depth].push(PathBuf::from(OsStr::from_bytes(&rel)));
            }
            Some(ObjectType::Blob) => {
                jobs.push(Job { rel, id: entry.id(), mode: normal_mode(entry.filemode() as u32) })
            }
            _ => {} // submodules are not snapshotted
        }
        TreeWalkResult::Ok
    })?;
    if let Some(e) = failure {
        return Err(e);
    }
    let chunks = chunks(&jobs);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, MAX_WORKERS);
    let workers = workers.min(chunks.len()).max(1);
    let shared = Shared {
        store_path: store.path(),
        dest,
        dest_dev: fs::metadata(dest)?.dev(),
        host,
        stamp,
        levels: levels.iter().map(|level| (level.as_slice(), AtomicUsize::new(0))).collect(),
        level_done: Barrier::new(workers),
        jobs: &jobs,
        chunks: &chunks,
        next: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        failure: Mutex::new(None),
    };
    let outcomes: Vec<Written> = if workers == 1 {
        vec![shared.work(Some(store))]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers).map(|_| scope.spawn(|| shared.work(None))).collect();
            handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
        })
    };
    if let Some(e) = shared.failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let mut made = Materialized { tree: tree.id(), files: 0, from_host: 0, cloned: 0, entries: Vec::new() };
    for written in outcomes {
        made.from_host += written.from_host;
        made.cloned += written.cloned;
        made.entries.extend(written.entries);
    }
    made.files = made.entries.len();
    if made.files != jobs.len() {
        return Err(ApiError::internal("materializing", "a writer thread stopped before its files were written"));
    }
    made.entries.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    Ok(made)
}

/// The jobs cut in chunks of about `CHUNK` consecutive files, each ending where a
/// directory does when one ends soon enough, so two threads seldom write in one
/// directory at once (its lock is the kernel's) yet a huge directory is still shared.
fn chunks(jobs: &[Job]) -> Vec<std::ops::Range<usize>> {
    fn parent(job: &Job) -> &[u8] {
        job.rel.iter().rposition(|&b| b == b'/').map_or(&[], |at| &job.rel[..at])
    }
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=jobs.len() {
        let len = i - start;
        let at_end = i == jobs.len() || (len >= CHUNK && parent(&jobs[i]) != parent(&jobs[i - 1])) || len >= 4 * CHUNK;
        if at_end {
            out.push(start..i);
            start = i;
        }
    }
    out
}

/// One file to write: its path under the working copy, blob and mode.
struct Job {
    rel: Vec<u8>,
    id: Oid,
    mode: u32,
}

/// What the writer threads share; each takes the next chunk of jobs until none is left.
struct Shared<'a> {
    store_path: &'a Path,
    dest: &'a Path,
    dest_dev: u64,
    host: Option<&'a HostFiles>,
    stamp: SystemTime,
    /// Each level's directories and the next one to make.
    levels: Vec<(&'a [PathBuf], AtomicUsize)>,
    /// Every thread waits here after each level: the next is made inside it.
    level_done: Barrier,
    jobs: &'a [Job],
    chunks: &'a [std::ops::Range<usize>],
    /// The next chunk to write.
    next: AtomicUsize,
    stop: AtomicBool,
    failure: Mutex<Option<ApiError>>,
}

/// What one writer thread wrote.
#[derive(Default)]
struct Written {
    entries: Vec<IndexEntry>,
    from_host: usize,
    cloned: usize,
}

impl Shared<'_> {
    /// Makes directories level by level with the other threads, then writes chunks of
    /// jobs until there are none or a thread failed. `store` is the caller's handle
    /// when this runs on its thread; a worker opens its own (a repository handle is not
    /// to be shared between threads), and only when a file must come from the store.
    fn work(&self, store: Option<&Repository>) -> Written {
        for (dirs, next) in &self.levels {
            // A thread that failed still waits at each level, or the others never pass.
            while !self.stop.load(Ordering::Relaxed) {
                let Some(dir) = dirs.get(next.fetch_add(1, Ordering::Relaxed)) else { break };
                if let Err(e) = real_dir(&self.dest.join(dir)) {
                    self.fail(e.into());
                }
            }
            self.level_done.wait();
        }
        let mut out = Written::default();
        let mut own: Option<Repository> = None;
        while !self.stop.load(Ordering::Relaxed) {
            let Some(chunk) = self.chunks.get(self.next.fetch_add(1, Ordering::Relaxed)) else { break };
            for job in &self.jobs[chunk.clone()] {
                if let Err(e) = self.write(job, store, &mut own, &mut out) {
                    self.fail(e);
                    return out;
                }
            }
        }
        out
    }

    /// Records the first failure and stops every thread.
    fn fail(&self, e: ApiError) {
        self.stop.store(true, Ordering::Relaxed);
        self.failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
    }

    fn write(
        &self,
        job: &Job,
        store: Option<&Repository>,
        own: &mut Option<Repository>,
        out: &mut Written,
    ) -> Result<()> {
        let rel = OsStr::from_bytes(&job.rel);
        let path = self.dest.join(rel);
        let from_host = match (job.mode, self.host) {
            (MODE_LINK, _) | (_, None) => None,
            (_, Some(host)) => host.open_clean(&job.rel, job.id),
        };
        let mut content = match &from_host {
            Some(file) => Content::Host(file),
            None => Content::Store,
        };
        let meta = loop {
            let placed = match content {
                Content::Host(file) => place(&path, job.mode, Fill::Host(file, self.dest_dev), Some(self.stamp))?,
                Content::Store => {
                    let store = match store {
                        Some(store) => store,
                        None => own.get_or_insert(Repository::open_bare(self.store_path)?),
                    };
                    let blob = store.find_blob(job.id)?;
                    place(&path, job.mode, Fill::Bytes(blob.content()), Some(self.stamp))?
                }
            };
            match placed {
                // The host's file changed while it was copied: its bytes are not the
                // blob's, so the blob is written over them.
                Placed::Changed => content = Content::Store,
                Placed::Done { meta, cloned } => {
                    if matches!(content, Content::Host(_)) {
                        out.from_host += 1;
                        out.cloned += usize::from(cloned);
                    }
                    break meta;
                }
            }
        };
        out.entries.push(stat_entry(&job.rel, job.id, job.mode, &meta));
        Ok(())
    }
}

enum Content<'a> {
    Host(&'a HostFile),
    Store,
}

/// Where a file's bytes come from: the store's blob, or a host file (with the device
/// of the working copy it is copied to).
enum Fill<'a> {
    Bytes(&'a [u8]),
    Host(&'a HostFile, u64),
}

/// What `place` did.
enum Placed {
    /// The file is written; its stat, and whether it was cloned.
    Done { meta: fs::Metadata, cloned: bool },
    /// The host file changed while it was read: nothing written is to be trusted.
    Changed,
}

const MODE_FILE: u32 = 0o100644;
const MODE_EXEC: u32 = 0o100755;
const MODE_LINK: u32 = 0o120000;

/// A tree's file mode as the stat cache records one: a link, or a file with or
/// without its execute bit.
fn normal_mode(mode: u32) -> u32 {
    match mode {
        m if m == i32::from(FileMode::Link) as u32 => MODE_LINK,
        m if m & 0o111 != 0 => MODE_EXEC,
        _ => MODE_FILE,
    }
}

/// Writes a blob at `path`, whose directory must exist: a symbolic link for a link
/// entry, else a file created new. Whatever was already at `path` is removed first, so
/// it is replaced, never written through.
pub(crate) fn write_blob(path: &Path, content: &[u8], mode: u32) -> Result<()> {
    place(path, normal_mode(mode), Fill::Bytes(content), None).map(drop)
}

/// Makes `path` a symbolic link or a file created new (`create_new` never follows a
/// link), filled from `fill`, with its modification time set to `stamp` when one is
/// given. Whatever was already at `path` is removed first, so it is replaced, never
/// written through. Returns the stat of what is there now.
fn place(path: &Path, mode: u32, fill: Fill<'_>, stamp: Option<SystemTime>) -> Result<Placed> {
    let create = || -> std::io::Result<Placed> {
        if mode == MODE_LINK {
            let Fill::Bytes(target) = fill else { unreachable!("links are written from the store") };
            std::os::unix::fs::symlink(OsStr::from_bytes(target), path)?;
            if let Some(stamp) = stamp {
                set_link_time(path, stamp)?;
            }
            return Ok(Placed::Done { meta: fs::symlink_metadata(path)?, cloned: false });
        }
        let mut file = fs::OpenOptions::new().write(true).create_new(true).open(path)?;
        let mut cloned = false;
        match fill {
            Fill::Bytes(bytes) => file.write_all(bytes)?,
            Fill::Host(host, to_dev) => match host.copy_to(&mut file, to_dev)? {
                Some(was_cloned) => cloned = was_cloned,
                None => {
                    drop(file);
                    fs::remove_file(path)?;
                    return Ok(Placed::Changed);
                }
            },
        }
        if mode == MODE_EXEC {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(fs::Permissions::from_mode(0o755))?;
        }
        if let Some(stamp) = stamp {
            file.set_times(fs::FileTimes::new().set_modified(stamp))?;
        }
        Ok(Placed::Done { meta: file.metadata()?, cloned })
    };
    match create() {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            remove_entry(path)?;
            Ok(create()?)
        }
        other => Ok(other?),
    }
}

/// Sets a symbolic link's own modification time (not its target's).
fn set_link_time(path: &Path, stamp: SystemTime) -> std::io::Result<()> {
    let since = stamp.duration_since(UNIX_EPOCH).unwrap_or_default();
    let times = [
        libc::timespec { tv_sec: 0, tv_nsec: libc::UTIME_OMIT },
        libc::timespec { tv_sec: since.as_secs() as libc::time_t, tv_nsec: since.subsec_nanos() as _ },
    ];
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: a valid NUL-terminated path and two timespecs, as utimensat wants.
    let done = unsafe { libc::utimensat(libc::AT_FDCWD, c_path.as_ptr(), times.as_ptr(), libc::AT_SYMLINK_NOFOLLOW) };
    if done == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The stat cache's entry of a file as `meta` says it is (just written, or just read).
pub(crate) fn stat_entry(rel: &[u8], id: Oid, mode: u32, meta: &fs::Metadata) -> IndexEntry {
    IndexEntry {
        ctime: IndexTime::new(meta.ctime() as i32, meta.ctime_nsec() as u32),
        mtime: IndexTime::new(meta.mtime() as i32, meta.mtime_nsec() as u32),
        dev: meta.dev() as u32,
        ino: meta.ino() as u32,
        mode,
        uid: meta.uid(),
        gid: meta.gid(),
        file_size: meta.size() as u32,
        id,
        flags: rel.len().min(0xfff) as u16,
        flags_extended: 0,
        path: rel.to_vec(),
    }
}

/// Makes `path` a real directory: kept when it is one, made when missing, and a link or
/// file in its place removed first (`remove_file` removes a link, never its target).
pub(crate) fn real_dir(path: &Path) -> std::io::Result<()> {
    match fs::create_dir(path) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if fs::symlink_metadata(path)?.is_dir() {
                return Ok(());
            }
            fs::remove_file(path)?;
            fs::create_dir(path)
        }
        other => other,
    }
}

/// Removes whatever is at `path` (a real directory with its content, or a file or link
/// itself); nothing there is fine.
pub(crate) fn remove_entry(path: &Path) -> std::io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// The files of a host git workspace that git trusts to hold the blob its index names.
pub struct HostFiles {
    /// The workspace root on disk (the work tree, and the workspace's prefix in it).
    root: PathBuf,
    /// By path relative to the workspace root: only entries git would trust by their
    /// stat (regular files, stage 0, recorded in a second before the index was written).
    entries: HashMap<Vec<u8>, Recorded>,
}

/// The host's trusted files (`HostFiles::read_at`), or none when its index cannot be
/// read: every file then comes from the store, as taking files from the host is a
/// shortcut, never a requirement.
pub fn host_files(workdir: &Path, git_dir: &Path, prefix: &str) -> Option<HostFiles> {
    HostFiles::read_at(workdir, git_dir, prefix)
        .map_err(|e| tracing::warn!("reading the host's index to reuse its files: {}", e.message))
        .ok()
}

/// What the host's index recorded of a file.
struct Recorded {
    id: Oid,
    mtime: (i32, u32),
    ctime: (i32, u32),
    size: u32,
    ino: u32,
    uid: u32,
    gid: u32,
}

impl HostFiles {
    /// Reads the host repository's index (only reads it) for the workspace at `prefix`
    /// in its work tree (empty, or ending in `/`).
    #[cfg(feature = "test-support")]
    pub fn read(repo: &Repository, prefix: &str) -> Result<HostFiles> {
        let workdir = repo.workdir().ok_or_else(|| ApiError::internal("git", "the repository has no work tree"))?;
        HostFiles::read_at(workdir, repo.path(), prefix)
    }

    /// `read` by paths: the work tree and the repository's own git directory (a linked
    /// worktree's, whose index it is), so it can run beside work on the repository.
    pub fn read_at(workdir: &Path, git_dir: &Path, prefix: &str) -> Result<HostFiles> {
        let index_path = git_dir.join("index");
        // Read before the index itself: an index rewritten in between only makes more
        // of its entries look too recent to trust.
        let written = fs::metadata(&index_path)?.mtime();
        let index = git2::Index::open(&index_path)?;
        let mut entries = HashMap::new();
        for e in index.iter() {
            let stage = (e.flags >> 12) & 0x3;
            let regular = e.mode == MODE_FILE || e.mode == MODE_EXEC;
            // "Racily clean": a file changed in the second its index was written may
            // still show the recorded stat.
            if stage != 0 || !regular || i64::from(e.mtime.seconds()) >= written {
                continue;
            }
            let Some(rel) = e.path.strip_prefix(prefix.as_bytes()) else { continue };
            let recorded = Recorded {
                id: e.id,
                mtime: (e.mtime.seconds(), e.mtime.nanoseconds()),
                ctime: (e.ctime.seconds(), e.ctime.nanoseconds()),
                size: e.file_size,
                ino: e.ino,
                uid: e.uid,
                gid: e.gid,
            };
            entries.insert(rel.to_vec(), recorded);
        }
        Ok(HostFiles { root: workdir.join(prefix), entries })
    }

    /// The host's file at `rel`, opened, when its index names `id` for it and its stat
    /// is what the index recorded.
    fn open_clean(&self, rel: &[u8], id: Oid) -> Option<HostFile> {
        let recorded = self.entries.get(rel).filter(|r| r.id == id)?;
        let file = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(self.root.join(OsStr::from_bytes(rel)))
            .ok()?;
        let before = file.metadata().ok()?;
        recorded.matches(&before).then_some(HostFile { file, before })
    }
}

impl Recorded {
    /// Whether `meta` is the stat git recorded: times to the nanosecond, size, inode
    /// and owner.
    fn matches(&self, meta: &fs::Metadata) -> bool {
        self.mtime == (meta.mtime() as i32, meta.mtime_nsec() as u32)
            && self.ctime == (meta.ctime() as i32, meta.ctime_nsec() as u32)
            && self.size == meta.size() as u32
            && self.ino == meta.ino() as u32
            && self.uid == meta.uid()
            && self.gid == meta.gid()
            && meta.is_file()
    }
}

/// A host file open for reading, with its stat when opened.
struct HostFile {
    file: File,
    before: fs::Metadata,
}

impl HostFile {
    /// Copies the file into `to` (new and empty): a clone where the file systems allow,
    /// else the kernel's copy. `Some(cloned)` when done and the file was not changed
    /// meanwhile (its times and size as before); `None` when it was.
    fn copy_to(&self, to: &mut File, to_dev: u64) -> std::io::Result<Option<bool>> {
        let len = self.before.len();
        let mut cloned = false;
        if len > 0 {
            cloned = reflink::clone(&self.file, to, (self.before.dev(), to_dev))?;
            if !cloned && kernel_copy(&self.file, to, len)? != len {
                return Ok(None);
            }
        }
        let after = self.file.metadata()?;
        let same = after.mtime() == self.before.mtime()
            && after.mtime_nsec() == self.before.mtime_nsec()
            && after.ctime() == self.before.ctime()
            && after.ctime_nsec() == self.before.ctime_nsec()
            && after.len() == len;
        Ok(same.then_some(cloned))
    }
}

/// Copies `len` bytes of `from` (at its start) into the empty `to` in the kernel
/// (`copy_file_range`), else through a buffer where the kernel cannot; returns the bytes
/// copied, fewer when `from` turned out shorter.
fn kernel_copy(from: &File, to: &mut File, len: u64) -> std::io::Result<u64> {
    let mut done = 0u64;
    while done < len {
        let want = (len - done).min(1 << 30) as usize;
        // SAFETY: two open descriptors; null offsets use (and advance) the files' own.
        let n = unsafe {
            libc::copy_file_range(from.as_raw_fd(), std::ptr::null_mut(), to.as_raw_fd(), std::ptr::null_mut(), want, 0)
        };
        match n {
            0 => break,
            n if n > 0 => done += n as u64,
            _ => {
                let error = std::io::Error::last_os_error();
                match error.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::EXDEV | libc::ENOSYS | libc::EOPNOTSUPP | libc::EINVAL) => {
                        return Ok(done + std::io::copy(&mut (&mut &*from).take(len - done), to)?);
                    }
                    _ => return Err(error),
                }
            }
        }
    }
    Ok(done)
}

/// Reflinks (`FICLONE`): whether a pair of file systems has them is learnt from the
/// first attempt and remembered for the life of the process, so a file system without
/// them (ext4) costs one failed call, then none.
mod reflink {
    use std::collections::HashMap;
    use std::fs::File;
    use std::os::fd::AsRawFd;
    #[cfg(feature = "test-support")]
    use std::os::unix::fs::MetadataExt;
    use std::sync::{Mutex, OnceLock};

    fn known() -> &'static Mutex<HashMap<(u64, u64), bool>> {
        static KNOWN: OnceLock<Mutex<HashMap<(u64, u64), bool>>> = OnceLock::new();
        KNOWN.get_or_init(Default::default)
    }

    /// Clones `from` into the empty `to` (`pair`: their devices); false when the file
    /// systems cannot, and `to` is left empty.
    pub(super) fn clone(from: &File, to: &File, pair: (u64, u64)) -> std::io::Result<bool> {
        if known().lock().unwrap_or_else(|p| p.into_inner()).get(&pair) == Some(&false) {
            return Ok(false);
        }
        // SAFETY: FICLONE takes the source descriptor; both descriptors are open.
        let done = unsafe { libc::ioctl(to.as_raw_fd(), libc::FICLONE, from.as_raw_fd()) } == 0;
        if done {
            known().lock().unwrap_or_else(|p| p.into_inner()).insert(pair, true);
            return Ok(true);
        }
        let error = std::io::Error::last_os_error();
        match error.raw_os_error() {
            // Not on this file system, not between these two, not for this file.
            Some(libc::EOPNOTSUPP | libc::EXDEV | libc::EINVAL | libc::ENOTTY | libc::ENOSYS | libc::EPERM) => {
                known().lock().unwrap_or_else(|p| p.into_inner()).entry(pair).or_insert(false);
                Ok(false)
            }
            _ => Err(error),
        }
    }

    /// Whether a file in `from_dir` can be cloned into `to_dir`, by trying it once
    /// (tests report the reflink branch as skipped when it cannot).
    #[cfg(feature = "test-support")]
    pub fn supported(from_dir: &std::path::Path, to_dir: &std::path::Path) -> std::io::Result<bool> {
        let from = tempfile::NamedTempFile::new_in(from_dir)?;
        std::io::Write::write_all(&mut from.as_file(), b"reflink probe")?;
        let to = tempfile::NamedTempFile::new_in(to_dir)?;
        let pair = (from.as_file().metadata()?.dev(), to.as_file().metadata()?.dev());
        clone(from.as_file(), to.as_file(), pair)
    }
}

#[cfg(feature = "test-support")]
pub use reflink::supported as reflink_supported;
