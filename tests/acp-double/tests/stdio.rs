//! The double over its real stdio: a client's side of `initialize`, `session/new`, a
//! prompt whose turn writes a file through the client, and `session/load` in a second
//! process replaying the history. (It also makes `cargo test` build the binary that the
//! engine's protocol tests run.)

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};

struct Double {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Double {
    fn start(script: &std::path::Path, state: &std::path::Path) -> Double {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kiln-acp-double"))
            .args(["--script", script.to_str().unwrap(), "--load-session", "--state", state.to_str().unwrap()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Double { child, stdin, stdout }
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }
}

impl Drop for Double {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_turn_writes_through_the_client_and_a_new_process_replays_it() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    let turn = json!([{"message": ["Hel", "lo"]}, {"writeFile": {"path": "/w/a.txt", "content": "A"}}, {"stopReason": "end_turn"}]);
    std::fs::write(&script, json!({"turns": [turn]}).to_string()).unwrap();
    let state = dir.path().join("state");

    let mut double = Double::start(&script, &state);
    double.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}));
    let init = double.read();
    assert_eq!(init["result"]["agentCapabilities"]["loadSession"], true);
    double.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}));
    let session = double.read()["result"]["sessionId"].as_str().unwrap().to_string();
    let prompt = json!([{"type": "text", "text": "hi"}]);
    double.send(json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": session, "prompt": prompt}}));

    let mut kinds = Vec::new();
    let answer = loop {
        let message = double.read();
        if message["method"] == "fs/write_text_file" {
            assert_eq!(message["params"]["path"], "/w/a.txt");
            double.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": {}}));
        } else if message["method"] == "session/update" {
            kinds.push(message["params"]["update"]["sessionUpdate"].as_str().unwrap().to_string());
        } else {
            break message;
        }
    };
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    assert_eq!(kinds, ["agent_message_chunk", "agent_message_chunk", "tool_call", "tool_call_update"]);
    drop(double);

    let mut again = Double::start(&script, &state);
    again.send(json!({"jsonrpc": "2.0", "id": 1, "method": "session/load", "params": {"sessionId": session, "cwd": "/w", "mcpServers": []}}));
    let mut replayed = Vec::new();
    let answer = loop {
        let message = again.read();
        if message["method"] == "session/update" {
            replayed.push(message["params"]["update"]["sessionUpdate"].as_str().unwrap().to_string());
        } else {
            break message;
        }
    };
    assert!(answer.get("result").is_some(), "{answer}");
    assert_eq!(replayed[0], "user_message_chunk");
    assert_eq!(replayed.len(), 5);
    again.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/load", "params": {"sessionId": "nope", "cwd": "/w", "mcpServers": []}}));
    assert_eq!(again.read()["error"]["code"], -32002);
}
