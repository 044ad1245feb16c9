//! Several hosts, one team (issue 21): two real `kiln serve` processes, each on its own
//! clone of one repository (tests/fixtures/repos/makefile.sh, no kiln.toml), sharing one
//! PostgreSQL (a throwaway cluster of Debian's server) and one bucket (`s3s-fs`). The
//! agent is Kiln's own loop against the scripted model server, which answers each
//! session by the marker in its messages. Everything on 127.0.0.1.
//!
//! - a session made on host A is listed on B, B's stream shows its turn, and an operation
//!   asked of B runs on A, which owns the session;
//! - A killed (SIGKILL) in the middle of a turn: B takes the lease over, rebuilds the working
//!   copy from the bucket, closes the cut turn, and the session carries on there with
//!   nothing lost or repeated;
//! - A stopped on purpose (SIGTERM) hands its sessions on at once, without waiting for its
//!   leases to run out;
//! - 20 sessions over both hosts gate at once, each with its own result.

#[allow(dead_code)]
#[path = "hostile/api.rs"]
mod api;
#[allow(dead_code)]
#[path = "hostile/http.rs"]
mod http;
#[allow(dead_code)]
#[path = "../src-tauri/engine/tests/it/common/postgres.rs"]
mod postgres;
#[allow(dead_code)]
#[path = "../src-tauri/engine/tests/it/common/s3.rs"]
mod s3;
#[allow(dead_code)]
#[path = "hostile/server.rs"]
mod server;
#[allow(dead_code)]
#[path = "hostile/snapshot.rs"]
mod snapshot;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use api::{connect_req, cookie_of, page_req};
use kiln_model_server::{Aside, ModelServer, Step};
use serde_json::{json, Value};
use server::Server;

/// Generous: the hosts share two cores with the rest of the suite.
const PATIENCE: Duration = Duration::from_secs(90);
/// The module every clone names the same: the clones' directory.
const MODULE: &str = "relcheck";

/// One team: the database, the bucket, the model, and the origin the hosts clone.
struct Team {
    root: tempfile::TempDir,
    database: String,
    bucket: String,
    model: ModelServer,
    _s3: s3::S3,
}

/// A host of the team and a browser's connection to it.
struct Host {
    server: Server,
    cookie: String,
    workspace: PathBuf,
}

impl Team {
    fn new(asides: Vec<Aside>) -> Team {
        let root = tempfile::tempdir().unwrap();
        let origin = root.path().join("origin").join(MODULE);
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/repos/makefile.sh");
        let made = Command::new("bash").arg(script).arg(&origin).status().unwrap();
        assert!(made.success(), "the makefile fixture");
        let ui = root.path().join("ui");
        std::fs::create_dir_all(&ui).unwrap();
        std::fs::write(ui.join("index.html"), "<!doctype html><title>Kiln</title>").unwrap();
        let s3 = s3::S3::start();
        let bucket = s3.bucket("team");
        let model = ModelServer::spawn_with_asides(0, Vec::new(), asides).unwrap();
        Team { database: postgres::fresh_database(), bucket, model, _s3: s3, root }
    }

    /// Starts host `name` on a clone of its own. The first host's `.kiln/secret.key` is
    /// given to every later one, as an operator does (README: Run Kiln for a team), so each
    /// opens the settings' sealed key.
    fn host(&self, name: &str) -> Host {
        let workspace = self.root.path().join(name).join(MODULE);
        if !workspace.exists() {
            let origin = self.root.path().join("origin").join(MODULE);
            let cloned = Command::new("git").arg("clone").arg("-q").arg(&origin).arg(&workspace).status().unwrap();
            assert!(cloned.success());
            let first = std::fs::read_dir(self.root.path())
                .unwrap()
                .map(|e| e.unwrap().path().join(MODULE).join(".kiln/secret.key"))
                .find(|key| key.is_file());
            if let Some(key) = first {
                std::fs::create_dir_all(workspace.join(".kiln")).unwrap();
                std::fs::copy(key, workspace.join(".kiln/secret.key")).unwrap();
            }
        }
        let config = self.root.path().join(name).join("config");
        let (ws, ui) = (workspace.display().to_string(), self.root.path().join("ui").display().to_string());
        let args = [
            "serve",
            "--port",
            "0",
            "--mode",
            "loopback",
            "--workspace",
            &ws,
            "--ui-dir",
            &ui,
            "--database",
            &self.database,
            "--objects",
            &self.bucket,
        ];
        let mut env: Vec<(&str, &str)> = s3::CREDENTIALS.to_vec();
        env.push(("RUST_LOG", "kiln_engine=info"));
        let server = Server::spawn(&config, &args, &env).unwrap_or_else(|e| panic!("host {name}: {e}"));
        let r = connect_req(server.port, server.token.as_deref()).send(server.port).unwrap();
        assert_eq!(r.status, 200, "connect to {name}: {}", r.text());
        let cookie = cookie_of(&r, server.port).unwrap();
        Host { server, cookie, workspace }
    }
}

