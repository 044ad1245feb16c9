//! The commands an ACP agent runs through Kiln (`terminal/create`, `output`,
//! `wait_for_exit`, `kill`, `release`). Each runs as the tool loop's `run_command` does
//! (`kiln_runtime::sandbox::Scope`): the agent's code, so a cleared environment with the session's
//! own home, writable only in the working copy, its temporary directory and the package
//! caches, in its own process group. Its output is kept up to the agent's
//! `outputByteLimit` (cut from the start, at a character boundary). Every terminal still
//! running when the turn ends is killed with it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::{mpsc, watch};

use crate::drivers::events::DriverEvent;
use kiln_runtime::process::{Command, Env, Running};

/// Output kept when the agent names no limit.
const DEFAULT_LIMIT: usize = 1024 * 1024;

struct Output {
    bytes: Vec<u8>,
    truncated: bool,
    limit: usize,
}

impl Output {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend_from_slice(chunk);
        if self.bytes.len() > self.limit {
            let mut cut = self.bytes.len() - self.limit;
            // Never start in the middle of a character.
            while cut < self.bytes.len() && (self.bytes[cut] & 0xC0) == 0x80 {
                cut += 1;
            }
            self.bytes.drain(..cut);
            self.truncated = true;
        }
    }
}

/// `{exitCode, signal}` as ACP says how a command ended.
type Exit = Option<Value>;

struct Terminal {
    /// The command line, for the transcript.
    line: String,
    output: Arc<Mutex<Output>>,
    exit: watch::Receiver<Exit>,
    group: Running,
}

/// One turn's terminals.
#[derive(Default)]
pub struct Terminals {
    running: Mutex<HashMap<String, Arc<Terminal>>>,
    /// The last output of each released terminal, for a tool result that only points at it.
    released: Mutex<HashMap<String, String>>,
    next: std::sync::atomic::AtomicU64,
}

