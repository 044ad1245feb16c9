//! Feedback in every phase (issue 15): the live line (`Live` events, never stored) in
//! planning and in turns, provider failures and retries shown at once as one updating
//! status, an auth failure ending planning at once, Stop during planning and setup,
//! Retry of a blocked turn, `MODULE_UNKNOWN` for names that are no module, and the
//! checkpoints' names, current mark and the session's `changed`; and a turn's change to the
//! agent's own configuration, put back when it ends and said in the transcript.
//!
//! Drivers here are the engine's OpenAI-compatible one against the scripted model
//! server, or a double that speaks the same `DriverEvent`s a CLI driver would (Claude's
//! `api_retry` lines become `Retry`s with attempt, maximum and HTTP status); the real
//! Claude CLI's side of it is in contract_cli.rs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;
use kiln_engine::testing::drivers::events::DriverEvent;
use kiln_engine::testing::drivers::{Driver, TurnFuture, TurnRequest, TurnSink};
use kiln_engine::types::*;
use kiln_engine::{Engine, ErrorCode};
use kiln_model_server::{ModelServer, Step};
use tokio::sync::broadcast;

struct World {
    _tmp: tempfile::TempDir,
    engine: Arc<Engine>,
    server: ModelServer,
}

/// examples/shop with no setup and no module gates, turns on the scripted model;
/// `setup` replaces the setup command when given.
async fn world(script: Vec<Step>, planner: bool, setup: Option<&str>) -> World {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());
    let toml = shop.join("kiln.toml");
    let setup = format!("setup = \"{}\"", setup.unwrap_or(""));
    let text = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("setup = \"npm ci --offline --no-audit --no-fund\"", &setup)
        .replace("tests = \"npm test\"", "dependencies = \"\"\ntests = \"\"");
    std::fs::write(toml, text).unwrap();
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    let server = ModelServer::start(script).await;
    use_scripted_model(&engine, &server, planner).await;
    World { _tmp: tmp, engine, server }
}

/// A driver that says what it is given, one event at a time, then (unless `hang`)
/// ends; it never ends by itself when `hang` is set, like an agent stuck retrying.
#[derive(Clone)]
struct Double {
    events: Vec<(Duration, DriverEvent)>,
    hang: bool,
}

impl Driver for Double {
    fn id(&self) -> &'static str {
        "claude"
    }

    fn run(&self, _request: TurnRequest, sink: TurnSink) -> TurnFuture {
        let double = self.clone();
        Box::pin(async move {
            for (pause, event) in double.events {
                tokio::time::sleep(pause).await;
                let _ = sink.events.send(event);
            }
            if double.hang {
                tokio::time::sleep(Duration::from_secs(600)).await;
            }
            Ok(())
        })
    }
}

fn retry(attempt: u32, status: u16) -> (Duration, DriverEvent) {
    let event = DriverEvent::Retry {
        attempt,
        message: format!("provider error (HTTP {status})"),
        max_attempts: Some(10),
        http_status: Some(status),
    };
    (Duration::from_millis(20), event)
}

fn now(event: DriverEvent) -> (Duration, DriverEvent) {
    (Duration::from_millis(5), event)
}

fn ended(final_text: &str) -> DriverEvent {
    DriverEvent::TurnEnded {
        is_error: false,
        stop_reason: Some("end_turn".into()),
        final_text: Some(final_text.into()),
        error: None,
    }
}

/// Every `Live` of the session received until `until` says stop or `limit` passes.
async fn lives(
    rx: &mut broadcast::Receiver<KilnEvent>,
    id: &str,
    limit: Duration,
    until: impl Fn(&[LiveView]) -> bool,
) -> Vec<LiveView> {
    let deadline = Instant::now() + limit;
    let mut out = Vec::new();
    while Instant::now() < deadline && !until(&out) {
        match tokio::time::timeout(Duration::from_millis(50), rx.recv()).await {
            Ok(Ok(KilnEvent { body: EventBody::Live { live }, .. })) if live.session_id == id => out.push(live),
            Ok(Err(broadcast::error::RecvError::Closed)) => break,
            _ => {}
        }
    }
    out
}