impl Host {
    fn call(&self, op: &str, body: Value) -> Value {
        let r = self.try_call(op, &body);
        r.unwrap_or_else(|(status, text)| panic!("{op} {body}: {status} {text}"))
    }

    fn try_call(&self, op: &str, body: &Value) -> Result<Value, (u16, String)> {
        let r = page_req(self.server.port, op, body)
            .header("Cookie", &self.cookie)
            .send(self.server.port)
            .unwrap_or_else(|e| panic!("{op}: {e}"));
        if r.status == 200 {
            Ok(r.json())
        } else {
            Err((r.status, r.text()))
        }
    }

    /// Points every host's driver at the team's model (the settings are the team's records).
    fn use_model(&self, model: &ModelServer) {
        let settings = json!({
            "defaultDriver": "openai-compatible", "openaiBaseUrl": model.openai_base_url(),
            "openaiModel": "team", "openaiKey": "sk-team", "plannerAgent": false,
        });
        self.call("update_settings", settings);
    }

    /// A new session that runs the turns it is asked for and no more (no chained review).
    fn create(&self, brief: &str) -> String {
        let id = self.call("create_session", json!({ "brief": brief }))["id"].as_str().unwrap().to_string();
        self.call("update_session", json!({ "sessionId": id, "autoContinue": false }));
        id
    }

    fn transcript(&self, id: &str) -> Vec<Value> {
        self.call("get_transcript", json!({ "sessionId": id })).as_array().unwrap().clone()
    }

