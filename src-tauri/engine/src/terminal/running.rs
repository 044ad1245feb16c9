//! One running terminal: its pseudo-terminal, a reader thread keeping the last output in a
//! ring buffer and handing each chunk to the attached views, and a waiter thread that sees
//! the program exit, kills what is left of its session and records the exit.
//!
//! The ring and the live channel change under one lock, so a view that attaches gets the
//! output up to that moment as its replay and everything after it live, nothing twice and
//! nothing lost (unless it reads so slowly that the channel drops chunks for it).

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{broadcast, watch};

use crate::events::EventBus;
use kiln_runtime::process::{Pty, PtyMaster};
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::{EventBody, TerminalKind, TerminalState, TerminalView};

/// How much output a terminal keeps for a view that attaches later.
pub(super) const RING_BYTES: usize = 256 * 1024;
/// Chunks a slow view may fall behind before it misses some.
const LIVE_CHUNKS: usize = 1024;
/// How long the waiter waits for the last output once the program exited.
const DRAIN: Duration = Duration::from_secs(2);

/// How a terminal's program ended.
#[derive(Debug, Clone)]
pub(super) struct Ended {
    /// Its exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    pub at: String,
    pub when: Instant,
}

/// What a terminal is, fixed when it opens.
pub(super) struct Identity {
    pub id: String,
    pub session_id: String,
    /// The workspace it belongs to.
    pub root: PathBuf,
    pub kind: TerminalKind,
    pub title: String,
    pub started_at: String,
}

pub(super) struct Terminal {
    pub identity: Identity,
    /// Its program's pid, also the id of the session (and group) the program leads.
    pid: i32,
    /// The master side and the size last set, changed together (the last resize wins).
    master: Mutex<(PtyMaster, u32, u32)>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    output: Mutex<VecDeque<u8>>,
    live: broadcast::Sender<Arc<[u8]>>,
    exit: watch::Sender<Option<Ended>>,
}

impl Terminal {
    /// Starts the threads of a terminal whose program was just spawned in `pty`.
    pub(super) fn start(
        identity: Identity,
        pty: Pty,
        (cols, rows): (u32, u32),
        events: Arc<EventBus>,
    ) -> Arc<Terminal> {
        let Pty { pid, master, reader, writer, child } = pty;
        let terminal = Arc::new(Terminal {
            identity,
            pid,
            master: Mutex::new((master, cols, rows)),
            writer: Arc::new(Mutex::new(writer)),
            output: Mutex::new(VecDeque::new()),
            live: broadcast::channel(LIVE_CHUNKS).0,
            exit: watch::channel(None).0,
        });
        let (done, drained) = std::sync::mpsc::channel::<()>();
        let reading = terminal.clone();
        std::thread::spawn(move || {
            reading.read_all(reader);
            let _ = done.send(());
        });
        let waiting = terminal.clone();
        std::thread::spawn(move || {
            let mut child = child;
            let status = child.wait();
            // Whatever the program left running in its session goes with it, which also lets
            // the terminal go so the reader sees its end.
            kiln_runtime::process::kill_session(waiting.pid);
            let _ = drained.recv_timeout(DRAIN);
            let code = status.ok().flatten();
            waiting.exit.send_replace(Some(Ended { code, at: kiln_runtime::clock::now(), when: Instant::now() }));
            events.emit(EventBody::Terminal { terminal: waiting.view() });
        });
        terminal
    }

    fn read_all(&self, mut reader: Box<dyn Read + Send>) {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => self.push(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // EIO: nothing holds the terminal any more.
                Err(_) => return,
            }
        }
    }

    fn push(&self, bytes: &[u8]) {
        let mut ring = self.output.lock().unwrap();
        ring.extend(bytes);
        let over = ring.len().saturating_sub(RING_BYTES);
        ring.drain(..over);
        // No view attached is no error.
        let _ = self.live.send(Arc::from(bytes));
    }

    pub(super) fn ended(&self) -> Option<Ended> {
        self.exit.borrow().clone()
    }

    pub(super) fn is_running(&self) -> bool {
        self.exit.borrow().is_none()
    }

    pub(super) fn view(&self) -> TerminalView {
        let (cols, rows) = {
            let master = self.master.lock().unwrap();
            (master.1, master.2)
        };
        let ended = self.ended();
        TerminalView {
            id: self.identity.id.clone(),
            session_id: self.identity.session_id.clone(),
            kind: self.identity.kind,
            title: self.identity.title.clone(),
            cols,
            rows,
            state: if ended.is_some() { TerminalState::Exited } else { TerminalState::Running },
            exit_code: ended.as_ref().and_then(|e| e.code),
            started_at: self.identity.started_at.clone(),
            ended_at: ended.map(|e| e.at),
        }
    }

    /// Types `data` into the terminal.
    pub(super) async fn write(&self, data: String) -> Result<()> {
        let exited = || ApiError::new(ErrorCode::TerminalExited, "the terminal's program has exited");
        if !self.is_running() {
            return Err(exited());
        }
        let writer = self.writer.clone();
        // A program that reads nothing fills the terminal's buffer and blocks the write: off
        // the async threads.
        let written = tokio::task::spawn_blocking(move || {
            let mut writer = writer.lock().unwrap();
            writer.write_all(data.as_bytes()).and_then(|_| writer.flush())
        })
        .await
        .map_err(|e| ApiError::internal("writing to the terminal", e))?;
        written.map_err(|_| exited())
    }

    /// Sets the terminal's size; the program gets `SIGWINCH`.
    pub(super) fn resize(&self, cols: u32, rows: u32) -> Result<()> {
        let mut master = self.master.lock().unwrap();
        master.0.resize(cols as u16, rows as u16).map_err(|e| ApiError::internal("resizing the terminal", e))?;
        master.1 = cols;
        master.2 = rows;
        Ok(())
    }

    /// Kills the program and everything in its session (once it exited, its pid may be
    /// another's: then nothing).
    pub(super) fn kill(&self) {
        if self.is_running() {
            kiln_runtime::process::kill_session(self.pid);
        }
    }

    /// Kills the program and everything in its session, and waits until its exit is
    /// recorded.
    pub(super) async fn stop(&self) {
        self.kill();
        let mut exit = self.exit.subscribe();
        let _ = tokio::time::timeout(DRAIN * 3, exit.wait_for(|e| e.is_some())).await;
    }

    /// The output so far and a receiver of what follows, taken at one moment.
    pub(super) fn attach(&self) -> super::TerminalAttachment {
        let ring = self.output.lock().unwrap();
        let replay: Vec<u8> = ring.iter().copied().collect();
        let live = self.live.subscribe();
        drop(ring);
        super::TerminalAttachment::new(replay, live, self.exit.subscribe())
    }
}
