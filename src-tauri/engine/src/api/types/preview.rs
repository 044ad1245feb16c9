//! A session's preview: its process, its gateway, the bridge's activity.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a session's preview stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum PreviewState {
    /// Not running (never started, stopped, or stopped for idleness).
    Stopped,
    /// The command runs; waiting for `ready`.
    Starting,
    /// Answering through its gateway.
    Ready,
    /// Exited and about to be started again (after a backoff).
    Restarting,
    /// Gave up: it exited too often, never became ready, or could not start. See `message` and `log`.
    Crashed,
}

/// How the preview is made: the `[preview] command`, or the files of `[preview] root`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum PreviewKind {
    Command,
    Static,
    /// The workspace configures no preview.
    None,
}

/// Where a module's first screen is in the preview (`[preview] module_url`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModuleUrl {
    pub module_id: String,
    /// A path on the preview's origin, e.g. `/?module=cart`.
    pub path: String,
}

/// What the connected application answered for the preview (`data = "bridge"`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BridgeActivity {
    pub url: String,
    /// `GET`s the session's application answered 404 and the bridge answered.
    pub forwarded: u64,
    /// Requests the bridge could not answer (down, or an error): marked unavailable.
    pub unavailable: u64,
    /// Requests refused rather than forwarded (other methods, `/api/auth/*`).
    pub refused: u64,
}

/// A session's live preview.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PreviewView {
    pub session_id: String,
    pub kind: PreviewKind,
    pub state: PreviewState,
    /// The gateway's origin, e.g. `http://127.0.0.1:41234`, while it runs.
    pub origin: Option<String>,
    /// The first URL to load in the frame: it carries the preview's secret, which the
    /// gateway turns into an HttpOnly cookie and strips with a redirect.
    pub enter_url: Option<String>,
    /// The port the application listens on (`$PORT`), for the command kind.
    pub port: Option<u16>,
    /// Why it stopped or crashed, in words.
    pub message: Option<String>,
    /// The last lines of the process's output (stdout and stderr).
    pub log: Vec<String>,
    /// Times it was started again after exiting.
    pub restarts: u32,
    /// `fixtures` or `bridge`.
    pub data: String,
    pub bridge: Option<BridgeActivity>,
    /// Each session module's first screen.
    pub module_urls: Vec<ModuleUrl>,
}
