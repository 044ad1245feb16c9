//! The JSON-RPC 2.0 framing ACP uses over stdio: one JSON message per line. A reader
//! thread queues every line from stdin, so a scripted turn can wait for the answer to its
//! own request (fs, terminal, permission) while a `session/cancel` that arrives meanwhile
//! is noticed and nothing else is lost.

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::sync::mpsc;

use serde_json::{json, Value};

pub struct Wire {
    incoming: mpsc::Receiver<Value>,
    /// Messages read while waiting for something else, handled next.
    queued: VecDeque<Value>,
    next_id: u64,
    /// Set once a `session/cancel` arrived, until the turn ends.
    pub cancelled: bool,
}

impl Wire {
    /// Reads stdin on a thread of its own, keeping every message in `log` (one per line)
    /// as it arrives, for tests to assert on what the client sent.
    pub fn stdio(log: std::path::PathBuf) -> Wire {
        let (tx, incoming) = mpsc::channel();
        std::thread::spawn(move || {
            let mut log = std::fs::OpenOptions::new().create(true).append(true).open(&log).ok();
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if line.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<Value>(&line) {
                    Ok(message) => {
                        if let Some(log) = log.as_mut() {
                            let _ = writeln!(log, "{message}");
                        }
                        if tx.send(message).is_err() {
                            break;
                        }
                    }
                    Err(e) => eprintln!("kiln-acp-double: not JSON ({e}): {line}"),
                }
            }
        });
        Wire { incoming, queued: VecDeque::new(), next_id: 0, cancelled: false }
    }

    fn send(&self, message: Value) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{message}");
        let _ = out.flush();
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    pub fn respond(&self, id: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    pub fn respond_error(&self, id: &Value, error: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "error": error}));
    }

    /// The next message to handle, `None` once stdin is closed.
    pub fn next(&mut self) -> Option<Value> {
        self.queued.pop_front().or_else(|| self.incoming.recv().ok())
    }

    /// Sends a request to the client and waits for its answer: `Ok(result)` or
    /// `Err(error)`. A `session/cancel` on the way sets `cancelled`; other messages wait.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next_id += 1;
        let id = format!("double-{}", self.next_id);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let Ok(message) = self.incoming.recv() else {
                return Err(json!({"code": -32000, "message": "the client went away"}));
            };
            if message["id"] == json!(id) && message.get("method").is_none() {
                return match message.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(message["result"].clone()),
                };
            }
            self.note(message);
        }
    }

    /// Waits until the client cancels the turn.
    pub fn wait_for_cancel(&mut self) {
        while !self.cancelled {
            let Ok(message) = self.incoming.recv() else { return };
            self.note(message);
        }
    }

    fn note(&mut self, message: Value) {
        if message["method"] == "session/cancel" {
            self.cancelled = true;
        } else {
            self.queued.push_back(message);
        }
    }
}
