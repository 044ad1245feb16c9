//! `kiln-acp-double --script FILE.json [--load-session] [--state DIR]`: a scripted agent
//! speaking the Agent Client Protocol (version 1) over stdio, newline-delimited JSON-RPC
//! 2.0. It answers `initialize`, `session/new`, `session/load` (only with
//! `--load-session`, which it then advertises), `session/set_model`,
//! `session/set_config_option` and `session/prompt`; each prompt runs the next turn of
//! the script (`turn.rs` lists the actions). Sessions and the turn counter live in the
//! state directory (default `$HOME/.cache/kiln-acp-double`, writable under Kiln's
//! confinement), so a new process continues where the last one stopped. No network; it
//! starts in milliseconds.
//!
//! Script: `{"turns": [[action, …], …], "session": {…}}`; `session` is merged into the
//! `session/new` and `session/load` answers (e.g. `models`, `modes`).

mod state;
mod turn;
mod wire;

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};

const USAGE: &str = "kiln-acp-double --script FILE.json [--load-session] [--state DIR]";

struct Args {
    script: PathBuf,
    load_session: bool,
    state: PathBuf,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut script = None;
    let mut load_session = false;
    let mut state = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--script" => script = Some(PathBuf::from(args.next().ok_or("--script needs a file")?)),
            "--state" => state = Some(PathBuf::from(args.next().ok_or("--state needs a directory")?)),
            "--load-session" => load_session = true,
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    let state = match state {
        Some(state) => state,
        None => {
            PathBuf::from(std::env::var("HOME").map_err(|_| "no HOME: pass --state")?).join(".cache/kiln-acp-double")
        }
    };
    Ok(Args { script: script.ok_or("--script is required")?, load_session, state })
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}\nusage: {USAGE}");
            return ExitCode::from(2);
        }
    };
    let script: Value = match std::fs::read(&args.script)
        .map_err(|e| e.to_string())
        .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
    {
        Ok(script) => script,
        Err(e) => {
            eprintln!("kiln-acp-double: cannot read {}: {e}", args.script.display());
            return ExitCode::from(2);
        }
    };
    let mut state = state::State::open(&args.state);
    let mut wire = wire::Wire::stdio(state.log());
    while let Some(message) = wire.next() {
        let (Some(method), id) = (message["method"].as_str(), message.get("id")) else { continue };
        let params = &message["params"];
        let Some(id) = id else {
            // Notifications: a cancel outside a turn has nothing to stop.
            continue;
        };
        match method {
            "initialize" => wire.respond(
                id,
                json!({
                    "protocolVersion": 1,
                    "agentCapabilities": {"loadSession": args.load_session, "promptCapabilities": {}},
                    "agentInfo": {"name": "kiln-acp-double", "version": env!("CARGO_PKG_VERSION")},
                    "authMethods": [],
                }),
            ),
            "session/new" => {
                let session = state.new_session(&params["cwd"]);
                wire.respond(id, session_answer(&script, json!({"sessionId": session})));
            }
            "session/load" if args.load_session => {
                let session = params["sessionId"].as_str().unwrap_or_default();
                match state.history(session) {
                    Some(history) => {
                        for update in history {
                            wire.notify("session/update", json!({"sessionId": session, "update": update}));
                        }
                        wire.respond(id, session_answer(&script, json!({})));
                    }
                    None => wire.respond_error(
                        id,
                        json!({"code": -32002, "message": "Resource not found", "data": {"message": format!("session not found: {session}")}}),
                    ),
                }
            }
            "session/set_model" | "session/set_config_option" | "session/set_mode" => wire.respond(id, json!({})),
            "session/prompt" => {
                let session = params["sessionId"].as_str().unwrap_or_default().to_string();
                if state.history(&session).is_none() {
                    wire.respond_error(id, json!({"code": -32002, "message": format!("no session {session}")}));
                    continue;
                }
                let n = state.take_turn();
                let actions = script["turns"][n]
                    .as_array()
                    .cloned()
                    .unwrap_or_else(|| vec![json!({"message": "(the script has no more turns)"})]);
                let mut turn = turn::Turn { wire: &mut wire, state: &mut state, session, number: n, calls: 0 };
                let answer = turn.run(params, &actions);
                wire.cancelled = false;
                match answer {
                    Ok(result) => wire.respond(id, result),
                    Err(error) => wire.respond_error(id, error),
                }
            }
            other => wire.respond_error(id, json!({"code": -32601, "message": format!("Method not found: {other}")})),
        }
    }
    ExitCode::SUCCESS
}

/// A session set-up's answer with the script's `session` fields merged in.
fn session_answer(script: &Value, mut answer: Value) -> Value {
    if let (Some(extra), Some(answer)) = (script["session"].as_object(), answer.as_object_mut()) {
        for (key, value) in extra {
            answer.insert(key.clone(), value.clone());
        }
    }
    answer
}
