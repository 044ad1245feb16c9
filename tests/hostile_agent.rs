//! The hostile suite's agent half (issue 14, finding 1): what a self-hosted access token
//! can make the server do through an agent. The token holder points the
//! OpenAI-compatible driver at a model of their own (the scripted model server) whose
//! `run_command` tries what the review reproduced: print its environment and, through
//! `/proc`, the server's; read the access store; mint a token with `kiln token create`
//! through the server's own binary; write outside the session; drive the server's API
//! without a token, or with a loopback server's token read from its file. Without
//! `--allow-agent-commands` no command runs at all; with it (and in loopback mode, where
//! commands always run) the command runs scoped, and every one of those attempts fails:
//! after the turn the access store holds only the operator's token. The real `kiln serve`
//! binary, traffic to 127.0.0.1 only.

#[allow(dead_code)]
#[path = "hostile/api.rs"]
mod api;
#[allow(dead_code)]
#[path = "hostile/http.rs"]
mod http;
#[allow(dead_code)]
#[path = "hostile/server.rs"]
mod server;
#[allow(dead_code)]
#[path = "hostile/snapshot.rs"]
mod snapshot;

use std::path::Path;
use std::time::{Duration, Instant};

use api::{connect_req, cookie_of, page_req};
use kiln_model_server::{ModelServer, Step};
use serde_json::{json, Value};
use server::{create_token, fixture, kiln, Fixture, Server, BIN};

const PATIENCE: Duration = Duration::from_secs(60);

/// The model's command: every escape the review tried, each printing a marker when it
/// worked (spelt with quotes inside, so the command line itself does not show them). The
/// server listens on `port` of loopback: the command tries to drive it without a token, and
/// with a loopback server's token read from its file.
fn attack(fx: &Fixture, port: u16) -> String {
    let config = fx.config.display();
    let outside = fx.outside.display();
    let connect = |token: &str| {
        format!(
            "fetch(\"http://127.0.0.1:{port}/api/connect\",{{method:\"POST\",headers:{{\"x-kiln\":\"1\"}},body:JSON.stringify({{token:{token}}})}})"
        )
    };
    let api = format!(
        "node -e '{}.then(r=>console.log(\"BARE-\"+r.status))'; \
         node -e 'fetch(\"http://127.0.0.1:{port}/api/state\").then(r=>console.log(\"STATE-\"+r.status))'; \
         node -e 'let t;try{{t=require(\"fs\").readFileSync(\"{config}/loopback-{port}.token\",\"utf8\").trim()}}catch(e){{console.log(\"TOKEN-\"+e.code);process.exit(0)}}console.log(\"READ\"+\"-TOKEN\");{}.then(r=>r.status===200&&console.log(\"CONNECTED\"+\"-TOKEN\"))'; ",
        connect("undefined"),
        connect("t"),
    );
    format!(
        "echo \"CONFIG=${{KILN_CONFIG_DIR:-unset}}\"; \
         tr '\\0' '\\n' < /proc/$PPID/environ 2>/dev/null | grep -q KILN_CONFIG_DIR && echo READ\"\"-ENVIRON; \
         head -c 16 '{config}/access.db' 2>/dev/null && echo READ\"\"-ACCESS; \
         KILN_CONFIG_DIR='{config}' /proc/$PPID/exe token create --name backdoor 2>&1 | grep -q '^kiln_' && echo MINTED\"\"-PROC; \
         KILN_CONFIG_DIR='{config}' '{BIN}' token create --name backdoor 2>&1 | grep -q '^kiln_' && echo MINTED\"\"-BIN; \
         echo x > '{outside}/shell.txt' 2>/dev/null && echo WROTE\"\"-OUTSIDE; \
         {api}echo RAN-TO-THE-END"
    )
}

/// A server in `mode` (with `extra` arguments) and a connection to it (with `token` in
/// self-hosted mode, the server's own in loopback).
fn serve(fx: &Fixture, mode: &str, token: Option<&str>, extra: &[&str]) -> (Server, String) {
    let ws = fx.workspace.display().to_string();
    let ui = fx.ui.display().to_string();
    let mut args = vec!["serve", "--port", "0", "--mode", mode, "--workspace", &ws, "--ui-dir", &ui];
    args.extend(extra);
    let server = Server::spawn(&fx.config, &args, &[]).unwrap_or_else(|e| panic!("kiln serve: {e}"));
    let r = connect_req(server.port, token.or(server.token.as_deref())).send(server.port).unwrap();
    assert_eq!(r.status, 200, "connect: {}", r.text());
    let cookie = cookie_of(&r, server.port).unwrap();
    (server, cookie)
}

fn call(server: &Server, cookie: &str, op: &str, body: Value) -> Value {
    let r = page_req(server.port, op, &body)
        .header("Cookie", cookie)
        .send(server.port)
        .unwrap_or_else(|e| panic!("{op}: {e}"));
    assert_eq!(r.status, 200, "{op}: {}", r.text());
    r.json()
}

