//! Contract tests for the ACP driver against two real ACP agents, at the versions
//! scripts/deps pins: claude-agent-acp (Claude Code through the Agent Client Protocol,
//! pointed at the scripted model server's Anthropic endpoint with `ANTHROPIC_BASE_URL`)
//! and OpenCode's `opencode acp` (pointed at its OpenAI-compatible endpoint by an
//! `opencode.json` in a home of its own). Each runs through Kiln's `AcpDriver` as a turn
//! would, and proves what only a live agent can: a turn that writes a file and runs a
//! command in the working copy, a permission request answered by the command policy, a
//! Stop that ends the turn, a second turn that continues the same conversation, and a
//! provider error that ends the turn as an error carrying the provider's message.
//!
//! What the agents really do, as recorded with these versions: neither writes through
//! Kiln's `fs/write_text_file` nor runs commands through `terminal/*` — both use their own
//! tools in the working copy and report them as tool calls (claude-agent-acp 0.101.0 never
//! calls the client's fs methods; OpenCode 1.18.33 neither). So the tests assert the file
//! on disk and the command's effect, not the callback. claude-agent-acp asks
//! `session/request_permission` before each edit and command (its "default" mode);
//! OpenCode asks for commands when its config says `"bash": "ask"`, as the one here does.
//! Both ask the model for a session title beside the first request, and Claude Code
//! probes the model Kiln sets; the scripted server answers those beside the script
//! (`Aside`), since which arrives first is a race.
//!
//! As in `contract_cli`, every test is ignored by default and fails unless it runs in a
//! loopback-only network namespace (scripts/test's contract stage).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::contract::*;
use kiln_engine::testing::drivers::acp::{AcpCommand, AcpDriver};
use kiln_engine::testing::drivers::acp_presets::{preset_env, state_dirs, PRESETS};
use kiln_engine::testing::drivers::events::{DriverEvent, ToolKind};
use kiln_engine::types::CommandPolicy;
use kiln_model_server::{Aside, ModelServer, Step};
use serde_json::json;
use tempfile::TempDir;

/// The agents these tests run, as `node_modules/.bin` names in `KILN_AGENT_CLI_DIR`.
const AGENTS: &[&str] = &["claude-agent-acp", "opencode"];
const CLAUDE_MODEL: &str = "claude-sonnet-4-5";
/// How long an agent may take to end its turn after Stop.
const STOP_GRACE: Duration = Duration::from_secs(30);
/// A command that runs until it is stopped, and leaves `late.txt` if it ever finishes.
const LONG_COMMAND: &str = "timeout 90 tail -f /dev/null; echo late > late.txt";

/// The requests each agent sends beside its turn: session titles, and the probe of a
/// model Kiln picks.
fn asides() -> Vec<Aside> {
    vec![
        // claude-agent-acp 0.101.0 (`generate_session_title`).
        Aside::new("You are naming a coding session", Step::text("Cart notes")),
        // Claude Code checks a model set through `session/set_config_option` with a
        // one-token "Hi", not streamed.
        Aside::new("\"max_tokens\":1,", Step::text("Hi")),
        // OpenCode 1.18.33's title agent.
        Aside::new("generate a title for the conversation", Step::text("Cart notes")),
    ]
}

// ---------------------------------------------------------------------------------------
// The two agents

/// claude-agent-acp with the scripted server as its Anthropic endpoint, in a home of its
/// own (its sessions live there, so a later turn in the same home can load them).
fn claude_agent(clis: &Path, server: &ModelServer, home: &Path, commands: CommandPolicy) -> AcpDriver {
    let preset = PRESETS.iter().find(|p| p.id == "acp:claude").unwrap();
    let mut env = preset_env(preset);
    env.extend(
        [
            ("HOME", home.display().to_string()),
            ("ANTHROPIC_BASE_URL", server.base_url()),
            ("ANTHROPIC_API_KEY", "test-key".into()),
            ("ANTHROPIC_MODEL", CLAUDE_MODEL.into()),
        ]
        .map(|(k, v)| (k.to_string(), v)),
    );
    let state = state_dirs(preset, &env);
    let command = AcpCommand { binary: clis.join("node_modules/.bin/claude-agent-acp"), args: Vec::new(), env };
    AcpDriver::new("acp:claude", command, commands).with_state_dirs(state)
}

