//! Contract tests for the agent drivers: the real Claude Code and Codex CLIs, at the
//! versions scripts/deps pins, run through Kiln's `Driver`s against the scripted model
//! server on 127.0.0.1. The parser tests read captured output; these prove what only a
//! live CLI can: that it accepts the command line Kiln builds, that a scripted tool call
//! really changes the session's working copy, that a resumed turn continues the same
//! conversation, that Kiln's instructions reach the model, that a provider error
//! ends the turn as an error carrying the provider's message, and that the command
//! policy and the OS confinement hold: a command in the working copy runs without
//! asking, one writing elsewhere is refused by the kernel, and with "no commands" the
//! shell tool is gone.
//!
//! A CLI run here must reach nothing but the scripted server, so every test is ignored by
//! default and, when asked to run, fails unless it is inside a network namespace whose
//! only interface is loopback. scripts/test builds them outside such a namespace and runs
//! them inside one (`unshare -n`), with `KILN_AGENT_CLI_DIR` naming the installed CLIs.

use crate::common;
use crate::common::contract::*;

/// Best-of-N with the real CLIs: two claude candidates and one codex race one brief.
mod group;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kiln_engine::testing::drivers::claude::ClaudeDriver;
use kiln_engine::testing::drivers::codex::CodexDriver;
use kiln_engine::testing::drivers::events::{DriverEvent, FileChangeKind, ToolKind, ToolStatus};
use kiln_engine::testing::drivers::Driver;
use kiln_engine::types::{CommandPolicy, McpSource};
use kiln_model_server::{ModelServer, Step};
use serde_json::json;
use tempfile::TempDir;

/// A model each CLI knows (prices it, offers it its full tool set).
const CLAUDE_MODEL: &str = "claude-sonnet-4-5";
const CODEX_MODEL: &str = "gpt-5.5";

/// The CLIs these tests run, as `node_modules/.bin` names in `KILN_AGENT_CLI_DIR`.
const CLIS: &[&str] = &["claude", "codex"];

// ---------------------------------------------------------------------------------------
// What every CLI must do, each agent in turn (`Agent` says how they differ)

#[tokio::test]
#[ignore = "runs the real agent CLIs in a loopback-only network namespace: scripts/test runs it"]
async fn each_cli_writes_a_file_in_the_module_and_reports_the_turn() {
    let clis = sandboxed_cli_dir(CLIS);
    for agent in AGENTS {
        let session = Session::new();
        let notes = session.module.join("notes.md");
        let server =
            ModelServer::start(vec![agent.write_notes(&session), Step::text(format!("Wrote the notes.\n{HANDOFF}"))])
                .await;
        let (driver, _home) = agent.driver(&clis, &server, Home::Writable);

        let events = run_turn(&*driver, session.request(agent.model(), "Write the cart notes.", None), &server).await;

        let why = || format!("{agent:?}: {}", explain(&events, &server));
        assert_eq!(std::fs::read_to_string(&notes).ok().as_deref(), Some(NOTES), "notes.md; {}", why());
        started(&events, &server);
        assert!(agent.reported_the_write(&events, &notes), "the call writing notes.md; {}", why());
        assert!(ended_well(&events, &server).contains(HANDOFF), "final text; {}", why());
        let usage = usage(&events);
        assert!(usage.input_tokens > 0 && usage.output_tokens > 0, "{agent:?}: tokens counted: {usage:?}");
        // Claude prices its turns; Codex reports no cost, and unknown is not free.
        assert_eq!(usage.cost_usd.is_some(), agent.prices_turns(), "{agent:?}: {usage:?}");

        // Every model request carries Kiln's instructions where the CLI puts its own (never
        // in the operator's words).
        let asked = model_requests(&server, agent.endpoint());
        assert_eq!(asked.len(), 2, "one request per script step; {}", why());
        for request in &asked {
            assert!(
                agent.carries_instructions(&request.body),
                "{agent:?}: the instructions misplaced: {}",
                request.body
            );
        }
    }
}

