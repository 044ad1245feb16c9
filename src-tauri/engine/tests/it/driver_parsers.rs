//! The claude and codex parsers against real captured output (tests/fixtures/agent-cli:
//! one scripted turn each, writing a file and running a command), plus the lines a
//! real turn can bring that the captures do not: failures, retries, unknown types.

use kiln_engine::testing::drivers::claude::{self, ClaudeOptions, ClaudeParser};
use kiln_engine::testing::drivers::codex::{self, CodexOptions, CodexParser};
use kiln_engine::testing::drivers::events::{DriverEvent, FileChangeKind, ToolKind, ToolStatus, Usage};
use serde_json::{json, Value};

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agent-cli").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn text(text: &str) -> DriverEvent {
    DriverEvent::Text { text: text.into() }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

const FINAL: &str = "Created `hello.txt` as requested.\n\nHANDOFF: none - done";

#[test]
fn a_captured_claude_turn_reads_as_the_event_stream() {
    let mut parser = ClaudeParser::new();
    let events: Vec<DriverEvent> =
        fixture("claude-main.stdout.jsonl").lines().flat_map(|l| parser.parse_line(l)).collect();
    let listing = "hello from the scripted mock model\ntotal 12\ndrwxr-xr-x 2 root root 4096 Nov 29 18:39 .\n\
                   drwxr-xr-x 5 root root 4096 Nov 29 18:39 ..\n-rw-r--r-- 1 root root   35 Nov 29 18:39 hello.txt";
    let expected = vec![
        DriverEvent::SessionStarted {
            resume_id: "7dd4dd9b-0ae2-4af8-8b04-0811b8f21664".into(),
            model: Some("claude-opus-5-5".into()),
        },
        text("I'll use the Write tool now."),
        DriverEvent::ToolCall {
            id: "toolu_0001mock".into(),
            kind: ToolKind::Edit,
            title: "Write /home/user/project/hello.txt".into(),
            input: json!({"file_path": "/home/user/project/hello.txt", "content": "hello from the scripted mock model\n"}),
        },
        DriverEvent::ToolResult {
            id: "toolu_0001mock".into(),
            status: ToolStatus::Completed,
            output: "File created successfully at: /home/user/project/hello.txt (file state is current in your context — no need to Read it back)".into(),
        },
        DriverEvent::FileChange { path: "/home/user/project/hello.txt".into(), change: FileChangeKind::Add },
        text("I'll use the Bash tool now."),
        DriverEvent::ToolCall {
            id: "toolu_0004mock".into(),
            kind: ToolKind::Execute,
            title: "cat hello.txt && ls -la".into(),
            input: json!({"command": "cat hello.txt && ls -la", "description": "Show the created file"}),
        },
        DriverEvent::ToolResult { id: "toolu_0004mock".into(), status: ToolStatus::Completed, output: listing.into() },
        text(FINAL),
        DriverEvent::Usage(Usage {
            input_tokens: 300,
            output_tokens: 75,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            cost_usd: Some(0.0027),
        }),
        DriverEvent::TurnEnded {
            is_error: false,
            stop_reason: Some("end_turn".into()),
            final_text: Some(FINAL.into()),
            error: None,
        },
    ];
    assert_eq!(events, expected);
}