/// OpenCode with the scripted server as an OpenAI-compatible provider (the bundled
/// `@ai-sdk/openai-compatible`, so nothing is downloaded), in a home of its own with its
/// update check, sharing, models.dev fetch and LSP downloads off.
fn opencode_agent(clis: &Path, server: &ModelServer, home: &Path, commands: CommandPolicy) -> AcpDriver {
    let config = home.join(".config/opencode");
    std::fs::create_dir_all(&config).unwrap();
    let settings = json!({
        "$schema": "https://opencode.ai/config.json",
        "provider": {"kiln": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Kiln scripted model",
            "options": {"baseURL": server.openai_base_url(), "apiKey": "test-key"},
            "models": {"scripted": {"name": "Scripted", "tool_call": true}},
        }},
        "model": "kiln/scripted",
        "small_model": "kiln/scripted",
        "autoupdate": false,
        "share": "disabled",
        // Commands ask first, so the policy answers; edits do not.
        "permission": {"bash": "ask", "edit": "allow"},
    });
    std::fs::write(config.join("opencode.json"), serde_json::to_vec_pretty(&settings).unwrap()).unwrap();
    let preset = PRESETS.iter().find(|p| p.id == "acp:opencode").unwrap();
    let mut env = preset_env(preset);
    let dir = |sub: &str| home.join(sub).display().to_string();
    env.extend(
        [
            ("HOME", home.display().to_string()),
            ("XDG_CONFIG_HOME", dir(".config")),
            ("XDG_DATA_HOME", dir(".local/share")),
            ("XDG_STATE_HOME", dir(".local/state")),
            ("XDG_CACHE_HOME", dir(".cache")),
            ("OPENCODE_DISABLE_MODELS_FETCH", "1".into()),
            ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1".into()),
            ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1".into()),
        ]
        .map(|(k, v)| (k.to_string(), v)),
    );
    let state = state_dirs(preset, &env);
    let command = AcpCommand { binary: clis.join("node_modules/.bin/opencode"), args: vec!["acp".into()], env };
    AcpDriver::new("acp:opencode", command, commands).with_state_dirs(state)
}

/// Which agent a test drives, with what it needs to be built again for a later turn.
#[derive(Clone, Copy)]
enum Agent {
    Claude,
    OpenCode,
}

impl Agent {
    fn driver(self, clis: &Path, server: &ModelServer, home: &Path, commands: CommandPolicy) -> AcpDriver {
        match self {
            Agent::Claude => claude_agent(clis, server, home, commands),
            Agent::OpenCode => opencode_agent(clis, server, home, commands),
        }
    }

    fn model(self) -> Option<String> {
        match self {
            Agent::Claude => Some(CLAUDE_MODEL.into()),
            // Its config names the model (`kiln/scripted`).
            Agent::OpenCode => None,
        }
    }

    /// The model endpoint the agent posts to.
    fn path(self) -> &'static str {
        match self {
            Agent::Claude => "/v1/messages",
            Agent::OpenCode => "/v1/chat/completions",
        }
    }

    /// The scripted tool call that writes `content` to `path`.
    fn write(self, path: &Path, content: &str) -> Step {
        match self {
            Agent::Claude => Step::tool("Write", json!({"file_path": path, "content": content})),
            Agent::OpenCode => Step::tool("write", json!({"filePath": path, "content": content})),
        }
    }

    /// The scripted tool call that runs `command` in the working copy.
    fn run(self, command: &str) -> Step {
        let name = match self {
            Agent::Claude => "Bash",
            Agent::OpenCode => "bash",
        };
        Step::tool(name, json!({"command": command, "description": "Run it"}))
    }

    /// The model requests of the turns (the asides left out).
    fn turn_requests(self, server: &ModelServer) -> Vec<kiln_model_server::RecordedRequest> {
        let markers: Vec<String> = asides().into_iter().map(|a| a.marker).collect();
        model_requests(server, self.path())
            .into_iter()
            .filter(|r| !markers.iter().any(|m| r.body.to_string().contains(m.as_str())))
            .collect()
    }
}

/// A home for one agent, outside the working copy; kept for the test's length.
fn home() -> TempDir {
    tempfile::Builder::new().prefix("acp-home-").tempdir().unwrap()
}

fn request(
    agent: Agent,
    session: &Session,
    prompt: &str,
    resume_id: Option<String>,
) -> kiln_engine::testing::drivers::TurnRequest {
    let mut request = session.request("", prompt, resume_id);
    request.model = agent.model();
    request
}

fn tool_calls(events: &[DriverEvent], kind: ToolKind) -> usize {
    events.iter().filter(|e| matches!(e, DriverEvent::ToolCall { kind: k, .. } if *k == kind)).count()
}

// ---------------------------------------------------------------------------------------
// The contract, once per agent