#[tokio::test]
#[ignore = "runs the real agent CLIs in a loopback-only network namespace: scripts/test runs it"]
async fn each_cli_resumes_the_same_conversation() {
    let clis = sandboxed_cli_dir(CLIS);
    for agent in AGENTS {
        let session = Session::new();
        let server = ModelServer::start(vec![
            Step::text(format!("First answer.\n{HANDOFF}")),
            Step::text(format!("Second answer.\n{HANDOFF}")),
        ])
        .await;
        // A home the CLI may not write but for its own state: the conversation still resumes.
        let (driver, _home) = agent.driver(&clis, &server, Home::Unwritable);

        let first = run_turn(&*driver, session.request(agent.model(), "First question.", None), &server).await;
        let id = started(&first, &server);
        ended_well(&first, &server);
        let second =
            run_turn(&*driver, session.request(agent.model(), "Second question.", Some(id.clone())), &server).await;
        assert_eq!(started(&second, &server), id, "{agent:?}: a resumed turn keeps the conversation's id");
        assert!(ended_well(&second, &server).contains("Second answer."), "{agent:?}: {}", explain(&second, &server));

        // Resuming means the model sees the earlier exchange, not only the same id.
        let asked = model_requests(&server, agent.endpoint());
        let history = asked.last().map(|r| agent.conversation(&r.body)).unwrap_or_default();
        assert!(history.contains("First question.") && history.contains("First answer."), "{agent:?}: {history}");

        // A conversation the CLI does not hold fails in words the engine recognises, so it
        // continues on a fresh one with the transcript replayed.
        let lost = session.request(agent.model(), "Third question.", Some(UNKNOWN_RESUME.into()));
        let lost = run_turn(&*driver, lost, &server).await;
        let error = ended_badly(&lost, &server);
        assert!(kiln_engine::testing::turn::lost_resume(&error), "{agent:?}: not a lost conversation: {error}");
    }
}

#[tokio::test]
#[ignore = "runs the real agent CLIs in a loopback-only network namespace: scripts/test runs it"]
async fn each_cli_ends_the_turn_with_the_providers_error() {
    let clis = sandboxed_cli_dir(CLIS);
    for agent in AGENTS {
        let session = Session::new();
        let refusals = agent.requests_on_a_refusal();
        let server = ModelServer::start(vec![Step::error(400, PROVIDER_ERROR); refusals]).await;
        let (driver, _home) = agent.driver(&clis, &server, Home::Writable);

        let events = run_turn(&*driver, session.request(agent.model(), "Anything.", None), &server).await;

        let error = ended_badly(&events, &server);
        assert!(error.contains(PROVIDER_ERROR), "{agent:?}: the error names the provider's message: {error}");
        let asked = model_requests(&server, agent.endpoint()).len();
        assert!(asked <= refusals, "{agent:?}: {asked} requests; {}", explain(&events, &server));
        if agent == Agent::Codex {
            assert_eq!(asked, 1, "Codex does not retry a 400; {}", explain(&events, &server));
        } else {
            assert!(asked < refusals, "Claude gave up by itself ({asked} requests); {}", explain(&events, &server));
        }
    }
}

/// The CLIs the tests above run, one after the other.
const AGENTS: [Agent; 2] = [Agent::Claude, Agent::Codex];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Agent {
    Claude,
    Codex,
}

/// Whether the CLI's home may be written (beyond its own agent state).
#[derive(Clone, Copy)]
enum Home {
    Writable,
    Unwritable,
}

