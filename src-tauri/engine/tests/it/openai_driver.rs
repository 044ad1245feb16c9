//! The openai-compatible driver against the scripted model server: the tool loop, what
//! it sends back to the model, resuming, provider errors, and the working-copy
//! confinement of its tools.

use std::path::Path;
use std::time::{Duration, Instant};

use kiln_engine::testing::drivers::events::{DriverEvent, FileChangeKind, ToolKind, ToolStatus, Usage};
use kiln_engine::testing::drivers::openai::OpenAiDriver;
use kiln_engine::testing::drivers::{Driver, TurnRequest, TurnSink};
use kiln_model_server::{ModelServer, RecordedRequest, Step, OUTPUT_TOKENS};
use serde_json::{json, Value};
use tokio::sync::mpsc;

const INSTRUCTIONS: &str = "You are the builder. Own module `api`.";

fn driver(server: &ModelServer) -> OpenAiDriver {
    OpenAiDriver::new(server.openai_base_url(), Some("sk-test".into()), "test-model")
}

fn request(workdir: &Path, prompt: &str) -> TurnRequest {
    TurnRequest {
        workdir: workdir.to_path_buf(),
        // Beside the working copy, as `.kiln/sessions/<id>` holds `workspace`.
        session_dir: workdir.with_extension("session"),
        prompt: prompt.into(),
        instructions: INSTRUCTIONS.into(),
        resume_id: None,
        model: None,
        read_only: false,
        environment: Default::default(),
        mcp: Vec::new(),
    }
}

/// Runs one turn to its end and returns every event it reported.
async fn turn(driver: &OpenAiDriver, request: TurnRequest) -> Vec<DriverEvent> {
    let (events, mut received) = mpsc::unbounded_channel();
    driver.run(request, TurnSink::new(events, Box::new(|_| {}))).await.expect("the turn runs");
    let mut all = Vec::new();
    while let Ok(event) = received.try_recv() {
        all.push(event);
    }
    assert!(matches!(all.last(), Some(DriverEvent::TurnEnded { .. })), "a turn ends with TurnEnded: {all:#?}");
    all
}

fn resume_id(events: &[DriverEvent]) -> String {
    match &events[0] {
        DriverEvent::SessionStarted { resume_id, .. } => resume_id.clone(),
        other => panic!("a turn starts with SessionStarted, not {other:?}"),
    }
}

fn results(events: &[DriverEvent]) -> Vec<(String, ToolStatus, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::ToolResult { id, status, output } => Some((id.clone(), *status, output.clone())),
            _ => None,
        })
        .collect()
}

fn messages(request: &RecordedRequest) -> &Vec<Value> {
    request.body["messages"].as_array().expect("messages")
}

