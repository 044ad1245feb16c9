//! Materializing a session's working copy (issue 19, session creation at worktree speed):
//! the copy equals its commit's tree whether a file comes from the store or from the
//! host's own copy, a host file is reused only when git would trust it, the primed stat
//! cache spares the first snapshot every unchanged file yet sees any change, and editing
//! the copy never reaches the host's files.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::{Duration, SystemTime};

use git2::{ObjectType, Oid, Repository, TreeWalkMode, TreeWalkResult};
use kiln_engine::testing::materialize::{reflink_supported, working_copy, HostFiles, Materialized};
use kiln_engine::testing::snapshot::{commit, open_store, snapshot, snapshot_cached, Source};

use crate::common::*;

/// More small files than one writer thread takes at a time, so several threads write.
const SMALL_FILES: usize = 150;
const LARGE: usize = 3 << 20;

/// A committed git workspace at `root` holding every kind of entry a tree has: nested
/// directories, many small files, an empty file, a large binary one, an executable,
/// links to a file and to a directory. Its files are dated in the past, as a user's
/// files are older than the index that records them (else git trusts none of them).
fn host_repo(root: &Path) -> Repository {
    std::fs::create_dir_all(root.join("src/deep/deeper")).unwrap();
    std::fs::create_dir_all(root.join("many")).unwrap();
    write(&root.join("README.md"), "# host\n");
    write(&root.join("src/deep/deeper/leaf.txt"), "leaf\n");
    write(&root.join("empty.txt"), "");
    for i in 0..SMALL_FILES {
        write(&root.join(format!("many/file{i:03}.js")), &format!("export const n = {i};\n"));
    }
    let mut seed = 0x5eed_u64;
    let large: Vec<u8> = (0..LARGE)
        .map(|_| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 56) as u8
        })
        .collect();
    std::fs::write(root.join("large.bin"), large).unwrap();
    write(&root.join("run.sh"), "#!/bin/sh\necho run\n");
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("README.md", root.join("link-to-readme")).unwrap();
    std::os::unix::fs::symlink("src/deep", root.join("link-to-dir")).unwrap();
    write(&root.join(".gitignore"), "ignored/\n");
    std::fs::create_dir_all(root.join("ignored")).unwrap();
    write(&root.join("ignored/secret.txt"), "not in any snapshot\n");
    backdate(root);
    sh_git(root, &["init", "-q", "-b", "main"]);
    sh_git(root, &["add", "-A"]);
    sh_git(root, &["commit", "-q", "-m", "host"]);
    Repository::open(root).unwrap()
}

/// Sets every file's modification time an hour back (links keep theirs).
fn backdate(root: &Path) {
    let past = SystemTime::now() - Duration::from_secs(3600);
    for rel in files(root, &[".git"]).keys() {
        let path = root.join(rel);
        if !std::fs::symlink_metadata(&path).unwrap().file_type().is_symlink() {
            std::fs::File::options().write(true).open(&path).unwrap().set_modified(past).unwrap();
        }
    }
}

/// Every blob of `tree`: path → (mode, content).
fn tree_files(store: &Repository, tree: Oid) -> BTreeMap<String, (u32, Vec<u8>)> {
    let mut out = BTreeMap::new();
    store
        .find_tree(tree)
        .unwrap()
        .walk(TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(ObjectType::Blob) {
                let blob = store.find_blob(entry.id()).unwrap();
                out.insert(
                    format!("{dir}{}", entry.name().unwrap()),
                    (entry.filemode() as u32, blob.content().to_vec()),
                );
            }
            TreeWalkResult::Ok
        })
        .unwrap();
    out
}

/// Every file and link under `root` as a tree records it: path → (mode, content).
fn disk_files(root: &Path) -> BTreeMap<String, (u32, Vec<u8>)> {
    files(root, &[])
        .into_iter()
        .map(|(rel, content)| {
            let meta = std::fs::symlink_metadata(root.join(&rel)).unwrap();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(root.join(&rel)).unwrap();
                (rel, (0o120000, target.into_os_string().into_encoded_bytes()))
            } else {
                let mode = if meta.permissions().mode() & 0o111 != 0 { 0o100755 } else { 0o100644 };
                (rel, (mode, content))
            }
        })
        .collect()
}

/// The host's workspace snapshotted into a store at `store_dir` as checkpoint 0.
fn base(host: &Repository, store_dir: &Path) -> (Repository, Oid, Oid) {
    let store = open_store(store_dir, Some(&host.path().join("objects"))).unwrap();
    let tree = snapshot(&store, Source::Git { repo: host, prefix: "" }).unwrap();
    let commit = commit(&store, tree, None, "base", "refs/kiln/t/0").unwrap();
    (store, tree, commit)
}

fn blob_at(store: &Repository, tree: Oid, rel: &str) -> Oid {
    store.find_tree(tree).unwrap().get_path(Path::new(rel)).unwrap().id()
}

