//! The limits every HTTP listener Kiln runs shares (`kiln serve` and the preview
//! gateways): how long a client may take to send a request's headers, and how many
//! connections may be open at once. A client that trickles its headers, or opens
//! connections and sends nothing, holds a socket and a task each; these bound both.

use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::TokioTimer;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long a request's headers may take to arrive, from the first byte (or, on a
/// fresh or kept-alive connection, from when the server starts waiting for them).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections one listener keeps open at once; more are closed unanswered. A page holds
/// one for its event stream and a few for calls; a preview's app some more.
pub const MAX_CONNECTIONS: usize = 256;

/// Tests shorten the timeout (milliseconds) and lower the cap through these, so that
/// they need not wait ten seconds or open hundreds of sockets. Nothing else sets them.
const HEADER_READ_TIMEOUT_FOR_TESTS: &str = "KILN_TEST_HEADER_READ_TIMEOUT_MS";
const MAX_CONNECTIONS_FOR_TESTS: &str = "KILN_TEST_MAX_CONNECTIONS";

fn from_env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok()?.trim().parse().ok()
}

pub fn header_read_timeout() -> Duration {
    from_env(HEADER_READ_TIMEOUT_FOR_TESTS).map(Duration::from_millis).unwrap_or(HEADER_READ_TIMEOUT)
}

pub fn max_connections() -> usize {
    from_env::<usize>(MAX_CONNECTIONS_FOR_TESTS).filter(|n| *n > 0).unwrap_or(MAX_CONNECTIONS)
}

/// hyper's HTTP/1 server with the header timeout (which needs a timer to run at all).
pub fn http1_builder() -> http1::Builder {
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(header_read_timeout());
    builder
}

/// The open connections of one listener, counted against `max_connections`.
#[derive(Clone)]
pub struct ConnectionSlots(Arc<Semaphore>);

impl ConnectionSlots {
    pub fn new() -> ConnectionSlots {
        ConnectionSlots(Arc::new(Semaphore::new(max_connections())))
    }

    /// A place for one more connection, held until it is dropped; `None` when every
    /// place is taken. Refusing at once, rather than queueing, keeps a flood from
    /// delaying the connections already open.
    pub fn take(&self) -> Option<OwnedSemaphorePermit> {
        self.0.clone().try_acquire_owned().ok()
    }
}

impl Default for ConnectionSlots {
    fn default() -> Self {
        ConnectionSlots::new()
    }
}

/// The Content-Type of a file Kiln's listeners serve (the UI's assets, a static preview), by
/// its extension in mime_guess's table. Text is declared UTF-8, as the built UI and most sites
/// are written, rather than left to the browser's guess.
pub fn content_type(path: impl AsRef<std::path::Path>) -> String {
    let mime = mime_guess::from_path(path).first_raw().unwrap_or("application/octet-stream");
    if mime.starts_with("text/") {
        format!("{mime}; charset=utf-8")
    } else {
        mime.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_run_out_and_come_back() {
        let slots = ConnectionSlots(Arc::new(Semaphore::new(2)));
        let (a, _b) = (slots.take().unwrap(), slots.take().unwrap());
        assert!(slots.take().is_none());
        drop(a);
        assert!(slots.take().is_some());
    }
}
