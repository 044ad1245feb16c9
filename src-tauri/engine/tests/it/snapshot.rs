//! A session's base snapshot: the materialized working copy equals the host's working
//! tree minus ignored files, and the host repository is left exactly as it was.

use std::path::Path;
use std::process::Command;

use crate::common::*;

/// Everything about the host repository a snapshot must not change.
fn host_state(repo: &Path) -> Vec<(String, Vec<u8>)> {
    let git = |args: &[&str]| -> Vec<u8> {
        let out = Command::new("git")
            .args(args)
            .current_dir(repo)
            .env("HOME", repo.join(".home"))
            // Keeps `git status` itself from refreshing the index we are watching.
            .env("GIT_OPTIONAL_LOCKS", "0")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        out.stdout
    };
    let mut state = vec![
        ("index".to_string(), std::fs::read(repo.join(".git/index")).unwrap()),
        ("HEAD".to_string(), std::fs::read(repo.join(".git/HEAD")).unwrap()),
        ("refs".to_string(), git(&["for-each-ref", "--format=%(refname) %(objectname)"])),
        ("stash".to_string(), git(&["stash", "list", "--format=%H %s"])),
        ("worktrees".to_string(), git(&["worktree", "list", "--porcelain"])),
        // Kiln's own `.kiln/` is expected to appear, as an ignored directory.
        ("status".to_string(), without_kiln(git(&["status", "--porcelain=v2", "--untracked-files=all", "--ignored"]))),
    ];
    for (rel, bytes) in files(&repo.join(".git/refs"), &[]) {
        state.push((format!("refs/{rel}"), bytes));
    }
    state.push(("packed-refs".into(), std::fs::read(repo.join(".git/packed-refs")).unwrap_or_default()));
    state
}

fn without_kiln(text: Vec<u8>) -> Vec<u8> {
    String::from_utf8(text)
        .unwrap()
        .lines()
        .filter(|l| !l.contains(".kiln/"))
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .into_bytes()
}

#[tokio::test]
async fn git_workspace_snapshot_reads_without_touching_the_host() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("app");
    git_fixture(&repo);
    // The index's stat data is what a careless status run would rewrite.
    let before = host_state(&repo);

    let engine = engine(&tmp.path().join("config"));
    let ws = open(&engine, &repo).await;
    assert!(ws.is_git);
    let session = create(&engine, "Tidy up the fixture app").await;
    assert_eq!(session.modules[0].id, "fixture-app");
    assert_eq!(session.checkpoints[0].sequence, 0);
    assert_eq!(session.checkpoints[0].label, "Start");

    let after = host_state(&repo);
    for ((name, a), (_, b)) in before.iter().zip(after.iter()) {
        assert!(a == b, "host {name} changed:\n{}\n---\n{}", String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    }
    assert_eq!(before.len(), after.len());

    let workdir = repo.join(".kiln/sessions").join(&session.id).join("workspace");
    let copy = files(&workdir, &["node_modules", ".git"]);
    let host = files(&repo, &[".git", ".kiln", ".home", "node_modules", "debug.log"]);
    assert_eq!(copy.keys().collect::<Vec<_>>(), host.keys().collect::<Vec<_>>());
    assert_eq!(copy, host);
    // The parts that matter, spelled out.
    assert_eq!(copy["src/a.js"], b"export const a = 100; // unstaged\n");
    assert_eq!(copy["src/b.js"], b"export const b = 22;\n");
    assert_eq!(copy["lib/staged.txt"], b"staged change\n");
    assert_eq!(copy["lib/twice.txt"], b"second\n");
    assert_eq!(copy["docs/deep/page.md"], b"deep untracked\n");
    assert_eq!(copy["link-to-a.js"], b"-> src/a.js");
    assert!(!copy.contains_key("src/deleted.js"));
    assert!(!workdir.join("node_modules").exists());
    assert!(!workdir.join("debug.log").exists());
    use std::os::unix::fs::PermissionsExt;
    assert_ne!(std::fs::metadata(workdir.join("run.sh")).unwrap().permissions().mode() & 0o111, 0);

    // The store holds checkpoint 0 under the session's ref and borrows host objects.
    let store = git2::Repository::open_bare(repo.join(".kiln/store.git")).unwrap();
    let r = store.find_reference(&format!("refs/kiln/{}/0", session.id)).unwrap();
    assert!(r.peel_to_commit().is_ok());
    let alternates = std::fs::read_to_string(repo.join(".kiln/store.git/objects/info/alternates")).unwrap();
    assert!(alternates.contains(".git/objects"));
    // .kiln/ is excluded from the host's status.
    let exclude = std::fs::read_to_string(repo.join(".git/info/exclude")).unwrap();
    assert!(exclude.lines().any(|l| l == ".kiln/"));
}