fn tool_names(request: &RecordedRequest) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_turn_writes_reads_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    let answer = "Wrote the note and read it back.\nHANDOFF: none - done";
    let server = ModelServer::start(vec![
        Step::tool("write_file", json!({"path": "notes/hello.txt", "content": "hello kiln\n"})),
        Step::tool("read_file", json!({"path": "notes/hello.txt"})),
        Step::text(answer),
    ])
    .await;
    let events = turn(&driver(&server), request(dir.path(), "Write a note.")).await;

    assert_eq!(std::fs::read_to_string(dir.path().join("notes/hello.txt")).unwrap(), "hello kiln\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let input_tokens: u64 = requests.iter().map(|r| (r.body.to_string().len() / 4) as u64).sum();
    let expected = vec![
        DriverEvent::SessionStarted { resume_id: resume_id(&events), model: Some("test-model".into()) },
        DriverEvent::ToolCall {
            id: "call_1".into(),
            kind: ToolKind::Edit,
            title: "write_file notes/hello.txt".into(),
            input: json!({"path": "notes/hello.txt", "content": "hello kiln\n"}),
        },
        DriverEvent::ToolResult {
            id: "call_1".into(),
            status: ToolStatus::Completed,
            output: "wrote 11 bytes to notes/hello.txt".into(),
        },
        DriverEvent::FileChange { path: "notes/hello.txt".into(), change: FileChangeKind::Add },
        DriverEvent::ToolCall {
            id: "call_2".into(),
            kind: ToolKind::Read,
            title: "read_file notes/hello.txt".into(),
            input: json!({"path": "notes/hello.txt"}),
        },
        DriverEvent::ToolResult { id: "call_2".into(), status: ToolStatus::Completed, output: "hello kiln".into() },
        DriverEvent::Text { text: answer.into() },
        DriverEvent::Usage(Usage {
            input_tokens,
            output_tokens: 3 * OUTPUT_TOKENS,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            cost_usd: None,
        }),
        DriverEvent::TurnEnded {
            is_error: false,
            stop_reason: Some("stop".into()),
            final_text: Some(answer.into()),
            error: None,
        },
    ];
    // The answer also streams in pieces, for the live view only; it is reported whole once.
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(deltas.len() > 1 && deltas.concat() == answer, "the answer streams in pieces: {deltas:?}");
    let events: Vec<DriverEvent> = events.into_iter().filter(|e| !matches!(e, DriverEvent::TextDelta { .. })).collect();
    assert_eq!(events, expected);

    // What went to the model: a streamed request with usage, the instructions as the
    // system message, the prompt last, and each tool result under its call's id.
    for request in &requests {
        assert_eq!(request.path, "/v1/chat/completions");
        assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
        assert_eq!(request.body["stream"], true);
        assert_eq!(request.body["stream_options"]["include_usage"], true);
        assert_eq!(request.body["model"], "test-model");
        assert_eq!(messages(request)[0], json!({"role": "system", "content": INSTRUCTIONS}));
        assert_eq!(messages(request)[1], json!({"role": "user", "content": "Write a note."}));
    }
    assert_eq!(messages(&requests[0]).len(), 2);
    assert_eq!(
        tool_names(&requests[0]),
        ["read_file", "write_file", "edit_file", "list_dir", "glob", "grep", "run_command"]
    );
    let second = messages(&requests[1]);
    assert_eq!(second.len(), 4);
    assert_eq!(second[2]["role"], "assistant");
    assert_eq!(second[2]["content"], Value::Null);
    let call = &second[2]["tool_calls"][0];
    assert_eq!(call["id"], "call_1");
    assert_eq!(call["function"]["name"], "write_file");
    let arguments: Value = serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"path": "notes/hello.txt", "content": "hello kiln\n"}));
    assert_eq!(
        second[3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "wrote 11 bytes to notes/hello.txt"})
    );
    let third = messages(&requests[2]);
    assert_eq!(third.len(), 6);
    assert_eq!(third[4]["tool_calls"][0]["id"], "call_2");
    assert_eq!(third[5], json!({"role": "tool", "tool_call_id": "call_2", "content": "hello kiln"}));
}

#[tokio::test]
async fn a_second_turn_resumes_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![Step::text("First answer."), Step::text("Second answer.")]).await;
    let driver = driver(&server);
    let first = turn(&driver, request(dir.path(), "First question.")).await;
    let id = resume_id(&first);

    // A clone shares the conversations, as the engine's copies of a driver do.
    let mut again = request(dir.path(), "Second question.");
    again.resume_id = Some(id.clone());
    again.model = Some("other-model".into());
    let second = turn(&driver.clone(), again).await;

    assert_eq!(resume_id(&second), id);
    assert!(!second.iter().any(|e| matches!(e, DriverEvent::Error { .. })));
    let requests = server.requests();
    assert_eq!(requests[1].body["model"], "other-model");
    assert_eq!(
        messages(&requests[1]),
        &vec![
            json!({"role": "system", "content": INSTRUCTIONS}),
            json!({"role": "user", "content": "First question."}),
            json!({"role": "assistant", "content": "First answer."}),
            json!({"role": "user", "content": "Second question."}),
        ]
    );
    assert!(
        matches!(second.last(), Some(DriverEvent::TurnEnded { is_error: false, final_text: Some(t), .. }) if t == "Second answer.")
    );
}

