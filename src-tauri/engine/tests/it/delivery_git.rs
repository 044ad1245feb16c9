//! `delivery::git`, the git layer of the git-pr target, against a real bare remote made
//! with `git init --bare` in a temp dir and clones of it: fetch, worktree, commit, push
//! with a lease, a remote branch someone else moved, clean-up after a crash, clear errors,
//! the allowlisted environment, a token that reaches a loopback HTTP remote only through
//! the credential helper (never an argv, checked in /proc while git runs), and redaction.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{bare_remote, pair, recording_git, rev, sh_git};
use base64::Engine as _;
use kiln_engine::testing::delivery::git::{allowlisted_env, Git, GitErrorKind, Redactor, KEPT_VARIABLES};

// ---------------------------------------------------------------------------------------
// Fixture: a bare remote with `main` (README.md, src/app.txt, old.txt), the user's clone
// `work` (origin = the bare repository's path), and an empty HOME so no global identity
// or helper of this machine leaks into the results.

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    remote: PathBuf,
    work: PathBuf,
    home: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let remote = bare_remote(&root, "work", "init", |seed| {
        std::fs::create_dir_all(seed.join("src")).unwrap();
        std::fs::write(seed.join("README.md"), "# shop\n").unwrap();
        std::fs::write(seed.join("src/app.txt"), "app\n").unwrap();
        std::fs::write(seed.join("old.txt"), "old\n").unwrap();
    });
    let home = root.join("home");
    std::fs::create_dir_all(&home).unwrap();
    Fixture { work: root.join("work"), remote, home, root, _tmp: tmp }
}

impl Fixture {
    /// The module on `dir`, with this fixture's empty HOME and no system config.
    fn git(&self, dir: &Path) -> Git {
        Git::new(dir)
            .with_env("HOME", &self.home)
            .with_env("XDG_CONFIG_HOME", self.home.join(".config"))
            .with_env("GIT_CONFIG_NOSYSTEM", "1")
            .with_env("NO_PROXY", "*")
            .with_env("no_proxy", "*")
    }

    /// Someone else commits `file` on `branch` of the remote from a clone of their own.
    fn someone_else_pushes(&self, branch: &str, file: &str) -> String {
        let dir = self.root.join(format!("other-{}", uuid::Uuid::new_v4().simple()));
        sh_git(&self.root, &["clone", "--quiet", self.remote.to_str().unwrap(), dir.to_str().unwrap()]);
        if rev(&self.remote, &format!("refs/heads/{branch}")).is_some() {
            sh_git(&dir, &["checkout", "--quiet", branch]);
        } else {
            sh_git(&dir, &["checkout", "--quiet", "-b", branch]);
        }
        std::fs::write(dir.join(file), "theirs\n").unwrap();
        sh_git(&dir, &["add", "-A"]);
        sh_git(&dir, &["commit", "--quiet", "-m", "their work"]);
        sh_git(&dir, &["push", "--quiet", "origin", &format!("HEAD:refs/heads/{branch}")]);
        rev(&dir, "HEAD").unwrap()
    }

    fn remote_sha(&self, branch: &str) -> Option<String> {
        rev(&self.remote, &format!("refs/heads/{branch}"))
    }

    fn worktrees(&self) -> String {
        sh_git(&self.work, &["worktree", "list", "--porcelain"])
    }

    /// Whether git lists `wt` among the clone's worktrees. Compared path to path: a
    /// substring test would also match the temp directory's random name.
    fn knows(&self, wt: &Path) -> bool {
        self.worktrees().lines().filter_map(|l| l.strip_prefix("worktree ")).any(|p| Path::new(p) == wt)
    }
}

fn sorted(mut v: Vec<(String, String)>) -> Vec<(String, String)> {
    v.sort_by(|a, b| a.1.cmp(&b.1));
    v
}

/// One recorded run: its argv and its environment.
type Run = (Vec<String>, Vec<(String, String)>);

/// Each run the recording git (`recording_git(dir, dir)`) wrote to `dir`, its argv and
/// environment split into their parts (the tests look at single arguments and variables).
fn recorded_runs(dir: &Path) -> Vec<Run> {
    let mut runs = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let Some(id) = name.strip_prefix("argv-") else { continue };
        let split = |text: Vec<u8>| {
            String::from_utf8_lossy(&text).split('\0').filter(|s| !s.is_empty()).map(String::from).collect::<Vec<_>>()
        };
        let argv = split(std::fs::read(dir.join(&name)).unwrap());
        let env = split(std::fs::read(dir.join(format!("env-{id}"))).unwrap())
            .into_iter()
            .filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
            .collect();
        runs.push((argv, env));
    }
    runs
}

