//! Checkpoints at the cost of what changed: a snapshot of a watched working copy (only the
//! changed paths read) is always the tree a full read of it gives, whatever was done to
//! the files, when the watcher drops events, and after a restart; ignored directories
//! never appear. Real files, a real store, the real inotify watcher.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use kiln_engine::testing::snapshot::{snapshot, Source};
use kiln_engine::testing::watch::{self, Doubt};
use kiln_engine::testing::working_copy::{snapshot_workdir, NOT_SNAPSHOTTED};

/// A session's layout: `<tmp>/session/workspace`, its stat cache at `<tmp>/session/index`.
struct Copy {
    _tmp: tempfile::TempDir,
    store: git2::Repository,
    work: PathBuf,
}

impl Copy {
    fn new() -> Copy {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path().join("session/workspace");
        std::fs::create_dir_all(&work).unwrap();
        let store = git2::Repository::init_bare(tmp.path().join("store.git")).unwrap();
        let copy = Copy { _tmp: tmp, store, work };
        copy.write(".gitignore", "node_modules/\n*.log\nbuild/\n");
        copy.write("README.md", "hello\n");
        for d in 0..4 {
            for f in 0..5 {
                copy.write(&format!("src/mod{d}/part/file{f}.ts"), &format!("export const v = {d}{f};\n"));
            }
        }
        copy.write("node_modules/dep/index.js", "module.exports = 1;\n");
        copy
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.work.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.work.join(rel)
    }

    /// The checkpoint's snapshot (through the watcher when it is trusted).
    fn checkpoint(&self) -> git2::Oid {
        snapshot_workdir(&self.store, &self.work).unwrap()
    }

    /// What a full read of the working copy gives, no cache, no watcher.
    fn full_read(&self) -> git2::Oid {
        snapshot(&self.store, Source::Plain { root: &self.work, skip: &NOT_SNAPSHOTTED }).unwrap()
    }

    /// Takes a checkpoint and asserts it is the full read's tree (naming the paths that differ).
    fn assert_right(&self, step: &str) -> git2::Oid {
        let tree = self.checkpoint();
        let expected = self.full_read();
        if tree != expected {
            let (a, b) = (self.store.find_tree(expected).unwrap(), self.store.find_tree(tree).unwrap());
            let diff = self.store.diff_tree_to_tree(Some(&a), Some(&b), None).unwrap();
            let paths: Vec<String> = diff
                .deltas()
                .map(|d| format!("{:?} {}", d.status(), d.new_file().path().or(d.old_file().path()).unwrap().display()))
                .collect();
            panic!("{step}: the checkpoint differs from a full read: {paths:?}");
        }
        tree
    }

    fn has(&self, tree: git2::Oid, rel: &str) -> bool {
        self.store.find_tree(tree).unwrap().get_path(Path::new(rel)).is_ok()
    }
}

/// One change to a working copy.
type Step = Box<dyn Fn(&Copy)>;

impl Drop for Copy {
    fn drop(&mut self) {
        watch::stop(&self.work);
    }
}

