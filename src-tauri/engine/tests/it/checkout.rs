//! The session as a git checkout of its own (SPEC §4): git run in the working copy
//! answers for the session (its branch, its change, the repository's history), a commit
//! made there is kept by the next checkpoint and followed by restores, and the user's
//! repository is unchanged byte for byte. Repositories are written here; turns run on
//! Kiln's own loop against the scripted model server, their commands through the real git.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::common::*;
use kiln_engine::types::*;
use kiln_model_server::{ModelServer, Step};
use serde_json::json;

/// A small package with two commits, an edit not yet committed and a file git does not
/// track yet, as a user's repository usually is.
fn package(root: &Path) {
    write(&root.join("package.json"), r#"{"name": "greet", "version": "1.0.0"}"#);
    write(&root.join("index.js"), "exports.greet = (n) => `hi ${n}`;\n");
    write(&root.join(".gitignore"), "node_modules/\n");
    sh_git(root, &["init", "-q", "-b", "main"]);
    sh_git(root, &["config", "user.name", "Dev Person"]);
    sh_git(root, &["config", "user.email", "dev@example.com"]);
    sh_git(root, &["add", "-A"]);
    sh_git(root, &["commit", "-qm", "first: greet"]);
    write(&root.join("README.md"), "# greet\n");
    sh_git(root, &["add", "-A"]);
    sh_git(root, &["commit", "-qm", "second: a readme"]);
    write(&root.join("index.js"), "exports.greet = (n) => `hello ${n}`;\n");
    write(&root.join("notes.txt"), "remember the tests\n");
}

/// Every file under `dir` with its content and mode: what "byte for byte" compares.
fn tree_bytes(dir: &Path, skip: &[&str]) -> BTreeMap<String, (u32, Vec<u8>)> {
    use std::os::unix::fs::MetadataExt;
    files(dir, skip)
        .into_iter()
        .map(|(rel, bytes)| {
            let mode = std::fs::symlink_metadata(dir.join(&rel)).unwrap().mode();
            (rel, (mode, bytes))
        })
        .collect()
}

/// The paths added, removed or changed (content or mode) between two `tree_bytes`.
fn changed(before: &BTreeMap<String, (u32, Vec<u8>)>, after: &BTreeMap<String, (u32, Vec<u8>)>) -> Vec<String> {
    let paths: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    paths.into_iter().filter(|p| before.get(*p) != after.get(*p)).cloned().collect()
}

/// git as the user would run it in the session's directory, with no configuration but
/// the checkout's own.
fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn workdir(repo: &Path, id: &str) -> PathBuf {
    repo.join(".kiln/sessions").join(id).join("workspace")
}

async fn tool_outputs(engine: &kiln_engine::Engine, id: &str) -> Vec<String> {
    let all = engine
        .get_transcript(GetTranscriptArgs { session_id: id.into(), after: None, before: None, last: None })
        .await
        .unwrap();
    all.into_iter().filter(|e| e.kind == EntryKind::Tool).map(|e| e.text).collect()
}

#[tokio::test]
async fn git_in_a_session_answers_for_the_session_and_never_touches_the_repository() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("greet");
    package(&repo);

    let look = "git rev-parse --show-toplevel; git branch --show-current; git status --porcelain; git log --format=%s";
    let commit = "git diff --stat; git add -A && git commit -qm 'Shout the greeting' && git log -n 2 --format='%s|%an'";
    let server = ModelServer::start(vec![
        Step::tool("run_command", json!({ "command": look })),
        Step::tool("write_file", json!({"path": "index.js", "content": "exports.greet = (n) => `HELLO ${n}`;\n"})),
        Step::tool("run_command", json!({ "command": commit })),
        Step::text("Shouted it and committed.\nHANDOFF: none - done"),
        Step::text("Looked at it.\nREVIEW: pass - fine"),
    ])
    .await;
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &repo).await;
    // Opening the workspace adds `.kiln/` to `.git/info/exclude`, once; from then on
    // nothing of the repository changes.
    let host_git = tree_bytes(&repo.join(".git"), &[]);
    let host_files = tree_bytes(&repo, &[".git", ".kiln"]);
    use_scripted_model(&engine, &server, false).await;
    let s = create(&engine, "Make the greeting loud").await;
    wait_setup(&engine, &s.id).await;
    let work = workdir(&repo, &s.id);
    let branch = format!("kiln/{}", &s.id[..8]);

    // Before any turn: the session's own branch, clean, on the repository's history with
    // what was uncommitted as one commit on top.
    assert_eq!(git_in(&work, &["branch", "--show-current"]), branch);
    assert_eq!(git_in(&work, &["status", "--porcelain"]), "");
    let log = git_in(&work, &["log", "--format=%s"]);
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        ["Uncommitted changes in the workspace when the Kiln session started", "second: a readme", "first: greet"]
    );
    assert_eq!(git_in(&work, &["blame", "--porcelain", "README.md"]).lines().nth(1), Some("author Someone Else"));

    send_text(&engine, &s.id, "Make it loud").await;
    wait_settled(&engine, &s.id, Duration::from_secs(60)).await;

    // The agent's git saw the session: its top level, its branch, nothing changed yet.
    let tools = tool_outputs(&engine, &s.id).await;
    let looked =
        tools.iter().find(|t| t.starts_with("↳") && t.contains("first: greet")).unwrap_or_else(|| panic!("{tools:#?}"));
    assert!(looked.contains(work.to_str().unwrap()), "{looked}");
    assert!(looked.contains(&branch), "{looked}");
    assert!(looked.contains("second: a readme"), "{looked}");
    assert!(!looked.contains("could not open directory") && !looked.contains(" M "), "{looked}");
    // …then its own change, and its commit under the user's identity.
    let committed = tools
        .iter()
        .find(|t| t.starts_with("↳") && t.contains("Shout the greeting"))
        .unwrap_or_else(|| panic!("{tools:#?}"));
    assert!(committed.contains("index.js | 2"), "{committed}");
    assert!(committed.contains("Shout the greeting|Dev Person"), "{committed}");

    // The checkpoint kept the commit; restores move the branch with the files.
    let session = engine.get_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    let last = session.checkpoints.last().unwrap().sequence;
    assert!(last >= 1, "{:#?}", session.checkpoints);
    let store = repo.join(".kiln/store.git");
    let kept = git_in(&store, &["rev-parse", &format!("refs/kiln-git/{}/{last}", s.id)]);
    assert_eq!(kept, git_in(&work, &["rev-parse", "HEAD"]));
    let restore = |sequence| engine.restore_checkpoint(RestoreCheckpointArgs { session_id: s.id.clone(), sequence });
    restore(0).await.unwrap();
    assert_eq!(git_in(&work, &["log", "-1", "--format=%s"]), log.lines().next().unwrap());
    assert_eq!(git_in(&work, &["status", "--porcelain"]), "", "files and branch went back together");
    assert_eq!(std::fs::read_to_string(work.join("index.js")).unwrap(), "exports.greet = (n) => `hello ${n}`;\n");
    restore(last).await.unwrap();
    assert_eq!(git_in(&work, &["log", "-1", "--format=%s"]), "Shout the greeting");
    assert_eq!(git_in(&work, &["status", "--porcelain"]), "");

    // A working copy lost and rebuilt gets its checkout back, on the kept commit.
    std::fs::remove_dir_all(&work).unwrap();
    engine.get_diff(GetDiffArgs { session_id: s.id.clone(), module_id: None }).await.unwrap();
    assert_eq!(git_in(&work, &["log", "-1", "--format=%s"]), "Shout the greeting");
    assert_eq!(git_in(&work, &["branch", "--show-current"]), branch);
    assert_eq!(git_in(&work, &["status", "--porcelain"]), "");

    // The user's repository: not one byte of it changed.
    assert_eq!(changed(&host_git, &tree_bytes(&repo.join(".git"), &[])), Vec::<String>::new(), "in .git");
    assert_eq!(changed(&host_files, &tree_bytes(&repo, &[".git", ".kiln"])), Vec::<String>::new(), "in the workspace");
    assert_eq!(sh_git(&repo, &["log", "-1", "--format=%s"]), "second: a readme");
}

#[tokio::test]
async fn a_workspace_that_is_not_a_repository_gets_a_checkout_too() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("plain");
    write(&root.join("main.py"), "print('hi')\n");
    write(&root.join("lib/util.py"), "X = 1\n");
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &root).await;
    let s = create(&engine, "Anything").await;
    let work = workdir(&root, &s.id);
    assert_eq!(git_in(&work, &["log", "--format=%s"]), "The workspace when the Kiln session started");
    assert_eq!(git_in(&work, &["status", "--porcelain"]), "");
    assert_eq!(git_in(&work, &["ls-files"]).lines().collect::<Vec<_>>(), ["lib/util.py", "main.py"]);
    std::fs::write(work.join("main.py"), "print('hello')\n").unwrap();
    assert_eq!(git_in(&work, &["status", "--porcelain"]), "M main.py");
    assert!(!root.join(".git").exists(), "no repository was made in the workspace");
}
