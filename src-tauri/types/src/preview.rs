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

/// What a screenshot shows: the page after a turn, or what the operator captured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ScreenshotKind {
    /// Taken after a turn that changed a module with a preview; bound to its checkpoint.
    Turn,
    /// The whole viewport, on request.
    Page,
    /// One element, picked in the preview.
    Element,
    /// A rectangle dragged over the preview.
    Region,
}

/// One screenshot of the session's preview (its PNG comes from `get_screenshot`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScreenshotView {
    pub id: i64,
    pub kind: ScreenshotKind,
    /// The checkpoint the working copy was at when it was taken (0: the session's start).
    pub checkpoint: Option<i64>,
    pub module_id: Option<String>,
    /// The page's path on the preview's origin.
    pub page_path: String,
    pub width: u32,
    pub height: u32,
    pub taken_at: String,
}

/// A screenshot with its PNG, base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScreenshotImage {
    pub screenshot: ScreenshotView,
    pub png_base64: String,
}

/// A rectangle in CSS pixels of the page (scroll offsets included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CaptureRegion {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScreenshotArgs {
    pub session_id: String,
    pub screenshot_id: i64,
}

/// What to capture of the session's preview: the page (`path`, else the module's first
/// screen, else `/`), one element (`selector`) or a rectangle (`region`), at most one of the
/// two, in a viewport of `viewportWidth` x `viewportHeight` (1280 x 800 unless given).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CapturePreviewArgs {
    pub session_id: String,
    #[serde(default)]
    #[ts(optional)]
    pub module_id: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub path: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub selector: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub region: Option<CaptureRegion>,
    #[serde(default)]
    #[ts(optional)]
    pub viewport_width: Option<u32>,
    #[serde(default)]
    #[ts(optional)]
    pub viewport_height: Option<u32>,
}

/// Something the operator pointed at in the preview, sent with a message (`send_message`'s
/// `context`): a picked element (its selector, trimmed outer HTML and computed styles) or a
/// dragged region, with the screenshot `capture_preview` took of it in this session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PointedContext {
    pub screenshot_id: i64,
    /// The page's path on the preview's origin.
    pub page_path: String,
    #[serde(default)]
    #[ts(optional)]
    pub selector: Option<String>,
    /// The element's outer HTML, trimmed by the picking script.
    #[serde(default)]
    #[ts(optional)]
    pub html: Option<String>,
    /// Computed styles of the element, by property name.
    #[serde(default)]
    #[ts(optional)]
    pub styles: Option<std::collections::BTreeMap<String, String>>,
}

/// What an operator message shows of what was pointed at with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PointedChip {
    pub screenshot_id: i64,
    pub kind: ScreenshotKind,
    pub page_path: String,
    pub selector: Option<String>,
}