#[test]
fn a_working_copy_equals_its_commit_tree_from_the_host_and_from_the_store() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("host");
    let host = host_repo(&root);
    // Uncommitted work: modified, new and deleted files come from the store.
    write(&root.join("README.md"), "# host, edited\n");
    write(&root.join("src/new.txt"), "untracked\n");
    std::fs::remove_file(root.join("many/file000.js")).unwrap();
    let (store, tree, commit) = base(&host, &tmp.path().join("store.git"));
    let expected = tree_files(&store, tree);
    assert_eq!(expected["README.md"].1, b"# host, edited\n");
    assert!(!expected.contains_key("many/file000.js"));
    assert!(!expected.contains_key("ignored/secret.txt"));

    let host_files = HostFiles::read(&host, "").unwrap();
    let reused = working_copy(&store, commit, &tmp.path().join("reused"), Some(&host_files)).unwrap();
    assert_eq!(disk_files(&tmp.path().join("reused")), expected);
    assert_eq!(reused.files, expected.len());
    assert_eq!(reused.tree, tree);
    // Every committed, unchanged regular file came from the host: all but the two
    // links, the edited README and the untracked file.
    assert_eq!(reused.from_host, expected.len() - 4, "files taken from the host");
    let big = std::fs::metadata(tmp.path().join("reused/large.bin")).unwrap();
    assert_eq!(big.len(), LARGE as u64);

    let written = working_copy(&store, commit, &tmp.path().join("written"), None).unwrap();
    assert_eq!(disk_files(&tmp.path().join("written")), expected);
    assert_eq!(written.from_host, 0);
    assert_eq!(
        written.entries.iter().map(|e| (e.path.clone(), e.id)).collect::<Vec<_>>(),
        reused.entries.iter().map(|e| (e.path.clone(), e.id)).collect::<Vec<_>>(),
    );
}

#[test]
fn a_host_file_is_reused_only_when_git_would_trust_its_stat() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("host");
    let host = host_repo(&root);
    // Recorded by the index with a time after the index was written: racily clean,
    // never trusted by its stat.
    let racy = root.join("many/file001.js");
    std::fs::File::options()
        .write(true)
        .open(&racy)
        .unwrap()
        .set_modified(SystemTime::now() + Duration::from_secs(600))
        .unwrap();
    sh_git(&root, &["update-index", "--refresh"]);
    let (store, tree, commit) = base(&host, &tmp.path().join("store.git"));
    let host_files = HostFiles::read(&host, "").unwrap();

    // Changed after the snapshot, in place and of the same size: the new bytes are not
    // the snapshot's. One with its old time put back still shows a new ctime.
    let moved = root.join("many/file002.js");
    let sneaky = root.join("many/file003.js");
    let sneaky_mtime = std::fs::metadata(&sneaky).unwrap().modified().unwrap();
    write(&moved, "export const n = 9;\n");
    write(&sneaky, "export const n = 8;\n");
    std::fs::File::options().write(true).open(&sneaky).unwrap().set_modified(sneaky_mtime).unwrap();

    let dest = tmp.path().join("copy");
    let made = working_copy(&store, commit, &dest, Some(&host_files)).unwrap();
    assert_eq!(disk_files(&dest), tree_files(&store, tree));
    assert_eq!(std::fs::read_to_string(dest.join("many/file002.js")).unwrap(), "export const n = 2;\n");
    assert_eq!(std::fs::read_to_string(dest.join("many/file003.js")).unwrap(), "export const n = 3;\n");
    // All the tree's regular files but the racy one and the two changed ones.
    assert_eq!(made.from_host, made.files - 2 - 3);
}

/// A working copy materialized at `dest` with its stat cache primed at `cache`.
fn primed(store: &Repository, commit: Oid, dest: &Path, cache: &Path, host: Option<&HostFiles>) -> Materialized {
    let made = working_copy(store, commit, dest, host).unwrap();
    kiln_engine::testing::prime::stat_cache(store, &made, cache).unwrap();
    made
}