#[test]
fn a_watched_checkpoint_is_what_a_full_read_gives() {
    let c = Copy::new();
    c.assert_right("the first checkpoint (a scan, which starts the watch)");
    assert!(watch::trusted(&c.work), "after a snapshot the watch is trusted");

    // Nothing changed: the last tree, at once.
    let same = c.assert_right("nothing changed");
    assert_eq!(same, c.checkpoint());

    let mut steps: Vec<(&str, Step)> = Vec::new();
    steps.push(("an edit", Box::new(|c| c.write("src/mod0/part/file0.ts", "export const v = 'edited';\n"))));
    steps.push(("a new file", Box::new(|c| c.write("src/mod1/new.ts", "new\n"))));
    steps.push(("a deleted file", Box::new(|c| std::fs::remove_file(c.path("src/mod2/part/file3.ts")).unwrap())));
    steps.push((
        "a renamed file",
        Box::new(|c| std::fs::rename(c.path("src/mod3/part/file1.ts"), c.path("src/mod3/renamed.ts")).unwrap()),
    ));
    steps.push((
        "a mode change",
        Box::new(|c| {
            std::fs::set_permissions(c.path("src/mod0/part/file2.ts"), std::fs::Permissions::from_mode(0o755)).unwrap()
        }),
    ));
    steps.push((
        "new nested directories",
        Box::new(|c| {
            c.write("pkg/a/b/c/deep.ts", "deep\n");
            c.write("pkg/a/side.ts", "side\n");
        }),
    ));
    steps.push(("a file in a directory made after the watch", Box::new(|c| c.write("pkg/a/b/c/later.ts", "later\n"))));
    steps.push((
        "a symbolic link",
        Box::new(|c| std::os::unix::fs::symlink("src/mod0", c.path("link-to-mod0")).unwrap()),
    ));
    steps.push((
        "a file replaced by a directory",
        Box::new(|c| {
            std::fs::remove_file(c.path("README.md")).unwrap();
            c.write("README.md/inside.md", "now a directory\n");
        }),
    ));
    steps.push(("a removed directory", Box::new(|c| std::fs::remove_dir_all(c.path("src/mod1")).unwrap())));
    steps
        .push(("a renamed directory", Box::new(|c| std::fs::rename(c.path("src/mod2"), c.path("src/moved")).unwrap())));
    steps.push(("an edit after the rename", Box::new(|c| c.write("src/moved/part/file0.ts", "after\n"))));
    steps.push(("an ignore file changed", Box::new(|c| c.write(".gitignore", "node_modules/\n"))));
    steps.push(("a formerly ignored file", Box::new(|c| c.write("app.log", "log line\n"))));
    steps.push((
        "an edit, a create and a delete at once",
        Box::new(|c| {
            c.write("src/moved/part/file1.ts", "edited again\n");
            c.write("pkg/fresh.ts", "fresh\n");
            std::fs::remove_file(c.path("pkg/a/side.ts")).unwrap();
        }),
    ));
    let before = watch::trusted_snapshots(&c.work);
    let doubts_before = watch::doubts(&c.work).len();
    for (step, change) in &steps {
        change(&c);
        c.assert_right(step);
    }
    // Only the steps after a doubt scan: the moved directory and the ignore file are this
    // copy's own; the process's one watcher is shared with the tests running beside this
    // one, whose bursts of files can overflow its queue, or keep its thread from seeing a
    // cookie in time on a loaded machine, and either rightly distrusts the watch. Every
    // scan has a doubt before it, and no other doubt of its own.
    let scanned = steps.len() as u64 - (watch::trusted_snapshots(&c.work) - before);
    let doubts = watch::doubts(&c.work).split_off(doubts_before);
    let expected = [Doubt::Own("a directory was moved"), Doubt::Own("an ignore file changed")];
    assert!(
        doubts.iter().all(|d| matches!(d, Doubt::Watcher(_)) || expected.contains(d)),
        "only a moved directory and an ignore file are this copy's doubts: {doubts:?}"
    );
    assert!(scanned <= doubts.len() as u64, "{scanned} of {} snapshots scanned after {doubts:?}", steps.len());
    // After the doubts above (a moved directory, an ignore file) the watch is trusted again.
    c.write("src/moved/part/file2.ts", "once more\n");
    let tree = c.assert_right("a last edit");
    assert!(watch::trusted(&c.work), "the watch is trusted again after a scan");
    assert!(c.has(tree, "pkg/a/b/c/later.ts") && c.has(tree, "src/moved/part/file2.ts"));
}

#[test]
fn dropped_events_and_an_overflow_still_give_the_right_tree() {
    let c = Copy::new();
    c.assert_right("the first checkpoint");
    c.write("src/mod0/part/file0.ts", "seen\n");
    c.assert_right("an edit the watcher saw");
    assert!(watch::trusted(&c.work));

    // From now until the next snapshot every event is lost, then an overflow is reported.
    watch::drop_events(&c.work);
    c.write("src/mod0/part/file1.ts", "unseen edit\n");
    c.write("unseen/dir/new.ts", "unseen new\n");
    std::fs::remove_file(c.path("src/mod3/part/file4.ts")).unwrap();
    let tree = c.assert_right("changes whose events were dropped");
    assert!(c.has(tree, "unseen/dir/new.ts"));
    assert!(!c.has(tree, "src/mod3/part/file4.ts"));

    // Watched afresh by that scan: the next changes are seen again.
    assert!(watch::trusted(&c.work), "the scan restarts the watch");
    c.write("unseen/dir/next.ts", "seen again\n");
    let tree = c.assert_right("a change after the overflow");
    assert!(c.has(tree, "unseen/dir/next.ts"));
}

#[test]
fn ignored_directories_never_appear() {
    let c = Copy::new();
    c.assert_right("the first checkpoint");
    c.write("node_modules/dep/index.js", "changed\n");
    c.write("node_modules/other/lib/a.js", "new dependency\n");
    c.write("build/out/app.js", "built\n");
    c.write("src/mod0/debug.log", "ignored by pattern\n");
    c.write("reference/attachments/shot.png", "attachment copy\n");
    c.write(".venv/lib/site.py", "virtual environment\n");
    c.write("src/mod0/kept.ts", "kept\n");
    let tree = c.assert_right("changes in ignored directories");
    for ignored in ["node_modules", "build", "src/mod0/debug.log", "reference/attachments/shot.png", ".venv"] {
        assert!(!c.has(tree, ignored), "{ignored} must not be in the checkpoint");
    }
    assert!(c.has(tree, "src/mod0/kept.ts"));
    // Files made inside an ignored directory made after the watch are not seen either.
    c.write("build/out/more/deeper.js", "built\n");
    let again = c.assert_right("more in an ignored directory");
    assert_eq!(again, tree, "nothing outside ignored directories changed");
}

