//! Killing Kiln (SIGKILL) mid-way, and what the next start makes of it.
//!
//! First, the store alone: killed in the middle of a checkpoint, it stays readable and
//! the previous checkpoint restorable, as objects and refs are only ever written whole (a
//! temporary file, then a rename). The snapshot runs in a forked child killed mid-way.
//!
//! Then the whole engine: a separate engine process (this test binary run again with
//! only [`child`]) is stopped at a named pause point (`KILN_PAUSE_AT`: during a turn,
//! between a checkpoint's writes, mid-copy of a workspace delivery, during setup) and
//! killed there; a new engine opens the workspace and the tests check the session's
//! state, the store's refs against the checkpoint records, the transcript, and that the
//! next turn, setup or delivery goes on.

use std::path::{Path, PathBuf};
use std::time::Duration;

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

// ---------------------------------------------------------------------------------------
// The engine killed at a pause point

use crate::common::*;
use crate::recovery::{setup_command, system_entries, until, workdir};
use kiln_engine::types::*;
use kiln_engine::Engine;
use kiln_model_server::{ModelServer, Step};
use serde_json::json;

/// The engine process the tests below kill: opens `KILN_CRASH_WORKSPACE`, does
/// `KILN_CRASH_DO` to session `KILN_CRASH_SESSION` and waits; a pause point stops it
/// where the test wants it killed. Run by hand (`--ignored`) without those, it does nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the engine process of the crash tests, which start it themselves"]
async fn child() {
    let (Ok(root), Ok(config), Ok(action)) =
        (std::env::var("KILN_CRASH_WORKSPACE"), std::env::var("KILN_CRASH_CONFIG"), std::env::var("KILN_CRASH_DO"))
    else {
        return;
    };
    let session = std::env::var("KILN_CRASH_SESSION").unwrap_or_default();
    let engine = engine(Path::new(&config));
    open_when_released(&engine, Path::new(&root), Duration::from_secs(30)).await;
    match action.as_str() {
        "send" => {
            let args = SendMessageArgs {
                session_id: session,
                text: "Add the wishlist on the server".into(),
                role: None,
                module: None,
                driver: None,
                model: None,
                context: None,
            };
            engine.send_message(args).await.unwrap();
        }
        "create" => {
            create(&engine, "Wishlist in @shop/catalog").await;
        }
        "deliver" => {
            let plan =
                engine.plan_delivery(PlanDeliveryArgs { session_id: session.clone(), target: None }).await.unwrap();
            assert!(plan.blockers.is_empty(), "{:#?}", plan.blockers);
            let args = DeliverArgs { session_id: session, target: plan.target, plan_id: plan.plan_id, anyway: None };
            engine.deliver(args).await.unwrap();
        }
        other => panic!("no crash action `{other}`"),
    }
    loop {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
}

/// An engine process started to be killed.
struct Doomed {
    process: std::process::Child,
    marker: PathBuf,
    log: PathBuf,
    point: String,
}

/// Starts the engine process on `root` to do `action` and stop at `point`.
fn start_engine(root: &Path, action: &str, session: &str, point: &str) -> Doomed {
    let dir = root.parent().unwrap();
    let marker = dir.join(format!("paused-at-{point}"));
    let log = dir.join(format!("engine-{point}.log"));
    let out = std::fs::File::create(&log).unwrap();
    let process = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash::child", "--ignored", "--nocapture", "--test-threads=1"])
        .env("KILN_CRASH_WORKSPACE", root)
        .env("KILN_CRASH_CONFIG", dir.join("config-killed"))
        .env("KILN_CRASH_DO", action)
        .env("KILN_CRASH_SESSION", session)
        .env("KILN_PAUSE_AT", point)
        .env("KILN_PAUSE_MARKER", &marker)
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap();
    Doomed { process, marker, log, point: point.into() }
}

impl Doomed {
    /// Waits until the process stopped at its pause point, then kills it with SIGKILL.
    async fn kill_when_paused(mut self) {
        let deadline = std::time::Instant::now() + Duration::from_secs(90);
        while !self.marker.exists() {
            if let Some(status) = self.process.try_wait().unwrap() {
                panic!("the engine ended ({status}) before `{}`:\n{}", self.point, self.output());
            }
            if std::time::Instant::now() > deadline {
                let _ = self.process.kill();
                panic!("the engine never reached `{}`:\n{}", self.point, self.output());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.process.kill().unwrap(); // SIGKILL: nothing of Kiln runs after it
        let status = self.process.wait().unwrap();
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(libc::SIGKILL));
    }

    fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// The next start: a new engine on the workspace once the killed one has let it go.
async fn restart(root: &Path, name: &str) -> std::sync::Arc<Engine> {
    let engine = engine(&root.parent().unwrap().join(name));
    open_when_released(&engine, root, Duration::from_secs(30)).await;
    engine
}

/// The session's checkpoint records (sequence, commit) and its refs in the store, which
/// must be the same.
async fn assert_store_agrees(root: &Path, id: &str) -> Vec<i64> {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", root.join(".kiln/kiln.db").display())).await.unwrap();
    let records: Vec<(i64, String)> =
        sqlx::query_as("SELECT sequence, commit_id FROM checkpoints WHERE session_id = ? ORDER BY sequence")
            .bind(id)
            .fetch_all(&pool)
            .await
            .unwrap();
    pool.close().await;
    let store = git2::Repository::open_bare(root.join(".kiln/store.git")).unwrap();
    let mut refs: Vec<(i64, String)> = store
        .references_glob(&format!("refs/kiln/{id}/*"))
        .unwrap()
        .map(|r| r.unwrap())
        .map(|r| (r.name().unwrap().rsplit('/').next().unwrap().parse().unwrap(), r.target().unwrap().to_string()))
        .collect();
    refs.sort();
    assert_eq!(refs, records, "the store's refs and the checkpoint records agree");
    for (sequence, commit) in &records {
        let commit = store.find_commit(git2::Oid::from_str(commit).unwrap()).unwrap();
        commit.tree().unwrap_or_else(|e| panic!("checkpoint {sequence} reads: {e}"));
    }
    assert!(store.find_reference(&format!("refs/kiln-turns/{id}")).is_err(), "no turn holds a starting state");
    records.into_iter().map(|r| r.0).collect()
}

fn server_file(name: &str) -> Step {
    Step::tool(
        "write_file",
        json!({ "path": format!("modules/catalog/src/server/{name}.js"), "content": format!("export const {name} = [];\n") }),
    )
}

/// The shop with no setup, the scripted model answering `script`, one session made;
/// the engine is gone (its workspace let go) when this returns.
async fn turn_world(script: Vec<Step>) -> (tempfile::TempDir, PathBuf, ModelServer, String) {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());
    setup_command(&shop, "");
    let server = ModelServer::start(script).await;
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    use_scripted_model(&engine, &server, false).await;
    let s = create(&engine, "Wishlist in @shop/catalog").await;
    (tmp, shop, server, s.id)
}

async fn session(engine: &Engine, id: &str) -> SessionView {
    engine.get_session(SessionIdArgs { session_id: id.into() }).await.unwrap()
}

async fn entry_containing(engine: &Engine, id: &str, text: &str) -> String {
    until(Duration::from_secs(20), text, || async {
        system_entries(engine, id).await.iter().any(|t| t.contains(text))
    })
    .await;
    system_entries(engine, id).await.into_iter().find(|t| t.contains(text)).unwrap()
}

async fn retry_goes_on(engine: &Engine, id: &str) -> SessionView {
    engine.retry_turn(SessionIdArgs { session_id: id.into() }).await.unwrap();
    let s = wait_settled(engine, id, Duration::from_secs(60)).await;
    assert_ne!(s.state, SessionState::Blocked, "{:#?}", system_entries(engine, id).await);
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_during_a_turn_the_next_start_keeps_its_work_explains_it_and_the_retry_goes_on() {
    let script = vec![
        server_file("first"),
        server_file("second"),
        Step::text("Done.\nHANDOFF: none - done"),
        Step::text("Checked it.\nREVIEW: pass - ready"),
    ];
    let (_tmp, shop, server, id) = turn_world(script).await;
    start_engine(&shop, "send", &id, "turn.after-tool-result").kill_when_paused().await;

    let engine = restart(&shop, "config2").await;
    let entry = entry_containing(&engine, &id, "Kiln stopped while the **").await;
    assert!(entry.contains("turn in `@shop/catalog` was running, so it was cut short"), "{entry}");
    assert!(entry.contains("kept as checkpoint 1") && entry.contains("Retry the turn"), "{entry}");
    let s = session(&engine, &id).await;
    assert_eq!(s.state, SessionState::Blocked);
    assert!(!s.running);
    assert_eq!(assert_store_agrees(&shop, &id).await, [0, 1], "the cut turn's work is checkpoint 1");
    let work = workdir(&shop, &id);
    assert!(work.join("modules/catalog/src/server/first.js").is_file());

    // The retried turn runs to its end and hands off (how far the killed process got
    // through the script does not matter).
    let asked = server.requests().len();
    retry_goes_on(&engine, &id).await;
    assert!(server.requests().len() > asked, "the retry asked the model again");
    let all = engine
        .get_transcript(GetTranscriptArgs { session_id: id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    let retried = all.iter().position(|e| e.text.starts_with("Retrying the **")).expect("a retry entry");
    assert!(all[retried..].iter().any(|e| e.kind == EntryKind::Handoff), "{all:#?}");
    let sequences = assert_store_agrees(&shop, &id).await;
    assert_eq!(sequences[..2], [0, 1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_between_a_checkpoints_ref_and_its_record_the_checkpoint_is_kept() {
    let script = vec![
        server_file("first"),
        Step::text("Done.\nHANDOFF: none - done"),
        Step::text("Checked it.\nREVIEW: pass - ready"),
    ];
    let (_tmp, shop, _server, id) = turn_world(script).await;
    start_engine(&shop, "send", &id, "checkpoint.after-ref").kill_when_paused().await;

    let engine = restart(&shop, "config2").await;
    let kept = entry_containing(&engine, &id, "Kiln stopped while recording checkpoint 1").await;
    assert!(kept.contains("it was kept"), "{kept}");
    let cut = entry_containing(&engine, &id, "Kiln stopped while a turn was ending").await;
    assert!(cut.contains("The working copy is as the newest checkpoint left it"), "{cut}");
    assert_eq!(assert_store_agrees(&shop, &id).await, [0, 1]);
    let s = session(&engine, &id).await;
    assert_eq!(s.state, SessionState::Blocked);
    assert_eq!(s.checkpoints[1].role, None);
    retry_goes_on(&engine, &id).await;
    assert_store_agrees(&shop, &id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_between_a_checkpoints_objects_and_its_ref_nothing_is_lost() {
    let script = vec![
        server_file("first"),
        Step::text("Done.\nHANDOFF: none - done"),
        Step::text("Checked it.\nREVIEW: pass - ready"),
    ];
    let (_tmp, shop, _server, id) = turn_world(script).await;
    start_engine(&shop, "send", &id, "checkpoint.after-objects").kill_when_paused().await;

    let engine = restart(&shop, "config2").await;
    // The commit written without a ref is unreachable; the turn's change is kept as a
    // checkpoint of the next start's own.
    let cut = entry_containing(&engine, &id, "Kiln stopped while a turn was ending").await;
    assert!(cut.contains("kept as checkpoint 1"), "{cut}");
    assert_eq!(assert_store_agrees(&shop, &id).await, [0, 1]);
    let s = session(&engine, &id).await;
    assert_eq!(s.checkpoints[1].label, "Autosave: Add the wishlist on the server");
    let diff = engine.get_diff(GetDiffArgs { session_id: id.clone(), module_id: None }).await.unwrap();
    assert!(diff.modules[0].files.iter().any(|f| f.path == "modules/catalog/src/server/first.js"));
    retry_goes_on(&engine, &id).await;
    assert_store_agrees(&shop, &id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_during_setup_the_next_start_runs_it_again() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());
    setup_command(&shop, "touch setup-ran");
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    engine.update_settings(UpdateSettingsArgs { planner_agent: Some(false), ..Default::default() }).await.unwrap();
    drop(engine);
    start_engine(&shop, "create", "", "setup.started").kill_when_paused().await;

    let engine = restart(&shop, "config2").await;
    let sessions = engine.list_sessions(ListSessionsArgs { include_archived: None }).await.unwrap();
    assert_eq!(sessions.len(), 1);
    let id = sessions[0].id.clone();
    let entry = entry_containing(&engine, &id, "Kiln stopped while the setup was installing dependencies").await;
    assert!(entry.contains("it runs again now"), "{entry}");
    // The cut setup is marked failed before it runs again, so "not running" may be that mark:
    // wait for the second run's outcome itself.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let s = engine.get_session(SessionIdArgs { session_id: id.clone() }).await.unwrap();
        if s.setup == SetupState::Passed {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the setup did not run again to a pass: {:?}", s.setup);
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(workdir(&shop, &id).join("setup-ran").is_file());
    assert_eq!(assert_store_agrees(&shop, &id).await, [0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_mid_copy_of_a_workspace_delivery_the_next_start_explains_it_and_delivering_again_lands_the_rest() {
    let w = crate::delivery::shop(&[]).await;
    let id = crate::delivery::reviews_session(&w).await;
    crate::delivery::check_and_review(&w, &id).await;
    let root = w.root.clone();
    let screen = root.join("modules/catalog/src/client/screen.js");
    let before = std::fs::read_to_string(&screen).unwrap();
    drop(w.engine);
    start_engine(&root, "deliver", &id, "delivery.copy.after-file").kill_when_paused().await;

    let engine = restart(&root, "config2").await;
    let entry = entry_containing(&engine, &id, "Kiln stopped while delivering into the workspace").await;
    assert!(entry.contains("during “Copy"), "{entry}");
    assert!(entry.contains("Files it had copied stay in the workspace") && entry.contains("/backup`"), "{entry}");
    assert!(entry.contains("Deliver again"), "{entry}");
    let run = engine.get_delivery(SessionIdArgs { session_id: id.clone() }).await.unwrap().unwrap();
    assert_eq!(run.state, DeliveryState::Failed);
    let landed = ["modules/catalog/src/client/screen.js", "modules/reviews/SPEC.md", "modules/reviews/package.json"]
        .iter()
        .filter(|p| {
            let workspace = std::fs::read(root.join(p)).ok();
            workspace.is_some() && workspace == std::fs::read(workdir(&root, &id).join(p)).ok()
        })
        .count();
    assert_eq!(landed, 1, "one file landed before the kill");
    assert!(session(&engine, &id).await.delivered_at.is_none());

    let plan = engine.plan_delivery(PlanDeliveryArgs { session_id: id.clone(), target: None }).await.unwrap();
    assert!(plan.blockers.is_empty(), "what already landed is no conflict: {:#?}", plan.blockers);
    let args = DeliverArgs { session_id: id.clone(), target: plan.target, plan_id: plan.plan_id, anyway: None };
    engine.deliver(args).await.unwrap();
    let run = delivery_finished(&engine, &id, Duration::from_secs(60)).await;
    assert_eq!(run.state, DeliveryState::Delivered, "{:#?}", run.error);
    assert_ne!(std::fs::read_to_string(&screen).unwrap(), before);
    assert!(root.join("modules/reviews/src/server/routes.js").is_file());
    assert!(!root.join("modules/catalog/test/routes.test.js").exists());
    assert!(session(&engine, &id).await.delivered_at.is_some());
}