async fn writes_a_file_and_runs_a_command(agent: Agent) {
    let clis = sandboxed_cli_dir(AGENTS);
    let session = Session::new();
    let notes = session.module.join("notes.md");
    let server = ModelServer::start_with_asides(
        vec![
            agent.write(&notes, NOTES),
            agent.run("echo ran > ran.txt"),
            Step::text(format!("Wrote the notes.\n{HANDOFF}")),
        ],
        asides(),
    )
    .await;
    let home = home();
    let driver = agent.driver(&clis, &server, home.path(), CommandPolicy::Workdir);

    let events =
        run_turn(&driver, request(agent, &session, "Write the cart notes, then mark the run.", None), &server).await;

    assert_eq!(std::fs::read_to_string(&notes).ok().as_deref(), Some(NOTES), "notes.md; {}", explain(&events, &server));
    let ran = session.root.join("ran.txt");
    assert_eq!(
        std::fs::read_to_string(&ran).ok().as_deref(),
        Some("ran\n"),
        "the command ran in the working copy; {}",
        explain(&events, &server)
    );
    assert!(tool_calls(&events, ToolKind::Edit) >= 1, "the write is a tool call; {}", explain(&events, &server));
    assert!(tool_calls(&events, ToolKind::Execute) >= 1, "the command is a tool call; {}", explain(&events, &server));
    started(&events, &server);
    assert!(ended_well(&events, &server).contains(HANDOFF), "final text; {}", explain(&events, &server));
    // The model saw the command's result: the turn went on after it.
    let asked = agent.turn_requests(&server);
    assert_eq!(asked.len(), 3, "one request per step; {}", explain(&events, &server));
    // Kiln's instructions reach the model in every request of the turn.
    for request in &asked {
        assert!(request.body.to_string().contains(INSTRUCTIONS), "instructions missing: {}", summary(request));
    }
}

async fn answers_its_permission_request_by_the_policy(agent: Agent) {
    let clis = sandboxed_cli_dir(AGENTS);
    let session = Session::new();
    let server = ModelServer::start_with_asides(
        vec![agent.run("echo ran > ran.txt"), Step::text(format!("Tried.\n{HANDOFF}"))],
        asides(),
    )
    .await;
    let home = home();
    // "No commands": the agent asks before running one, and Kiln's policy refuses it.
    let driver = agent.driver(&clis, &server, home.path(), CommandPolicy::None);

    let events = run_turn(&driver, request(agent, &session, "Mark the run, please.", None), &server).await;

    assert!(
        events.iter().any(|e| matches!(e, DriverEvent::PermissionRequest { .. })),
        "the agent asked and the turn shows it; {}",
        explain(&events, &server)
    );
    assert!(!session.root.join("ran.txt").exists(), "the refused command did not run; {}", explain(&events, &server));
    // Whether the agent then asks the model again or waits for the operator is its own
    // choice; either way the turn ends.
    assert!(matches!(events.last(), Some(DriverEvent::TurnEnded { .. })), "{}", explain(&events, &server));
}

async fn stops_when_asked(agent: Agent) {
    let clis = sandboxed_cli_dir(AGENTS);
    let session = Session::new();
    let server = ModelServer::start_with_asides(vec![agent.run(LONG_COMMAND), Step::text("Finished.")], asides()).await;
    let home = home();
    let driver = agent.driver(&clis, &server, home.path(), CommandPolicy::Workdir);

    // Stop once the command is under way (its tool call reported).
    let stopped_at = std::sync::Mutex::new(None::<Instant>);
    let events =
        run_turn_stopping(&driver, request(agent, &session, "Wait for the log, please.", None), &server, |events| {
            let running = tool_calls(events, ToolKind::Execute) > 0;
            if running {
                stopped_at.lock().unwrap().get_or_insert_with(Instant::now);
            }
            running
        })
        .await;

    let stopped_at = stopped_at.lock().unwrap().expect("the command's tool call was reported");
    assert!(stopped_at.elapsed() < STOP_GRACE, "the turn ended {:?} after Stop", stopped_at.elapsed());
    assert!(matches!(events.last(), Some(DriverEvent::TurnEnded { .. })), "{}", explain(&events, &server));
    assert!(!session.root.join("late.txt").exists(), "the command did not run to its end");
    // Nothing was asked of the model after Stop: the script's answer was never used.
    assert_eq!(agent.turn_requests(&server).len(), 1, "{}", explain(&events, &server));
}

