//! Shared pieces of the engine's integration tests: an engine on a temp config dir,
//! the fixture workspaces, a reader of a directory tree's files, and the git fixtures of
//! the delivery tests (git run by hand, a bare remote, a `git` that records its runs),
//! the process environment all tests share (`environment`), and the PostgreSQL server of the
//! tests that need one (`postgres`).

pub(crate) mod contract;
pub(crate) mod environment;
pub(crate) mod postgres;
pub(crate) mod s3;

pub(crate) use environment::git_recorder;
pub(crate) use kiln_test_support::{repo_root, shop_copy, without_setup};

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use kiln_engine::types::*;
use kiln_engine::Engine;

/// An engine on `config_dir`, its records in SQLite beside the workspace — or, when
/// `KILN_TEST_RECORDS=postgres`, in a fresh database of the test PostgreSQL cluster, so the
/// same tests run against both engines.
pub(crate) fn engine(config_dir: &Path) -> Arc<Engine> {
    let engine = Engine::new(kiln_test_support::options(config_dir, Transport::Serve));
    Arc::new(if on_postgres() {
        engine.backed_by(kiln_engine::backing::Backing { database: Some(test_database()), objects: None })
    } else {
        engine
    })
}

/// The test database of the engines a test makes: a fresh one for its first, the same one for
/// an engine it makes again on the workspace (the tests of restarts). A test runs on a thread of
/// its own, so the thread names the test.
fn test_database() -> String {
    static DATABASES: std::sync::Mutex<BTreeMap<String, String>> = std::sync::Mutex::new(BTreeMap::new());
    let test = format!("{:?}", std::thread::current().id());
    DATABASES.lock().unwrap().entry(test).or_insert_with(postgres::fresh_database).clone()
}

/// Whether this run keeps the engines' records on PostgreSQL (`KILN_TEST_RECORDS=postgres`).
pub(crate) fn on_postgres() -> bool {
    std::env::var("KILN_TEST_RECORDS").is_ok_and(|v| v == "postgres")
}

/// Builds the git fixture (tests/fixtures/git-workspace.sh) at `dir`.
pub(crate) fn git_fixture(dir: &Path) {
    let status = std::process::Command::new("bash")
        .arg(repo_root().join("tests/fixtures/git-workspace.sh"))
        .arg(dir)
        .status()
        .unwrap();
    assert!(status.success(), "fixture script failed");
}

/// `without_setup`'s shop, opened in a new engine whose config lives in `dir` too.
pub(crate) async fn shop_without_setup(dir: &Path) -> (PathBuf, Arc<Engine>) {
    let shop = shop_copy(dir);
    without_setup(&shop);
    let engine = engine(&dir.join("config"));
    open(&engine, &shop).await;
    (shop, engine)
}

/// Every file under `root` (relative path → content; a symlink reads as "-> target"),
/// skipping the top-level directories named in `skip`.
pub(crate) fn files(root: &Path, skip: &[&str]) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    walk(root, root, skip, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, skip: &[&str], out: &mut BTreeMap<String, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        if skip.contains(&rel.as_str()) {
            continue;
        }
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            out.insert(rel, format!("-> {}", std::fs::read_link(&path).unwrap().display()).into_bytes());
        } else if kind.is_dir() {
            walk(root, &path, skip, out);
        } else {
            out.insert(rel, std::fs::read(&path).unwrap());
        }
    }
}

pub(crate) async fn open(engine: &Engine, path: &Path) -> WorkspaceView {
    engine.open_workspace(OpenWorkspaceArgs { path: path.display().to_string() }).await.unwrap()
}