#[test]
fn a_captured_codex_turn_reads_as_the_event_stream() {
    let mut parser = CodexParser::new();
    let events: Vec<DriverEvent> =
        fixture("codex-main.stdout.jsonl").lines().flat_map(|l| parser.parse_line(l)).collect();
    let command = "/bin/bash -lc \"printf 'hello from the scripted mock model\\\\n' > hello.txt && cat hello.txt\"";
    let patched = "/home/user/project/patched_hello.txt";
    let expected = vec![
        DriverEvent::SessionStarted { resume_id: "01a2289b-2a8c-7cc3-b515-4960221fd5ef".into(), model: None },
        text("Running step 1."),
        DriverEvent::ToolCall {
            id: "item_1".into(),
            kind: ToolKind::Execute,
            title: command.into(),
            input: json!({"command": command}),
        },
        DriverEvent::ToolResult {
            id: "item_1".into(),
            status: ToolStatus::Completed,
            output: "hello from the scripted mock model\n".into(),
        },
        text("Running step 2."),
        DriverEvent::ToolCall {
            id: "item_3".into(),
            kind: ToolKind::Edit,
            title: format!("Edit {patched}"),
            input: json!({"changes": [{"path": patched, "kind": "add"}]}),
        },
        DriverEvent::ToolResult {
            id: "item_3".into(),
            status: ToolStatus::Completed,
            output: format!("add {patched}"),
        },
        DriverEvent::FileChange { path: patched.into(), change: FileChangeKind::Add },
        text(FINAL),
        DriverEvent::Usage(Usage {
            input_tokens: 300,
            output_tokens: 60,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            cost_usd: None,
        }),
        DriverEvent::TurnEnded { is_error: false, stop_reason: None, final_text: Some(FINAL.into()), error: None },
    ];
    assert_eq!(events, expected);
}

#[test]
fn a_claude_api_failure_ends_the_turn_as_an_error() {
    let line = json!({
        "type": "result", "subtype": "success", "is_error": true, "duration_ms": 412, "num_turns": 1,
        "result": "API Error: 500 {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Internal server error\"}}",
        "session_id": "7dd4dd9b-0ae2-4af8-8b04-0811b8f21664", "total_cost_usd": 0,
        "usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    });
    let events = ClaudeParser::new().parse_line(&line.to_string());
    let Some(DriverEvent::TurnEnded { is_error, final_text, error, .. }) = events.last() else { panic!("{events:?}") };
    assert!(is_error);
    assert_eq!(*final_text, None);
    assert_eq!(error.as_deref(), line["result"].as_str());
    // Claude reported the cost (nothing was spent): a known 0, not an unknown.
    assert!(matches!(&events[0], DriverEvent::Usage(Usage { cost_usd: Some(c), .. }) if *c == 0.0));
}

#[test]
fn a_claude_error_without_text_names_its_errors() {
    let line = r#"{"type":"result","subtype":"error_during_execution","errors":["queryParams builder failed: boom"]}"#;
    let events = ClaudeParser::new().parse_line(line);
    assert_eq!(
        events,
        vec![DriverEvent::TurnEnded {
            is_error: true,
            stop_reason: None,
            final_text: None,
            error: Some("queryParams builder failed: boom".into()),
        }]
    );
}

#[test]
fn a_claude_api_retry_is_a_retry() {
    let line = r#"{"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,"retry_delay_ms":1200,"error_status":529,"error":"overloaded","session_id":"s"}"#;
    assert_eq!(
        ClaudeParser::new().parse_line(line),
        vec![DriverEvent::Retry {
            attempt: 2,
            message: "overloaded (HTTP 529)".into(),
            max_attempts: Some(10),
            http_status: Some(529)
        }]
    );
}

#[test]
fn claude_partial_messages_are_text_deltas_and_nothing_else() {
    let mut parser = ClaudeParser::new();
    let delta = r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}},"session_id":"s","parent_tool_use_id":null,"uuid":"u"}"#;
    assert_eq!(parser.parse_line(delta), vec![DriverEvent::TextDelta { text: "Hel".into() }]);
    for other in [
        r#"{"type":"stream_event","event":{"type":"message_start","message":{}},"session_id":"s","parent_tool_use_id":null}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}},"session_id":"s","parent_tool_use_id":null}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"sub"}},"session_id":"s","parent_tool_use_id":"toolu_1"}"#,
    ] {
        assert_eq!(parser.parse_line(other), vec![], "{other}");
    }
}

