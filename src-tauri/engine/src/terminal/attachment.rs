//! A view's hold on a terminal's output, as both transports stream it (a Tauri channel,
//! server-sent events): the replay of what the terminal kept, then each chunk as the program
//! writes it, then one `exit` chunk, then the end.

use std::sync::Arc;

use base64::Engine as _;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, watch};

use super::running::Ended;
use kiln_types::TerminalChunk;

pub struct TerminalAttachment {
    replay: Option<Vec<u8>>,
    live: broadcast::Receiver<Arc<[u8]>>,
    exit: watch::Receiver<Option<Ended>>,
    finished: bool,
}

fn output(bytes: &[u8]) -> TerminalChunk {
    TerminalChunk::Output { data: base64::engine::general_purpose::STANDARD.encode(bytes) }
}

impl TerminalAttachment {
    pub(super) fn new(
        replay: Vec<u8>,
        live: broadcast::Receiver<Arc<[u8]>>,
        exit: watch::Receiver<Option<Ended>>,
    ) -> Self {
        TerminalAttachment { replay: Some(replay), live, exit, finished: false }
    }

    /// The next chunk; `None` after the `exit` chunk. The first is always the replay (empty
    /// when the terminal printed nothing yet).
    pub async fn next(&mut self) -> Option<TerminalChunk> {
        if let Some(replay) = self.replay.take() {
            return Some(output(&replay));
        }
        if self.finished {
            return None;
        }
        loop {
            tokio::select! {
                // The exit is recorded only after the last output was sent: output first.
                biased;
                chunk = self.live.recv() => match chunk {
                    Ok(bytes) => return Some(output(&bytes)),
                    // Too slow a reader misses what the channel dropped, and goes on.
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => break,
                },
                _ = self.exit.wait_for(|e| e.is_some()) => break,
            }
        }
        // Whatever arrived before the exit was recorded comes first.
        if let Ok(bytes) = self.live.try_recv() {
            return Some(output(&bytes));
        }
        self.finished = true;
        let exit_code = self.exit.borrow().as_ref().and_then(|e| e.code);
        Some(TerminalChunk::Exit { exit_code })
    }
}
