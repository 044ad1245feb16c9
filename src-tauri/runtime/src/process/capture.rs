//! A process's output kept while it runs, in bounded memory: the first `HEAD_BYTES` and
//! a rolling tail of `TAIL_BYTES` of stdout and stderr as they interleave (and, for a
//! caller that parses it, the whole stdout), with a timeout that kills the group.

use std::collections::VecDeque;
use std::io;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

use super::Child;

/// Bytes of output kept from the start and from the end of a long run.
pub const HEAD_BYTES: usize = 16 * 1024;
pub const TAIL_BYTES: usize = 16 * 1024;

/// Output kept while a command runs: the first `HEAD_BYTES`, and a rolling tail.
#[derive(Default)]
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    overflowed: bool,
}

impl Capture {
    fn push(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.head.len() < HEAD_BYTES {
                self.head.push(b);
            } else {
                self.overflowed = true;
                if self.tail.len() == TAIL_BYTES {
                    self.tail.pop_front();
                }
                self.tail.push_back(b);
            }
        }
    }
}

/// A finished process and what it printed.
pub struct Captured {
    /// `None` when it was killed on its timeout and could not be waited for.
    pub status: Option<ExitStatus>,
    pub timed_out: bool,
    pub head: Vec<u8>,
    /// Empty when the whole output fit in `head`.
    pub tail: Vec<u8>,
    /// The whole stdout, when it was asked for (a parse must not read a capped output).
    pub stdout: Vec<u8>,
}

/// Hears a running command's output as it arrives (stdout and stderr, interleaved), for a
/// view that shows it live; what is kept for the outcome is the same either way.
pub type Watch = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// Waits for `child` for at most `timeout` (then kills its group), keeping its output.
pub async fn collect(child: &mut Child, timeout: Duration, whole_stdout: bool) -> io::Result<Captured> {
    collect_watched(child, timeout, whole_stdout, None).await
}

/// `collect`, with `watch` hearing each piece of output as it arrives.
pub async fn collect_watched(
    child: &mut Child,
    timeout: Duration,
    whole_stdout: bool,
    watch: Option<Watch>,
) -> io::Result<Captured> {
    let capture = Arc::new(Mutex::new(Capture::default()));
    let stdout = Arc::new(Mutex::new(Vec::new()));
    let whole = whole_stdout.then(|| stdout.clone());
    let out = tokio::spawn(pump(child.inner.stdout.take(), capture.clone(), whole, watch.clone()));
    let err = tokio::spawn(pump(child.inner.stderr.take(), capture.clone(), None, watch));
    let (status, timed_out) = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => (Some(status?), false),
        Err(_) => {
            child.kill();
            (child.wait().await.ok(), true)
        }
    };
    // A grandchild (an ssh ControlMaster, a server a script started) may hold the pipes
    // open: never wait on it for more than a moment.
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        let _ = out.await;
        let _ = err.await;
    })
    .await;
    let capture = std::mem::take(&mut *capture.lock().unwrap_or_else(|e| e.into_inner()));
    let stdout = std::mem::take(&mut *stdout.lock().unwrap_or_else(|e| e.into_inner()));
    Ok(Captured {
        status,
        timed_out,
        head: capture.head,
        tail: if capture.overflowed { capture.tail.into_iter().collect() } else { Vec::new() },
        stdout,
    })
}

async fn pump(
    stream: Option<impl AsyncRead + Unpin>,
    capture: Arc<Mutex<Capture>>,
    whole: Option<Arc<Mutex<Vec<u8>>>>,
    watch: Option<Watch>,
) {
    let Some(mut stream) = stream else { return };
    let mut buf = [0u8; 8192];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        capture.lock().unwrap_or_else(|e| e.into_inner()).push(&buf[..n]);
        if let Some(watch) = &watch {
            watch(&buf[..n]);
        }
        if let Some(whole) = &whole {
            whole.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(&buf[..n]);
        }
    }
}