#[tokio::test]
async fn an_unknown_resume_id_fails_the_turn_as_a_cli_would() {
    let dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![Step::text("never asked")]).await;
    let mut lost = request(dir.path(), "Carry on.");
    lost.resume_id = Some("gone-1234".into());
    let events = turn(&driver(&server), lost).await;
    match events.as_slice() {
        [DriverEvent::TurnEnded { is_error: true, error: Some(message), .. }] => {
            assert!(message.contains("No conversation found with session ID: gone-1234"), "{message}");
        }
        other => panic!("expected only a failed TurnEnded, got {other:?}"),
    }
    assert!(server.requests().is_empty(), "nothing is sent for a conversation the driver does not hold");
}

#[tokio::test]
async fn a_provider_error_ends_the_turn_with_its_message() {
    let dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![Step::error(429, "Rate limit reached, slow down")]).await;
    let events = turn(&driver(&server), request(dir.path(), "Hello.")).await;

    assert_eq!(events.len(), 2, "{events:#?}");
    match &events[1] {
        DriverEvent::TurnEnded { is_error: true, error: Some(error), final_text: None, .. } => {
            assert_eq!(error, "Rate limit reached, slow down (HTTP 429)");
        }
        other => panic!("expected a failed TurnEnded, got {other:?}"),
    }
}

#[tokio::test]
async fn an_unreachable_endpoint_ends_the_turn_with_an_error() {
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on: bind one, then let it go.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let driver = OpenAiDriver::new(format!("http://127.0.0.1:{port}/v1"), None, "m");
    let events = turn(&driver, request(dir.path(), "Hello.")).await;
    assert!(
        matches!(events.last(), Some(DriverEvent::TurnEnded { is_error: true, error: Some(e), .. }) if e.contains("could not reach"))
    );
}

#[tokio::test]
async fn paths_outside_the_working_copy_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(work.join(".git")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(work.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(&outside, work.join("link")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), work.join("secret-link")).unwrap();
    std::os::unix::fs::symlink(outside.join("created-through-link"), work.join("dangling")).unwrap();
    std::os::unix::fs::symlink(".git", work.join("git-alias")).unwrap();

    let attempts = vec![
        Step::tool("write_file", json!({"path": "../x", "content": "escaped"})),
        Step::tool("read_file", json!({"path": "/etc/passwd"})),
        Step::tool("write_file", json!({"path": "link/evil.txt", "content": "escaped"})),
        Step::tool("read_file", json!({"path": "secret-link"})),
        Step::tool("write_file", json!({"path": "dangling", "content": "escaped"})),
        Step::tool("write_file", json!({"path": ".git/config", "content": "[core]\nhooksPath = /tmp\n"})),
        Step::tool("edit_file", json!({"path": "git-alias/config", "old_string": "[core]", "new_string": "[evil]"})),
        Step::tool("write_file", json!({"path": "sub/../../x", "content": "escaped"})),
        Step::tool("write_file", json!({"path": "bell\u{7}.txt", "content": "x"})),
        Step::tool("list_dir", json!({"path": "link"})),
        Step::tool("grep", json!({"pattern": "secret", "path": "link"})),
        Step::tool("write_file", json!({"path": ".KILN/state", "content": "x"})),
    ];
    let count = attempts.len();
    let mut script = attempts;
    script.push(Step::text("I could not get out."));
    let server = ModelServer::start(script).await;
    let events = turn(&driver(&server), request(&work, "Try to escape.")).await;

    let results = results(&events);
    assert_eq!(results.len(), count);
    for (id, status, output) in &results {
        assert_eq!(*status, ToolStatus::Failed, "{id}: {output}");
        assert!(output.starts_with("refused"), "{id}: {output}");
    }
    assert!(!tmp.path().join("x").exists());
    assert!(!outside.join("evil.txt").exists());
    assert!(!outside.join("created-through-link").exists());
    assert_eq!(std::fs::read_to_string(work.join(".git/config")).unwrap(), "[core]\n");
    assert!(!work.join(".KILN").exists());
    assert!(!events.iter().any(|e| matches!(e, DriverEvent::FileChange { .. })));
    // The model saw every refusal.
    let last = server.requests().pop().unwrap();
    let tool_messages = messages(&last).iter().filter(|m| m["role"] == "tool").count();
    assert_eq!(tool_messages, count);
    assert!(matches!(events.last(), Some(DriverEvent::TurnEnded { is_error: false, .. })));
}

