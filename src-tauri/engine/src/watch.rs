//! The watcher of active sessions' working copies (ARCHITECTURE.md: Checkpoints): the
//! paths changed since the last snapshot, so a checkpoint reads only those.
//!
//! One inotify instance (through `notify`) serves the whole process; each working copy's
//! directories are watched one by one, never recursively, so ignored directories
//! (`node_modules`, `target`, the attachment copies) are never watched, and a directory
//! made later is watched when its creation is seen. Events are handled on one thread.
//!
//! Nothing here is trusted blindly. Before a snapshot uses the changed paths, a cookie
//! file is made in the session's directory (watched, outside the working copy) and the
//! snapshot waits until its event is handled: every event before it was handled too, as
//! git's fsmonitor does. An overflow of the kernel's queue, an error, a watch that could
//! not be added, a moved directory, a changed ignore file, the working copy replaced, or
//! a stat cache that is not the one the last snapshot wrote: the session is *distrusted*
//! and its next snapshot is the full stat-cache scan, after which it is watched afresh.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use git2::Oid;
use notify::event::{CreateKind, ModifyKind, RemoveKind};
use notify::{Event, EventKind, INotifyWatcher, RecursiveMode, Watcher};

use kiln_records::snapshot::{self, IgnoreRules};

/// How long a snapshot waits for its cookie before it stops trusting the watcher.
const COOKIE_WAIT: Duration = Duration::from_secs(2);
/// Past this many changed paths a full scan costs less than the list (and memory stays bounded).
const MAX_DIRTY: usize = 20_000;
/// The cookie files' names in the session's directory: this, then a number.
const COOKIE: &str = ".kiln-watch-cookie-";
/// How many doubts a watch remembers.
const DOUBTS: usize = 64;
/// Events waiting for the events thread at most: past this the watcher is behind, and
/// what it dropped is an overflow (memory stays bounded whatever an agent does).
const QUEUE: usize = 16_384;
/// One warning line per subject per this long, with the count of those held back.
const WARN_EVERY: Duration = Duration::from_secs(60);

/// Why a healthy watch stopped being trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Doubt {
    /// The whole watcher's trouble: the kernel's queue overflowed, an error, a bug in
    /// handling an event, or its one thread too busy to see a cookie in time.
    Watcher(&'static str),
    /// This working copy's own: a moved directory, an ignore file, the copy replaced, a
    /// directory that could not be watched, too many changes, a test's dropped events.
    Own(&'static str),
}

/// What a snapshot may rely on.
pub(crate) enum Changes {
    /// Every path changed since the snapshot whose tree is `base` (empty: nothing).
    Trusted { base: Oid, dirty: BTreeSet<String> },
    /// Read the whole working copy.
    Untrusted,
}

/// The one watcher of this process and the sessions it watches (by session directory).
struct Hub {
    watcher: Mutex<INotifyWatcher>,
    sessions: Mutex<HashMap<PathBuf, Arc<SessionWatch>>>,
}

/// One session's working copy as the watcher sees it.
pub(crate) struct SessionWatch {
    /// `sessions/<id>`: the cookies' directory.
    dir: PathBuf,
    /// `sessions/<id>/workspace`.
    workdir: PathBuf,
    skip: Vec<String>,
    state: Mutex<State>,
    cookie_seen: Condvar,
}

struct State {
    dirty: BTreeSet<String>,
    /// False until watched afresh, and from any doubt on.
    healthy: bool,
    /// The directories watched (the session's directory among them).
    watched: HashSet<PathBuf>,
    rules: IgnoreRules,
    /// The last snapshot: its tree, and the stat cache and working copy it was taken of.
    baseline: Option<Baseline>,
    cookies_sent: u64,
    cookies_seen: u64,
    /// How many snapshots were given the changed paths (for the tests).
    trusted_snapshots: u64,
    /// Why this watch was distrusted while healthy, the latest last (at most `DOUBTS`): the
    /// tests tell the whole watcher's trouble (other sessions' bursts, a loaded machine)
    /// from this watch's own doubts, and a failure names them.
    doubts: Vec<Doubt>,
    /// Test hook: events are dropped until the next cookie, which then reports an
    /// overflow, as the kernel does when its queue is full.
    dropping: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct Baseline {
    tree: Oid,
    index: FileId,
    /// The working copy's directory (device, inode): its times change with its entries.
    workdir: (u64, u64),
}

/// Which file this is and which version of it: a file replaced or rewritten differs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct FileId {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
}

fn file_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).ok()?;
    Some(FileId { dev: m.dev(), ino: m.ino(), size: m.size(), mtime: (m.mtime(), m.mtime_nsec()) })
}

