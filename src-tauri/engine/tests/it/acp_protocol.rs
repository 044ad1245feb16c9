//! The acp driver against `kiln-acp-double`, a scripted agent speaking the real ACP
//! framing over stdio (tests/acp-double): files written and commands run through Kiln's
//! client callbacks, paths outside the working copy refused, every update kind mapped or
//! kept, permissions answered by the policy and by the operator, Stop as `session/cancel`,
//! a second turn through `session/load`, a provider error and an agent that dies. Needs
//! `target/debug/kiln-acp-double` (`cargo build --workspace`, or any `cargo test` of the
//! workspace, builds it).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kiln_engine::testing::drivers::acp::{AcpCommand, AcpDriver, AskFuture, Operator, PermissionAsk};
use kiln_engine::testing::drivers::events::{DriverEvent, FileChangeKind, ToolKind, ToolStatus};
use kiln_engine::testing::drivers::{Driver, TurnRequest, TurnSink};
use kiln_engine::types::CommandPolicy;
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const INSTRUCTIONS: &str = "You are the Engineer. Own module `api`.";

/// The double's binary, built beside this test binary (`target/debug/deps/it-…`).
fn double_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let debug = exe.parent().and_then(Path::parent).unwrap();
    let binary = debug.join("kiln-acp-double");
    assert!(binary.exists(), "no {}: cargo build -p kiln-acp-double first", binary.display());
    binary
}

/// A working copy, its session directory, the double's state and its script.
struct Setup {
    _dir: tempfile::TempDir,
    root: PathBuf,
    work: PathBuf,
    state: PathBuf,
    script: PathBuf,
}

impl Setup {
    fn new(turns: Value) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let work = root.join("work");
        std::fs::create_dir_all(&work).unwrap();
        let script = root.join("script.json");
        std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
        Setup { state: root.join("state"), work, script, root, _dir: dir }
    }

    fn driver(&self, commands: CommandPolicy, load_session: bool) -> AcpDriver {
        let mut args = vec!["--script".to_string(), path(&self.script), "--state".into(), path(&self.state)];
        if load_session {
            args.push("--load-session".into());
        }
        AcpDriver::new("acp:double", AcpCommand { binary: double_binary(), args, env: Vec::new() }, commands)
    }

    fn request(&self, prompt: &str) -> TurnRequest {
        TurnRequest {
            workdir: self.work.clone(),
            session_dir: self.root.join("session"),
            prompt: prompt.into(),
            instructions: INSTRUCTIONS.into(),
            resume_id: None,
            model: None,
            read_only: false,
            environment: Default::default(),
            mcp: Vec::new(),
        }
    }

    /// Every message Kiln sent the double, in order.
    fn sent(&self) -> Vec<Value> {
        let log = std::fs::read_to_string(self.state.join("requests.jsonl")).unwrap_or_default();
        log.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    fn sent_method(&self, method: &str) -> Vec<Value> {
        self.sent().into_iter().filter(|m| m["method"] == method).collect()
    }
}