#[test]
fn the_primed_stat_cache_reads_no_unchanged_file_and_every_changed_one() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("host");
    let host = host_repo(&root);
    let (store, tree, commit) = base(&host, &tmp.path().join("store.git"));
    let host_files = HostFiles::read(&host, "").unwrap();
    let dest = tmp.path().join("copy");
    let cache = tmp.path().join("index");
    let made = primed(&store, commit, &dest, &cache, Some(&host_files));
    assert_eq!(git2::Index::open(&cache).unwrap().len(), made.files);

    // Nothing changed: the first snapshot is the base tree.
    assert_eq!(snapshot_cached(&store, &dest, &[], &cache).unwrap(), tree);

    // Changed within the same second as creation, same size: still seen.
    write(&dest.join("many/file010.js"), "export const n = 99;\n");
    // New bytes of the same size under the recorded stat (its time put back): a
    // snapshot that reads it would see them, one that trusts the cache keeps the base
    // blob. The cache is trusted, so this file was not read.
    let unread = dest.join("many/file011.js");
    let stamp = std::fs::metadata(&unread).unwrap().modified().unwrap();
    write(&unread, "export const n = 77;\n");
    std::fs::File::options().write(true).open(&unread).unwrap().set_modified(stamp).unwrap();
    // A new file and a removed one.
    write(&dest.join("src/added.txt"), "added\n");
    std::fs::remove_file(dest.join("empty.txt")).unwrap();

    let after = snapshot_cached(&store, &dest, &[], &cache).unwrap();
    let blob = |rel: &str| store.find_blob(blob_at(&store, after, rel)).unwrap().content().to_vec();
    assert_eq!(blob("many/file010.js"), b"export const n = 99;\n");
    assert_eq!(blob_at(&store, after, "many/file011.js"), blob_at(&store, tree, "many/file011.js"));
    assert_eq!(blob("src/added.txt"), b"added\n");
    assert!(store.find_tree(after).unwrap().get_path(Path::new("empty.txt")).is_err());
    // Every other file kept its blob.
    let (before, now) = (tree_files(&store, tree), tree_files(&store, after));
    let kept = before.keys().filter(|rel| now.get(*rel) == before.get(*rel)).count();
    assert_eq!(kept, before.len() - 2);
}

#[tokio::test]
async fn a_new_session_has_its_stat_cache_primed_and_sees_an_edit_made_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("app");
    git_fixture(&repo);
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &repo).await;
    let session = create(&engine, "Tidy up the fixture app").await;
    let session_dir = repo.join(".kiln/sessions").join(&session.id);
    let workdir = session_dir.join("workspace");
    let index = git2::Index::open(&session_dir.join("index")).unwrap();
    assert_eq!(index.len(), files(&workdir, &[".git"]).len(), "one entry per file of the working copy");

    let store = Repository::open_bare(repo.join(".kiln/store.git")).unwrap();
    let base = store.find_reference(&format!("refs/kiln/{}/0", session.id)).unwrap().peel_to_tree().unwrap().id();
    write(&workdir.join("src/b.js"), "export const b = 33;\n");
    let tree = kiln_engine::testing::working_copy::snapshot_workdir(&store, &workdir).unwrap();
    assert_ne!(tree, base);
    let blob = store.find_tree(tree).unwrap().get_path(Path::new("src/b.js")).unwrap().id();
    assert_eq!(store.find_blob(blob).unwrap().content(), b"export const b = 33;\n");
    assert_eq!(
        store.find_tree(tree).unwrap().get_path(Path::new("src/a.js")).unwrap().id(),
        store.find_tree(base).unwrap().get_path(Path::new("src/a.js")).unwrap().id()
    );
}

#[test]
fn editing_the_working_copy_never_reaches_the_host() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("host");
    let host = host_repo(&root);
    let (store, _, commit) = base(&host, &tmp.path().join("store.git"));
    let host_files = HostFiles::read(&host, "").unwrap();
    let host_before = files(&root, &[".git"]);
    let dest = tmp.path().join("copy");
    let made = working_copy(&store, commit, &dest, Some(&host_files)).unwrap();
    assert!(made.from_host > SMALL_FILES, "the host's files were reused");
    if reflink_supported(&root, tmp.path()).unwrap() {
        assert_eq!(made.cloned, made.from_host, "reflinks where the file system has them");
    } else {
        println!(
            "reflink branch skipped: the file system of {} has no reflinks (FICLONE); copied in the kernel",
            root.display()
        );
        assert_eq!(made.cloned, 0);
    }

    // No file of the copy is a host file under another name.
    for rel in files(&dest, &[]).keys() {
        let copy = std::fs::symlink_metadata(dest.join(rel)).unwrap();
        if copy.is_file() {
            assert_eq!(copy.nlink(), 1, "{rel} has one name");
            assert_ne!(copy.ino(), std::fs::metadata(root.join(rel)).unwrap().ino(), "{rel} is its own file");
        }
    }
    // Edited in place every way an agent does: appended to, rewritten in place, cut
    // short, its mode changed.
    use std::io::Write;
    std::fs::OpenOptions::new().append(true).open(dest.join("README.md")).unwrap().write_all(b"appended\n").unwrap();
    let mut large = std::fs::OpenOptions::new().write(true).open(dest.join("large.bin")).unwrap();
    large.write_all(b"overwritten in place").unwrap();
    large.set_len(1000).unwrap();
    drop(large);
    for i in 1..SMALL_FILES {
        write(&dest.join(format!("many/file{i:03}.js")), "changed\n");
    }
    std::fs::set_permissions(dest.join("run.sh"), std::fs::Permissions::from_mode(0o600)).unwrap();
    write(&dest.join("empty.txt"), "no longer empty\n");

    assert_eq!(files(&root, &[".git"]), host_before, "the host's files are as they were");
    assert_ne!(std::fs::metadata(root.join("run.sh")).unwrap().permissions().mode() & 0o111, 0);
    assert_eq!(sh_git(&root, &["status", "--porcelain"]), "", "git sees no change in the host");
}