// ---------------------------------------------------------------------------------------
// The delivery path

#[tokio::test]
async fn fetch_worktree_commit_push_update_and_clean_up() {
    let fx = fixture();
    let g = fx.git(&fx.work);
    let main_sha = fx.remote_sha("main").unwrap();

    let fetched = g.fetch("origin", "main").await.unwrap();
    assert!(
        fetched.success() && fetched.command.starts_with("git ") && fetched.command.contains("fetch"),
        "{fetched:?}"
    );
    assert_eq!(rev(&fx.work, "refs/remotes/origin/main"), Some(main_sha.clone()));
    assert_eq!(g.remote_branch_sha("origin", "main").await.unwrap().0, Some(main_sha.clone()));
    assert_eq!(g.remote_branch_sha("origin", "kiln/shop-1").await.unwrap().0, None);

    let wt = fx.work.join(".kiln/worktrees/s1");
    g.worktree_add(&wt, "origin/main", "kiln/shop-1").await.unwrap();
    assert!(fx.knows(&wt), "{}", fx.worktrees());
    assert_eq!(sh_git(&wt, &["rev-parse", "--abbrev-ref", "HEAD"]), "kiln/shop-1");
    assert_eq!(rev(&wt, "HEAD"), Some(main_sha.clone()));
    // No upstream: a bare `git push` from here would go nowhere unexpected.
    assert!(!Command::new("git")
        .args(["rev-parse", "--abbrev-ref", "@{upstream}"])
        .current_dir(&wt)
        .output()
        .unwrap()
        .status
        .success());

    std::fs::create_dir_all(wt.join("modules/shop")).unwrap();
    std::fs::write(wt.join("modules/shop/index.ts"), "export {}\n").unwrap();
    std::fs::write(wt.join("README.md"), "# shop, delivered\n").unwrap();
    std::fs::remove_file(wt.join("old.txt")).unwrap();
    let w = fx.git(&wt);
    let (status, _) = w.status_porcelain().await.unwrap();
    assert_eq!(
        sorted(status),
        vec![pair(" M", "README.md"), pair("??", "modules/shop/index.ts"), pair(" D", "old.txt")]
    );
    let (changed, shown) = w.changed_paths("origin/main").await.unwrap();
    assert_eq!(sorted(changed), vec![pair("M", "README.md"), pair("A", "modules/shop/index.ts"), pair("D", "old.txt")]);
    assert!(
        shown.command.contains("add -A") && shown.command.contains("merge-base") && shown.command.contains("diff"),
        "{}",
        shown.command
    );

    let message = "kiln: add shop\n\nSession: 1234\n# gates: 3 passed\n";
    let (c1, out) = w.commit(message, None).await.unwrap();
    assert!(out.success());
    assert_eq!(rev(&wt, "HEAD"), Some(c1.clone()));
    // No identity anywhere (empty HOME, no system config): Kiln's, as author and committer.
    assert_eq!(
        sh_git(&wt, &["log", "-1", "--format=%an <%ae>|%cn <%ce>"]),
        "Kiln <kiln@localhost>|Kiln <kiln@localhost>"
    );
    // The message as written: a `#` line is not a comment to strip.
    assert!(sh_git(&wt, &["log", "-1", "--format=%B"]).contains("# gates: 3 passed"));

    let pushed = w.push("origin", "kiln/shop-1", "kiln/shop-1", None).await.unwrap();
    assert!(pushed.success(), "{pushed:?}");
    assert_eq!(fx.remote_sha("kiln/shop-1"), Some(c1.clone()));

    // A second delivery: reset the branch to the base and commit afresh (not a fast-forward
    // of c1), pushed with the lease on c1.
    std::fs::write(wt.join("modules/shop/index.ts"), "export const v = 2\n").unwrap();
    w.add_all().await.unwrap();
    let (c2, _) = w.commit("kiln: update shop", None).await.unwrap();
    w.push("origin", "kiln/shop-1", "kiln/shop-1", Some(&c1)).await.unwrap();
    assert_eq!(fx.remote_sha("kiln/shop-1"), Some(c2.clone()));
    // Committed changes still count against the base.
    let (changed, _) = w.changed_paths("origin/main").await.unwrap();
    assert!(changed.contains(&pair("A", "modules/shop/index.ts")), "{changed:?}");

    let removed = g.worktree_remove(&wt).await.unwrap();
    assert!(
        removed.success() && removed.command.contains("worktree remove") && removed.command.contains("worktree prune"),
        "{removed:?}"
    );
    assert!(!wt.exists());
    assert!(!fx.knows(&wt), "{}", fx.worktrees());

    g.delete_local_branch("kiln/shop-1").await.unwrap();
    assert_eq!(rev(&fx.work, "refs/heads/kiln/shop-1"), None);
    let missing = g.delete_local_branch("kiln/shop-1").await.unwrap_err();
    assert_eq!(missing.kind, GitErrorKind::RefNotFound, "{missing:?}");

    g.delete_remote_branch("origin", "kiln/shop-1", &c2).await.unwrap();
    assert_eq!(fx.remote_sha("kiln/shop-1"), None);
    assert_eq!(fx.remote_sha("main"), Some(main_sha));
}

