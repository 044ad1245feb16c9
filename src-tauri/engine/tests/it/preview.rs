//! The preview's lifecycle with real processes: it starts from the session's working
//! copy on `$PORT`, becomes ready, is started again when it dies, gives up with a clear
//! state and its log when it cannot run (missing, exits at once, never ready, another
//! port), stops when unvisited, and leaves no process behind when it is stopped, when
//! its session is deleted, or when the engine shuts down.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use kiln_engine::types::*;
use kiln_engine::{Engine, ErrorCode};

/// A one-module workspace whose kiln.toml has `preview` (the `[preview]` table's body).
fn workspace(dir: &Path, preview: &str) -> PathBuf {
    let root = dir.join("fx");
    std::fs::create_dir_all(root.join("modules/app")).unwrap();
    std::fs::write(root.join("package.json"), r#"{"name":"fx","private":true,"workspaces":["modules/*"]}"#).unwrap();
    std::fs::write(root.join("modules/app/package.json"), r#"{"name":"app","version":"1.0.0"}"#).unwrap();
    std::fs::write(root.join("kiln.toml"), format!("[modules]\nglobs = [\"modules/*\"]\n\n[preview]\n{preview}\n"))
        .unwrap();
    root
}

/// A node one-liner serving `/health` with `status` on `port_expr`.
fn server(status: u16, port_expr: &str) -> String {
    format!(
        "command = \"node -e \\\"require('http').createServer((q,s)=>{{s.statusCode={status};s.end('ok')}}).listen({port_expr},'127.0.0.1',()=>console.log('listening'))\\\"\""
    )
}

async fn session(engine: &Engine, root: &Path, brief: &str) -> String {
    open(engine, root).await;
    let s = create(engine, brief).await;
    wait_setup(engine, &s.id).await;
    s.id
}

async fn preview(engine: &Engine, id: &str) -> PreviewView {
    engine.get_preview(SessionIdArgs { session_id: id.into() }).await.unwrap()
}

/// Polls until the preview reaches `state`; panics with the view after `secs`.
async fn wait_for(engine: &Engine, id: &str, state: PreviewState, secs: u64) -> PreviewView {
    let mut last = preview(engine, id).await;
    for _ in 0..secs * 10 {
        if last.state == state {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        last = preview(engine, id).await;
    }
    panic!("the preview never became {state:?}: {last:#?}");
}

/// Pids of processes whose working directory is inside `dir`.
fn processes_in(dir: &Path) -> Vec<i32> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    pids()
        .into_iter()
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(&dir)))
        .collect()
}