/// Opens `path` once the engine that had it open (dropped by the caller) has let it go:
/// its lock goes with the last of its work, which may still be ending.
pub(crate) async fn open_when_released(engine: &Engine, path: &Path, limit: std::time::Duration) -> WorkspaceView {
    let deadline = std::time::Instant::now() + limit;
    loop {
        match engine.open_workspace(OpenWorkspaceArgs { path: path.display().to_string() }).await {
            Err(e) if e.code == kiln_engine::ErrorCode::WorkspaceInUse => {
                assert!(std::time::Instant::now() < deadline, "the workspace was never let go: {}", e.message);
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            opened => return opened.unwrap(),
        }
    }
}

pub(crate) async fn create(engine: &Engine, brief: &str) -> SessionView {
    engine
        .create_session(CreateSessionArgs { brief: brief.into(), title: None, create_modules: None, issue: None })
        .await
        .unwrap()
}

/// Creates a session whose brief names new modules, confirmed as `createModules`.
pub(crate) async fn create_new(engine: &Engine, brief: &str, new_modules: &[&str]) -> SessionView {
    let create_modules = Some(new_modules.iter().map(|m| m.to_string()).collect());
    engine
        .create_session(CreateSessionArgs { brief: brief.into(), title: None, create_modules, issue: None })
        .await
        .unwrap()
}

/// Waits until the session's setup is no longer running.
pub(crate) async fn wait_setup(engine: &Engine, id: &str) -> SessionView {
    for _ in 0..300 {
        let s = engine.get_session(SessionIdArgs { session_id: id.into() }).await.unwrap();
        if s.setup != SetupState::Running {
            return s;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("setup of {id} never finished");
}

/// Takes a checkpoint of the session's working copy as a turn would (no role, no module); its
/// sequence.
pub(crate) async fn checkpoint(engine: &Engine, id: &str, label: &str) -> i64 {
    let ws = engine.workspace().unwrap();
    let id = kiln_engine::testing::ids::SessionId::parse(id).unwrap();
    let tree =
        kiln_engine::testing::working_copy::snapshot_workdir(&ws.open_store().unwrap(), &ws.session_workdir(&id))
            .unwrap();
    kiln_engine::testing::checkpoint::take(&ws, engine.events(), &id, tree, label, None, None).await.unwrap()
}

/// Runs turns with Kiln's own OpenAI-compatible driver against the scripted model server,
/// the planner agent on or off.
pub(crate) async fn use_scripted_model(engine: &Engine, server: &kiln_model_server::ModelServer, planner: bool) {
    engine
        .update_settings(UpdateSettingsArgs {
            default_driver: Some("openai-compatible".into()),
            openai_base_url: Some(server.openai_base_url()),
            openai_model: Some("scripted".into()),
            openai_key: Some("sk-test-key".into()),
            planner_agent: Some(planner),
            ..Default::default()
        })
        .await
        .unwrap();
}

/// Sends the operator's message `text` to the session, with nothing else picked.
pub(crate) async fn send_text(engine: &Engine, id: &str, text: &str) -> SessionView {
    engine
        .send_message(SendMessageArgs {
            session_id: id.into(),
            text: text.into(),
            role: None,
            module: None,
            driver: None,
            model: None,
            context: None,
        })
        .await
        .unwrap()
}

/// Waits until no turn runs and the session's chain has settled, for at most `limit`.
pub(crate) async fn wait_settled(engine: &Engine, id: &str, limit: std::time::Duration) -> SessionView {
    let deadline = std::time::Instant::now() + limit;
    loop {
        let s = engine.get_session(SessionIdArgs { session_id: id.into() }).await.unwrap();
        if !s.running && s.state != SessionState::Running {
            return s;
        }
        assert!(std::time::Instant::now() < deadline, "session {id} never settled");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Waits until the session's latest delivery run has ended, for at most `limit`; a delivered
/// one until its landing is recorded too (the session marked delivered, the transcript's
/// "Delivered …" line), which the engine writes just after the run's last state.
pub(crate) async fn delivery_finished(engine: &Engine, id: &str, limit: std::time::Duration) -> DeliveryRun {
    let deadline = std::time::Instant::now() + limit;
    loop {
        let run = engine.get_delivery(SessionIdArgs { session_id: id.into() }).await.unwrap().expect("a run");
        if run.state != DeliveryState::Running
            && (run.state != DeliveryState::Delivered || landed(engine, id, &run).await)
        {
            return run;
        }
        assert!(std::time::Instant::now() < deadline, "the delivery never ended");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Whether the transcript holds the landing of `run`: a "Delivered …" line written at or after
/// its end.
async fn landed(engine: &Engine, id: &str, run: &DeliveryRun) -> bool {
    let ended = run.ended_at.clone().unwrap_or_default();
    let entries = engine
        .get_transcript(GetTranscriptArgs { session_id: id.into(), after: None, before: None, last: Some(20) })
        .await
        .unwrap();
    entries.iter().any(|e| e.kind == EntryKind::System && e.text.starts_with("Delivered ") && e.created_at >= ended)
}

/// Writes `text` to `path`, making its directories first.
pub(crate) fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// An owned pair, to compare with the `(String, String)` lists the code returns.
pub(crate) fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_string(), b.to_string())
}

// ---------------------------------------------------------------------------------------
// Git fixtures

/// Runs the real git as a test's own hand would (not through the module under test),
/// as a committer who is not Kiln, or panics.
pub(crate) fn sh_git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=Someone Else", "-c", "user.email=else@example.com", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?} in {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Every process's pid, as far as `/proc` can be read, this test process left out.
pub(crate) fn pids() -> Vec<i32> {
    let me = std::process::id() as i32;
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .collect()
}

/// The live processes whose command line names `marker` (a zombie's is empty).
pub(crate) fn commands_naming(marker: &str) -> Vec<i32> {
    pids()
        .into_iter()
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).contains(marker)
        })
        .collect()
}

/// The commit `rev` names in `dir`, if any.
pub(crate) fn rev(dir: &Path, rev: &str) -> Option<String> {
    let out = Command::new("git").args(["rev-parse", "--verify", "--quiet", rev]).current_dir(dir).output().unwrap();
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A bare repository `root/remote.git` whose `main` holds one commit (`message`) of what
/// `fill` writes into a fresh clone at `root/seed`, and the user's clone of it at
/// `root/<clone>` (origin = the bare repository's path). Returns the bare repository.
pub(crate) fn bare_remote(root: &Path, clone: &str, message: &str, fill: impl FnOnce(&Path)) -> PathBuf {
    sh_git(root, &["init", "--quiet", "--bare", "-b", "main", "remote.git"]);
    sh_git(root, &["clone", "--quiet", "remote.git", "seed"]);
    let seed = root.join("seed");
    fill(&seed);
    sh_git(&seed, &["add", "-A"]);
    sh_git(&seed, &["commit", "--quiet", "-m", message]);
    sh_git(&seed, &["push", "--quiet", "origin", "main"]);
    sh_git(root, &["clone", "--quiet", "remote.git", clone]);
    root.join("remote.git")
}

/// Copies examples/shop into `dest` as git tracks it (no node_modules, nothing ignored),
/// so a remote seeded with it holds what the repository does.
pub(crate) fn copy_tracked_shop(dest: &Path) {
    let shop = repo_root().join("examples/shop");
    let listed = Command::new("git").args(["ls-files", "-z", "."]).current_dir(&shop).output().unwrap();
    assert!(listed.status.success());
    for rel in String::from_utf8_lossy(&listed.stdout).split('\0').filter(|s| !s.is_empty()) {
        let to = dest.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(shop.join(rel), &to).unwrap();
    }
}

/// Writes `bin/git`: a `git` that records its argv (NUL-separated) and its environment
/// (`env -0`) in `record`, one file pair per run, then runs the real git. A script, so
/// it sees exactly what the code under test handed to the process it spawned.
pub(crate) fn recording_git(bin: &Path, record: &Path) -> PathBuf {
    let real = String::from_utf8(Command::new("sh").args(["-c", "command -v git"]).output().unwrap().stdout).unwrap();
    let real = real.trim();
    assert!(!real.is_empty(), "git is not installed");
    std::fs::create_dir_all(bin).unwrap();
    std::fs::create_dir_all(record).unwrap();
    let script = bin.join("git");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nn=$(date +%s%N)-$$\nprintf '%s\\0' \"$@\" > '{d}/argv-'$n\nenv -0 > '{d}/env-'$n\nexec '{real}' \"$@\"\n",
            d = record.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// Every run the recording git wrote to `record`: its argv joined by spaces and its
/// environment as written. A run still starting may have its argv but not yet its
/// environment (tests of one binary run at once); that environment reads as empty.
pub(crate) fn recorded_git_runs(record: &Path) -> Vec<(String, String)> {
    let mut runs = Vec::new();
    for entry in std::fs::read_dir(record).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let Some(n) = name.strip_prefix("argv-") else { continue };
        let argv = String::from_utf8_lossy(&std::fs::read(record.join(&name)).unwrap()).replace('\0', " ");
        let env = std::fs::read(record.join(format!("env-{n}")))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        runs.push((argv, env));
    }
    runs
}

/// A temporary directory outside every path the confinement lets commands write
/// (`sandbox::Confinement::for_turn` allows the temporary directories): Cargo's per-target
/// temporary directory, unless the checkout itself lies under a temporary directory (a CI
/// clone in /tmp), then the home directory (only its agent state and caches are writable).
pub(crate) fn unwritable_temp(prefix: &str) -> tempfile::TempDir {
    let temp_roots: Vec<PathBuf> = ["/tmp", "/var/tmp", "/dev/shm"]
        .into_iter()
        .map(PathBuf::from)
        .chain(std::env::var_os("TMPDIR").map(PathBuf::from))
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let under_temp = |p: &Path| p.canonicalize().is_ok_and(|p| temp_roots.iter().any(|r| p.starts_with(r)));
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&target).unwrap();
    let base = if under_temp(&target) { PathBuf::from(std::env::var_os("HOME").expect("HOME is set")) } else { target };
    assert!(
        !under_temp(&base),
        "no directory outside the temporary directories to test the confinement with: {}",
        base.display()
    );
    tempfile::Builder::new().prefix(prefix).tempdir_in(base).unwrap()
}