fn cleared(lives: &[LiveView]) -> bool {
    lives.last().is_some_and(|l| l.text.is_none() && l.status.is_none())
}

async fn transcript(engine: &Engine, id: &str) -> Vec<TranscriptEntry> {
    engine
        .get_transcript(GetTranscriptArgs { session_id: id.into(), after: None, before: None, last: None })
        .await
        .unwrap()
}

async fn session(engine: &Engine, id: &str) -> SessionView {
    engine.get_session(SessionIdArgs { session_id: id.into() }).await.unwrap()
}

/// Starts the planner agent on `id` with `driver`, as creating a session does.
fn plan_with(engine: &Engine, id: &str, driver: Double) {
    let ws = engine.workspace().unwrap();
    let id = kiln_engine::testing::ids::SessionId::parse(id).unwrap();
    kiln_engine::testing::planner_agent::start(
        ws,
        engine.events().clone(),
        id,
        Arc::new(driver),
        "Add a wishlist to @shop/catalog".into(),
        false,
    );
}

// ---------------------------------------------------------------------------------------
// Planning

/// A 401 during planning: the live line says auth at once, and planning ends with one
/// entry in words, through the real path (create_session with the planner on).
#[tokio::test]
async fn a_401_during_planning_shows_at_once_and_ends_planning_with_one_entry() {
    let w = world(vec![Step::error(401, "Incorrect API key provided: sk-test")], true, None).await;
    let mut rx = w.engine.subscribe(None).receiver;
    let started = Instant::now();
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    let seen = lives(&mut rx, &s.id, Duration::from_secs(2), cleared).await;
    let auth = seen.iter().find_map(|l| l.status.as_ref().filter(|s| s.reason == "auth"));
    let auth = auth.unwrap_or_else(|| panic!("no auth status within 2 s: {seen:#?}"));
    assert_eq!((seen[0].phase, auth.http_status), (LivePhase::Planning, Some(401)));
    assert!(auth.message.contains("refused the credentials"), "{}", auth.message);
    assert!(cleared(&seen), "the live line clears when planning ends: {seen:#?}");
    let entries = transcript(&w.engine, &s.id).await;
    let stopped: Vec<&TranscriptEntry> = entries.iter().filter(|e| e.text.starts_with("Planning stopped")).collect();
    assert_eq!(stopped.len(), 1, "{entries:#?}");
    assert!(
        stopped[0].text.contains("refused the credentials") && stopped[0].text.contains("401"),
        "{}",
        stopped[0].text
    );
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
    assert!(!entries.iter().any(|e| e.text.contains("answer could not be used")), "{entries:#?}");
    assert_eq!(session(&w.engine, &s.id).await.state, SessionState::Editing, "the session is usable");
}

