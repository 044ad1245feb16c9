//! The preview gateway: one loopback HTTP server per running preview that admits only
//! Kiln's own view (a per-preview secret turned into an HttpOnly cookie) and forwards
//! to the session's application, or serves a static root. (Interface stub: the proxy
//! itself is being written.)

use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::Result;

/// What the gateway answers from.
pub enum Upstream {
    /// The application on `127.0.0.1:<port>`; `None` while it is starting or restarting.
    App(tokio::sync::watch::Receiver<Option<u16>>),
    /// Files under this directory of the session's working copy.
    Static(PathBuf),
}

/// The connected application, for `data = "bridge"`.
#[derive(Clone)]
pub struct BridgeTarget {
    /// Its base URL, e.g. `http://127.0.0.1:4310`.
    pub url: String,
    /// Sent as `Authorization: Bearer …`, to this URL only.
    pub token: Option<String>,
}

/// What the gateway saw, for idleness and the UI.
#[derive(Default)]
pub struct Activity {
    /// Unix milliseconds of the last request; 0 before the first.
    pub last_request_ms: AtomicI64,
    pub forwarded: AtomicU64,
    pub unavailable: AtomicU64,
    pub refused: AtomicU64,
}

impl Activity {
    pub fn touch(&self) {
        self.last_request_ms.store(time::OffsetDateTime::now_utc().unix_timestamp_nanos() as i64 / 1_000_000, Ordering::Relaxed);
    }
}

pub struct GatewayOptions {
    pub upstream: Upstream,
    pub bridge: Option<BridgeTarget>,
    pub activity: Arc<Activity>,
}

pub struct Gateway {
    pub port: u16,
    pub secret: String,
}

impl Gateway {
    /// Binds a free loopback port and starts serving.
    pub async fn start(_options: GatewayOptions) -> Result<Gateway> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        Ok(Gateway { port: listener.local_addr()?.port(), secret: String::new() })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The first URL to load: it carries the secret, which the gateway turns into its
    /// cookie before redirecting to `path` (which must start with `/`).
    pub fn enter_url(&self, path: &str) -> String {
        format!("{}/__kiln/enter?secret={}&to={}", self.origin(), self.secret, urlencode(path))
    }

    /// Stops listening and closes every connection, upgraded ones included.
    pub async fn stop(self) {}
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