#[tokio::test]
async fn a_push_never_overwrites_a_branch_someone_else_moved() {
    let fx = fixture();
    let g = fx.git(&fx.work);
    g.fetch("origin", "main").await.unwrap();
    let wt = fx.work.join(".kiln/worktrees/s2");
    g.worktree_add(&wt, "origin/main", "kiln/x").await.unwrap();
    let w = fx.git(&wt);
    std::fs::write(wt.join("mine.txt"), "mine\n").unwrap();
    w.add_all().await.unwrap();
    let (c1, _) = w.commit("kiln: add x", None).await.unwrap();
    w.push("origin", "kiln/x", "kiln/x", None).await.unwrap();

    let theirs = fx.someone_else_pushes("kiln/x", "theirs.txt");
    std::fs::write(wt.join("mine.txt"), "mine, again\n").unwrap();
    w.add_all().await.unwrap();
    let (c2, _) = w.commit("kiln: update x", None).await.unwrap();

    let err = w.push("origin", "kiln/x", "kiln/x", Some(&c1)).await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::RemoteMoved, "{err:?}");
    assert!(err.message.contains("kiln/x") && err.message.contains(&theirs[..12]), "{}", err.message);
    assert!(err.output.as_ref().unwrap().output.contains("stale info"), "{err:?}");
    assert_eq!(fx.remote_sha("kiln/x"), Some(theirs.clone()), "the remote must keep their commit");

    // Expecting no branch at all, when one exists: refused too.
    let err = w.push("origin", "kiln/x", "kiln/x", None).await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::RemoteMoved, "{err:?}");
    assert_eq!(fx.remote_sha("kiln/x"), Some(theirs.clone()));

    // Deleting with a stale lease leaves their branch alone.
    let err = g.delete_remote_branch("origin", "kiln/x", &c1).await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::RemoteMoved, "{err:?}");
    assert_eq!(fx.remote_sha("kiln/x"), Some(theirs.clone()));

    // Once the caller has seen where it is, the lease on that SHA replaces it.
    let (now, _) = g.remote_branch_sha("origin", "kiln/x").await.unwrap();
    assert_eq!(now.as_deref(), Some(theirs.as_str()));
    w.push("origin", "kiln/x", "kiln/x", now.as_deref()).await.unwrap();
    assert_eq!(fx.remote_sha("kiln/x"), Some(c2.clone()));

    // A branch deleted under us: a push expecting c2 there does not recreate it.
    sh_git(&fx.remote, &["update-ref", "-d", "refs/heads/kiln/x"]);
    let err = w.push("origin", "kiln/x", "kiln/x", Some(&c2)).await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::RemoteMoved, "{err:?}");
    assert!(err.message.contains("does not exist"), "{}", err.message);
    assert_eq!(fx.remote_sha("kiln/x"), None);
    g.worktree_remove(&wt).await.unwrap();
}

#[tokio::test]
async fn commit_identity_author_and_nothing_to_commit() {
    let fx = fixture();
    let g = fx.git(&fx.work);
    std::fs::write(fx.work.join("a.txt"), "a\n").unwrap();
    g.add_all().await.unwrap();
    g.commit("with an author", Some(("Ada Lovelace", "ada@example.com"))).await.unwrap();
    assert_eq!(
        sh_git(&fx.work, &["log", "-1", "--format=%an <%ae>|%cn <%ce>"]),
        "Ada Lovelace <ada@example.com>|Kiln <kiln@localhost>"
    );

    // The repository's own identity wins over Kiln's default.
    sh_git(&fx.work, &["config", "user.name", "Repo Person"]);
    sh_git(&fx.work, &["config", "user.email", "repo@example.com"]);
    std::fs::write(fx.work.join("b.txt"), "b\n").unwrap();
    g.add_all().await.unwrap();
    g.commit("with the repository's identity", None).await.unwrap();
    assert_eq!(
        sh_git(&fx.work, &["log", "-1", "--format=%an <%ae>|%cn <%ce>"]),
        "Repo Person <repo@example.com>|Repo Person <repo@example.com>"
    );

    let head = rev(&fx.work, "HEAD");
    let err = g.commit("nothing", None).await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::NothingToCommit, "{err:?}");
    assert_eq!(rev(&fx.work, "HEAD"), head);

    let err = g.commit("bad author", Some(("Ada <x>", "ada@example.com"))).await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::InvalidInput, "{err:?}");
}