#[tokio::test]
async fn the_tools_edit_list_glob_grep_and_run_commands() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::create_dir_all(work.join("target")).unwrap();
    std::fs::create_dir_all(work.join(".git")).unwrap();
    std::fs::write(work.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(work.join("src/main.rs"), "fn main() {\n    println!(\"hi\");\n}\n").unwrap();
    std::fs::write(work.join("src/lib.rs"), "pub fn hi() {}\npub fn hi() {}\n").unwrap();
    std::fs::write(work.join("target/build.rs"), "println!(\"generated\");\n").unwrap();

    let server = ModelServer::start(vec![
        Step::tool("list_dir", json!({"path": "."})),
        Step::tool("glob", json!({"pattern": "**/*.rs"})),
        Step::tool("grep", json!({"pattern": "println"})),
        Step::tool("edit_file", json!({"path": "src/main.rs", "old_string": "\"hi\"", "new_string": "\"bye\""})),
        Step::tool("edit_file", json!({"path": "src/lib.rs", "old_string": "pub fn hi() {}", "new_string": "x"})),
        Step::tool("edit_file", json!({"path": "src/main.rs", "old_string": "not there", "new_string": "x"})),
        Step::tool("run_command", json!({"command": "echo out; echo err >&2; exit 3"})),
        Step::tool("run_command", json!({"command": "pwd"})),
        Step::text("Done."),
    ])
    .await;
    let events = turn(&driver(&server), request(work, "Tidy up.")).await;
    let results = results(&events);
    let output = |n: usize| results[n].2.as_str();
    let status = |n: usize| results[n].1;

    assert_eq!(output(0), ".gitignore\nsrc/\ntarget/", "the listing hides .git");
    assert_eq!(output(1), "src/lib.rs\nsrc/main.rs", "glob skips ignored files");
    assert_eq!(output(2), "src/main.rs:2:     println!(\"hi\");");
    assert_eq!((status(3), output(3)), (ToolStatus::Completed, "edited src/main.rs"));
    assert_eq!(std::fs::read_to_string(work.join("src/main.rs")).unwrap(), "fn main() {\n    println!(\"bye\");\n}\n");
    assert_eq!(status(4), ToolStatus::Failed);
    assert!(output(4).contains("occurs 2 times"), "{}", output(4));
    assert_eq!(std::fs::read_to_string(work.join("src/lib.rs")).unwrap(), "pub fn hi() {}\npub fn hi() {}\n");
    assert_eq!(status(5), ToolStatus::Failed);
    assert!(output(5).contains("was not found"), "{}", output(5));
    assert_eq!(status(6), ToolStatus::Failed, "a non-zero exit is a failed result");
    assert!(
        output(6).starts_with("exit code 3\n") && output(6).contains("out") && output(6).contains("err"),
        "{}",
        output(6)
    );
    assert_eq!(status(7), ToolStatus::Completed);
    assert_eq!(output(7).trim_end(), format!("exit code 0\n{}", work.canonicalize().unwrap().display()));

    let changes: Vec<&DriverEvent> = events.iter().filter(|e| matches!(e, DriverEvent::FileChange { .. })).collect();
    assert_eq!(changes, [&DriverEvent::FileChange { path: "src/main.rs".into(), change: FileChangeKind::Update }]);
    let kinds: Vec<ToolKind> = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::ToolCall { kind, .. } => Some(*kind),
            _ => None,
        })
        .collect();
    use ToolKind::*;
    assert_eq!(kinds, [Read, Search, Search, Edit, Edit, Edit, Execute, Execute]);
}

