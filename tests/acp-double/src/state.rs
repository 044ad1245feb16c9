//! What outlives one process of the double, in its state directory: the sessions (their
//! working directory and every update sent, replayed by `session/load` in a later
//! process), how many scripted turns have run (each process runs the next one), and a
//! log of every message the client sent (`requests.jsonl`), for tests to assert on.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

pub struct State {
    file: PathBuf,
    log: PathBuf,
    pub data: Value,
}

impl State {
    pub fn open(dir: &Path) -> State {
        let _ = std::fs::create_dir_all(dir);
        let file = dir.join("state.json");
        let data = std::fs::read(&file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_else(|| json!({"turns": 0, "sessions": {}}));
        State { file, log: dir.join("requests.jsonl"), data }
    }

    pub fn save(&self) {
        if let Err(e) = std::fs::write(&self.file, self.data.to_string()) {
            eprintln!("kiln-acp-double: cannot save {}: {e}", self.file.display());
        }
    }

    /// Where the messages the client sent are kept (`requests.jsonl`, see `wire`).
    pub fn log(&self) -> std::path::PathBuf {
        self.log.clone()
    }

    /// The index of the turn to run now, counted once.
    pub fn take_turn(&mut self) -> usize {
        let n = self.data["turns"].as_u64().unwrap_or(0);
        self.data["turns"] = json!(n + 1);
        self.save();
        n as usize
    }

    pub fn new_session(&mut self, cwd: &Value) -> String {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let id = format!("sess-{}-{nanos}", std::process::id());
        self.data["sessions"][&id] = json!({"cwd": cwd, "history": []});
        self.save();
        id
    }

    pub fn history(&self, id: &str) -> Option<Vec<Value>> {
        self.data["sessions"].get(id).map(|s| s["history"].as_array().cloned().unwrap_or_default())
    }

    /// Keeps an update sent in `id`, for a later `session/load` to replay.
    pub fn remember(&mut self, id: &str, update: &Value) {
        if let Some(history) = self.data["sessions"][id]["history"].as_array_mut() {
            history.push(update.clone());
        }
        self.save();
    }
}