// ---------------------------------------------------------------------------------------
// Clean-up after a crash

#[tokio::test]
async fn worktrees_left_behind_by_a_crash_are_cleaned_and_can_be_made_again() {
    let fx = fixture();
    let g = fx.git(&fx.work);
    g.fetch("origin", "main").await.unwrap();
    let admin = fx.work.join(".git/worktrees");

    // 1. The directory is there but git forgot it (its admin entry is gone).
    let wt = fx.work.join(".kiln/worktrees/crash1");
    g.worktree_add(&wt, "origin/main", "kiln/crash1").await.unwrap();
    std::fs::write(wt.join("half-copied.txt"), "x\n").unwrap();
    std::fs::remove_dir_all(admin.join("crash1")).unwrap();
    assert!(!fx.knows(&wt));
    let out = g.worktree_remove(&wt).await.unwrap();
    assert!(!wt.exists(), "{out:?}");
    assert!(out.output.contains("no longer knew"), "{out:?}");
    g.worktree_add(&wt, "origin/main", "kiln/crash1").await.unwrap();
    g.worktree_remove(&wt).await.unwrap();
    assert!(!wt.exists() && !fx.knows(&wt));

    // 2. Git knows it but the directory is gone: without a prune, adding it again fails.
    let wt = fx.work.join(".kiln/worktrees/crash2");
    g.worktree_add(&wt, "origin/main", "kiln/crash2").await.unwrap();
    std::fs::remove_dir_all(&wt).unwrap();
    assert!(fx.knows(&wt));
    g.worktree_remove(&wt).await.unwrap();
    assert!(!fx.knows(&wt), "{}", fx.worktrees());
    g.worktree_add(&wt, "origin/main", "kiln/crash2").await.unwrap();
    g.worktree_remove(&wt).await.unwrap();

    // 3. A directory with no .git at all inside the repository (a crash mid-add).
    let wt = fx.work.join(".kiln/worktrees/crash3");
    std::fs::create_dir_all(wt.join("sub")).unwrap();
    std::fs::write(wt.join("sub/f.txt"), "x\n").unwrap();
    g.worktree_remove(&wt).await.unwrap();
    assert!(!wt.exists());

    // 4. Nothing there at all: nothing to do, not an error.
    g.worktree_remove(&fx.work.join(".kiln/worktrees/never")).await.unwrap();
}

#[tokio::test]
async fn worktree_clean_up_refuses_what_is_not_this_repositorys() {
    let fx = fixture();
    let g = fx.git(&fx.work);

    // Outside the repository, with no .git naming it.
    let outside = fx.root.join("precious");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("keep.txt"), "keep\n").unwrap();
    let err = g.worktree_remove(&outside).await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::NotAWorktree, "{err:?}");
    assert!(outside.join("keep.txt").exists());

    // A repository of its own inside the workspace.
    let nested = fx.work.join(".kiln/worktrees/nested");
    std::fs::create_dir_all(&nested).unwrap();
    sh_git(&nested, &["init", "--quiet"]);
    std::fs::write(nested.join("keep.txt"), "keep\n").unwrap();
    let err = g.worktree_remove(&nested).await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::NotAWorktree, "{err:?}");
    assert!(nested.join("keep.txt").exists());

    // Another repository's worktree.
    let seed = fx.root.join("seed");
    let foreign = fx.work.join(".kiln/worktrees/foreign");
    sh_git(&seed, &["worktree", "add", "--quiet", "--detach", foreign.to_str().unwrap()]);
    let err = g.worktree_remove(&foreign).await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::NotAWorktree, "{err:?}");
    assert!(foreign.join("README.md").exists());

    // The repository itself, or a directory holding it.
    for path in [fx.work.clone(), fx.root.clone()] {
        let err = g.worktree_remove(&path).await.unwrap_err();
        assert_eq!(err.kind, GitErrorKind::NotAWorktree, "{err:?}");
    }
    assert!(fx.work.join("README.md").exists());
}