fn dir_id(path: &Path) -> Option<(u64, u64)> {
    file_id(path).map(|id| (id.dev, id.ino))
}

static HUB: Mutex<Option<Arc<Hub>>> = Mutex::new(None);

/// The warnings' last lines, by subject (a session's directory, or the watcher itself):
/// when each was written and how many were held back since.
static WARNED: Mutex<Option<HashMap<String, (Instant, u64)>>> = Mutex::new(None);

/// Logs `message` about `subject` unless a line about it was written less than
/// `WARN_EVERY` ago; the next line says how many were held back. An agent renaming a
/// directory in a loop makes a doubt per rename, not a log line per rename. Says whether
/// the line was written.
fn warn(subject: &str, message: std::fmt::Arguments<'_>) -> bool {
    let mut warned = lock(&WARNED);
    let warned = warned.get_or_insert_with(HashMap::new);
    let now = Instant::now();
    match warned.get_mut(subject) {
        Some((at, held)) if now.duration_since(*at) < WARN_EVERY => {
            *held += 1;
            false
        }
        entry => {
            let held = entry.map_or(0, |(_, held)| *held);
            if held > 0 {
                tracing::warn!("{message} (and {held} more like it about {subject} in the last minute)");
            } else {
                tracing::warn!("{message}");
            }
            warned.insert(subject.to_string(), (now, 0));
            if warned.len() > 1024 {
                warned.retain(|_, (at, _)| now.duration_since(*at) < WARN_EVERY);
            }
            true
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The process's watcher, started on first use; `None` when inotify cannot be had (the
/// snapshots then scan, as they always could).
fn hub() -> Option<Arc<Hub>> {
    let mut slot = lock(&HUB);
    if let Some(hub) = &*slot {
        return Some(hub.clone());
    }
    let (tx, rx) = mpsc::sync_channel(QUEUE);
    // notify's thread never waits for ours: an event that does not fit is dropped and
    // counted, and the events thread reports the loss as the kernel reports its own.
    let lost = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let losing = lost.clone();
    // A full queue has events for that thread to take, so it sees the loss at the next one.
    let handler = move |event: notify::Result<Event>| {
        if let Err(mpsc::TrySendError::Full(_)) = tx.try_send(event) {
            losing.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    };
    let watcher = match INotifyWatcher::new(handler, notify::Config::default()) {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!("no file watcher ({e}); checkpoints read the whole working copy");
            return None;
        }
    };
    let hub = Arc::new(Hub { watcher: Mutex::new(watcher), sessions: Mutex::new(HashMap::new()) });
    let events = hub.clone();
    let spawned = std::thread::Builder::new().name("kiln-watch".into()).spawn(move || {
        for event in rx {
            if lost.swap(0, std::sync::atomic::Ordering::Relaxed) > 0 {
                events.distrust_all("its queue was full and events were dropped", None);
            }
            // A bug here must not leave every snapshot waiting for its cookie in vain.
            let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| events.handle(event)));
            if handled.is_err() {
                events.distrust_all("handling an event failed", None);
            }
        }
    });
    if let Err(e) = spawned {
        tracing::warn!("no file watcher thread ({e}); checkpoints read the whole working copy");
        return None;
    }
    *slot = Some(hub.clone());
    Some(hub)
}

/// The watch of the working copy at `workdir` (whose parent is the session's directory),
/// registered on first use, distrusted until its first snapshot.
pub(crate) fn session(workdir: &Path, skip: &[&str]) -> Option<Arc<SessionWatch>> {
    let dir = workdir.parent()?.to_path_buf();
    let hub = hub()?;
    let mut sessions = lock(&hub.sessions);
    let watch = sessions.entry(dir.clone()).or_insert_with(|| {
        Arc::new(SessionWatch {
            dir,
            workdir: workdir.to_path_buf(),
            skip: skip.iter().map(|s| s.to_string()).collect(),
            state: Mutex::new(State {
                dirty: BTreeSet::new(),
                healthy: false,
                watched: HashSet::new(),
                rules: IgnoreRules::new(workdir, skip),
                baseline: None,
                cookies_sent: 0,
                cookies_seen: 0,
                dropping: false,
                trusted_snapshots: 0,
                doubts: Vec::new(),
            }),
            cookie_seen: Condvar::new(),
        })
    });
    Some(watch.clone())
}

/// Stops watching the working copy at `workdir` (the session was archived, deleted, its
/// copy removed or rebuilt); its next snapshot, if any, scans and watches again.
pub fn stop(workdir: &Path) {
    let Some(dir) = workdir.parent() else { return };
    let Some(hub) = lock(&HUB).clone() else { return };
    let removed = lock(&hub.sessions).remove(dir);
    if let Some(watch) = removed {
        let mut state = lock(&watch.state);
        state.healthy = false;
        state.baseline = None;
        let mut watcher = lock(&hub.watcher);
        for path in state.watched.drain() {
            let _ = watcher.unwatch(&path);
        }
    }
}

/// Stops watching every session under `sessions_dir` (the workspace is closed).
pub(crate) fn stop_under(sessions_dir: &Path) {
    let Some(hub) = lock(&HUB).clone() else { return };
    let workdirs: Vec<PathBuf> =
        lock(&hub.sessions).values().filter(|w| w.dir.starts_with(sessions_dir)).map(|w| w.workdir.clone()).collect();
    for workdir in workdirs {
        stop(&workdir);
    }
}

/// The watch of `workdir` if there is one (never starts one).
#[cfg(feature = "test-support")]
fn find(workdir: &Path) -> Option<Arc<SessionWatch>> {
    let hub = lock(&HUB).clone()?;
    let found = lock(&hub.sessions).get(workdir.parent()?).cloned();
    found
}

/// Test hook: the events of the working copy at `workdir` are dropped from now until the
/// next snapshot, which then learns of an overflow, as the kernel reports one.
#[cfg(feature = "test-support")]
pub fn drop_events(workdir: &Path) {
    if let Some(watch) = find(workdir) {
        lock(&watch.state).dropping = true;
    }
}

/// Test hook: how many snapshots of `workdir` read only the changed paths.
#[cfg(feature = "test-support")]
pub fn trusted_snapshots(workdir: &Path) -> u64 {
    find(workdir).map_or(0, |w| lock(&w.state).trusted_snapshots)
}

/// Test hook: why `workdir`'s watch was distrusted while healthy (the latest last).
#[cfg(feature = "test-support")]
pub fn doubts(workdir: &Path) -> Vec<Doubt> {
    find(workdir).map_or(Vec::new(), |w| lock(&w.state).doubts.clone())
}

impl State {
    /// Distrusts the watch until it is watched afresh, remembering why.
    fn doubt(&mut self, why: Doubt) {
        if self.healthy {
            if self.doubts.len() == DOUBTS {
                self.doubts.remove(0);
            }
            self.doubts.push(why);
        }
        self.healthy = false;
    }
}

/// Test hook: whether the next snapshot of `workdir` may read only the changed paths (a
/// healthy watch and a baseline); false when the next one will scan.
#[cfg(feature = "test-support")]
pub fn trusted(workdir: &Path) -> bool {
    find(workdir).is_some_and(|w| {
        let s = lock(&w.state);
        s.healthy && s.baseline.is_some() && !s.dropping
    })
}

impl SessionWatch {
    /// What changed since the last snapshot, once every event up to now is handled.
    /// The baseline is taken: a snapshot that fails before `settle` leaves none, so the
    /// next one scans.
    pub(crate) fn changes(&self, cache: &Path) -> Changes {
        if !lock(&HUB).clone().is_some_and(|hub| self.registered(&hub)) {
            return Changes::Untrusted;
        }
        let n = {
            let mut state = lock(&self.state);
            if !state.healthy || state.baseline.is_none() {
                return Changes::Untrusted;
            }
            state.cookies_sent += 1;
            state.cookies_sent
        };
        let cookie = self.dir.join(format!("{COOKIE}{n}"));
        if let Err(e) = std::fs::write(&cookie, b"") {
            warn(
                &self.dir.display().to_string(),
                format_args!("the watcher's cookie could not be written ({e}); reading the whole working copy"),
            );
            return Changes::Untrusted;
        }
        let deadline = Instant::now() + COOKIE_WAIT;
        let mut state = lock(&self.state);
        while state.cookies_seen < n {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                warn(
                    &self.dir.display().to_string(),
                    format_args!("the watcher did not see its cookie in time; reading the whole working copy"),
                );
                // The one events thread was behind (other sessions' bursts, a loaded machine):
                // the watcher's trouble, not this watch's.
                state.doubt(Doubt::Watcher("its cookie was not seen in time"));
                break;
            }
            state = self.cookie_seen.wait_timeout(state, left).map(|(s, _)| s).unwrap_or_else(|e| e.into_inner().0);
        }
        let _ = std::fs::remove_file(&cookie);
        let baseline = state.baseline.take();
        match baseline {
            Some(b) if state.healthy && file_id(cache) == Some(b.index) && dir_id(&self.workdir) == Some(b.workdir) => {
                state.trusted_snapshots += 1;
                Changes::Trusted { base: b.tree, dirty: std::mem::take(&mut state.dirty) }
            }
            _ => Changes::Untrusted,
        }
    }

    /// Whether the hub still routes this working copy's events here: a watch stopped
    /// meanwhile (its session archived) would wait for a cookie no one sees, and is not
    /// watched again through this handle.
    fn registered(&self, hub: &Hub) -> bool {
        lock(&hub.sessions).get(&self.dir).is_some_and(|w| std::ptr::eq(w.as_ref(), self))
    }

    /// Runs `f` with the working copy's ignore rules (shared with the watcher's thread).
    pub(crate) fn with_rules<T>(&self, f: impl FnOnce(&mut IgnoreRules) -> T) -> T {
        f(&mut lock(&self.state).rules)
    }

    /// Records the snapshot just taken: `tree`, of the stat cache at `cache` as it is now.
    pub(crate) fn settle(&self, tree: Oid, cache: &Path) {
        let mut state = lock(&self.state);
        state.baseline = match (file_id(cache), dir_id(&self.workdir)) {
            (Some(index), Some(workdir)) => Some(Baseline { tree, index, workdir }),
            _ => None,
        };
    }

    /// Watches the working copy afresh (before a full scan): every directory a snapshot
    /// may hold, and the session's directory for the cookies. False when some watch
    /// could not be added (the watch stays distrusted).
    pub(crate) fn restart(&self) -> bool {
        let Some(hub) = lock(&HUB).clone() else { return false };
        if !self.registered(&hub) {
            return false;
        }
        let mut state = lock(&self.state);
        state.dirty.clear();
        state.baseline = None;
        state.dropping = false;
        state.rules = IgnoreRules::new(&self.workdir, &self.skip.iter().map(String::as_str).collect::<Vec<_>>());
        let mut wanted = HashSet::from([self.dir.clone()]);
        for entry in snapshot::walk(&self.workdir) {
            let Ok(entry) = entry else { continue };
            if !entry.file_type().is_some_and(|t| t.is_dir()) {
                continue;
            }
            let rel = entry.path().strip_prefix(&self.workdir).unwrap_or(entry.path()).to_string_lossy().into_owned();
            if !self.skip.iter().any(|s| rel == *s || rel.starts_with(&format!("{s}/"))) {
                wanted.insert(entry.into_path());
            }
        }
        let mut watcher = lock(&hub.watcher);
        let failed = wanted
            .iter()
            .find_map(|path| watcher.watch(path, RecursiveMode::NonRecursive).err().and_then(|e| unwatched(path, e)));
        for gone in state.watched.difference(&wanted) {
            let _ = watcher.unwatch(gone);
        }
        state.watched = wanted;
        state.healthy = true;
        if let Some(doubt) = failed {
            state.doubt(doubt);
        }
        failed.is_none()
    }
}