fn path(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// Runs one turn to its end; returns every event it reported.
async fn turn(driver: &AcpDriver, request: TurnRequest, operator: Option<Arc<dyn Operator>>) -> Vec<DriverEvent> {
    let (events, mut received) = mpsc::unbounded_channel();
    let mut sink = TurnSink::new(events, Box::new(|_| {}));
    sink.operator = operator;
    tokio::time::timeout(Duration::from_secs(30), driver.run(request, sink))
        .await
        .expect("the turn ends")
        .expect("the turn runs");
    let mut all = Vec::new();
    while let Some(event) = received.recv().await {
        all.push(event);
    }
    assert!(matches!(all.last(), Some(DriverEvent::TurnEnded { .. })), "a turn ends with TurnEnded: {all:#?}");
    all
}

fn ended(events: &[DriverEvent]) -> (bool, Option<String>, Option<String>, Option<String>) {
    match events.last() {
        Some(DriverEvent::TurnEnded { is_error, stop_reason, final_text, error }) => {
            (*is_error, stop_reason.clone(), final_text.clone(), error.clone())
        }
        other => panic!("not an end: {other:?}"),
    }
}

fn texts(events: &[DriverEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::Text { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn results(events: &[DriverEvent]) -> Vec<(ToolStatus, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::ToolResult { status, output, .. } => Some((*status, output.clone())),
            _ => None,
        })
        .collect()
}

fn decisions(events: &[DriverEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::PermissionRequest { input, .. } => Some(input["decision"].as_str().unwrap().to_string()),
            _ => None,
        })
        .collect()
}

fn session_id(events: &[DriverEvent]) -> String {
    events
        .iter()
        .find_map(|e| match e {
            DriverEvent::SessionStarted { resume_id, .. } => Some(resume_id.clone()),
            _ => None,
        })
        .expect("SessionStarted")
}

#[tokio::test]
async fn a_turn_writes_a_file_and_runs_a_command_through_kiln() {
    let outside = tempfile::tempdir().unwrap();
    let outside_file = outside.path().join("escaped.txt");
    let setup = Setup::new(json!([]));
    let work = path(&setup.work);
    let turns = json!([
        [
            {"message": "Writing the note."},
            {"writeFile": {"path": format!("{work}/notes/a.txt"), "content": "hello from the agent\n"}},
            {"terminal": {"command": "sh", "args": ["-c", "echo ran > ran.txt; cat notes/a.txt"]}},
            {"terminal": {"command": "sh", "args": ["-c", "echo embedded"], "embed": true}},
            {"readFile": {"path": format!("{work}/notes/a.txt")}},
            {"writeFile": {"path": path(&outside_file), "content": "escaped"}},
            {"writeFile": {"path": format!("{work}/.git/hooks/pre-commit"), "content": "escaped"}},
            {"writeFile": {"path": "lines.txt", "content": "one\ntwo\nthree\n"}},
            {"readFile": {"path": format!("{work}/lines.txt"), "line": 2, "limit": 1}},
            {"message": ["Done", "."]},
            {"usage": {"totalTokens": 15, "inputTokens": 10, "outputTokens": 5}},
        ],
        [{"writeFile": {"path": format!("{work}/review.txt"), "content": "no"}}, {"message": "Read only."}],
    ]);
    std::fs::write(&setup.script, json!({"turns": turns}).to_string()).unwrap();
    let driver = setup.driver(CommandPolicy::Workdir, false);
    let events = turn(&driver, setup.request("Write a note"), None).await;

    assert_eq!(std::fs::read_to_string(setup.work.join("notes/a.txt")).unwrap(), "hello from the agent\n");
    assert_eq!(
        std::fs::read_to_string(setup.work.join("ran.txt")).unwrap(),
        "ran\n",
        "the command ran in the working copy"
    );
    assert!(!outside_file.exists(), "nothing is written outside the working copy");
    assert!(!setup.work.join(".git").exists());
    let changes: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::FileChange { path, change } => Some((path.clone(), *change)),
            _ => None,
        })
        .collect();
    let added = |p: &str| (p.to_string(), FileChangeKind::Add);
    assert_eq!(changes, [added("notes/a.txt"), added("lines.txt")], "one change a file, not one per report");
    let results = results(&events);
    assert_eq!(results[0], (ToolStatus::Completed, String::new()), "the write");
    assert_eq!(results[1], (ToolStatus::Completed, "hello from the agent\n".into()), "the command's output");
    assert_eq!(results[2], (ToolStatus::Completed, "embedded\n".into()), "a result that only names its terminal");
    assert_eq!(results[3], (ToolStatus::Completed, "hello from the agent\n".into()), "the read");
    assert_eq!(results[4].0, ToolStatus::Failed, "outside: {results:?}");
    assert!(results[4].1.contains("outside the session's working copy"), "{results:?}");
    assert_eq!(results[5].0, ToolStatus::Failed, ".git: {results:?}");
    assert_eq!(results[7], (ToolStatus::Completed, "two\n".into()), "a read from line 2, one line");
    let kinds: Vec<ToolKind> = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::ToolCall { kind, .. } => Some(*kind),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ToolKind::Edit,
            ToolKind::Execute,
            ToolKind::Execute,
            ToolKind::Read,
            ToolKind::Edit,
            ToolKind::Edit,
            ToolKind::Edit,
            ToolKind::Read
        ]
    );
    assert_eq!(texts(&events), ["Writing the note.", "Done."]);
    let (is_error, stop_reason, final_text, _) = ended(&events);
    assert!(!is_error);
    assert_eq!((stop_reason.as_deref(), final_text.as_deref()), (Some("end_turn"), Some("Done.")));
    let usage = events.iter().find_map(|e| match e {
        DriverEvent::Usage(u) => Some(u.clone()),
        _ => None,
    });
    let usage = usage.expect("the prompt's usage");
    assert_eq!((usage.input_tokens, usage.output_tokens, usage.cost_usd), (10, 5, None), "no cost reported: unknown");

    // Kiln's side of the set-up: its capabilities, the working copy, its instructions.
    let init = &setup.sent_method("initialize")[0]["params"];
    assert_eq!(
        init["clientCapabilities"],
        json!({"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": true})
    );
    assert_eq!(init["clientInfo"]["name"], "kiln");
    let new = &setup.sent_method("session/new")[0]["params"];
    assert_eq!(new["cwd"], work);
    assert_eq!(new["_meta"]["systemPrompt"]["append"], INSTRUCTIONS);
    let prompt = setup.sent_method("session/prompt")[0]["params"]["prompt"][0]["text"].as_str().unwrap().to_string();
    assert!(prompt.contains(INSTRUCTIONS) && prompt.ends_with("Write a note"), "{prompt}");

    // A read-only turn writes nothing.
    let mut request = setup.request("Review");
    request.read_only = true;
    let events = turn(&driver, request, None).await;
    assert!(!setup.work.join("review.txt").exists());
    assert!(results_failed_with(&events, "read-only"), "{events:#?}");
}