// ---------------------------------------------------------------------------------------
// Clear errors

#[tokio::test]
async fn unreachable_remotes_and_missing_branches_give_clear_errors() {
    let fx = fixture();
    let g = fx.git(&fx.work);

    let err = g.fetch("nonexistent", "main").await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::RemoteUnreachable, "{err:?}");
    assert!(err.message.contains("'nonexistent'"), "{}", err.message);
    assert!(err.output.is_some());

    let missing = fx.root.join("missing.git");
    let err = g.remote_branch_sha(missing.to_str().unwrap(), "main").await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::RemoteUnreachable, "{err:?}");
    assert!(err.message.contains("missing.git"), "{}", err.message);

    sh_git(&fx.work, &["remote", "add", "gone", fx.root.join("gone.git").to_str().unwrap()]);
    let err = g.fetch("gone", "main").await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::RemoteUnreachable, "{err:?}");
    let err = g.push("gone", "main", "kiln/z", None).await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::RemoteUnreachable, "{err:?}");

    let err = g.fetch("origin", "no-such-base").await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::RefNotFound, "{err:?}");
    assert_eq!(err.message, "the remote 'origin' has no branch 'no-such-base'");
    assert_eq!(rev(&fx.work, "refs/remotes/origin/no-such-base"), None);

    let wt = fx.work.join(".kiln/worktrees/s");
    let err = g.worktree_add(&wt, "origin/no-such-base", "kiln/y").await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::RefNotFound, "{err:?}");
    assert!(err.message.contains("origin/no-such-base"), "{}", err.message);
    assert!(!wt.exists());
    assert_eq!(rev(&fx.work, "refs/heads/kiln/y"), None);

    let err = g.changed_paths("origin/no-such-base").await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::RefNotFound, "{err:?}");

    // Names that could be read as options, or are not branch names: refused before git runs.
    for (what, err) in [
        ("option as branch", g.fetch("origin", "--upload-pack=touch /tmp/x").await.unwrap_err()),
        ("option as remote", g.remote_branch_sha("--upload-pack=x", "main").await.unwrap_err()),
        ("dots", g.push("origin", "main", "a..b", None).await.unwrap_err()),
        ("short sha", g.push("origin", "main", "kiln/a", Some("abc123")).await.unwrap_err()),
        ("option as start", g.worktree_add(&wt, "--orphan", "kiln/a").await.unwrap_err()),
    ] {
        assert_eq!(err.kind, GitErrorKind::InvalidInput, "{what}: {err:?}");
    }

    let err = fx.git(&fx.root.join("no-such-dir")).status_porcelain().await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::InvalidInput, "{err:?}");
    let err = fx.git(&fx.work).with_program(fx.root.join("no-git-here")).status_porcelain().await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::NotInstalled, "{err:?}");
}

#[tokio::test]
async fn a_command_past_its_timeout_or_given_up_is_killed_with_what_it_started() {
    let fx = fixture();
    let slow = fx.root.join("slow-git");
    let pid_file = fx.root.join("sleep.pid");
    std::fs::write(
        &slow,
        format!("#!/bin/sh\nsleep 30 &\necho $! > '{}'\nwait\nexec git \"$@\"\n", pid_file.display()),
    )
    .unwrap();
    std::fs::set_permissions(&slow, std::fs::Permissions::from_mode(0o755)).unwrap();
    let started = Instant::now();
    let err = fx
        .git(&fx.work)
        .with_program(&slow)
        .with_timeout(Duration::from_millis(500))
        .status_porcelain()
        .await
        .unwrap_err();
    assert_eq!(err.kind, GitErrorKind::TimedOut, "{err:?}");
    // Well short of the orphan's 30 s, however loaded the machine: git was not waited out.
    assert!(started.elapsed() < Duration::from_secs(20), "waited on an orphan: {:?}", started.elapsed());
    assert_eq!(err.output.unwrap().status, None);
    // The child it started went with it (its whole session was killed).
    assert_dies(&std::fs::read_to_string(&pid_file).unwrap());

    // A caller that gives up (drops the future) stops git and its children the same way.
    std::fs::remove_file(&pid_file).unwrap();
    let g = fx.git(&fx.work).with_program(&slow);
    assert!(tokio::time::timeout(Duration::from_millis(500), g.status_porcelain()).await.is_err());
    assert_dies(&std::fs::read_to_string(&pid_file).unwrap());
}