#[test]
fn after_a_restart_the_first_snapshot_is_right() {
    let c = Copy::new();
    c.assert_right("the first checkpoint");
    c.write("src/mod0/part/file0.ts", "before the restart\n");
    c.assert_right("an edit before the restart");
    // Kiln stops: no watcher sees what happens until it runs again.
    watch::stop(&c.work);
    assert!(!watch::trusted(&c.work));
    c.write("src/mod0/part/file1.ts", "while Kiln was not running\n");
    c.write("src/new/while-stopped.ts", "new\n");
    std::fs::remove_file(c.path("src/mod1/part/file0.ts")).unwrap();
    let tree = c.assert_right("the first snapshot after the restart");
    assert!(c.has(tree, "src/new/while-stopped.ts"));
    assert!(watch::trusted(&c.work), "the first snapshot starts the watch");
    c.write("src/new/after.ts", "after\n");
    c.assert_right("an edit after the restart");
}

#[test]
fn a_stat_cache_removed_behind_the_watchers_back_is_not_trusted() {
    let c = Copy::new();
    c.assert_right("the first checkpoint");
    // What the store's collection does to other sessions' caches.
    std::fs::remove_file(c.work.parent().unwrap().join("index")).unwrap();
    c.write("src/mod0/part/file0.ts", "after the cache went\n");
    c.assert_right("the snapshot after the cache was removed");
}

#[tokio::test]
async fn a_session_is_watched_until_archived_and_restores_through_the_watch() {
    use crate::common::*;
    use kiln_engine::types::*;
    let tmp = tempfile::tempdir().unwrap();
    let (shop, engine) = shop_without_setup(tmp.path()).await;
    let s = create(&engine, "Watched in @shop/catalog").await;
    let id = kiln_engine::testing::ids::SessionId::parse(&s.id).unwrap();
    let work = shop.join(".kiln/sessions").join(&s.id).join("workspace");
    let ws = engine.workspace().unwrap();
    let store = kiln_engine::testing::snapshot::open_store(&shop.join(".kiln/store.git"), None).unwrap();
    let take = |label: &'static str| {
        let (ws, events, id, tree) =
            (ws.clone(), engine.events().clone(), id.clone(), snapshot_workdir(&store, &work).unwrap());
        async move { kiln_engine::testing::checkpoint::take(&ws, &events, &id, tree, label, None, None).await.unwrap() }
    };

    std::fs::write(work.join("modules/catalog/first.md"), "first\n").unwrap();
    let first = take("first").await;
    assert!(watch::trusted(&work), "a checkpoint leaves the session watched");
    std::fs::write(work.join("modules/catalog/second.md"), "second\n").unwrap();
    std::fs::remove_file(work.join("modules/catalog/first.md")).unwrap();
    take("second").await;

    engine.restore_checkpoint(RestoreCheckpointArgs { session_id: s.id.clone(), sequence: first }).await.unwrap();
    assert!(work.join("modules/catalog/first.md").is_file() && !work.join("modules/catalog/second.md").exists());
    // What the restore wrote was seen: the next snapshot is the restored checkpoint's tree.
    let restored = store.find_reference(&format!("refs/kiln/{}/{first}", s.id)).unwrap().peel_to_tree().unwrap();
    assert_eq!(snapshot_workdir(&store, &work).unwrap(), restored.id());
    assert!(watch::trusted(&work));

    engine.archive_session(StopArgs { session_id: s.id.clone(), stop: None }).await.unwrap();
    assert!(!watch::trusted(&work), "an archived session is no longer watched");
}

/// An agent renaming a directory in a loop (issue 32, finding 5): the watcher's queue and
/// its doubts stay bounded, each snapshot meanwhile is still the full read's tree, and once
/// the storm ends the watch is trusted again.
#[test]
fn a_rename_storm_leaves_the_watch_right_and_trusted_again() {
    let c = Copy::new();
    c.assert_right("the first checkpoint");
    let (a, b) = (c.path("storm-a"), c.path("storm-b"));
    std::fs::create_dir_all(a.join("inner")).unwrap();
    std::fs::write(a.join("inner/file.ts"), "x\n").unwrap();
    c.assert_right("before the storm");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    let mut renames = 0u64;
    while std::time::Instant::now() < deadline {
        for _ in 0..500 {
            std::fs::rename(&a, &b).unwrap();
            std::fs::rename(&b, &a).unwrap();
            renames += 2;
        }
        c.assert_right("during the storm");
    }
    c.write("after.ts", "after\n");
    c.assert_right("after the storm");
    c.write("after.ts", "once more\n");
    c.assert_right("a calm edit");
    assert!(watch::trusted(&c.work), "the watch is trusted again after {renames} renames");
    assert!(watch::doubts(&c.work).len() <= 64, "the doubts kept are bounded");
}