/// Why a directory that could not be watched is a doubt; `None` when it is gone already
/// (before the watch, or between the watch and notify's own look at it).
fn unwatched(path: &Path, e: notify::Error) -> Option<Doubt> {
    match &e.kind {
        notify::ErrorKind::PathNotFound => None,
        notify::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::NotFound => None,
        notify::ErrorKind::MaxFilesWatch => Some(Doubt::Watcher("the system's limit of watches was reached")),
        _ => {
            warn(
                "a directory that could not be watched",
                format_args!("watching {}: {e}; checkpoints read the whole working copy", path.display()),
            );
            Some(Doubt::Own("a directory could not be watched"))
        }
    }
}

/// Whether an event on the working copy's own directory means it is no longer the one
/// watched (its content's events come from its own watch).
fn replaced(kind: &EventKind) -> bool {
    matches!(kind, EventKind::Create(_) | EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_)))
}

impl Hub {
    fn handle(&self, event: notify::Result<Event>) {
        let event = match event {
            Ok(event) if !event.need_rescan() => event,
            Ok(_) => return self.distrust_all("the kernel's event queue overflowed", None),
            Err(e) => return self.distrust_all("an error", Some(&e.to_string())),
        };
        if matches!(event.kind, EventKind::Access(_)) {
            return; // opened or closed: no change (a write's own event came first)
        }
        for path in &event.paths {
            let owner = {
                let sessions = lock(&self.sessions);
                path.ancestors().skip(1).find_map(|a| sessions.get(a).cloned())
            };
            if let Some(watch) = owner {
                watch.on_event(self, &event.kind, path);
            }
        }
    }