    /// Waits until the session stands still and its transcript holds `text`.
    fn wait_for(&self, id: &str, text: &str) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let session = self.call("get_session", json!({ "sessionId": id }));
            let entries = self.transcript(id);
            if session["running"] == false && entries.iter().any(|e| e["text"].as_str().unwrap_or("").contains(text)) {
                return session;
            }
            assert!(Instant::now() < deadline, "session {id} never showed {text:?}: {session}\n{}", shown(&entries));
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

fn shown(entries: &[Value]) -> String {
    entries.iter().map(|e| format!("[{}] {}\n", e["kind"], e["text"].as_str().unwrap_or(""))).collect()
}

/// A session's turn by its marker: write `file`, then say `done` once the write is in the
/// conversation (the file's name is in the tool call, which the first request lacks).
fn writes(marker: &str, file: &str, content: &str, done: &str) -> Vec<Aside> {
    vec![
        Aside::new(format!("\\\"{file}\\\""), Step::text(done)),
        Aside::new(marker, Step::tool("write_file", json!({ "path": file, "content": content }))),
    ]
}

#[test]
fn a_session_made_on_one_host_is_listed_streamed_and_worked_on_through_the_other() {
    let team = Team::new(writes("FIRST-TASK", "notes/first.txt", "first\n", "First note written."));
    let a = team.host("a");
    a.use_model(&team.model);
    let b = team.host("b");

    let id = a.create(&format!("Add a note in {MODULE}"));
    let listed = b.call("list_sessions", json!({}));
    assert!(listed.as_array().unwrap().iter().any(|s| s["id"] == id.as_str()), "B lists A's session: {listed}");

    // B's stream, opened before the turn: it must carry what A does.
    let stream = http::Req::new("GET", "/api/events")
        .header("Host", &api::host(b.server.port))
        .header("Cookie", &b.cookie)
        .open(b.server.port)
        .unwrap();
    // Asked of B; A owns the session, so A runs the turn in its working copy.
    b.call("send_message", json!({ "sessionId": id, "text": format!("FIRST-TASK in {MODULE}") }));
    b.wait_for(&id, "First note written.");
    let first = |root: &Path| root.join(".kiln/sessions").join(&id).join("workspace/notes/first.txt");
    assert_eq!(std::fs::read_to_string(first(&a.workspace)).unwrap(), "first\n", "the turn ran on A");
    assert!(!first(&b.workspace).exists(), "nothing ran on B");
    assert!(
        stream.wait_for(PATIENCE, |text| text.contains("First note written.") && text.contains(&id)),
        "B's stream never showed A's turn:\n{}",
        stream.text()
    );
    // The diff, asked of B, is A's working copy's.
    let diff = b.call("get_diff", json!({ "sessionId": id }));
    assert!(diff.to_string().contains("notes/first.txt"), "{diff}");
}

#[test]
fn killing_the_owner_mid_turn_hands_the_session_to_the_other_host_with_nothing_lost() {
    let mut asides = writes("THIRD-TASK", "notes/third.txt", "third\n", "Third note written.");
    // The second turn hangs in a command until its host is killed.
    asides.push(Aside::new("SECOND-TASK", Step::tool("run_command", json!({ "command": "sleep 45" }))));
    asides.extend(writes("FIRST-TASK", "notes/first.txt", "first\n", "First note written."));
    let team = Team::new(asides);
    let a = team.host("a");
    a.use_model(&team.model);
    let b = team.host("b");

    let id = a.create(&format!("Keep notes in {MODULE}"));
    a.call("send_message", json!({ "sessionId": id, "text": format!("FIRST-TASK in {MODULE}") }));
    a.wait_for(&id, "First note written.");
    let before = a.transcript(&id);
    let checkpoints_before = a.call("get_session", json!({ "sessionId": id }))["checkpoints"].clone();

    a.call("send_message", json!({ "sessionId": id, "text": "SECOND-TASK, then stop" }));
    let deadline = Instant::now() + PATIENCE;
    while !team.model.requests().iter().any(|r| r.body.to_string().contains("SECOND-TASK")) {
        assert!(Instant::now() < deadline, "the second turn never asked the model");
        std::thread::sleep(Duration::from_millis(100));
    }
    // In its command now: B sees it running.
    let deadline = Instant::now() + PATIENCE;
    while b.call("get_session", json!({ "sessionId": id }))["running"] != true {
        assert!(Instant::now() < deadline, "B never saw the turn running");
        std::thread::sleep(Duration::from_millis(100));
    }
    a.server.signal("KILL");
    drop(a);

    // B takes the session over once A's lease runs out, and says so once it is whole again.
    let taken = b.wait_for(&id, "stopped answering, so this host");
    assert_eq!(taken["running"], false, "{taken}");
    let entries = b.transcript(&id);
    let text = shown(&entries);
    assert!(text.contains("cut short"), "the cut turn is explained:\n{text}");
    let copy = b.workspace.join(".kiln/sessions").join(&id).join("workspace");
    assert_eq!(std::fs::read_to_string(copy.join("notes/first.txt")).unwrap(), "first\n", "rebuilt from the bucket");

    // And carries on there.
    b.call("send_message", json!({ "sessionId": id, "text": format!("THIRD-TASK in {MODULE}") }));
    let after = b.wait_for(&id, "Third note written.");
    assert_eq!(std::fs::read_to_string(copy.join("notes/third.txt")).unwrap(), "third\n");
    assert_eq!(std::fs::read_to_string(copy.join("notes/first.txt")).unwrap(), "first\n");

    // Nothing lost, nothing twice: every entry and checkpoint from before is there once.
    let entries = b.transcript(&id);
    let ids: Vec<i64> = entries.iter().map(|e| e["id"].as_i64().unwrap()).collect();
    assert_eq!(ids.iter().collect::<BTreeSet<_>>().len(), ids.len(), "an entry twice:\n{}", shown(&entries));
    for old in &before {
        assert_eq!(entries.iter().filter(|e| *e == old).count(), 1, "lost or changed: {old}");
    }
    let sequences: Vec<i64> =
        after["checkpoints"].as_array().unwrap().iter().map(|c| c["sequence"].as_i64().unwrap()).collect();
    let expected: Vec<i64> = (0..sequences.len() as i64).collect();
    assert_eq!(sequences, expected, "checkpoints numbered once each: {}", after["checkpoints"]);
    for old in checkpoints_before.as_array().unwrap() {
        let kept = after["checkpoints"].as_array().unwrap().iter().find(|c| c["sequence"] == old["sequence"]);
        assert_eq!(kept.map(|c| &c["label"]), Some(&old["label"]), "checkpoint {old} kept");
    }
    assert!(sequences.len() > checkpoints_before.as_array().unwrap().len(), "the third turn's checkpoint");
}

#[test]
fn a_host_stopped_on_purpose_hands_its_sessions_on() {
    let team = Team::new(writes("FIRST-TASK", "notes/first.txt", "first\n", "First note written."));
    let mut a = team.host("a");
    a.use_model(&team.model);
    let b = team.host("b");
    let id = a.create(&format!("Keep notes in {MODULE}"));
    a.call("send_message", json!({ "sessionId": id, "text": format!("FIRST-TASK in {MODULE}") }));
    a.wait_for(&id, "First note written.");

    a.server.signal("TERM");
    assert!(a.server.wait_exit(PATIENCE).is_some_and(|s| s.success()), "A stops cleanly: {}", a.server.output());
    // Handed on (its leases let go, its row gone), not found dead once its leases ran out.
    b.wait_for(&id, "was stopped and handed it on, so this host");
    let text = shown(&b.transcript(&id));
    assert!(!text.contains("stopped answering"), "{text}");
    let copy = b.workspace.join(".kiln/sessions").join(&id).join("workspace");
    assert_eq!(std::fs::read_to_string(copy.join("notes/first.txt")).unwrap(), "first\n");
}

#[test]
fn twenty_sessions_over_two_hosts_gate_at_once_each_with_its_own_result() {
    const SESSIONS: usize = 20;
    // Session n adds a test that passes when n is even and fails when it is odd.
    let mut asides = Vec::new();
    for n in 0..SESSIONS {
        let body = if n % 2 == 0 {
            format!("test_team_{n}() {{\n  assert_eq \"$(semver_cmp 1.2.{n} 1.2.{n})\" 0\n}}\n")
        } else {
            format!("test_team_{n}() {{\n  assert_eq \"$(semver_cmp 1.2.{n} 1.2.{n})\" 1 \"on purpose\"\n}}\n")
        };
        asides.extend(writes(&format!("TEAM-TASK-{n:02}."), &format!("tests/test_team_{n:02}.sh"), &body, "Added."));
    }
    let team = Team::new(asides);
    let a = team.host("a");
    a.use_model(&team.model);
    let b = team.host("b");
    let hosts = [&a, &b];

    // Made on alternate hosts (each owns what it made), asked of the other one.
    let ids: Vec<String> = (0..SESSIONS).map(|n| hosts[n % 2].create(&format!("Session {n} in {MODULE}"))).collect();
    std::thread::scope(|scope| {
        for (n, id) in ids.iter().enumerate() {
            let asked = hosts[(n + 1) % 2];
            scope.spawn(move || {
                asked
                    .call("send_message", json!({ "sessionId": id, "text": format!("TEAM-TASK-{n:02}. in {MODULE}") }));
            });
        }
    });
    for (n, id) in ids.iter().enumerate() {
        hosts[n % 2].wait_for(id, "Added.");
    }

    // Every session's gates at once, half asked of the host that owns it, half of the other.
    let results: Vec<Value> = std::thread::scope(|scope| {
        let running: Vec<_> = ids
            .iter()
            .enumerate()
            .map(|(n, id)| {
                let asked = hosts[(n / 2) % 2];
                scope.spawn(move || asked.call("check_modules", json!({ "sessionId": id })))
            })
            .collect();
        running.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for (n, gates) in results.iter().enumerate() {
        let tests =
            gates.as_array().unwrap().iter().find(|g| g["gate"] == "tests").unwrap_or_else(|| panic!("{gates}"));
        let want = if n % 2 == 0 { "passed" } else { "failed" };
        assert_eq!(tests["status"], want, "session {n}: {tests}");
        let output = format!("{}{}", tests["outputHead"], tests["outputTail"]);
        assert!(output.contains(&format!("test_team_{n}")), "session {n} ran its own test: {output}");
        for other in (0..SESSIONS).filter(|m| *m != n) {
            assert!(!output.contains(&format!("test_team_{other}\\n")), "session {n} ran {other}'s test: {output}");
        }
        // Ran where the session lives.
        let owner = hosts[n % 2];
        assert!(owner.workspace.join(".kiln/sessions").join(&ids[n]).join("workspace").is_dir());
        assert!(!hosts[(n + 1) % 2].workspace.join(".kiln/sessions").join(&ids[n]).join("workspace").exists());
    }
}