#[tokio::test]
async fn a_command_that_runs_too_long_is_killed_with_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![
        Step::tool("run_command", json!({"command": "sleep 60 & echo $! > background.pid; sleep 60"})),
        Step::text("It timed out."),
    ])
    .await;
    let mut driver = driver(&server);
    driver.command_timeout = Duration::from_secs(1);
    let started = Instant::now();
    let events = turn(&driver, request(dir.path(), "Wait a minute.")).await;

    assert!(started.elapsed() < Duration::from_secs(20), "the turn waited for the command: {:?}", started.elapsed());
    let results = results(&events);
    assert_eq!(results[0].1, ToolStatus::Failed);
    assert!(results[0].2.starts_with("timed out after 1 s"), "{}", results[0].2);
    let pid = std::fs::read_to_string(dir.path().join("background.pid")).unwrap().trim().to_string();
    assert!(gone(&pid), "the background sleep {pid} outlived the timeout");
}

/// Whether process `pid` has ended. A killed process may linger as a zombie when
/// nothing reaps orphans (a container's init): that counts as ended.
fn gone(pid: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        let out = std::process::Command::new("ps").args(["-o", "stat=", "-p", pid]).output().unwrap();
        let state = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if state.is_empty() || state.starts_with('Z') {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[tokio::test]
async fn a_read_only_turn_offers_no_writing_tools() {
    let dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![
        Step::tool("write_file", json!({"path": "plan.md", "content": "sneaky"})),
        Step::tool("run_command", json!({"command": "touch touched"})),
        Step::text("Here is the plan."),
    ])
    .await;
    let mut planning = request(dir.path(), "Plan it.");
    planning.read_only = true;
    let events = turn(&driver(&server), planning).await;

    for request in server.requests() {
        assert_eq!(tool_names(&request), ["read_file", "list_dir", "glob", "grep"]);
    }
    let results = results(&events);
    assert_eq!(results.len(), 2);
    for (_, status, output) in &results {
        assert_eq!(*status, ToolStatus::Failed);
        assert!(output.contains("not available in a read-only turn"), "{output}");
    }
    assert!(!dir.path().join("plan.md").exists());
    assert!(!dir.path().join("touched").exists());
}

#[tokio::test]
async fn a_model_that_never_stops_calling_tools_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![Step::tool("list_dir", json!({"path": "."})); 3]).await;
    let mut driver = driver(&server);
    driver.max_steps = 2;
    let events = turn(&driver, request(dir.path(), "Loop.")).await;

    assert_eq!(server.requests().len(), 2);
    assert!(events
        .iter()
        .any(|e| matches!(e, DriverEvent::Usage(u) if u.output_tokens == 2 * OUTPUT_TOKENS && u.cost_usd.is_none())));
    match events.last() {
        Some(DriverEvent::TurnEnded { is_error: true, error: Some(error), .. }) => {
            assert!(error.contains("stopped after 2 model steps"), "{error}");
        }
        other => panic!("expected a failed TurnEnded, got {other:?}"),
    }
}

/// The test MCP server (`tests/fixtures/mcp/notes-server.mjs`), with a value as Settings
/// keep it, or asked to fail.
fn notes_server(name: &str, fail: bool) -> kiln_engine::testing::config::McpServer {
    let script = kiln_test_support::repo_root().join("tests/fixtures/mcp/notes-server.mjs");
    let mut args = vec![script.display().to_string()];
    if fail {
        args.push("--fail".into());
    }
    kiln_engine::testing::config::McpServer {
        name: name.into(),
        source: kiln_engine::types::McpSource::Settings,
        spec: kiln_engine::testing::config::McpServerConfig {
            command: Some("node".into()),
            args,
            env: [("NOTES_TOKEN".to_string(), "own-loop-7".to_string())].into(),
            ..Default::default()
        },
    }
}