async fn no_processes_in(dir: &Path) {
    for _ in 0..50 {
        if processes_in(dir).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("processes still run in {}: {:?}", dir.display(), processes_in(dir));
}

fn workdir(root: &Path, id: &str) -> PathBuf {
    root.join(".kiln/sessions").join(id).join("workspace")
}

#[tokio::test]
async fn the_shop_preview_runs_restarts_and_goes_with_its_session() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());
    let engine = engine(&tmp.path().join("config"));
    let id = session(&engine, &shop, "In @shop/cart add a discount field").await;

    let started = engine.start_preview(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    assert_eq!(started.kind, PreviewKind::Command);
    assert!(matches!(started.state, PreviewState::Starting | PreviewState::Ready), "{started:?}");
    assert_eq!(started.module_urls, [ModuleUrl { module_id: "@shop/cart".into(), path: "/?module=cart".into() }]);
    let ready = wait_for(&engine, &id, PreviewState::Ready, 60).await;
    let port = ready.port.unwrap();
    assert!(ready.origin.as_deref().unwrap().starts_with("http://127.0.0.1:"));
    assert!(ready.enter_url.as_deref().unwrap().contains("/__kiln/enter?"));
    // It runs from the session's working copy, on the port it was given.
    let health = reqwest::get(format!("http://127.0.0.1:{port}/health")).await.unwrap();
    assert_eq!(health.status(), 200);
    let workdir = workdir(&shop, &id);
    let pids = processes_in(&workdir);
    assert!(!pids.is_empty(), "no process runs in the working copy");
    assert!(processes_in(&shop).len() == pids.len(), "the host workspace runs nothing of its own");
    // Starting again while it runs changes nothing.
    let again = engine.start_preview(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    assert_eq!(again.enter_url, ready.enter_url);

    // Killed, it is started again.
    for pid in &pids {
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    let restarted = wait_for(&engine, &id, PreviewState::Restarting, 20).await;
    assert_eq!(restarted.restarts, 1);
    assert!(restarted.message.as_deref().unwrap().contains("restarting"), "{restarted:?}");
    let back = wait_for(&engine, &id, PreviewState::Ready, 60).await;
    assert!(back.log.iter().any(|l| l.contains("starting it again")), "{:?}", back.log);

    // Deleting the session stops it first: nothing is left running.
    engine
        .delete_session(DeleteSessionArgs { session_id: id.clone(), stop: Some(true), keep_transcript: Some(true) })
        .await
        .unwrap();
    no_processes_in(&workdir).await;
    assert!(reqwest::get(format!("http://127.0.0.1:{}/health", back.port.unwrap())).await.is_err());
    let gone = engine.start_preview(SessionIdArgs { session_id: id }).await.unwrap_err();
    assert_eq!(gone.code, ErrorCode::SessionDeleted);
}

/// The example's shell run from the host workspace as the connected application,
/// printing each request it gets (`SHOP_LOG_REQUESTS=1`).
struct HostApp {
    child: tokio::process::Child,
    port: u16,
    log: Arc<std::sync::Mutex<Vec<String>>>,
}

impl HostApp {
    async fn start(shop: &Path) -> HostApp {
        use tokio::io::AsyncBufReadExt;
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = tokio::process::Command::new("node")
            .args(["shell/server.js", "--port", &port.to_string()])
            .current_dir(shop)
            .env("SHOP_LOG_REQUESTS", "1")
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let sink = log.clone();
        tokio::spawn(async move {
            let mut tx = Some(tx);
            while let Ok(Some(line)) = lines.next_line().await {
                if line.starts_with("listening on") {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(());
                    }
                }
                sink.lock().unwrap().push(line);
            }
        });
        tokio::time::timeout(Duration::from_secs(30), rx).await.expect("the host app listens").unwrap();
        HostApp { child, port, log }
    }

    fn requests(&self) -> Vec<String> {
        self.log.lock().unwrap().iter().filter(|l| !l.starts_with("listening")).cloned().collect()
    }
}

#[tokio::test]
async fn the_bridge_answers_what_the_session_app_lacks_read_only() {
    let tmp = tempfile::tempdir().unwrap();
    let host = shop_copy(&tmp.path().join("host"));
    let mut app = HostApp::start(&host).await;
    let shop = shop_copy(tmp.path());
    let toml = std::fs::read_to_string(shop.join("kiln.toml")).unwrap();
    let toml =
        toml.replace("data = \"fixtures\"", &format!("data = \"bridge\"\nbridge = \"http://127.0.0.1:{}\"", app.port));
    std::fs::write(shop.join("kiln.toml"), toml).unwrap();
    let engine = engine(&tmp.path().join("config"));
    let id = session(&engine, &shop, "In @shop/cart add a discount field").await;
    engine
        .update_settings(serde_json::from_value(serde_json::json!({ "bridgeToken": "bridge-SECRET-token" })).unwrap())
        .await
        .unwrap();
    // The session's application lacks the orders module: its API answers 404 there.
    let enabled = workdir(&shop, &id).join("shell/enabled.json");
    std::fs::write(&enabled, r#"["@shop/catalog", "@shop/cart"]"#).unwrap();

    engine.start_preview(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    let ready = wait_for(&engine, &id, PreviewState::Ready, 60).await;
    assert_eq!(ready.data, "bridge");
    let origin = ready.origin.clone().unwrap();
    let client = reqwest::Client::builder().no_proxy().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    assert_eq!(client.get(format!("{origin}/api/orders/")).send().await.unwrap().status(), 401, "no secret, no entry");
    let entered = client.get(ready.enter_url.clone().unwrap()).send().await.unwrap();
    assert_eq!(entered.status(), 302);
    let cookie = entered.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_string();
    let get = |path: &str| client.get(format!("{origin}{path}")).header("cookie", &cookie).send();

    // The session's own application answers first.
    let own = get("/api/catalog/products").await.unwrap();
    assert_eq!(own.status(), 200);
    assert_eq!(own.headers()["x-kiln-source"], "session");
    // A read it lacks is answered by the connected application, and marked.
    let bridged = get("/api/orders/").await.unwrap();
    assert_eq!(bridged.status(), 200, "{:?}", bridged.text().await);
    let bridged = get("/api/orders/").await.unwrap();
    assert_eq!(bridged.headers()["x-kiln-source"], "bridge");
    // Anything but a read is refused, and auth is never forwarded.
    let post = client.post(format!("{origin}/api/orders/")).header("cookie", &cookie).body("{}").send().await.unwrap();
    assert_eq!(post.status(), 405);
    assert_eq!(post.headers()["x-kiln-source"], "bridge-refused");
    assert_eq!(get("/api/auth/session").await.unwrap().status(), 404);

    let seen = app.requests();
    assert_eq!(seen.iter().filter(|l| l.starts_with("GET /api/orders/")).count(), 2, "{seen:?}");
    assert!(
        !seen.iter().any(|l| l.starts_with("POST") || l.contains("/api/auth") || l.contains("catalog")),
        "{seen:?}"
    );
    let activity = preview(&engine, &id).await.bridge.unwrap();
    assert_eq!((activity.forwarded, activity.refused, activity.unavailable), (2, 2, 0), "{activity:?}");

    // With the connected application down, the preview keeps working and marks the rest.
    app.child.kill().await.unwrap();
    let down = get("/api/orders/").await.unwrap();
    assert_eq!(down.status(), 502);
    assert_eq!(down.headers()["x-kiln-source"], "bridge-unavailable");
    assert_eq!(get("/api/catalog/products").await.unwrap().status(), 200);
    engine.stop_preview(SessionIdArgs { session_id: id }).await.unwrap();
}

#[tokio::test]
async fn a_command_that_exits_at_once_crashes_with_its_log() {
    let tmp = tempfile::tempdir().unwrap();
    let root = workspace(tmp.path(), "command = \"echo 'boom: no database' >&2; exit 3\"");
    let engine = engine(&tmp.path().join("config"));
    let id = session(&engine, &root, "In app change the title").await;
    engine.start_preview(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    let crashed = wait_for(&engine, &id, PreviewState::Crashed, 30).await;
    assert!(crashed.message.as_deref().unwrap().contains("3 times in a row (exit code 3)"), "{crashed:?}");
    assert_eq!(crashed.restarts, 2);
    assert!(crashed.log.iter().filter(|l| *l == "boom: no database").count() == 3, "{:?}", crashed.log);
    assert_eq!(crashed.port, None);
    // Restart tries again from scratch.
    let again = engine.restart_preview(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    assert_ne!(again.state, PreviewState::Crashed);
    wait_for(&engine, &id, PreviewState::Crashed, 30).await;
    no_processes_in(&workdir(&root, &id)).await;
}

#[tokio::test]
async fn a_missing_command_crashes_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let root = workspace(tmp.path(), "command = \"kiln-no-such-preview-server --port $PORT\"");
    let engine = engine(&tmp.path().join("config"));
    let id = session(&engine, &root, "In app change the title").await;
    engine.start_preview(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    let crashed = wait_for(&engine, &id, PreviewState::Crashed, 30).await;
    assert!(crashed.message.as_deref().unwrap().contains("exit code 127"), "{crashed:?}");
    assert!(
        crashed.log.iter().any(|l| l.contains("kiln-no-such-preview-server") && l.contains("not found")),
        "{:?}",
        crashed.log
    );
}

#[tokio::test]
async fn never_ready_or_on_another_port_is_a_crash_without_orphans() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = engine(&tmp.path().join("config"));
    for (name, preview, why) in [
        (
            "unhealthy",
            format!("{}\nready = \"/health\"\nready_timeout_seconds = 2", server(500, "process.env.PORT")),
            "/health never answered with a status below 400",
        ),
        (
            "other-port",
            format!("{}\nready = \"/health\"\nready_timeout_seconds = 2", server(200, "0")),
            "/health never answered with a status below 400",
        ),
        (
            "silent",
            format!("{}\nready = \"re:^ready to serve$\"\nready_timeout_seconds = 2", server(200, "process.env.PORT")),
            "matching `^ready to serve$`",
        ),
    ] {
        let dir = tmp.path().join(name);
        let root = workspace(&dir, &preview);
        let id = session(&engine, &root, "In app change the title").await;
        engine.start_preview(SessionIdArgs { session_id: id.clone() }).await.unwrap();
        let crashed = wait_for(&engine, &id, PreviewState::Crashed, 20).await;
        let message = crashed.message.clone().unwrap();
        assert!(message.contains("did not become ready within 2 s") && message.contains(why), "{name}: {message}");
        assert!(message.contains("$PORT"), "{message}");
        assert!(crashed.log.iter().any(|l| l == "listening"), "{name}: {:?}", crashed.log);
        no_processes_in(&workdir(&root, &id)).await;
    }
}

#[tokio::test]
async fn a_log_line_can_mean_ready_and_an_unvisited_preview_stops() {
    let tmp = tempfile::tempdir().unwrap();
    let preview_toml = format!("{}\nready = \"re:^listening$\"\nidle_minutes = 0.02", server(200, "process.env.PORT"));
    let root = workspace(tmp.path(), &preview_toml);
    let engine = engine(&tmp.path().join("config"));
    let id = session(&engine, &root, "In app change the title").await;
    engine.start_preview(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    wait_for(&engine, &id, PreviewState::Ready, 20).await;
    // Nobody visits it: after a little over a second it stops by itself.
    let stopped = wait_for(&engine, &id, PreviewState::Stopped, 20).await;
    assert!(stopped.message.as_deref().unwrap().contains("without a visit"), "{stopped:?}");
    assert_eq!(stopped.origin, None);
    no_processes_in(&workdir(&root, &id)).await;
}

#[tokio::test]
async fn stop_and_shutdown_leave_nothing_running_and_sessions_get_their_own_ports() {
    let tmp = tempfile::tempdir().unwrap();
    let root = workspace(tmp.path(), &server(200, "process.env.PORT"));
    let engine = engine(&tmp.path().join("config"));
    let a = session(&engine, &root, "In app change the title").await;
    let b = create(&engine, "In app change the footer").await.id;
    wait_setup(&engine, &b).await;
    for id in [&a, &b] {
        engine.start_preview(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    }
    let (pa, pb) =
        (wait_for(&engine, &a, PreviewState::Ready, 20).await, wait_for(&engine, &b, PreviewState::Ready, 20).await);
    assert_ne!(pa.port, pb.port);
    assert_ne!(pa.origin, pb.origin);

    let stopped = engine.stop_preview(SessionIdArgs { session_id: a.clone() }).await.unwrap();
    assert_eq!(stopped.state, PreviewState::Stopped);
    no_processes_in(&workdir(&root, &a)).await;
    assert_eq!(preview(&engine, &b).await.state, PreviewState::Ready);

    engine.shutdown().await;
    no_processes_in(&workdir(&root, &b)).await;
}

#[tokio::test]
async fn archiving_stops_the_preview_and_closed_sessions_cannot_start_one() {
    let tmp = tempfile::tempdir().unwrap();
    let root = workspace(tmp.path(), &server(200, "process.env.PORT"));
    let engine = engine(&tmp.path().join("config"));
    let id = session(&engine, &root, "In app change the title").await;
    engine.start_preview(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    wait_for(&engine, &id, PreviewState::Ready, 20).await;
    engine.archive_session(StopArgs { session_id: id.clone(), stop: Some(true) }).await.unwrap();
    assert_eq!(preview(&engine, &id).await.state, PreviewState::Stopped);
    no_processes_in(&workdir(&root, &id)).await;
    let refused = engine.start_preview(SessionIdArgs { session_id: id.clone() }).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::SessionArchived);
}

#[tokio::test]
async fn static_roots_and_workspaces_without_a_preview() {
    let tmp = tempfile::tempdir().unwrap();
    let root = workspace(&tmp.path().join("static"), "root = \"site\"");
    std::fs::create_dir_all(root.join("site")).unwrap();
    std::fs::write(root.join("site/index.html"), "<h1>Static</h1>").unwrap();
    let engine = engine(&tmp.path().join("config"));
    let id = session(&engine, &root, "In app change the title").await;
    let view = engine.start_preview(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    assert_eq!((view.kind, view.state, view.port), (PreviewKind::Static, PreviewState::Ready, None));
    assert!(view.origin.is_some());

    let none = workspace(&tmp.path().join("none"), "");
    let id = session(&engine, &none, "In app change the title").await;
    assert_eq!(preview(&engine, &id).await.kind, PreviewKind::None);
    let err = engine.start_preview(SessionIdArgs { session_id: id }).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::PreviewNotConfigured);
}

#[tokio::test]
async fn a_self_hosted_server_offers_no_preview() {
    let tmp = tempfile::tempdir().unwrap();
    let root = workspace(tmp.path(), &server(200, "process.env.PORT"));
    let engine = Arc::new(Engine::new(kiln_engine::EngineOptions {
        mode: ServeMode::SelfHosted,
        ..kiln_test_support::options(&tmp.path().join("config"), Transport::Serve)
    }));
    let id = session(&engine, &root, "In app change the title").await;
    let err = engine.start_preview(SessionIdArgs { session_id: id.clone() }).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotAllowedInMode);
    assert!(processes_in(&workdir(&root, &id)).is_empty());
}

/// Processes of the preview cycles: working in `dir`, naming `marker` on their command
/// line, or in one of the process `groups` a preview ran in.
fn cycle_processes(dir: &Path, marker: &str, groups: &std::collections::BTreeSet<i32>) -> Vec<(i32, String)> {
    let mut found: Vec<(i32, String)> = processes_in(dir).into_iter().map(|pid| (pid, "its cwd".into())).collect();
    let named = commands_naming(marker);
    found.extend(named.iter().map(|&pid| (pid, "its command line".into())));
    for pid in pids().into_iter().filter(|pid| !named.contains(pid)) {
        let group = unsafe { libc::getpgid(pid) };
        if groups.contains(&group) {
            found.push((pid, format!("its process group {group}")));
        }
    }
    found
}

/// 100 starts and stops, most before the app is ready, every tenth once it is: no process
/// of any of them is left, by working directory, command line or process group. The app
/// starts a child of its own (`sleep`), which must go with its group.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_start_stop_cycles_leave_no_process_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = format!("kiln-preview-cycle-{}", std::process::id());
    let app = "require('http').createServer((q,s)=>{s.end('ok')}).listen(process.env.PORT,'127.0.0.1')";
    let command = format!("command = \"sleep 300 & exec node -e \\\"{app}\\\" {marker}\"");
    let root = workspace(tmp.path(), &command);
    let engine = engine(&tmp.path().join("config"));
    let id = session(&engine, &root, "In app change the title").await;
    let workdir = workdir(&root, &id);
    let mut groups = std::collections::BTreeSet::new();
    for cycle in 0..100u64 {
        let args = || SessionIdArgs { session_id: id.clone() };
        engine.start_preview(args()).await.unwrap();
        if cycle % 10 == 0 {
            wait_for(&engine, &id, PreviewState::Ready, 30).await;
            let running = processes_in(&workdir);
            assert!(running.len() >= 2, "the app and its sleep run in the working copy: {running:?}");
            groups.extend(running.iter().map(|&pid| unsafe { libc::getpgid(pid) }).filter(|&g| g > 0));
        } else {
            // Stopped at varied moments of its start: before the spawn, during, after.
            tokio::time::sleep(Duration::from_millis(cycle % 7 * 15)).await;
        }
        let stopped = engine.stop_preview(args()).await.unwrap();
        assert_eq!(stopped.state, PreviewState::Stopped, "cycle {cycle}");
    }
    assert!(groups.len() >= 10, "every tenth cycle's group was seen: {groups:?}");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let left = cycle_processes(&workdir, &marker, &groups);
        if left.is_empty() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "left behind after 100 cycles: {left:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    engine.shutdown().await;
}