/// Waits up to 20 s (well short of the orphan's 30) for process `pid` to be gone (or a
/// zombie awaiting its reaper).
fn assert_dies(pid: &str) {
    let pid = pid.trim();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
        let gone = state.map(|s| s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z')).unwrap_or(true);
        if gone {
            return;
        }
        assert!(Instant::now() < deadline, "process {pid} outlived its git");
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---------------------------------------------------------------------------------------
// Environment

#[test]
fn the_allowlist_keeps_only_what_git_needs() {
    let vars = [
        ("HOME", "/home/u"),
        ("PATH", "/usr/bin"),
        ("LC_ALL", "C.UTF-8"),
        ("LC_MESSAGES", "de_DE"),
        ("SSH_AUTH_SOCK", "/run/agent"),
        ("https_proxy", "http://proxy:3128"),
        ("GIT_DIR", "/elsewhere"),
        ("GIT_CONFIG_PARAMETERS", "'core.sshcommand=evil'"),
        ("GIT_ASKPASS", "/usr/bin/ask"),
        ("SSH_ASKPASS", "/usr/bin/ask"),
        ("DISPLAY", ":0"),
        ("OPENAI_API_KEY", "sk-x"),
        ("KILN_GIT_TOKEN", "t"),
        ("GIT_TRACE_CURL", "1"),
    ];
    let kept = allowlisted_env(vars.iter().map(|(k, v)| (k.into(), v.into())));
    let names: Vec<String> = kept.iter().map(|(k, _)| k.to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["HOME", "PATH", "LC_ALL", "LC_MESSAGES", "SSH_AUTH_SOCK", "https_proxy"]);
    assert!(!KEPT_VARIABLES
        .iter()
        .any(|k| k.contains("ASKPASS") || (k.starts_with("GIT_") && !k.starts_with("GIT_SSH"))));
}

#[tokio::test]
async fn git_sees_only_the_allowlisted_environment() {
    // Planted in the test process (common::environment): none of KILN_SECRET_TEST,
    // KILN_GIT_TOKEN, GIT_ASKPASS may reach git; LC_KILN_TEST does.
    let fx = fixture();
    let record = fx.root.join("record");
    let g = fx.git(&fx.work).with_program(recording_git(&record, &record));
    g.status_porcelain().await.unwrap();
    std::fs::write(fx.work.join("n.txt"), "n\n").unwrap();
    g.add_all().await.unwrap();
    g.remote_branch_sha("origin", "main").await.unwrap();

    let runs = recorded_runs(&record);
    assert_eq!(runs.len(), 3, "{runs:?}");
    // Besides the allowlist and what the module sets, only what `sh` adds to its own env.
    let ours = ["GIT_TERMINAL_PROMPT", "GIT_OPTIONAL_LOCKS", "GIT_CONFIG_NOSYSTEM", "PWD", "OLDPWD", "SHLVL", "_"];
    for (argv, env) in &runs {
        for (k, _) in env {
            assert!(
                KEPT_VARIABLES.contains(&k.as_str()) || k.starts_with("LC_") || ours.contains(&k.as_str()),
                "{k} reached git {argv:?}"
            );
        }
        let get = |key: &str| env.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        assert_eq!(get("KILN_SECRET_TEST"), None);
        assert_eq!(get("KILN_GIT_TOKEN"), None, "no token was given to this Git");
        assert_eq!(get("GIT_ASKPASS"), None);
        assert_eq!(get("LC_KILN_TEST"), Some("kept"));
        assert_eq!(get("GIT_TERMINAL_PROMPT"), Some("0"));
        assert_eq!(get("PATH").map(String::from), std::env::var("PATH").ok());
        assert_eq!(get("HOME"), fx.home.to_str());
        let read_only = argv.contains(&"status".to_string());
        let writes = argv.contains(&"add".to_string());
        if read_only {
            assert_eq!(get("GIT_OPTIONAL_LOCKS"), Some("0"), "{argv:?}");
        }
        if writes {
            assert_eq!(get("GIT_OPTIONAL_LOCKS"), None, "{argv:?}");
        }
    }
    assert!(
        runs.iter().any(|(a, _)| a.contains(&"status".to_string()))
            && runs.iter().any(|(a, _)| a.contains(&"add".to_string()))
    );
}

// ---------------------------------------------------------------------------------------
// Tokens

/// One request a loopback HTTP "remote" received.
#[derive(Debug, Clone)]
struct Seen {
    request_line: String,
    authorization: Option<String>,
    /// Every process's argv that held the token while this request was open.
    argv_with_token: Vec<String>,
    /// The git processes alive at that moment (their argv), to show the scan saw them.
    git_processes: Vec<String>,
}

/// A smart-HTTP remote that wants Basic credentials: 401 without them, 403 with them
/// (it never takes a push; the tests only need what git sent and what /proc showed).
fn credential_server(token: &str) -> (u16, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let token = token.to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut authorization = None;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':') {
                    if name.eq_ignore_ascii_case("authorization") {
                        authorization = Some(value.trim().to_string());
                    }
                }
            }
            let (argv_with_token, git_processes) = scan_processes(&token);
            let answer = if authorization.is_some() {
                "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            } else {
                "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"kiln-test\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            };
            log.lock().unwrap().push(Seen {
                request_line: request_line.trim().to_string(),
                authorization,
                argv_with_token,
                git_processes,
            });
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    (port, seen)
}