#[tokio::test]
async fn kilns_own_loop_is_an_mcp_client_of_the_users_servers() {
    let dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![
        Step::tool("mcp__notes__note", json!({"text": "from the loop"})),
        Step::text("Noted.\nHANDOFF: none - done"),
    ])
    .await;
    let mut req = request(dir.path(), "Take a note.");
    req.mcp = vec![notes_server("notes", false), notes_server("broken", true)];

    let events = turn(&driver(&server), req).await;

    // Each server's start is a step of the turn: what it offers, or why it did not answer.
    let steps = results(&events);
    let started = steps.iter().find(|(id, ..)| id == "mcp-start-notes").expect("the start of notes is shown");
    assert_eq!((started.1, started.2.as_str()), (ToolStatus::Completed, "2 tool(s): note, hang"));
    let broken = steps.iter().find(|(id, ..)| id == "mcp-start-broken").expect("the start of broken is shown");
    assert_eq!(broken.1, ToolStatus::Failed);
    assert!(broken.2.contains("asked to fail"), "{}", broken.2);

    // The model is offered the tool by its MCP name, calls it, and reads its answer.
    let asked = server.requests();
    assert!(tool_names(&asked[0]).contains(&"mcp__notes__note".to_string()), "{:?}", tool_names(&asked[0]));
    assert!(tool_names(&asked[0]).iter().all(|n| !n.starts_with("mcp__broken")));
    let answer = messages(&asked[1]).iter().find(|m| m["role"] == "tool").expect("the tool's answer");
    assert_eq!(answer["content"], "noted: from the loop");
    // The server ran in the working copy, with the value Kiln keeps sealed.
    let notes = std::fs::read_to_string(dir.path().join("mcp-notes.txt")).unwrap();
    assert!(
        notes.contains("hello kiln token=own-loop-7") && notes.contains("from the loop token=own-loop-7"),
        "{notes}"
    );

    // A read-only turn (a review) is offered no server's tools and starts none.
    let server = ModelServer::start(vec![Step::text("Looked.\nHANDOFF: none - done")]).await;
    let mut req = request(dir.path(), "Look.");
    req.read_only = true;
    req.mcp = vec![notes_server("notes", false)];
    let events = turn(&driver(&server), req).await;
    assert!(results(&events).is_empty(), "{events:#?}");
    assert!(tool_names(&server.requests()[0]).iter().all(|n| !n.starts_with("mcp__")));
}

#[tokio::test]
async fn kilns_own_loop_calls_an_address_server_with_its_header() {
    let dir = tempfile::tempdir().unwrap();
    let (url, _server) = crate::mcp::http_notes_server(dir.path(), "loop-TOKEN-5").await;
    let server = ModelServer::start(vec![
        Step::tool("mcp__remote__note", json!({"text": "over http"})),
        Step::text("Noted.\nHANDOFF: none - done"),
    ])
    .await;
    let mut req = request(dir.path(), "Take a note.");
    req.mcp = vec![kiln_engine::testing::config::McpServer {
        name: "remote".into(),
        source: kiln_engine::types::McpSource::Settings,
        spec: kiln_engine::testing::config::McpServerConfig {
            url: Some(url),
            headers: [("Authorization".to_string(), "Bearer loop-TOKEN-5".to_string())].into(),
            ..Default::default()
        },
    }];

    let events = turn(&driver(&server), req).await;

    let steps = results(&events);
    assert!(
        steps.iter().any(|(id, status, _)| id == "mcp-start-remote" && *status == ToolStatus::Completed),
        "{steps:?}"
    );
    let answer =
        messages(&server.requests()[1]).iter().find(|m| m["role"] == "tool").cloned().expect("the tool's answer");
    assert_eq!(answer["content"], "noted: over http");
    let notes = std::fs::read_to_string(dir.path().join("mcp-notes.txt")).unwrap();
    assert!(notes.contains("over http token=loop-TOKEN-5 via=http"), "{notes}");
}

#[tokio::test]
async fn an_mcp_tool_that_never_answers_does_not_hold_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![
        Step::tool("mcp__notes__hang", json!({})),
        Step::text("It did not answer.\nHANDOFF: none - done"),
    ])
    .await;
    let mut driver = driver(&server);
    driver.command_timeout = Duration::from_secs(1);
    let mut req = request(dir.path(), "Wait for it.");
    req.mcp = vec![notes_server("notes", false)];

    let events = turn(&driver, req).await;

    let call = results(&events).into_iter().find(|(id, ..)| !id.starts_with("mcp-start-")).expect("the call's result");
    assert_eq!(call.1, ToolStatus::Failed);
    assert_eq!(call.2, "the tool did not answer within 1 seconds");
    assert_eq!(server.requests().len(), 2, "the model was told, and the turn went on");
}