/// An agent that retries a 401 by itself (as Claude Code may) is not waited for:
/// planning ends at the first auth retry, and the agent is stopped.
#[tokio::test]
async fn an_auth_retry_during_planning_ends_it_without_waiting_for_the_agent() {
    let w = world(vec![], false, None).await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    let mut rx = w.engine.subscribe(None).receiver;
    let started = Instant::now();
    plan_with(&w.engine, &s.id, Double { events: vec![retry(1, 401)], hang: true });
    // The double never ends by itself: any bound shows planning did not wait for it.
    let seen = lives(&mut rx, &s.id, Duration::from_secs(20), cleared).await;
    assert!(
        seen.iter().any(|l| l.status.as_ref().is_some_and(|s| s.reason == "auth" && s.attempt == Some(1))),
        "{seen:#?}"
    );
    assert!(cleared(&seen), "{seen:#?}");
    let deadline = started + Duration::from_secs(20);
    while w.engine.activity().planners > 0 {
        assert!(Instant::now() < deadline, "planning waited for the agent");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let entries = transcript(&w.engine, &s.id).await;
    assert_eq!(
        entries
            .iter()
            .filter(|e| e.text.starts_with("Planning stopped: the model provider refused the credentials"))
            .count(),
        1,
        "{entries:#?}"
    );
}

/// Overload retries during planning: one updating line with the attempt growing, and no
/// transcript line per attempt; then the answer is used and the line clears.
#[tokio::test]
async fn retries_during_planning_update_one_line_and_the_answer_still_counts() {
    let w = world(vec![], false, None).await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    let before = transcript(&w.engine, &s.id).await.len();
    let mut rx = w.engine.subscribe(None).receiver;
    let answer = r#"{"modules": ["@shop/catalog"], "title": "Wishlist", "role": "backend-engineer", "reason": "it is the catalog"}"#;
    let events = vec![
        retry(1, 529),
        retry(2, 529),
        retry(3, 529),
        now(DriverEvent::Text { text: answer.into() }),
        now(ended(answer)),
    ];
    plan_with(&w.engine, &s.id, Double { events, hang: false });
    let seen = lives(&mut rx, &s.id, Duration::from_secs(5), cleared).await;
    let attempts: Vec<u32> = seen.iter().filter_map(|l| l.status.as_ref()).filter_map(|s| s.attempt).collect();
    assert_eq!(attempts, vec![1, 2, 3], "{seen:#?}");
    let status = seen.iter().find_map(|l| l.status.clone()).unwrap();
    assert_eq!(
        (status.kind, status.reason.as_str(), status.max_attempts, status.http_status),
        (LiveStatusKind::Retrying, "overloaded", Some(10), Some(529))
    );
    assert!(cleared(&seen));
    let deadline = Instant::now() + Duration::from_secs(5);
    while !transcript(&w.engine, &s.id).await.iter().any(|e| e.text.starts_with("**Planner agent**")) {
        assert!(Instant::now() < deadline, "the planner's answer was never applied");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let added = &transcript(&w.engine, &s.id).await[before..];
    assert_eq!(added.len(), 1, "one entry, the planner's, and none per attempt: {added:#?}");
    assert_eq!(session(&w.engine, &s.id).await.title, "Wishlist");
}

// ---------------------------------------------------------------------------------------
// Turns

/// Starts a turn of `driver` in the session's first module, outside the chain.
async fn turn_with(engine: &Engine, id: &str, driver: impl Driver + 'static) {
    let ws = engine.workspace().unwrap();
    let view = session(engine, id).await;
    let role = ws.roles().unwrap().into_iter().find(|r| r.id == "backend-engineer").unwrap();
    let plan = kiln_engine::testing::turn::TurnPlan {
        session: kiln_engine::testing::ids::SessionId::parse(id).unwrap(),
        module: view.modules[0].clone(),
        role,
        driver: Arc::new(driver),
        model: None,
        prompt: "Do it".into(),
        instructions: String::new(),
        resume_id: None,
        chain_index: 0,
        review: false,
    };
    kiln_engine::testing::turn::start(ws, engine.events().clone(), plan).await.unwrap();
}

/// An agent whose own configuration (Codex's `config.toml`, here in a home of its own)
/// a turn changes: it writes a `notify` hook there, then ends.
struct Configures {
    home: std::path::PathBuf,
}

impl Driver for Configures {
    fn id(&self) -> &'static str {
        "codex"
    }

    fn run(&self, _request: TurnRequest, sink: TurnSink) -> TurnFuture {
        let config = self.home.join("config.toml");
        Box::pin(async move {
            std::fs::write(&config, "notify = [\"sh\", \"-c\", \"touch pwned\"]\n").unwrap();
            let _ = sink.events.send(ended("Configured."));
            Ok(())
        })
    }

    fn guard_config(&self) -> kiln_engine::testing::drivers::agent_config::Guard {
        use kiln_engine::testing::drivers::agent_config::{Guard, CODEX_CONFIG};
        Guard::take(Some(self.home.clone()), CODEX_CONFIG)
    }
}

/// What a turn did to the agent's own configuration is put back when the turn ends, and
/// the transcript says so.
#[tokio::test]
async fn a_turns_change_to_the_agents_configuration_is_put_back_and_said() {
    let w = world(vec![], false, None).await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), "model = \"mine\"\n").unwrap();
    turn_with(&w.engine, &s.id, Configures { home: home.path().to_path_buf() }).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let note = loop {
        let entries = transcript(&w.engine, &s.id).await;
        if let Some(e) = entries.iter().find(|e| e.text.contains("its own configuration")) {
            break e.clone();
        }
        assert!(Instant::now() < deadline, "no note: {entries:#?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(note.kind, EntryKind::System);
    assert!(note.text.contains("config.toml`") && note.text.contains("put it back"), "{}", note.text);
    assert_eq!(std::fs::read_to_string(home.path().join("config.toml")).unwrap(), "model = \"mine\"\n");
}

/// Retries in a turn: one updating status (attempt 1, 2, 3, reason overloaded), no
/// transcript line per attempt; then the text streams live (throttled), the whole
/// message is stored once, and the live line clears.
#[tokio::test]
async fn turn_retries_and_streamed_text_are_live_only() {
    let w = world(vec![], false, None).await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    let mut rx = w.engine.subscribe(None).receiver;
    let pieces = ["The ", "wish", "list ", "is ", "done."];
    let mut events = vec![retry(1, 529), retry(2, 529), retry(3, 529)];
    events.extend(pieces.iter().map(|p| (Duration::from_millis(60), DriverEvent::TextDelta { text: p.to_string() })));
    events.push(now(DriverEvent::Text { text: pieces.concat() }));
    events.push(now(ended(&pieces.concat())));
    turn_with(&w.engine, &s.id, Double { events, hang: false }).await;
    let seen = lives(&mut rx, &s.id, Duration::from_secs(10), cleared).await;
    assert!(
        seen.iter().all(|l| l.phase == LivePhase::Turn && l.role.as_deref() == Some("backend-engineer")),
        "{seen:#?}"
    );
    let attempts: Vec<u32> = seen
        .iter()
        .filter_map(|l| l.status.as_ref())
        .filter(|s| s.kind == LiveStatusKind::Retrying)
        .filter_map(|s| s.attempt)
        .collect();
    assert_eq!(attempts, vec![1, 2, 3], "{seen:#?}");
    assert!(seen
        .iter()
        .filter_map(|l| l.status.as_ref())
        .all(|s| s.reason == "overloaded" && s.message.contains("overloaded")));
    let texts: Vec<&str> = seen.iter().filter_map(|l| l.text.as_deref()).collect();
    assert!(texts.len() >= 3, "the text streams in several updates: {texts:?}");
    assert!(texts.windows(2).all(|w| w[1].starts_with(w[0])), "each update carries the text so far: {texts:?}");
    assert_eq!(*texts.last().unwrap(), "The wishlist is done.");
    // Once text streams, the provider answers again: the retry line is gone.
    let first_text = seen.iter().position(|l| l.text.is_some()).unwrap();
    assert!(seen[first_text].status.is_none(), "{seen:#?}");
    assert!(cleared(&seen), "{seen:#?}");
    // Outside the chain nothing moves the session on: wait for the turn itself to go.
    let deadline = Instant::now() + Duration::from_secs(10);
    while session(&w.engine, &s.id).await.running {
        assert!(Instant::now() < deadline, "the turn never ended");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let entries = transcript(&w.engine, &s.id).await;
    assert!(!entries.iter().any(|e| e.text.to_lowercase().contains("retr")), "no line per attempt: {entries:#?}");
    let agent: Vec<&str> = entries.iter().filter(|e| e.kind == EntryKind::Agent).map(|e| e.text.as_str()).collect();
    assert_eq!(agent, vec!["The wishlist is done."], "stored once, whole");
}

/// A refused key in a turn: the agent's own retries are not waited for; through the
/// chain the session is blocked at once, in words, with no line per attempt.
#[tokio::test]
async fn an_auth_retry_in_a_turn_ends_it_at_once() {
    let w = world(vec![], false, None).await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    let mut rx = w.engine.subscribe(None).receiver;
    let started = Instant::now();
    turn_with(&w.engine, &s.id, Double { events: vec![retry(1, 401)], hang: true }).await;
    // The double never ends by itself: any bound shows the turn did not wait for it.
    let seen = lives(&mut rx, &s.id, Duration::from_secs(20), cleared).await;
    assert!(seen.iter().any(|l| l.status.as_ref().is_some_and(|s| s.reason == "auth")), "{seen:#?}");
    while session(&w.engine, &s.id).await.running {
        assert!(started.elapsed() < Duration::from_secs(20), "the turn waited for the agent's retries");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// ---------------------------------------------------------------------------------------
// Stop, Retry

#[tokio::test]
async fn stop_ends_planning_and_nothing_left_is_invalid_input() {
    let w = world(vec![], false, None).await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    let err = w.engine.stop_turn(SessionIdArgs { session_id: s.id.clone() }).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput, "nothing runs yet");
    plan_with(&w.engine, &s.id, Double { events: vec![], hang: true });
    assert!(session(&w.engine, &s.id).await.running);
    let stopped = w.engine.stop_turn(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert!(!stopped.running, "{stopped:#?}");
    assert_eq!(stopped.state, SessionState::Editing);
    let entries = transcript(&w.engine, &s.id).await;
    assert_eq!(
        entries.iter().filter(|e| e.text == "Stopped by the operator during planning.").count(),
        1,
        "{entries:#?}"
    );
    assert_eq!(
        w.engine.stop_turn(SessionIdArgs { session_id: s.id.clone() }).await.unwrap_err().code,
        ErrorCode::InvalidInput
    );
}

#[tokio::test]
async fn stop_ends_a_running_setup_and_the_message_waiting_for_it() {
    let w = world(vec![Step::text("Should never run.\nHANDOFF: none - done")], false, Some("sleep 30")).await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    assert_eq!(s.setup, SetupState::Running);
    send_text(&w.engine, &s.id, "Go").await;
    let started = Instant::now();
    w.engine.stop_turn(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    let s = wait_setup(&w.engine, &s.id).await;
    assert!(started.elapsed() < Duration::from_secs(5), "the setup was not stopped: {:?}", started.elapsed());
    assert_eq!(s.setup, SetupState::Failed);
    let s = wait_settled(&w.engine, &s.id, Duration::from_secs(5)).await;
    assert!(!s.running);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let entries = transcript(&w.engine, &s.id).await;
    assert!(
        entries
            .iter()
            .any(|e| e.text.starts_with("Stopped by the operator during setup.") && e.text.contains("not started")),
        "{entries:#?}"
    );
    assert!(w.server.requests().is_empty(), "the waiting message's turn never started");
}

/// Closing Kiln while a message waits for its session's setup: the setup is stopped and has
/// recorded its end by the time shutdown returns, the message's turn never starts, and the
/// session says the message was not run.
#[tokio::test]
async fn shutdown_stops_a_setup_and_leaves_the_message_waiting_for_it_unstarted() {
    let w = world(vec![Step::text("Should never run.\nHANDOFF: none - done")], false, Some("sleep 30")).await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    assert_eq!(s.setup, SetupState::Running);
    send_text(&w.engine, &s.id, "Go").await;
    w.engine.shutdown().await;
    let after = w.engine.get_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert_eq!(after.setup, SetupState::Failed, "the stopped setup's end was recorded before shutdown returned");
    assert!(!after.running, "{after:?}");
    let entries = transcript(&w.engine, &s.id).await;
    assert!(
        entries.iter().any(|e| e.text.starts_with("Kiln shut down before the turn for your message")),
        "{entries:#?}"
    );
    // Had the waiting message's turn started, its request would be here by now.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(w.server.requests().is_empty(), "the waiting message's turn started after shutdown");
}

#[tokio::test]
async fn retry_runs_the_blocked_turn_again_as_it_ran() {
    let w = world(
        vec![
            Step::error(500, "The server had an error"),
            Step::text("Done this time.\nHANDOFF: none - done"),
            Step::text("Checked it.\nREVIEW: pass - ready"),
        ],
        false,
        None,
    )
    .await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    let err = w.engine.retry_turn(SessionIdArgs { session_id: s.id.clone() }).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotBlocked);
    send_text(&w.engine, &s.id, "List wishes on the server").await;
    let blocked = wait_settled(&w.engine, &s.id, Duration::from_secs(30)).await;
    assert_eq!(blocked.state, SessionState::Blocked);
    w.engine.retry_turn(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    let after = wait_settled(&w.engine, &s.id, Duration::from_secs(30)).await;
    assert_ne!(after.state, SessionState::Blocked, "{after:#?}");
    let asked = w.server.requests();
    let prompt = |i: usize| {
        asked[i].body["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").unwrap()["content"]
            .clone()
    };
    // The same prompt again (after the conversation so far, which this driver lost with
    // the failed turn and replays).
    let first = prompt(0).as_str().unwrap().to_string();
    assert!(first.ends_with("List wishes on the server"), "{first}");
    assert!(prompt(asked.len() - 1).as_str().unwrap().ends_with(&first), "{:?}", prompt(asked.len() - 1));
    assert_eq!(asked[0].body["model"], asked[asked.len() - 1].body["model"]);
    let entries = transcript(&w.engine, &s.id).await;
    assert!(
        entries.iter().any(|e| e.text.starts_with("Retrying the **Backend Engineer** turn in `@shop/catalog`")),
        "{entries:#?}"
    );
    assert!(
        entries.iter().any(|e| e.kind == EntryKind::Agent && e.text.starts_with("Done this time.")),
        "{entries:#?}"
    );
}

// ---------------------------------------------------------------------------------------
// The first brief, checkpoints

#[tokio::test]
async fn module_ids_select_and_unknown_ones_ask_first() {
    let w = world(vec![], false, None).await;
    let s = create(&w.engine, "Add a wishlist to module @shop/catalog").await;
    assert_eq!(s.modules.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), vec!["@shop/catalog"]);
    let args = |brief: &str, create: Option<Vec<String>>| CreateSessionArgs {
        brief: brief.into(),
        title: None,
        create_modules: create,
        issue: None,
    };
    let err = w.engine.create_session(args("Add a wishlist to module @shop/wishlist", None)).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::ModuleUnknown);
    assert!(
        err.message.starts_with("`@shop/wishlist` is not a module of this workspace")
            && err.message.contains("`@shop/catalog`"),
        "{}",
        err.message
    );
    let s = w
        .engine
        .create_session(args("Add a wishlist to module @shop/wishlist", Some(vec!["@shop/wishlist".into()])))
        .await
        .unwrap();
    assert_eq!(
        (s.modules[0].id.as_str(), s.modules[0].kind, s.modules[0].directory.as_str()),
        ("@shop/wishlist", ModuleChange::New, "modules/wishlist")
    );
    // The wire spelling, as the UI sends it.
    let json = serde_json::json!({"brief": "Create @shop/reviews", "createModules": ["@shop/reviews"]});
    let view = w.engine.dispatch("create_session", json).await.unwrap();
    assert_eq!(view["modules"][0]["id"], "@shop/reviews");
}

#[tokio::test]
async fn checkpoints_are_named_by_the_message_and_the_current_one_is_marked() {
    let write = |n: u32| {
        Step::tool(
            "write_file",
            serde_json::json!({ "path": format!("modules/catalog/src/server/w{n}.js"), "content": format!("export const w = {n};\n") }),
        )
    };
    let w = world(
        vec![
            write(1),
            Step::text("One.\nHANDOFF: none - done"),
            Step::text("Checked it.\nREVIEW: pass - ready"),
            write(2),
            Step::text("Two.\nHANDOFF: none - done"),
            Step::text("Checked it.\nREVIEW: pass - ready"),
        ],
        false,
        None,
    )
    .await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    assert!(!s.changed, "a new session changed nothing");
    assert_eq!(s.checkpoints.iter().map(|c| (c.label.as_str(), c.current)).collect::<Vec<_>>(), vec![("Start", true)]);
    let message = "Add the wishlist route\nwith more detail on the next line";
    for _ in 0..2 {
        send_text(&w.engine, &s.id, message).await;
        wait_settled(&w.engine, &s.id, Duration::from_secs(30)).await;
    }
    let s = session(&w.engine, &s.id).await;
    let named: Vec<(&str, bool)> = s.checkpoints.iter().map(|c| (c.label.as_str(), c.current)).collect();
    assert_eq!(named, vec![("Start", false), ("Add the wishlist route", false), ("Add the wishlist route (2)", true)]);
    assert!(s.changed);
    let restored =
        w.engine.restore_checkpoint(RestoreCheckpointArgs { session_id: s.id.clone(), sequence: 0 }).await.unwrap();
    assert_eq!(restored.checkpoints.iter().map(|c| c.current).collect::<Vec<_>>(), vec![true, false, false]);
    assert!(!restored.changed, "back at the start: nothing changed");
    let restored =
        w.engine.restore_checkpoint(RestoreCheckpointArgs { session_id: s.id.clone(), sequence: 1 }).await.unwrap();
    assert!(restored.checkpoints[1].current && restored.changed);
}

/// A command that prints a line a second: what it printed so far reaches the live view
/// while it still runs (before its result is in the transcript), and goes when it ends;
/// the transcript keeps the whole output once, in the result.
#[tokio::test]
async fn a_running_commands_output_streams_live_before_it_ends() {
    let command = "for i in 1 2 3 4; do echo tick $i; sleep 1; done";
    let script = vec![
        Step::tool("run_command", serde_json::json!({ "command": command })),
        Step::text("Counted.\nHANDOFF: none - done"),
        Step::text("Fine.\nREVIEW: pass - fine"),
    ];
    let w = world(script, false, None).await;
    let s = create(&w.engine, "Count to four in @shop/catalog").await;
    wait_setup(&w.engine, &s.id).await;
    let mut rx = w.engine.subscribe(None).receiver;
    send_text(&w.engine, &s.id, "Count").await;
    let seen = lives(&mut rx, &s.id, Duration::from_secs(30), |seen| {
        seen.iter().any(|l| l.output.as_deref().is_some_and(|o| o.contains("tick 2")))
    })
    .await;
    let streamed = seen.iter().rev().find_map(|l| l.output.clone()).unwrap_or_else(|| panic!("no output: {seen:#?}"));
    assert!(streamed.contains("tick 1") && !streamed.contains("tick 4"), "{streamed}");
    // Heard while it runs: no result yet.
    let entries = transcript(&w.engine, &s.id).await;
    assert!(!entries.iter().any(|e| e.text.contains("tick 4")), "{entries:#?}");
    // It ends: the live output goes, and the result holds the whole.
    let after = lives(&mut rx, &s.id, Duration::from_secs(30), |seen| seen.iter().any(|l| l.output.is_none())).await;
    assert!(after.iter().any(|l| l.output.is_none()), "{after:#?}");
    wait_settled(&w.engine, &s.id, Duration::from_secs(60)).await;
    let entries = transcript(&w.engine, &s.id).await;
    let result = entries.iter().find(|e| e.text.starts_with("↳") && e.text.contains("tick 4"));
    let result = result.unwrap_or_else(|| panic!("{entries:#?}"));
    assert!(result.text.contains("tick 1"), "{}", result.text);
}