fn results_failed_with(events: &[DriverEvent], words: &str) -> bool {
    results(events).iter().any(|(status, output)| *status == ToolStatus::Failed && output.contains(words))
}

#[tokio::test]
async fn every_update_kind_is_mapped_or_kept() {
    let setup = Setup::new(json!([[
        {"update": {"sessionUpdate": "plan", "entries": [
            {"content": "Read the code", "status": "completed", "priority": "high"},
            {"content": "Change it", "status": "pending", "priority": "medium"}]}},
        {"thought": "Thinking it over."},
        {"update": {"sessionUpdate": "current_mode_update", "currentModeId": "code"}},
        {"update": {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "init", "description": "x"}]}},
        {"update": {"sessionUpdate": "session_info_update", "title": "A title"}},
        {"update": {"sessionUpdate": "a_kind_from_the_future", "payload": [1, 2]}},
        {"update": {"sessionUpdate": "usage_update", "used": 1200, "size": 200000, "cost": {"amount": 0.042, "currency": "USD"}}},
        {"message": "All mapped."},
        {"usage": {"totalTokens": 30, "inputTokens": 20, "outputTokens": 10, "cachedReadTokens": 7}},
    ]]));
    let events = turn(&setup.driver(CommandPolicy::Workdir, false), setup.request("Go"), None).await;
    let thoughts: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::Thought { text } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(thoughts, ["Plan: [x] Read the code · [ ] Change it", "Thinking it over."]);
    let kept: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::Unknown { source, raw } if source == "acp" => {
                Some(raw["sessionUpdate"].as_str().unwrap().into())
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        kept,
        ["current_mode_update", "available_commands_update", "session_info_update", "a_kind_from_the_future"]
    );
    assert!(events.iter().any(|e| matches!(e, DriverEvent::TextDelta { text } if text == "All mapped.")));
    assert_eq!(texts(&events), ["All mapped."]);
    let usage = events
        .iter()
        .find_map(|e| match e {
            DriverEvent::Usage(u) => Some(u.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens, usage.cache_read_tokens), (20, 10, 7));
    assert_eq!(usage.cost_usd, Some(0.042));
    assert!(!ended(&events).0);
}