async fn continues_the_conversation(agent: Agent) {
    let clis = sandboxed_cli_dir(AGENTS);
    let session = Session::new();
    let server = ModelServer::start_with_asides(
        vec![Step::text(format!("First answer.\n{HANDOFF}")), Step::text(format!("Second answer.\n{HANDOFF}"))],
        asides(),
    )
    .await;
    let home = home();
    let driver = agent.driver(&clis, &server, home.path(), CommandPolicy::Workdir);

    let first = run_turn(&driver, request(agent, &session, "First question, please.", None), &server).await;
    let id = started(&first, &server);
    ended_well(&first, &server);
    // The next turn is a new process, as every turn is: it loads the conversation by id.
    let second =
        run_turn(&driver, request(agent, &session, "Second question, please.", Some(id.clone())), &server).await;
    assert_eq!(started(&second, &server), id, "a resumed turn keeps the session id");
    assert!(ended_well(&second, &server).contains("Second answer."), "{}", explain(&second, &server));

    // The model sees the earlier exchange, not only the same id.
    let asked = agent.turn_requests(&server);
    let history = asked.last().map(|r| r.body["messages"].to_string()).unwrap_or_default();
    assert!(history.contains("First question") && history.contains("First answer."), "history: {history}");
}

async fn ends_with_the_providers_error(agent: Agent) {
    let clis = sandboxed_cli_dir(AGENTS);
    let session = Session::new();
    // claude-agent-acp retries a 400 as Claude Code does (five more requests); OpenCode
    // takes it as final. Enough refusals for either.
    let refusals = 10;
    let server = ModelServer::start_with_asides(vec![Step::error(400, PROVIDER_ERROR); refusals], asides()).await;
    let home = home();
    let driver = agent.driver(&clis, &server, home.path(), CommandPolicy::Workdir);

    let events = run_turn(&driver, request(agent, &session, "Anything at all.", None), &server).await;

    let error = ended_badly(&events, &server);
    assert!(error.contains(PROVIDER_ERROR), "the error names the provider's message: {error}");
    let asked = agent.turn_requests(&server).len();
    assert!(asked < refusals, "the agent gave up by itself ({asked} requests); {}", explain(&events, &server));
}

// ---------------------------------------------------------------------------------------
// claude-agent-acp

#[tokio::test]
#[ignore = "runs the real ACP agents in a loopback-only network namespace: scripts/test runs it"]
async fn acp_claude_writes_a_file_and_runs_a_command() {
    writes_a_file_and_runs_a_command(Agent::Claude).await;
}

#[tokio::test]
#[ignore = "runs the real ACP agents in a loopback-only network namespace: scripts/test runs it"]
async fn acp_claude_permission_is_answered_by_the_policy() {
    answers_its_permission_request_by_the_policy(Agent::Claude).await;
}

#[tokio::test]
#[ignore = "runs the real ACP agents in a loopback-only network namespace: scripts/test runs it"]
async fn acp_claude_stops_when_asked() {
    stops_when_asked(Agent::Claude).await;
}

#[tokio::test]
#[ignore = "runs the real ACP agents in a loopback-only network namespace: scripts/test runs it"]
async fn acp_claude_continues_the_conversation() {
    continues_the_conversation(Agent::Claude).await;
}

#[tokio::test]
#[ignore = "runs the real ACP agents in a loopback-only network namespace: scripts/test runs it"]
async fn acp_claude_ends_with_the_providers_error() {
    ends_with_the_providers_error(Agent::Claude).await;
}

// ---------------------------------------------------------------------------------------
// OpenCode

#[tokio::test]
#[ignore = "runs the real ACP agents in a loopback-only network namespace: scripts/test runs it"]
async fn acp_opencode_writes_a_file_and_runs_a_command() {
    writes_a_file_and_runs_a_command(Agent::OpenCode).await;
}

#[tokio::test]
#[ignore = "runs the real ACP agents in a loopback-only network namespace: scripts/test runs it"]
async fn acp_opencode_permission_is_answered_by_the_policy() {
    answers_its_permission_request_by_the_policy(Agent::OpenCode).await;
}

#[tokio::test]
#[ignore = "runs the real ACP agents in a loopback-only network namespace: scripts/test runs it"]
async fn acp_opencode_stops_when_asked() {
    stops_when_asked(Agent::OpenCode).await;
}

#[tokio::test]
#[ignore = "runs the real ACP agents in a loopback-only network namespace: scripts/test runs it"]
async fn acp_opencode_continues_the_conversation() {
    continues_the_conversation(Agent::OpenCode).await;
}

#[tokio::test]
#[ignore = "runs the real ACP agents in a loopback-only network namespace: scripts/test runs it"]
async fn acp_opencode_ends_with_the_providers_error() {
    ends_with_the_providers_error(Agent::OpenCode).await;
}