#[tokio::test]
async fn workspace_inside_a_larger_repository_snapshots_only_its_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("mono");
    git_fixture(&repo);
    let sub = repo.join("docs");
    std::fs::write(sub.join("kiln.toml"), "").unwrap();
    std::fs::write(sub.join("package.json"), r#"{"name":"docs-site"}"#).unwrap();
    let engine = engine(&tmp.path().join("config"));
    let ws = open(&engine, &sub.join("deep")).await;
    assert_eq!(ws.root, sub.canonicalize().unwrap().display().to_string());
    let session = create(&engine, "Write the docs").await;
    let copy = files(&sub.join(".kiln/sessions").join(&session.id).join("workspace"), &[".git"]);
    assert_eq!(copy.keys().cloned().collect::<Vec<_>>(), vec!["deep/page.md", "kiln.toml", "package.json"]);
}

#[tokio::test]
async fn plain_directory_snapshot_follows_gitignore_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("plain");
    std::fs::create_dir_all(root.join("src/nested")).unwrap();
    std::fs::create_dir_all(root.join("node_modules/dep")).unwrap();
    std::fs::create_dir_all(root.join("build")).unwrap();
    std::fs::write(root.join(".gitignore"), "node_modules/\n/build\n*.tmp\n").unwrap();
    std::fs::write(root.join("package.json"), r#"{"name":"plain-app"}"#).unwrap();
    std::fs::write(root.join("src/index.js"), "console.log(1)\n").unwrap();
    std::fs::write(root.join("src/nested/.env.example"), "A=1\n").unwrap();
    std::fs::write(root.join("src/scratch.tmp"), "x").unwrap();
    std::fs::write(root.join("node_modules/dep/index.js"), "x").unwrap();
    std::fs::write(root.join("build/out.js"), "x").unwrap();
    std::os::unix::fs::symlink("src/index.js", root.join("entry.js")).unwrap();
    let before = files(&root, &[]);

    let engine = engine(&tmp.path().join("config"));
    let ws = open(&engine, &root).await;
    assert!(!ws.is_git);
    let session = create(&engine, "Change the plain app").await;
    let copy = files(&root.join(".kiln/sessions").join(&session.id).join("workspace"), &[".git"]);
    let expected: Vec<&str> = vec![".gitignore", "entry.js", "package.json", "src/index.js", "src/nested/.env.example"];
    assert_eq!(copy.keys().map(String::as_str).collect::<Vec<_>>(), expected);
    assert_eq!(copy["entry.js"], b"-> src/index.js");
    // The workspace itself only gained .kiln/.
    assert_eq!(files(&root, &[".kiln"]), before);
}

#[test]
fn the_stat_cache_reads_only_files_whose_stat_changed() {
    use std::time::{Duration, SystemTime};
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("workspace");
    std::fs::create_dir_all(root.join("src")).unwrap();
    let file = root.join("src/a.txt");
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000);
    let write_at = |content: &str, when: SystemTime| {
        std::fs::write(&file, content).unwrap();
        std::fs::File::options().write(true).open(&file).unwrap().set_modified(when).unwrap();
    };
    write_at("first", old);
    let store = git2::Repository::init_bare(tmp.path().join("store.git")).unwrap();
    let cache = tmp.path().join("index");
    let blob_of =
        |tree: git2::Oid| store.find_tree(tree).unwrap().get_path(std::path::Path::new("src/a.txt")).unwrap().id();

    let first = kiln_engine::testing::snapshot::snapshot_cached(&store, &root, &[], &cache).unwrap();
    assert!(cache.is_file(), "the cache is written");
    // Same size, same mtime, same inode: the cache answers without reading the file
    // (what git does too); so an unchanged file costs a stat, not a read.
    std::fs::File::options().write(true).open(&file).unwrap().set_len(0).unwrap();
    write_at("FIRST", old);
    let cached = kiln_engine::testing::snapshot::snapshot_cached(&store, &root, &[], &cache).unwrap();
    assert_eq!(blob_of(cached), blob_of(first));
    // A new mtime is read again.
    write_at("FIRST", old + Duration::from_secs(60));
    let reread = kiln_engine::testing::snapshot::snapshot_cached(&store, &root, &[], &cache).unwrap();
    assert_ne!(blob_of(reread), blob_of(first));
    assert_eq!(store.find_blob(blob_of(reread)).unwrap().content(), b"FIRST");
    // A file changed as recently as the cache was written is always read again.
    write_at("fresh", SystemTime::now() + Duration::from_secs(5));
    let racy = kiln_engine::testing::snapshot::snapshot_cached(&store, &root, &[], &cache).unwrap();
    assert_eq!(store.find_blob(blob_of(racy)).unwrap().content(), b"fresh");
    // Deleted files leave the cache and the tree.
    std::fs::remove_file(&file).unwrap();
    let gone = kiln_engine::testing::snapshot::snapshot_cached(&store, &root, &[], &cache).unwrap();
    assert!(store.find_tree(gone).unwrap().get_path(std::path::Path::new("src/a.txt")).is_err());
}