/// The operator's seat in a test: answers every ask with `answer` (or never), and keeps
/// what it was asked.
struct TestOperator {
    answer: Option<String>,
    never: bool,
    asked: Mutex<Vec<PermissionAsk>>,
}

impl TestOperator {
    fn new(answer: Option<&str>, never: bool) -> Arc<TestOperator> {
        Arc::new(TestOperator { answer: answer.map(String::from), never, asked: Mutex::new(Vec::new()) })
    }
}

impl Operator for TestOperator {
    fn ask(&self, ask: PermissionAsk) -> AskFuture {
        self.asked.lock().unwrap().push(ask);
        let (answer, never) = (self.answer.clone(), self.never);
        Box::pin(async move {
            if never {
                std::future::pending::<()>().await;
            }
            answer
        })
    }
}

#[tokio::test]
async fn permissions_are_answered_by_the_policy_or_the_operator() {
    let setup = Setup::new(json!([]));
    let work = path(&setup.work);
    let fetch = json!({"permission": {"title": "Fetch https://example.com", "kind": "fetch"}});
    let turns = json!([
        [
            {"permission": {"title": "Read the config", "kind": "read", "locations": [format!("{work}/a.toml")]}},
            {"permission": {"title": "Run make", "kind": "execute"}},
            fetch,
            {"permission": {"title": "Edit /etc/hosts", "kind": "edit", "locations": ["/etc/hosts"]}},
            {"terminal": {"command": "sh", "args": ["-c", "touch ran.txt"]}},
        ],
        [fetch],
    ]);
    std::fs::write(&setup.script, json!({"turns": turns}).to_string()).unwrap();
    let driver = setup.driver(CommandPolicy::None, false);
    let operator = TestOperator::new(Some("always"), false);
    let events = turn(&driver, setup.request("Check"), Some(operator.clone())).await;
    assert_eq!(
        texts(&events).concat(),
        "permission: allowpermission: rejectpermission: alwayspermission: always",
        "read allowed, a command refused under \"no commands\", the fetch and the edit outside asked"
    );
    assert_eq!(decisions(&events), ["allowed", "refused", "asked", "asked"]);
    let asked = operator.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2);
    assert_eq!((asked[0].title.as_str(), asked[0].kind), ("Fetch https://example.com", ToolKind::Fetch));
    assert_eq!(asked[0].options.iter().map(|o| o.id.as_str()).collect::<Vec<_>>(), ["allow", "always", "reject"]);
    assert!(asked[1].why.contains("outside"), "{:?}", asked[1].why);
    assert_eq!(asked[1].locations, ["/etc/hosts"]);
    assert!(!setup.work.join("ran.txt").exists(), "no commands under \"no commands\"");
    assert!(results_failed_with(&events, "no commands"), "{events:#?}");

    // With nobody to ask, what the policy cannot decide is refused.
    let events = turn(&driver, setup.request("Again"), None).await;
    assert_eq!(texts(&events).concat(), "permission: reject");
    assert_eq!(decisions(&events), ["asked"]);
}

#[tokio::test]
async fn stop_cancels_the_turn_within_the_grace() {
    let setup = Setup::new(json!([[
        {"message": "Waiting for you."},
        {"permission": {"title": "Fetch https://example.com", "kind": "fetch"}},
        {"waitForCancel": true},
    ]]));
    let driver = setup.driver(CommandPolicy::Workdir, false);
    let operator = TestOperator::new(None, true);
    let (events, mut received) = mpsc::unbounded_channel();
    let mut sink = TurnSink::new(events, Box::new(|_| {}));
    let stop = CancellationToken::new();
    sink.stop = stop.clone();
    sink.operator = Some(operator.clone());
    let running = tokio::spawn(driver.run(setup.request("Wait"), sink));
    let deadline = Instant::now() + Duration::from_secs(20);
    while operator.asked.lock().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "the permission never reached the operator");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let stopped = Instant::now();
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(3), running).await.expect("ended within the grace").unwrap().unwrap();
    assert!(stopped.elapsed() < Duration::from_secs(3));
    let mut all = Vec::new();
    while let Some(event) = received.recv().await {
        all.push(event);
    }
    let (is_error, stop_reason, _, _) = ended(&all);
    assert_eq!((is_error, stop_reason.as_deref()), (false, Some("cancelled")));
    assert_eq!(texts(&all).concat(), "Waiting for you.permission: cancelled", "the pending ask was answered cancelled");
    assert_eq!(setup.sent_method("session/cancel").len(), 1);
}