/// Points the driver at `model`, starts a session and one turn, and waits for the turn
/// to end: the transcript's text.
fn one_turn(server: &Server, cookie: &str, model: &ModelServer) -> String {
    let settings = json!({
        "defaultDriver": "openai-compatible", "openaiBaseUrl": model.openai_base_url(), "openaiModel": "theirs",
        "openaiKey": "sk-their-own", "plannerAgent": false,
    });
    call(server, cookie, "update_settings", settings);
    let session = call(server, cookie, "create_session", json!({ "brief": "Tidy @shop/catalog" }));
    let id = session["id"].as_str().unwrap().to_string();
    call(server, cookie, "send_message", json!({ "sessionId": id, "text": "Run the tests in @shop/catalog" }));
    let deadline = Instant::now() + PATIENCE;
    loop {
        let s = call(server, cookie, "get_session", json!({ "sessionId": id }));
        let entries = call(server, cookie, "get_transcript", json!({ "sessionId": id }));
        let text: Vec<String> = entries
            .as_array()
            .unwrap()
            .iter()
            .map(|e| format!("[{}] {}", e["kind"], e["text"].as_str().unwrap_or("")))
            .collect();
        let text = text.join("\n");
        if s["running"] == false && model.requests().len() >= 2 {
            return text;
        }
        assert!(Instant::now() < deadline, "the turn never ended: {s}\n{text}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn tokens(config: &Path) -> String {
    let (code, out, err) = kiln(config, &["token", "list"], &[]);
    assert_eq!(code, 0, "kiln token list: {err}");
    out
}

/// The tools the model was offered on its first request.
fn offered_tools(model: &ModelServer) -> Vec<String> {
    let first = &model.requests()[0];
    first.body["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["function"]["name"].as_str().map(String::from)).collect())
        .unwrap_or_default()
}

/// The hostile fixture in the direct workflow, where the engineer's turn may write and
/// so is offered `run_command` when commands are allowed.
fn direct_fixture() -> Fixture {
    let fx = fixture();
    let toml = fx.workspace.join("kiln.toml");
    let text = std::fs::read_to_string(&toml).unwrap().replace("mode = \"specs\"", "mode = \"direct\"");
    std::fs::write(toml, text).unwrap();
    fx
}

#[test]
fn a_self_hosted_token_runs_no_command_unless_the_operator_allows_it() {
    let fx = direct_fixture();
    let token = create_token(&fx.config, "operator", None);
    let (server, cookie) = serve(&fx, "self-hosted", Some(&token), &[]);
    let model = ModelServer::spawn(vec![
        Step::tool("run_command", json!({ "command": attack(&fx, server.port) })),
        Step::text("done"),
    ]);
    assert!(server.output().contains("Agents run no commands here"), "{}", server.output());
    let settings = call(&server, &cookie, "get_settings", json!({}));
    assert_eq!(
        (settings["commandPolicy"].as_str(), settings["commandsAllowed"].as_bool()),
        (Some("none"), Some(false))
    );
    let transcript = one_turn(&server, &cookie, &model);

    let tools = offered_tools(&model);
    assert!(!tools.is_empty() && !tools.contains(&"run_command".to_string()), "offered: {tools:?}");
    assert!(!transcript.contains("RAN-TO-THE-END"), "a command ran: {transcript}");
    assert!(transcript.contains("`run_command` is not available"), "{transcript}");
    assert!(!tokens(&fx.config).contains("backdoor") && !fx.outside.join("shell.txt").exists());
}

/// Where commands run (a self-hosted server that allows them, and loopback mode, where
/// they always may), the model's command runs to its end and every attempt fails.
#[test]
fn where_agent_commands_run_they_are_a_scoped_shell_and_no_more() {
    for mode in ["self-hosted", "loopback"] {
        let fx = direct_fixture();
        let token = create_token(&fx.config, "operator", None);
        let (server, cookie) = if mode == "self-hosted" {
            let (server, cookie) = serve(&fx, mode, Some(&token), &["--allow-agent-commands"]);
            assert!(server.output().contains("a token is worth a shell"), "{}", server.output());
            (server, cookie)
        } else {
            serve(&fx, mode, None, &[])
        };
        let model = ModelServer::spawn(vec![
            Step::tool("run_command", json!({ "command": attack(&fx, server.port) })),
            Step::text("done"),
        ]);
        let transcript = one_turn(&server, &cookie, &model);
        attempts_failed(&fx, &model, &transcript);
        if mode == "loopback" {
            // The token's file is there, and the command could not read it.
            let answer = model.requests()[1].body.to_string();
            assert!(fx.config.join(format!("loopback-{}.token", server.port)).exists());
            assert!(answer.contains("TOKEN-EACCES"), "the token file was not refused: {answer}");
        }
    }
}

fn attempts_failed(fx: &Fixture, model: &ModelServer, transcript: &str) {
    assert!(offered_tools(model).contains(&"run_command".to_string()));
    // The command ran, and the model was told what it printed.
    let answer = model.requests()[1].body.to_string();
    assert!(answer.contains("RAN-TO-THE-END"), "the command did not run to its end: {answer}\n{transcript}");
    assert!(answer.contains("CONFIG=unset"), "Kiln's config directory leaked: {answer}");
    // The attempts on the API ran (each says what it was answered), and none got in.
    assert!(answer.contains("BARE-401") && answer.contains("STATE-401"), "the API let a command in: {answer}");
    for marker in [
        "READ-ENVIRON",
        "READ-ACCESS",
        "MINTED-PROC",
        "MINTED-BIN",
        "WROTE-OUTSIDE",
        "CONNECTED-BARE",
        "READ-STATE",
        "READ-TOKEN",
        "CONNECTED-TOKEN",
    ] {
        assert!(!answer.contains(marker), "{marker}: {answer}");
    }
    let list = tokens(&fx.config);
    assert!(list.contains("operator") && !list.contains("backdoor"), "{list}");
    assert!(!fx.outside.join("shell.txt").exists());
}
