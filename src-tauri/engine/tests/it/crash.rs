//! Killing Kiln in the middle of a checkpoint leaves the store readable and the previous
//! checkpoint restorable: objects and refs are only ever written whole (a temporary
//! file, then a rename). The snapshot runs in a forked child that is killed mid-way.
//! Alone in its own test binary, so the fork copies no other test's threads.

use std::path::Path;

use kiln_engine::testing::snapshot::{self, Source};

fn write_tree(root: &Path, files: usize, salt: &str) {
    for i in 0..files {
        let dir = root.join(format!("d{}/e{}", i % 17, i % 5));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i}.txt")), format!("{salt} {i}\n").repeat(400)).unwrap();
    }
}

#[test]
fn a_checkpoint_killed_midway_leaves_the_previous_one_restorable() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    write_tree(&work, 300, "before");
    let store_path = tmp.path().join("store.git");
    let store = snapshot::open_store(&store_path, None).unwrap();
    let tree = snapshot::snapshot(&store, Source::Plain { root: &work, skip: &[] }).unwrap();
    let first = snapshot::commit(&store, tree, None, "the starting point", "refs/kiln/s/0").unwrap();
    drop(store);

    // Enough new content that the next snapshot takes a while.
    write_tree(&work, 6000, "after");
    // SAFETY: the child only runs the snapshot and leaves with _exit; this test binary
    // has no other threads of its own.
    let child = unsafe { libc::fork() };
    assert!(child >= 0, "fork failed");
    if child == 0 {
        let store = snapshot::open_store(&store_path, None).unwrap();
        let tree = snapshot::snapshot(&store, Source::Plain { root: &work, skip: &[] }).unwrap();
        let _ = snapshot::commit(&store, tree, Some(first), "turn 1", "refs/kiln/s/1");
        unsafe { libc::_exit(0) };
    }
    // Kill it once it is writing objects, so the kill lands mid-snapshot.
    let objects = store_path.join("objects");
    let loose = || std::fs::read_dir(&objects).map(|d| d.count()).unwrap_or(0);
    let before = loose();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while loose() < before + 20 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    unsafe {
        libc::kill(child, libc::SIGKILL);
        let mut status = 0;
        libc::waitpid(child, &mut status, 0);
        assert!(libc::WIFSIGNALED(status), "the child finished before it was killed; make the tree bigger");
    }

    // The store opens, every ref it has resolves, and checkpoint 0 restores whole.
    let store = snapshot::open_store(&store_path, None).unwrap();
    for r in store.references().unwrap() {
        r.unwrap().peel_to_commit().expect("a ref that resolves to a whole commit");
    }
    let restored = tmp.path().join("restored");
    snapshot::materialize(&store, first, &restored).unwrap();
    let count = walkdir(&restored);
    assert_eq!(count, 300);
    assert_eq!(std::fs::read_to_string(restored.join("d3/e3/f3.txt")).unwrap(), "before 3\n".repeat(400));
    // And the next checkpoint after the crash works.
    let tree = snapshot::snapshot(&store, Source::Plain { root: &work, skip: &[] }).unwrap();
    snapshot::commit(&store, tree, Some(first), "turn 1", "refs/kiln/s/1").unwrap();
}

fn walkdir(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                walkdir(&e.path())
            } else {
                1
            }
        })
        .sum()
}