/// Every /proc/<pid>/cmdline holding `token`, and those of git processes.
fn scan_processes(token: &str) -> (Vec<String>, Vec<String>) {
    let (mut with_token, mut git) = (Vec::new(), Vec::new());
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let argv = String::from_utf8_lossy(&raw).replace('\0', " ");
        if argv.contains(token) {
            with_token.push(argv.clone());
        }
        if argv.contains("git") {
            git.push(argv);
        }
    }
    (with_token, git)
}

#[tokio::test]
async fn a_token_reaches_only_its_origin_through_the_helper_never_an_argv() {
    let fx = fixture();
    let token = format!("kiln_tok_{}", uuid::Uuid::new_v4().simple());
    let (port, seen) = credential_server(&token);
    let (other_port, other_seen) = credential_server(&token);
    let record = fx.root.join("record");
    let g = fx
        .git(&fx.work)
        .with_program(recording_git(&record, &record))
        .with_token(&token, &format!("http://127.0.0.1:{port}/any/path"))
        .unwrap();

    let url = format!("http://127.0.0.1:{port}/shop.git");
    let err = g.push(&url, "main", "kiln/t", None).await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::AuthenticationFailed, "{err:?}");

    // The remote got the token, as HTTP Basic credentials from the helper.
    let seen = seen.lock().unwrap().clone();
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{token}"));
    let with_auth: Vec<&Seen> = seen.iter().filter(|s| s.authorization.is_some()).collect();
    assert!(!with_auth.is_empty(), "{seen:#?}");
    for s in &with_auth {
        assert_eq!(s.authorization.as_deref(), Some(format!("Basic {basic}").as_str()));
        assert!(s.request_line.contains("git-receive-pack"), "{}", s.request_line);
        // While git waited on this very request, no process's argv held the token...
        assert!(s.argv_with_token.is_empty(), "token in an argv: {:?}", s.argv_with_token);
        // ...and the scan did see the git processes doing the push.
        assert!(s.git_processes.iter().any(|p| p.contains(&format!("127.0.0.1:{port}"))), "{:?}", s.git_processes);
    }

    // Nothing returned holds it in any spelling.
    let returned = format!("{} {:?}", err.message, err.output);
    for form in [token.clone(), basic.clone(), base64::engine::general_purpose::STANDARD.encode(&token)] {
        assert!(!returned.contains(&form), "{returned}");
    }

    // The argv git was given held only the helper, which names the variable; the token
    // itself was in that process's environment.
    let runs = recorded_runs(&record);
    let (argv, env) = runs.iter().find(|(a, _)| a.contains(&"push".to_string())).unwrap();
    assert!(!argv.iter().any(|a| a.contains(&token)), "{argv:?}");
    assert!(argv.contains(&"credential.helper=".to_string()), "{argv:?}");
    assert!(
        argv.iter().any(|a| a.starts_with(&format!("credential.http://127.0.0.1:{port}.helper=!"))
            && a.contains("${KILN_GIT_TOKEN}")),
        "{argv:?}"
    );
    assert!(env.contains(&("KILN_GIT_TOKEN".to_string(), token.clone())));
    assert!(
        !err.output.as_ref().unwrap().command.contains("KILN_GIT_TOKEN"),
        "the shown command abbreviates the helper"
    );

    // Another origin never gets it: git asks nobody (no prompt) and fails at once.
    let started = Instant::now();
    let err = g.remote_branch_sha(&format!("http://127.0.0.1:{other_port}/shop.git"), "main").await.unwrap_err();
    assert_eq!(err.kind, GitErrorKind::AuthenticationFailed, "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(30));
    let other_seen = other_seen.lock().unwrap().clone();
    assert!(!other_seen.is_empty() && other_seen.iter().all(|s| s.authorization.is_none()), "{other_seen:#?}");

    // A local command never gets the token in its environment.
    g.status_porcelain().await.unwrap();
    let runs = recorded_runs(&record);
    let (_, env) = runs.iter().find(|(a, _)| a.contains(&"status".to_string())).unwrap();
    assert!(!env.iter().any(|(k, _)| k == "KILN_GIT_TOKEN"));

    // A token bound to a non-http address is refused.
    assert_eq!(fx.git(&fx.work).with_token(&token, "ssh://git@host/x").unwrap_err().kind, GitErrorKind::InvalidInput);
}