impl Agent {
    /// A model the CLI knows (prices it, offers it its full tool set).
    fn model(self) -> &'static str {
        match self {
            Agent::Claude => CLAUDE_MODEL,
            Agent::Codex => CODEX_MODEL,
        }
    }

    /// The scripted server's endpoint the CLI asks.
    fn endpoint(self) -> &'static str {
        match self {
            Agent::Claude => "/v1/messages",
            Agent::Codex => "/v1/responses",
        }
    }

    /// The driver on the scripted server, with the home it is given (kept while it runs).
    fn driver(self, clis: &Path, server: &ModelServer, home: Home) -> (Box<dyn Driver>, TempDir) {
        match self {
            Agent::Claude => {
                let home = match home {
                    Home::Writable => TempDir::new().unwrap(),
                    Home::Unwritable => unwritable_home(),
                };
                (Box::new(claude(clis, server, home.path())), home)
            }
            // Codex's home is its own already: under the CLIs' directory, never the temp dir.
            Agent::Codex => {
                let codex = CodexHome::new(clis);
                (Box::new(codex.driver(clis, server)), codex.dir)
            }
        }
    }

    /// A tool call writing `NOTES` to the module's notes.md. Claude writes with its Write
    /// tool; `exec_command` is the shell tool Codex 0.171.0 offers gpt-5.5 (apply_patch is
    /// a freeform tool, not a function call).
    fn write_notes(self, session: &Session) -> Step {
        match self {
            Agent::Claude => {
                Step::tool("Write", json!({"file_path": session.module.join("notes.md"), "content": NOTES}))
            }
            Agent::Codex => {
                let command = format!("cat > modules/cart/notes.md <<'EOF'\n{NOTES}EOF");
                Step::tool("exec_command", json!({"cmd": command, "workdir": session.root}))
            }
        }
    }

    /// Whether `events` tell the write of `notes` as the CLI made it.
    fn reported_the_write(self, events: &[DriverEvent], notes: &Path) -> bool {
        match self {
            // An edit call on the file, and (from its `tool_use_result`, a shape only a live
            // run shows) the file reported added.
            Agent::Claude => {
                let edit = events.iter().any(|e| {
                    matches!(e, DriverEvent::ToolCall { kind: ToolKind::Edit, title, input, .. }
                        if title.starts_with("Write ") && input["file_path"] == json!(notes))
                });
                let added = DriverEvent::FileChange { path: notes.display().to_string(), change: FileChangeKind::Add };
                edit && events.contains(&added)
            }
            Agent::Codex => events.iter().any(
                |e| matches!(e, DriverEvent::ToolCall { kind: ToolKind::Execute, title, .. } if title.contains("notes.md")),
            ),
        }
    }

    fn prices_turns(self) -> bool {
        self == Agent::Claude
    }

    /// Whether a model request carries Kiln's instructions where the CLI puts its own:
    /// Claude appends them to the system prompt; Codex (0.171.0, `developer_instructions`)
    /// sends a developer message of their own.
    fn carries_instructions(self, body: &serde_json::Value) -> bool {
        match self {
            Agent::Claude => {
                body["system"].to_string().contains(INSTRUCTIONS)
                    && !body["messages"].to_string().contains(INSTRUCTIONS)
            }
            Agent::Codex => {
                let messages = body["input"].as_array().cloned().unwrap_or_default();
                let carried = |role: &str| {
                    messages.iter().any(|m| m["role"] == role && m["content"].to_string().contains(INSTRUCTIONS))
                };
                carried("developer") && !carried("user")
            }
        }
    }

    /// The conversation a model request carries, as text.
    fn conversation(self, body: &serde_json::Value) -> String {
        match self {
            Agent::Claude => body["messages"].to_string(),
            Agent::Codex => body["input"].to_string(),
        }
    }

    /// How many refusals the scripted provider gives. Claude Code answers a 400 (and a 422)
    /// from a custom endpoint by asking again with fewer beta features (2.1.332: five more
    /// requests, none reported on stdout), in case a gateway refused a beta; of the other
    /// 4xx, 403 is reported as "Failed to authenticate", and 404 and 413 lose the
    /// provider's message to Claude's own. So the provider refuses every request, as one
    /// refusing the request itself would. Codex 0.171.0 takes a 400 as final (no retry).
    fn requests_on_a_refusal(self) -> usize {
        match self {
            Agent::Claude => 10,
            Agent::Codex => 1,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Claude Code

/// A resume id no CLI has ever seen.
const UNKNOWN_RESUME: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

/// Issue 15: with `--include-partial-messages` the answer streams as `TextDelta`s before
/// the whole `Text`, which is still told once (and alone stored).
#[tokio::test]
#[ignore = "runs the real agent CLIs in a loopback-only network namespace: scripts/test runs it"]
async fn claude_streams_the_answer_in_pieces_before_the_whole_text() {
    let clis = sandboxed_cli_dir(CLIS);
    let session = Session::new();
    let answer = format!("The cart totals are computed in cents, so rounding never drifts.\n{HANDOFF}");
    let server = ModelServer::start(vec![Step::text(answer.clone())]).await;
    let home = TempDir::new().unwrap();
    let driver = claude(&clis, &server, home.path());

    let events = run_turn(&driver, session.request(CLAUDE_MODEL, "How are totals computed?", None), &server).await;

    ended_well(&events, &server);
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| if let DriverEvent::TextDelta { text } = e { Some(text.as_str()) } else { None })
        .collect();
    assert!(deltas.len() > 1, "the answer streams in several pieces; {}", explain(&events, &server));
    assert_eq!(deltas.concat(), answer, "{}", explain(&events, &server));
    let whole = events.iter().position(|e| matches!(e, DriverEvent::Text { text } if *text == answer));
    let last_delta = events.iter().rposition(|e| matches!(e, DriverEvent::TextDelta { .. }));
    assert!(
        matches!((last_delta, whole), (Some(d), Some(w)) if d < w),
        "the pieces come before the whole text; {}",
        explain(&events, &server)
    );
    assert!(
        !events.iter().any(|e| matches!(e, DriverEvent::Unknown { raw, .. } if raw["type"] == "stream_event")),
        "{}",
        explain(&events, &server)
    );
}

/// Issue 15: an overloaded provider makes Claude Code retry by itself; each retry is a
/// `Retry` with its attempt, the maximum and the HTTP status, and the turn goes on.
#[tokio::test]
#[ignore = "runs the real agent CLIs in a loopback-only network namespace: scripts/test runs it"]
async fn claude_reports_each_retry_with_its_attempt_and_status() {
    let clis = sandboxed_cli_dir(CLIS);
    let session = Session::new();
    let overloaded = || {
        Step::Error(kiln_model_server::ScriptedError {
            status: 529,
            message: "Overloaded".into(),
            kind: None,
            code: None,
            retry_after: Some(0),
        })
    };
    let server = ModelServer::start(vec![overloaded(), overloaded(), Step::text(format!("Done.\n{HANDOFF}"))]).await;
    let home = TempDir::new().unwrap();
    let driver = claude(&clis, &server, home.path());

    let events = run_turn(&driver, session.request(CLAUDE_MODEL, "Anything.", None), &server).await;

    let retries: Vec<(u32, Option<u32>, Option<u16>)> = events
        .iter()
        .filter_map(|e| {
            if let DriverEvent::Retry { attempt, max_attempts, http_status, .. } = e {
                Some((*attempt, *max_attempts, *http_status))
            } else {
                None
            }
        })
        .collect();
    eprintln!("retries: {retries:?}");
    assert_eq!(retries.iter().map(|r| r.0).collect::<Vec<_>>(), vec![1, 2], "{}", explain(&events, &server));
    assert!(retries.iter().all(|r| r.1.is_some_and(|m| m >= 2) && r.2 == Some(529)), "{retries:?}");
    assert!(ended_well(&events, &server).contains("Done."));
}

/// Issue 15: a provider refusing the key during planning. Claude Code retries a 401 by
/// itself (2.1.332: ten attempts with backoff, about two minutes), reporting each as an
/// `api_retry`; the planner must not wait for that: within 2 s of starting, the live line
/// says `auth` and one entry says planning stopped, and the agent is gone.
#[tokio::test]
#[ignore = "runs the real agent CLIs in a loopback-only network namespace: scripts/test runs it"]
async fn claude_refusing_the_key_ends_planning_within_two_seconds() {
    use kiln_engine::types::*;
    let clis = sandboxed_cli_dir(CLIS);
    let tmp = TempDir::new().unwrap();
    let shop = common::shop_copy(tmp.path());
    let toml = shop.join("kiln.toml");
    let text = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("setup = \"npm ci --offline --no-audit --no-fund\"", "setup = \"\"");
    std::fs::write(&toml, text).unwrap();
    let engine = common::engine(&tmp.path().join("config"));
    common::open(&engine, &shop).await;
    engine.update_settings(UpdateSettingsArgs { planner_agent: Some(false), ..Default::default() }).await.unwrap();
    let s = common::create(&engine, "Add a wishlist to @shop/catalog").await;
    let server = ModelServer::start(vec![Step::error(401, "invalid x-api-key"); 20]).await;
    let home = TempDir::new().unwrap();
    let driver = claude(&clis, &server, home.path());
    let mut events = engine.subscribe(None).receiver;

    let started = Instant::now();
    let id = kiln_engine::testing::ids::SessionId::parse(&s.id).unwrap();
    kiln_engine::testing::planner_agent::start(
        engine.workspace().unwrap(),
        engine.events().clone(),
        id,
        Arc::new(driver),
        "Add a wishlist to @shop/catalog".into(),
        false,
    );
    let mut auth = None;
    while started.elapsed() < Duration::from_secs(2) && auth.is_none() {
        if let Ok(Ok(event)) = tokio::time::timeout(Duration::from_millis(50), events.recv()).await {
            if let EventBody::Live { live } = event.body {
                auth = live.status.filter(|s| s.reason == "auth");
            }
        }
    }
    let auth = auth.unwrap_or_else(|| {
        panic!("no auth status within 2 s; requests: {:?}", server.requests().iter().map(summary).collect::<Vec<_>>())
    });
    assert_eq!(auth.http_status, Some(401), "{auth:?}");
    loop {
        let entries = engine
            .get_transcript(GetTranscriptArgs { session_id: s.id.clone(), after: None, before: None, last: None })
            .await
            .unwrap();
        if let Some(entry) = entries.iter().find(|e| e.text.starts_with("Planning stopped")) {
            assert!(entry.text.contains("refused the credentials") && entry.text.contains("401"), "{}", entry.text);
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(2), "no entry within 2 s: {entries:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!("planning stopped after {:?}", started.elapsed());
    // The agent was stopped, not left retrying: no more requests reach the provider.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let asked = model_requests(&server, "/v1/messages").len();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(model_requests(&server, "/v1/messages").len(), asked, "the agent kept retrying after planning stopped");
    assert_eq!(
        engine.get_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap().state,
        SessionState::Editing
    );
}

/// The Claude driver pointed at the scripted server, with a home of its own so nothing
/// from (or for) the operator's `~/.claude` is read or written.
fn claude(clis: &Path, server: &ModelServer, home: &Path) -> ClaudeDriver {
    ClaudeDriver {
        binary: Some(clis.join("node_modules/.bin/claude")),
        base_url: Some(server.base_url()),
        api_key: Some("test-key".into()),
        env: vec![("HOME".into(), home.display().to_string())],
        commands: CommandPolicy::Workdir,
    }
}

// ---------------------------------------------------------------------------------------
// Commands: the policy and the confinement

/// A home outside every path a turn may write (the system temp dir is writable to
/// commands, so not there): only its agent state is writable.
fn unwritable_home() -> TempDir {
    common::unwritable_temp("home-")
}

/// The result of the one tool call of a turn.
fn tool_result(events: &[DriverEvent], server: &ModelServer) -> (ToolStatus, String) {
    let results: Vec<(ToolStatus, String)> = events
        .iter()
        .filter_map(|e| {
            if let DriverEvent::ToolResult { status, output, .. } = e {
                Some((*status, output.clone()))
            } else {
                None
            }
        })
        .collect();
    assert_eq!(results.len(), 1, "one tool result; {}", explain(events, server));
    results[0].clone()
}

#[tokio::test]
#[ignore = "runs the real agent CLIs in a loopback-only network namespace: scripts/test runs it"]
async fn claude_runs_a_command_in_the_working_copy_without_asking() {
    let clis = sandboxed_cli_dir(CLIS);
    let session = Session::new();
    let command = "sh -c 'echo ok > made-by-agent.txt && cat made-by-agent.txt'";
    let server = ModelServer::start(vec![
        Step::tool("Bash", json!({"command": command, "description": "Make a file"})),
        Step::text(format!("Made it.\n{HANDOFF}")),
    ])
    .await;
    let home = unwritable_home();
    let driver = claude(&clis, &server, home.path());

    let events = run_turn(&driver, session.request(CLAUDE_MODEL, "Make the file.", None), &server).await;

    let (status, output) = tool_result(&events, &server);
    assert!(!output.contains("requires approval"), "Bash ran without asking: {output}");
    assert_eq!((status, output.trim()), (ToolStatus::Completed, "ok"), "{}", explain(&events, &server));
    assert_eq!(std::fs::read_to_string(session.root.join("made-by-agent.txt")).ok().as_deref(), Some("ok\n"));
    assert!(
        !events.iter().any(|e| matches!(e, DriverEvent::PermissionRequest { .. })),
        "nothing refused; {}",
        explain(&events, &server)
    );
    ended_well(&events, &server);
    // Claude keeps its state in the (otherwise unwritable) home, so the session can resume.
    assert!(home.path().join(".claude/projects").is_dir(), "Claude's state in ~/.claude");
}

#[tokio::test]
#[ignore = "runs the real agent CLIs in a loopback-only network namespace: scripts/test runs it"]
async fn claude_commands_cannot_write_outside_the_working_copy() {
    let clis = sandboxed_cli_dir(CLIS);
    let session = Session::new();
    let server = ModelServer::start(vec![
        Step::tool("Bash", json!({"command": "echo x > \"$HOME/outside.txt\"", "description": "Write outside"})),
        Step::text(format!("Tried.\n{HANDOFF}")),
    ])
    .await;
    let home = unwritable_home();
    let driver = claude(&clis, &server, home.path());

    let events = run_turn(&driver, session.request(CLAUDE_MODEL, "Write outside.", None), &server).await;

    let (_, output) = tool_result(&events, &server);
    assert!(output.contains("Permission denied"), "the kernel refused the write: {}", explain(&events, &server));
    assert!(!home.path().join("outside.txt").exists(), "nothing written outside the working copy");
    ended_well(&events, &server);
}

/// Claude's own configuration is not the agent's to change: a hook or an instruction there
/// would run, or speak, the next time the user starts `claude` by hand, outside Kiln. Claude
/// guards those files itself; a script in the working copy goes round that guard, and the
/// kernel refuses it. Its conversations it keeps, to resume them.
#[tokio::test]
#[ignore = "runs the real agent CLIs in a loopback-only network namespace: scripts/test runs it"]
async fn claude_commands_cannot_change_claudes_own_configuration() {
    let clis = sandboxed_cli_dir(CLIS);
    let session = Session::new();
    let script =
        "printf '%s\\n' 'echo {} > \"$HOME/.claude/settings.json\"' 'echo y > \"$HOME/.claude/CLAUDE.md\"' > hook.sh";
    let server = ModelServer::start(vec![
        Step::tool("Bash", json!({"command": script, "description": "Write a script"})),
        Step::tool("Bash", json!({"command": "sh hook.sh", "description": "Run it"})),
        Step::text(format!("Tried.\n{HANDOFF}")),
    ])
    .await;
    let home = unwritable_home();
    let driver = claude(&clis, &server, home.path());

    let events = run_turn(&driver, session.request(CLAUDE_MODEL, "Configure yourself.", None), &server).await;

    let outputs: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::ToolResult { output, .. } => Some(output.as_str()),
            _ => None,
        })
        .collect();
    assert!(outputs.last().is_some_and(|o| o.contains("Permission denied")), "{}", explain(&events, &server));
    for config in [".claude/settings.json", ".claude/CLAUDE.md"] {
        assert!(!home.path().join(config).exists(), "{config} written: {}", explain(&events, &server));
    }
    assert!(home.path().join(".claude/projects").is_dir(), "Claude's conversations in ~/.claude/projects");
    ended_well(&events, &server);
}

#[tokio::test]
#[ignore = "runs the real agent CLIs in a loopback-only network namespace: scripts/test runs it"]
async fn claude_with_no_commands_has_no_shell() {
    let clis = sandboxed_cli_dir(CLIS);
    let session = Session::new();
    let server = ModelServer::start(vec![
        Step::tool("Bash", json!({"command": "echo ran > ran.txt", "description": "Run"})),
        Step::text(format!("Could not.\n{HANDOFF}")),
    ])
    .await;
    let home = TempDir::new().unwrap();
    let driver = ClaudeDriver { commands: CommandPolicy::None, ..claude(&clis, &server, home.path()) };

    let events = run_turn(&driver, session.request(CLAUDE_MODEL, "Run it.", None), &server).await;

    let (status, output) = tool_result(&events, &server);
    assert_eq!(status, ToolStatus::Failed, "{}", explain(&events, &server));
    assert!(output.starts_with("Refused by Kiln's command policy \"no commands\""), "the decision shown: {output}");
    assert!(!session.root.join("ran.txt").exists(), "the command did not run");
    // The model is not even offered the shell tool.
    let asked = model_requests(&server, "/v1/messages");
    let tools: Vec<String> = asked[0].body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect();
    assert!(tools.contains(&"Write".to_string()) && !tools.contains(&"Bash".to_string()), "tools: {tools:?}");
    ended_well(&events, &server);
}

#[tokio::test]
#[ignore = "runs the real agent CLIs in a loopback-only network namespace: scripts/test runs it"]
async fn codex_commands_cannot_write_outside_the_working_copy() {
    let clis = sandboxed_cli_dir(CLIS);
    let session = Session::new();
    let outside = common::unwritable_temp("outside-");
    let target = outside.path().join("outside.txt");
    let command = format!("echo x > '{}'; echo ok > made-by-agent.txt && cat made-by-agent.txt", target.display());
    let server = ModelServer::start(vec![
        Step::tool("exec_command", json!({"cmd": command, "workdir": session.root})),
        Step::text(format!("Tried.\n{HANDOFF}")),
    ])
    .await;
    let codex = CodexHome::new(&clis);
    let driver = codex.driver(&clis, &server);

    let events = run_turn(&driver, session.request(CODEX_MODEL, "Write inside and out.", None), &server).await;

    let (_, output) = tool_result(&events, &server);
    assert!(
        output.contains("Permission denied") && output.contains("ok"),
        "refused outside, done inside: {}",
        explain(&events, &server)
    );
    assert!(!target.exists(), "nothing written outside the working copy");
    assert_eq!(std::fs::read_to_string(session.root.join("made-by-agent.txt")).ok().as_deref(), Some("ok\n"));
    ended_well(&events, &server);
}

/// Codex's home stays writable whole (it writes databases and locks all over it), so a
/// command can leave a `notify` program in its `config.toml`, which would run the next time
/// the user starts `codex` by hand. The turn's guard puts the file back, and says so; a turn
/// that leaves it alone (Codex's own writes included) is said nothing about.
#[tokio::test]
#[ignore = "runs the real agent CLIs in a loopback-only network namespace: scripts/test runs it"]
async fn codex_changes_to_its_own_configuration_are_put_back() {
    use kiln_engine::testing::drivers::Driver as _;
    let clis = sandboxed_cli_dir(CLIS);
    let session = Session::new();
    let codex = CodexHome::new(&clis);
    let config = codex.dir.path().join("config.toml");
    std::fs::write(&config, "# the user's own\n").unwrap();
    let hook = format!("echo 'notify = [\"touch\", \"/tmp/pwned\"]' >> '{}' && echo hooked", config.display());
    let server = ModelServer::start(vec![
        Step::text(format!("Nothing to do.\n{HANDOFF}")),
        Step::tool("exec_command", json!({"cmd": hook, "workdir": session.root})),
        Step::text(format!("Hooked.\n{HANDOFF}")),
    ])
    .await;
    let driver = codex.driver(&clis, &server);

    // A turn that touches nothing of Codex's configuration: nothing to say.
    let guard = driver.guard_config();
    let quiet = run_turn(&driver, session.request(CODEX_MODEL, "Nothing.", None), &server).await;
    ended_well(&quiet, &server);
    assert_eq!(guard.put_back(), None, "Codex's own writes are not the agent's: {}", explain(&quiet, &server));

    let guard = driver.guard_config();
    let events = run_turn(&driver, session.request(CODEX_MODEL, "Hook yourself.", None), &server).await;
    let (_, output) = tool_result(&events, &server);
    assert!(output.contains("hooked"), "the write went through: {}", explain(&events, &server));
    assert!(std::fs::read_to_string(&config).unwrap().contains("notify"));
    let note = guard.put_back().expect("the change is said");
    assert!(note.contains("config.toml`") && note.contains("put it back"), "{note}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "# the user's own\n");
}

#[tokio::test]
#[ignore = "runs the real agent CLIs in a loopback-only network namespace: scripts/test runs it"]
async fn codex_with_no_commands_has_no_shell() {
    let clis = sandboxed_cli_dir(CLIS);
    let session = Session::new();
    let server = ModelServer::start(vec![Step::text(format!("Nothing to run.\n{HANDOFF}"))]).await;
    let codex = CodexHome::new(&clis);
    let driver = CodexDriver { commands: CommandPolicy::None, ..codex.driver(&clis, &server) };

    let events = run_turn(&driver, session.request(CODEX_MODEL, "Run it.", None), &server).await;

    ended_well(&events, &server);
    let asked = model_requests(&server, "/v1/responses");
    let tools: Vec<String> = asked[0].body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().or(t["type"].as_str()).map(String::from))
        .collect();
    assert!(
        tools.contains(&"apply_patch".to_string()) && !tools.contains(&"exec_command".to_string()),
        "tools: {tools:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Codex

/// A fresh `CODEX_HOME` (and `HOME`) for one test, removed when dropped. Not under the
/// temp dir: Codex refuses to put its helper binaries there.
struct CodexHome {
    dir: TempDir,
}

impl CodexHome {
    fn new(clis: &Path) -> Self {
        let homes = clis.join("homes");
        std::fs::create_dir_all(&homes).unwrap();
        CodexHome { dir: tempfile::Builder::new().prefix("codex-").tempdir_in(homes).unwrap() }
    }

    /// The Codex driver with the scripted server as its model provider and everything
    /// that would reach elsewhere (analytics, metrics, plugins, apps) off.
    fn driver(&self, clis: &Path, server: &ModelServer) -> CodexDriver {
        let toml = |s: &str| toml::Value::String(s.into()).to_string();
        let config = [
            ("model_provider", toml("kiln")),
            ("model_providers.kiln.name", toml("kiln")),
            ("model_providers.kiln.base_url", toml(&server.openai_base_url())),
            ("model_providers.kiln.wire_api", toml("responses")),
            ("model_providers.kiln.env_key", toml("SCRIPTED_MODEL_KEY")),
            ("analytics.enabled", "false".into()),
            ("otel.metrics_exporter", toml("none")),
            ("features.plugins", "false".into()),
            ("features.remote_plugin", "false".into()),
            ("features.apps", "false".into()),
        ];
        let home = self.dir.path().display().to_string();
        CodexDriver {
            binary: Some(clis.join("node_modules/.bin/codex")),
            config: config.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            api_key: None,
            env: vec![
                ("CODEX_HOME".into(), home.clone()),
                ("HOME".into(), home),
                ("SCRIPTED_MODEL_KEY".into(), "test-key".into()),
            ],
            commands: CommandPolicy::Workdir,
        }
    }
}

/// The MCP server every agent is given (`tests/fixtures/mcp/notes-server.mjs`), with a value
/// Kiln keeps sealed, as a turn gets it from Settings.
fn notes_server() -> kiln_engine::testing::config::McpServer {
    let script = kiln_test_support::repo_root().join("tests/fixtures/mcp/notes-server.mjs");
    kiln_engine::testing::config::McpServer {
        name: "notes".into(),
        source: McpSource::Settings,
        spec: kiln_engine::testing::config::McpServerConfig {
            command: Some("node".into()),
            args: vec![script.display().to_string()],
            env: [("NOTES_TOKEN".to_string(), "sealed-MCP-7".to_string())].into(),
            ..Default::default()
        },
    }
}

#[tokio::test]
#[ignore = "runs the real agent CLIs in a loopback-only network namespace: scripts/test runs it"]
async fn each_cli_starts_the_users_mcp_server_and_claude_calls_its_tool() {
    let clis = sandboxed_cli_dir(CLIS);
    for agent in AGENTS {
        let session = Session::new();
        // Claude Code offers the server's tools at once; Codex 0.171.0 keeps MCP tools behind
        // its tool search, so with Codex the proof is that it started the server Kiln declared.
        let steps = match agent {
            Agent::Claude => vec![
                Step::tool("mcp__notes__note", json!({"text": "from the model"})),
                Step::text(format!("Noted.\n{HANDOFF}")),
            ],
            Agent::Codex => vec![Step::text(format!("Nothing to note.\n{HANDOFF}"))],
        };
        let server = ModelServer::start(steps).await;
        let (driver, _home) = agent.driver(&clis, &server, Home::Writable);
        let mut request = session.request(agent.model(), "Take a note for the team.", None);
        request.mcp = vec![notes_server()];

        let events = run_turn(&*driver, request, &server).await;

        let why = || format!("{agent:?}: {}", explain(&events, &server));
        ended_well(&events, &server);
        let notes = std::fs::read_to_string(session.root.join("mcp-notes.txt")).unwrap_or_default();
        let client = match agent {
            Agent::Claude => "claude-code",
            Agent::Codex => "codex-mcp-client",
        };
        assert!(notes.contains(&format!("hello {client} token=sealed-MCP-7")), "{notes}; {}", why());
        if agent == Agent::Claude {
            assert!(notes.contains("from the model token=sealed-MCP-7"), "{notes}; {}", why());
            // The server Kiln gave is a step of the turn, with what it offers.
            let start = events.iter().find_map(|e| match e {
                DriverEvent::ToolResult { id, status, output } if id == "mcp-start-notes" => {
                    Some((*status, output.clone()))
                }
                _ => None,
            });
            assert_eq!(start, Some((ToolStatus::Completed, "2 tool(s): hang, note".to_string())), "{}", why());
            let called =
                events.iter().any(|e| matches!(e, DriverEvent::ToolCall { title, .. } if title.contains("note")));
            assert!(called, "the call is in the turn's events; {}", why());
            let answered = model_requests(&server, agent.endpoint());
            assert!(answered.last().is_some_and(|r| r.body.to_string().contains("noted: from the model")), "{}", why());
        }
    }
}