    fn distrust_all(&self, why: &'static str, detail: Option<&str>) {
        warn(
            "the file watcher",
            format_args!(
                "file watcher: {why} {}; the next checkpoints read whole working copies",
                detail.unwrap_or("")
            ),
        );
        let sessions: Vec<Arc<SessionWatch>> = lock(&self.sessions).values().cloned().collect();
        for watch in sessions {
            lock(&watch.state).doubt(Doubt::Watcher(why));
        }
    }
}

impl SessionWatch {
    fn on_event(&self, hub: &Hub, kind: &EventKind, path: &Path) {
        let mut state = lock(&self.state);
        if path.parent() == Some(self.dir.as_path()) {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if let (Some(n), EventKind::Create(_)) = (name.strip_prefix(COOKIE).and_then(|n| n.parse().ok()), kind) {
                if std::mem::take(&mut state.dropping) {
                    state.doubt(Doubt::Own("its events were dropped (a test)"));
                }
                state.cookies_seen = state.cookies_seen.max(n);
                self.cookie_seen.notify_all();
            } else if path == self.workdir && replaced(kind) {
                state.doubt(Doubt::Own("the working copy itself was moved, removed or replaced"));
            }
            return;
        }
        if state.dropping || !state.healthy {
            return;
        }
        let Ok(rel) = path.strip_prefix(&self.workdir) else { return };
        let rel = rel.to_string_lossy().into_owned();
        if rel.is_empty() {
            if replaced(kind) {
                state.doubt(Doubt::Own("the working copy itself was moved, removed or replaced"));
            }
            return;
        }
        if snapshot::is_ignore_file(&rel) {
            state.doubt(Doubt::Own("an ignore file changed"));
            return;
        }
        match kind {
            EventKind::Create(CreateKind::Folder) => {
                state.dirty.insert(rel.clone());
                if let Err(doubt) = self.watch_new_dir(hub, &mut state, &rel) {
                    state.doubt(doubt);
                }
            }
            // A moved directory's watches would name it by its old path.
            EventKind::Modify(ModifyKind::Name(_)) if state.watched.contains(path) || path.is_dir() => {
                state.doubt(Doubt::Own("a directory was moved"));
            }
            EventKind::Remove(RemoveKind::Folder) => {
                state.watched.retain(|w| !w.starts_with(path));
                state.dirty.insert(rel);
            }
            _ => {
                state.dirty.insert(rel);
            }
        }
        if state.dirty.len() > MAX_DIRTY {
            state.doubt(Doubt::Own("too many paths changed"));
            state.dirty.clear();
        }
    }