// ---------------------------------------------------------------------------------------
// Redaction

#[test]
fn the_redactor_masks_secrets_in_every_spelling_and_url_userinfo() {
    let secret = "s3cr3t-Tok/en+=";
    let r = Redactor::new().with(secret);
    let b64 = base64::engine::general_purpose::STANDARD.encode(secret);
    let header = base64::engine::general_purpose::STANDARD.encode(format!("bob:{secret}"));
    let text = format!("raw {secret} b64 {b64} basic {header} url s3cr3t-Tok%2Fen%2B%3D lower s3cr3t-Tok%2fen%2b%3d");
    let shown = r.redact(&text);
    assert!(!shown.contains("s3cr3t") && !shown.contains(&b64) && !shown.contains(&header), "{shown}");
    assert_eq!(shown.matches("***").count(), 5, "{shown}");

    let plain = Redactor::new();
    assert_eq!(
        plain.redact("fatal: unable to access 'https://user:pa55@example.com/r.git/'"),
        "fatal: unable to access 'https://***@example.com/r.git/'"
    );
    assert_eq!(plain.redact("ssh://git@example.com/r.git"), "ssh://***@example.com/r.git");
    assert_eq!(
        plain.redact("git@example.com:org/r.git and https://example.com/a@b"),
        "git@example.com:org/r.git and https://example.com/a@b"
    );
}

#[tokio::test]
async fn outputs_commands_and_messages_are_redacted() {
    let fx = fixture();
    let secret = format!("sekrit_{}", uuid::Uuid::new_v4().simple());
    let g = fx.git(&fx.work).with_redactor(&Redactor::new().with(&secret));

    // A commit echoes its subject: the secret in it is masked in what comes back.
    std::fs::write(fx.work.join(format!("{secret}.txt")), "x\n").unwrap();
    g.add_all().await.unwrap();
    let (_, out) = g.commit(&format!("subject with {secret}"), None).await.unwrap();
    assert!(out.output.contains("subject with ***") && !out.output.contains(&secret), "{out:?}");
    let (_, out) = g.changed_paths("origin/main").await.unwrap();
    assert!(out.output.contains("***.txt") && !out.output.contains(&secret), "{out:?}");

    // A remote URL with userinfo: neither the command, the output nor the message shows it.
    let url = format!("http://kiln:{secret}@127.0.0.1:1/shop.git");
    let err = g.remote_branch_sha(&url, "main").await.unwrap_err();
    let out = err.output.clone().unwrap();
    assert!(out.command.contains("http://***@127.0.0.1:1/shop.git"), "{}", out.command);
    for text in [&out.command, &out.output, &err.message] {
        assert!(!text.contains(&secret) && !text.contains("kiln:"), "{text}");
    }
    let plain_url =
        fx.git(&fx.work).remote_branch_sha("http://kiln:pa55w0rd@127.0.0.1:1/shop.git", "main").await.unwrap_err();
    assert!(!format!("{plain_url:?}").contains("pa55w0rd"), "{plain_url:?}");
}

#[tokio::test]
async fn long_output_is_capped_but_parsed_whole() {
    let fx = fixture();
    let dir = fx.work.join("many");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..2500 {
        std::fs::write(dir.join(format!("a-rather-long-file-name-to-fill-the-output-{i:05}.txt")), "").unwrap();
    }
    let (entries, out) = fx.git(&fx.work).status_porcelain().await.unwrap();
    assert_eq!(entries.len(), 2500);
    assert!(out.output.len() < 34 * 1024 && out.output.contains("output cut"), "{}", out.output.len());
    assert!(out.output.contains("00000.txt") && out.output.contains("02499.txt"));
}