#[tokio::test]
async fn a_second_turn_continues_through_session_load() {
    let setup = Setup::new(json!([[{"message": "First answer."}], [{"message": "Second answer."}]]));
    let driver = setup.driver(CommandPolicy::Workdir, true);
    let first = turn(&driver, setup.request("One"), None).await;
    let id = session_id(&first);
    let mut request = setup.request("Two");
    request.resume_id = Some(id.clone());
    let second = turn(&driver, request, None).await;
    assert_eq!(session_id(&second), id);
    assert_eq!(texts(&second), ["Second answer."], "the replayed history is not this turn's: {second:#?}");
    assert!(!second.iter().any(|e| matches!(e, DriverEvent::TextDelta { text } if text.contains("First"))));
    let load = &setup.sent_method("session/load")[0]["params"];
    assert_eq!(load["sessionId"], json!(id));
    assert_eq!(load["cwd"], path(&setup.work));

    // A conversation the agent no longer has: the engine's words for a lost one.
    let mut request = setup.request("Three");
    request.resume_id = Some("sess-gone".into());
    let (is_error, _, _, error) = ended(&turn(&driver, request, None).await);
    assert!(is_error);
    assert!(kiln_engine::testing::turn::lost_resume(error.as_deref().unwrap()), "{error:?}");
    // And an agent that cannot load sessions at all.
    let mut request = setup.request("Four");
    request.resume_id = Some(id);
    let (_, _, _, error) = ended(&turn(&setup.driver(CommandPolicy::Workdir, false), request, None).await);
    assert!(kiln_engine::testing::turn::lost_resume(&error.unwrap()));
}

#[tokio::test]
async fn a_provider_error_ends_the_turn_as_an_error() {
    let setup = Setup::new(json!([[
        {"message": "Trying."},
        {"error": {"code": -32603, "message": "Internal error", "data": {"message": "the provider answered 529: overloaded"}}},
    ]]));
    let events = turn(&setup.driver(CommandPolicy::Workdir, false), setup.request("Go"), None).await;
    let (is_error, _, final_text, error) = ended(&events);
    assert!(is_error);
    assert_eq!(final_text, None);
    let error = error.unwrap();
    assert!(error.contains("Internal error") && error.contains("529: overloaded"), "{error}");
}

#[tokio::test]
async fn an_agent_that_dies_mid_turn_ends_it_with_its_stderr() {
    let setup = Setup::new(
        json!([[{"message": "Going."}, {"exit": {"code": 3, "stderr": "the agent crashed: out of cheese"}}]]),
    );
    let events = turn(&setup.driver(CommandPolicy::Workdir, false), setup.request("Go"), None).await;
    let (is_error, _, _, error) = ended(&events);
    assert!(is_error);
    let error = error.unwrap();
    assert!(error.contains("without finishing its turn") && error.contains("out of cheese"), "{error}");
    assert_eq!(texts(&events), ["Going."]);
}