    /// Watches a directory made after the working copy was watched, and those in it. It
    /// is watched before it is read, so nothing made in it is missed; what was made
    /// before is read whole, since the directory itself is dirty.
    fn watch_new_dir(&self, hub: &Hub, state: &mut State, rel: &str) -> Result<(), Doubt> {
        state.rules.forget(rel);
        if state.rules.excluded(rel, true) {
            return Ok(());
        }
        let path = self.workdir.join(rel);
        if let Err(e) = lock(&hub.watcher).watch(&path, RecursiveMode::NonRecursive) {
            // Gone already: its removal is an event of its own.
            return unwatched(&path, e).map_or(Ok(()), Err);
        }
        state.watched.insert(path.clone());
        let Ok(read) = std::fs::read_dir(&path) else { return Ok(()) };
        for entry in read.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                let Some(name) = entry.file_name().to_str().map(str::to_string) else { continue };
                self.watch_new_dir(hub, state, &format!("{rel}/{name}"))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_storm_of_warnings_writes_one_line_per_subject_a_minute() {
        let written = (0..10_000).filter(|i| warn("a storm", format_args!("rename {i}"))).count();
        assert_eq!(written, 1);
        assert!(warn("another subject", format_args!("its own first line")));
        let held = lock(&WARNED).as_ref().unwrap()["a storm"].1;
        assert_eq!(held, 9_999);
    }
}