impl Terminals {
    /// Starts `params` (`command`, `args`, `env`, `cwd`, `outputByteLimit`) in `cwd`, which
    /// the caller has confined to the working copy. Returns the terminal's id.
    pub fn create(
        &self,
        params: &Value,
        cwd: &Path,
        workdir: &Path,
        session_dir: &Path,
        environment: &kiln_runtime::sandbox::EnvironmentConfig,
        heard: Option<mpsc::WeakUnboundedSender<DriverEvent>>,
    ) -> Result<String, String> {
        let command = params["command"].as_str().filter(|c| !c.trim().is_empty()).ok_or("no command")?;
        let args: Vec<String> =
            params["args"].as_array().into_iter().flatten().filter_map(|a| a.as_str().map(String::from)).collect();
        let env: Vec<(String, String)> = params["env"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| Some((v["name"].as_str()?.to_string(), v["value"].as_str()?.to_string())))
            .collect();
        let scope = kiln_runtime::sandbox::Scope::new(session_dir, &[workdir], &[], &env, environment)
            .map_err(|e| format!("could not prepare the command's home: {e}"))?;
        let prepared = scope.confinement().prepare().map_err(|e| format!("could not confine the command: {e}"))?;
        // A whole command line in `command` (no `args`) is a shell's to split.
        let cmd = if args.is_empty() && command.contains(char::is_whitespace) {
            Command::shell(command, cwd, Env::Only(scope.env()))
        } else {
            Command::new(command, cwd, Env::Only(scope.env())).args(&args)
        };
        let mut child = cmd.spawn(Some(&prepared)).map_err(|e| format!("could not start `{command}`: {e}"))?;
        let limit = params["outputByteLimit"].as_u64().map_or(DEFAULT_LIMIT, |l| l as usize);
        let output = Arc::new(Mutex::new(Output { bytes: Vec::new(), truncated: false, limit }));
        let id = format!("term-{}", self.next.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1);
        let heard = heard.map(|events| crate::drivers::events::output_watch(id.clone(), events));
        let pumps = [
            tokio::spawn(pump(child.inner.stdout.take(), output.clone(), heard.clone())),
            tokio::spawn(pump(child.inner.stderr.take(), output.clone(), heard)),
        ];
        let (done, exit) = watch::channel(None);
        let group = child.group();
        tokio::spawn(async move {
            let status = child.wait().await;
            // What it printed last is in before it counts as exited.
            for pump in pumps {
                let _ = tokio::time::timeout(std::time::Duration::from_secs(2), pump).await;
            }
            use std::os::unix::process::ExitStatusExt;
            let exit = match status {
                Ok(status) => json!({"exitCode": status.code(), "signal": status.signal().map(signal_name)}),
                Err(_) => json!({"exitCode": null, "signal": null}),
            };
            done.send_replace(Some(exit));
        });
        let line = std::iter::once(command.to_string()).chain(args).collect::<Vec<_>>().join(" ");
        let terminal = Arc::new(Terminal { line, output, exit, group });
        self.running.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone(), terminal);
        Ok(id)
    }

    fn get(&self, params: &Value) -> Result<Arc<Terminal>, String> {
        let id = params["terminalId"].as_str().unwrap_or_default();
        self.running.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned().ok_or(format!("no terminal `{id}`"))
    }

    /// `terminal/output`: what it printed so far, and how it ended if it did.
    pub fn output(&self, params: &Value) -> Result<Value, String> {
        let terminal = self.get(params)?;
        let output = terminal.output.lock().unwrap_or_else(|e| e.into_inner());
        let mut answer = json!({"output": String::from_utf8_lossy(&output.bytes), "truncated": output.truncated});
        if let Some(exit) = terminal.exit.borrow().clone() {
            answer["exitStatus"] = exit;
        }
        Ok(answer)
    }

    /// `terminal/wait_for_exit`: how it ended, once it has.
    pub async fn wait_for_exit(&self, params: &Value) -> Result<Value, String> {
        let mut exit = self.get(params)?.exit.clone();
        let ended = exit.wait_for(|e| e.is_some()).await.map_err(|_| "the command's watch ended".to_string())?;
        Ok(ended.clone().unwrap_or_default())
    }

    /// `terminal/kill`: kills the command and what it started; the terminal stays readable.
    pub fn kill(&self, params: &Value) -> Result<Value, String> {
        self.get(params)?.group.kill();
        Ok(json!({}))
    }

    /// `terminal/release`: kills it if it still runs and forgets it. Returns its final
    /// output, for the transcript.
    pub fn release(&self, params: &Value) -> Result<Value, String> {
        let terminal = self.get(params)?;
        let output = self.output(params)?;
        if terminal.exit.borrow().is_none() {
            terminal.group.kill();
        }
        let id = params["terminalId"].as_str().unwrap_or_default();
        self.running.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
        let text = output["output"].as_str().unwrap_or_default().to_string();
        self.released.lock().unwrap_or_else(|e| e.into_inner()).insert(id.to_string(), text);
        Ok(output)
    }

    /// What terminal `id` printed (so far, or before it was released).
    pub fn text(&self, id: &str) -> Option<String> {
        match self.output(&json!({"terminalId": id})) {
            Ok(output) => output["output"].as_str().map(String::from),
            Err(_) => self.released.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned(),
        }
    }

    /// The command line of a terminal, for the transcript.
    pub fn line(&self, params: &Value) -> Option<String> {
        self.get(params).ok().map(|t| t.line.clone())
    }

    /// Kills every terminal still running (the turn ended).
    pub fn kill_all(&self) {
        for terminal in self.running.lock().unwrap_or_else(|e| e.into_inner()).drain().map(|(_, t)| t) {
            if terminal.exit.borrow().is_none() {
                terminal.group.kill();
            }
        }
    }
}

impl Drop for Terminals {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// Keeps what the command prints and, when the turn hears it (`heard`), hands each piece
/// on as it arrives, for the chat's live row.
async fn pump(
    stream: Option<impl AsyncRead + Unpin>,
    output: Arc<Mutex<Output>>,
    heard: Option<kiln_runtime::process::Watch>,
) {
    let Some(mut stream) = stream else { return };
    let mut buf = [0u8; 8192];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        output.lock().unwrap_or_else(|e| e.into_inner()).push(&buf[..n]);
        if let Some(heard) = &heard {
            heard(&buf[..n]);
        }
    }
}

fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGKILL => "SIGKILL".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGINT => "SIGINT".into(),
        other => format!("signal {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_cut_from_the_start_at_a_character() {
        let mut out = Output { bytes: Vec::new(), truncated: false, limit: 4 };
        out.push(b"abc");
        assert!(!out.truncated);
        out.push("déf".as_bytes());
        assert!(out.truncated);
        assert_eq!(String::from_utf8(out.bytes.clone()).unwrap(), "déf");
        out.limit = 2;
        out.push(b"");
        assert_eq!(String::from_utf8(out.bytes.clone()).unwrap(), "f", "the cut moved past the é's second half");
    }
}