#[test]
fn a_codex_reconnect_is_a_retry_and_a_failed_turn_an_error() {
    let mut parser = CodexParser::new();
    assert_eq!(
        parser
            .parse_line(r#"{"type":"error","message":"Reconnecting... 2/5 (stream disconnected before completion)"}"#),
        vec![DriverEvent::Retry {
            attempt: 2,
            message: "Reconnecting... 2/5 (stream disconnected before completion)".into(),
            max_attempts: Some(5),
            http_status: None
        }]
    );
    assert_eq!(
        parser.parse_line(r#"{"type":"error","message":"unexpected status 401 Unauthorized"}"#),
        vec![DriverEvent::Error { message: "unexpected status 401 Unauthorized".into() }]
    );
    // An error item is a notice that did not stop codex: a warning, not an error.
    assert_eq!(
        parser.parse_line(
            r#"{"type":"item.completed","item":{"id":"item_9","type":"error","message":"`foo` is deprecated; use `bar`"}}"#
        ),
        vec![DriverEvent::Warning { message: "`foo` is deprecated; use `bar`".into() }]
    );
    assert_eq!(
        parser.parse_line(r#"{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized"}}"#),
        vec![DriverEvent::TurnEnded {
            is_error: true,
            stop_reason: None,
            final_text: None,
            error: Some("unexpected status 401 Unauthorized".into()),
        }]
    );
}

#[test]
fn codex_input_tokens_leave_out_cache_reads() {
    let line =
        r#"{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":200,"output_tokens":345}}"#;
    let events = CodexParser::new().parse_line(line);
    assert_eq!(
        events[0],
        DriverEvent::Usage(Usage {
            input_tokens: 1000,
            output_tokens: 345,
            cache_read_tokens: 200,
            cache_write_tokens: 0,
            cost_usd: None
        })
    );
}

#[test]
fn unknown_lines_and_items_are_kept_whole() {
    let mut claude = ClaudeParser::new();
    let mut codex = CodexParser::new();
    let unknown = |source: &str, raw: Value| vec![DriverEvent::Unknown { source: source.into(), raw }];

    let line = json!({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}});
    assert_eq!(claude.parse_line(&line.to_string()), unknown("claude", line.clone()));
    let line = json!({"type": "system", "subtype": "compact_boundary", "session_id": "s"});
    assert_eq!(claude.parse_line(&line.to_string()), unknown("claude", line.clone()));

    let line =
        json!({"type": "item.completed", "item": {"id": "item_9", "type": "image_generation", "prompt": "a kiln"}});
    assert_eq!(codex.parse_line(&line.to_string()), unknown("codex", line.clone()));
    let line = json!({"type": "thread.archived", "thread_id": "t"});
    assert_eq!(codex.parse_line(&line.to_string()), unknown("codex", line.clone()));

    let garbage = "Warning: could not create PATH aliases {";
    assert_eq!(claude.parse_line(garbage), unknown("claude", Value::String(garbage.into())));
    assert_eq!(codex.parse_line(garbage), unknown("codex", Value::String(garbage.into())));
    assert_eq!(codex.parse_line("   "), vec![]);
}

#[test]
fn unknown_fields_and_content_blocks_do_not_break_a_line() {
    let line = json!({
        "type": "assistant", "brand_new_field": {"x": 1},
        "message": {"id": "m", "content": [
            {"type": "text", "text": "hi", "citations": []},
            {"type": "thinking", "thinking": "", "signature": "sig"},
            {"type": "hologram", "data": 1}
        ]}
    });
    assert_eq!(
        ClaudeParser::new().parse_line(&line.to_string()),
        vec![text("hi"), DriverEvent::Unknown { source: "claude".into(), raw: json!({"type": "hologram", "data": 1}) }]
    );
}

#[test]
fn a_failed_codex_command_completed_without_a_start_is_announced_once() {
    let mut parser = CodexParser::new();
    let line = r#"{"type":"item.completed","item":{"id":"item_5","type":"command_execution","command":"false","aggregated_output":"","exit_code":1,"status":"failed"}}"#;
    let events = parser.parse_line(line);
    assert!(matches!(&events[..], [
        DriverEvent::ToolCall { id, .. },
        DriverEvent::ToolResult { id: result_id, status: ToolStatus::Failed, .. },
    ] if id == "item_5" && result_id == "item_5"));
}

#[test]
fn events_serialize_tagged_in_camel_case() {
    let event = DriverEvent::TurnEnded { is_error: true, stop_reason: None, final_text: None, error: Some("x".into()) };
    let value = serde_json::to_value(&event).unwrap();
    assert_eq!(
        value,
        json!({"type": "turnEnded", "isError": true, "stopReason": null, "finalText": null, "error": "x"})
    );
    assert_eq!(serde_json::from_value::<DriverEvent>(value).unwrap(), event);
    let usage = DriverEvent::Usage(Usage { cost_usd: None, ..Usage::default() });
    assert_eq!(serde_json::to_value(&usage).unwrap()["type"], "usage");
    assert_eq!(serde_json::from_value::<DriverEvent>(serde_json::to_value(&usage).unwrap()).unwrap(), usage);
}

#[test]
fn claude_command_for_a_fresh_and_a_resumed_turn() {
    let (args, env) = claude::command(&ClaudeOptions::new("Build it"));
    assert_eq!(
        args,
        strings(&[
            "-p",
            "--verbose",
            "--output-format",
            "stream-json",
            "--include-partial-messages",
            "--permission-mode",
            "acceptEdits",
            "Build it"
        ])
    );
    let quiet =
        [("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"), ("DISABLE_TELEMETRY", "1"), ("DISABLE_AUTOUPDATER", "1")];
    let quiet: Vec<(String, String)> = quiet.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    assert_eq!(env, quiet);

    let opts = ClaudeOptions {
        resume_id: Some("7dd4dd9b-0ae2-4af8-8b04-0811b8f21664".into()),
        model: Some("opus".into()),
        append_system_prompt: Some("You own module core.".into()),
        permission_mode: "plan".into(),
        base_url: Some("http://127.0.0.1:8080".into()),
        api_key: Some("sk-test".into()),
        ..ClaudeOptions::new("Go on")
    };
    let (args, env) = claude::command(&opts);
    assert_eq!(
        args,
        strings(&[
            "-p",
            "--verbose",
            "--output-format",
            "stream-json",
            "--include-partial-messages",
            "--permission-mode",
            "plan",
            "--model",
            "opus",
            "--resume",
            "7dd4dd9b-0ae2-4af8-8b04-0811b8f21664",
            "--append-system-prompt",
            "You own module core.",
            "Go on",
        ])
    );
    assert_eq!(env[..3], quiet[..]);
    assert_eq!(
        env[3..],
        [
            ("ANTHROPIC_BASE_URL".to_string(), "http://127.0.0.1:8080".to_string()),
            ("ANTHROPIC_API_KEY".into(), "sk-test".into())
        ]
    );
}

#[test]
fn codex_command_for_a_fresh_and_a_resumed_turn() {
    let (args, env) = codex::command(&CodexOptions::new("Build it", "/work/session"));
    assert_eq!(
        args,
        strings(&[
            "exec",
            "--json",
            "--skip-git-repo-check",
            "-C",
            "/work/session",
            "--sandbox",
            "workspace-write",
            "Build it"
        ])
    );
    assert!(env.is_empty());

    let opts = CodexOptions {
        thread_id: Some("01a2289b-2a8c-7cc3-b515-4960221fd5ef".into()),
        model: Some("gpt-5.5".into()),
        config: vec![("developer_instructions".into(), "\"You own module core.\"".into())],
        api_key: Some("sk-test".into()),
        ..CodexOptions::new("Go on", "/work/session")
    };
    let (args, env) = codex::command(&opts);
    assert_eq!(
        args,
        strings(&[
            "exec",
            "--json",
            "--skip-git-repo-check",
            "-C",
            "/work/session",
            "--sandbox",
            "workspace-write",
            "--model",
            "gpt-5.5",
            "-c",
            "developer_instructions=\"You own module core.\"",
            "resume",
            "01a2289b-2a8c-7cc3-b515-4960221fd5ef",
            "Go on",
        ])
    );
    assert_eq!(env, vec![("CODEX_API_KEY".to_string(), "sk-test".to_string())]);
}