/// Through the engine's own turn (`turn::begin` and `turn::run_to_end`): a conversation the agent no longer holds
/// is continued on a fresh session with the transcript replayed, and Stop ends the turn.
#[tokio::test]
async fn through_the_engine_a_lost_conversation_is_replayed_and_stop_ends_the_turn() {
    use crate::common::*;
    use kiln_engine::types::*;

    let tmp = tempfile::tempdir().unwrap();
    let (_shop, engine) = shop_without_setup(tmp.path()).await;
    let settings = UpdateSettingsArgs { planner_agent: Some(false), ..Default::default() };
    engine.update_settings(settings).await.unwrap();
    let s = create(&engine, "Add a wishlist to @shop/catalog").await;
    let setup = Setup::new(json!([[{"message": "Fresh answer."}], [{"message": "Waiting."}, {"waitForCancel": true}]]));
    let driver = Arc::new(setup.driver(CommandPolicy::Workdir, true));
    let ws = engine.workspace().unwrap();
    let view = engine.get_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    let role = ws.roles().unwrap().into_iter().find(|r| r.id == "backend-engineer").unwrap();
    let plan = |prompt: &str, resume_id: Option<String>| kiln_engine::testing::turn::TurnPlan {
        session: kiln_engine::testing::ids::SessionId::parse(&s.id).unwrap(),
        module: view.modules[0].clone(),
        role: role.clone(),
        driver: driver.clone(),
        model: None,
        prompt: prompt.into(),
        instructions: INSTRUCTIONS.into(),
        resume_id,
        chain_index: 0,
        review: false,
    };
    let settled = |engine: Arc<kiln_engine::Engine>, id: String| async move {
        let deadline = Instant::now() + Duration::from_secs(20);
        while engine.get_session(SessionIdArgs { session_id: id.clone() }).await.unwrap().running {
            assert!(Instant::now() < deadline, "the turn never ended");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };

    let events = engine.events().clone();
    let lost = plan("Go on", Some("sess-gone".into()));
    kiln_engine::testing::turn::start(ws.clone(), events.clone(), lost).await.unwrap();
    settled(engine.clone(), s.id.clone()).await;
    let entries = engine
        .get_transcript(GetTranscriptArgs { session_id: s.id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    assert!(entries.iter().any(|e| e.text.contains("no longer holds this session's conversation")), "{entries:#?}");
    assert!(entries.iter().any(|e| e.kind == EntryKind::Agent && e.text == "Fresh answer."), "{entries:#?}");
    assert_eq!(setup.sent_method("session/load")[0]["params"]["sessionId"], "sess-gone");
    let prompt = &setup.sent_method("session/prompt")[0]["params"]["prompt"][0]["text"];
    assert!(prompt.as_str().unwrap().contains("This continues an earlier conversation"), "{prompt}");

    kiln_engine::testing::turn::start(ws, events, plan("Wait", None)).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while setup.sent_method("session/prompt").len() < 2 {
        assert!(Instant::now() < deadline, "the second prompt never reached the agent");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let stopping = Instant::now();
    engine.stop_turn(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    settled(engine.clone(), s.id.clone()).await;
    assert!(stopping.elapsed() < Duration::from_secs(5), "{:?}", stopping.elapsed());
    // Stop asked the agent first (a polite driver is not killed at once).
    assert_eq!(setup.sent_method("session/cancel").len(), 1);
    let entries = engine
        .get_transcript(GetTranscriptArgs { session_id: s.id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    assert!(entries.iter().any(|e| e.kind == EntryKind::Agent && e.text == "Waiting."), "{entries:#?}");
}

/// An agent that stays after its answer (its output still open) does not hold the turn:
/// the turn ends with the answer and the process is killed.
#[tokio::test]
async fn an_agent_that_lingers_after_answering_does_not_hold_the_turn() {
    let setup = Setup::new(json!([[{"message": "Answered."}]]));
    let double = setup.driver(CommandPolicy::Workdir, false);
    // The shell keeps the agent's stdout open for a minute after the double exits.
    let line = format!("'{}' {}; sleep 60", path(&double.command.binary), double.command.args.join(" "));
    let command = AcpCommand { binary: "sh".into(), args: vec!["-c".into(), line], env: Vec::new() };
    let driver = AcpDriver::new("acp:double", command, CommandPolicy::Workdir);
    let started = Instant::now();
    let events = turn(&driver, setup.request("Go"), None).await;
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(ended(&events).2.as_deref(), Some("Answered."));
}
