//! Screenshots of a preview's page: headless Chromium driven through the DevTools protocol
//! over a pipe (`--remote-debugging-pipe`), so no debugging port is open for another local
//! process to reach, and the gateway's secret travels in a protocol message, not in a
//! command line. One Chromium per capture, with a fresh profile in the session's own
//! temporary directory that is removed after: captures are rare (after a turn, on a pick)
//! and must not share cookies or storage.
//!
//! The page is the session's application, code an agent wrote, so Chromium runs confined
//! like a gate (`kiln_runtime::sandbox`): Landlock lets it write only its profile, a scratch
//! directory of its own and `/dev/shm`; Kiln's own state is not even readable; it cannot
//! signal a process outside its domain; and its environment is a handful of variables
//! (`PATH`, a locale, its own home). Chromium's own sandbox stays on, except as root,
//! where it cannot start (CI, containers).

use std::os::fd::OwnedFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::time::{timeout_at, Instant};

use kiln_runtime::process::{Command, Env};
use kiln_types::error::{ApiError, ErrorCode, Result};

/// The whole capture, from start to the PNG: a page that takes longer is not shot.
const CAPTURE_LIMIT: Duration = Duration::from_secs(40);
/// After `load`, how long to wait for the network to settle (a dev server's hot-reload
/// socket may keep it busy forever): the page is shot as it is then.
const SETTLE_LIMIT: Duration = Duration::from_secs(6);

/// What part of the page to shoot.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Frame {
    /// The viewport.
    Page,
    /// A rectangle in CSS pixels of the document (scroll offsets included).
    Region { x: f64, y: f64, width: f64, height: f64 },
    /// The first element matching a CSS selector, scrolled into view.
    Element(String),
}

/// A PNG and its size in pixels.
#[derive(Debug, Clone)]
pub(crate) struct Shot {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

/// The Chromium to drive: `KILN_CHROMIUM` when set, else the first of the usual names on
/// `PATH`. `None` when there is none (captures are then unavailable, and said so).
pub(crate) fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("KILN_CHROMIUM").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let dirs = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"] {
        for dir in std::env::split_paths(&dirs) {
            let candidate = dir.join(name);
            if is_executable(&candidate) {
                return Some(candidate);
            }
        }
    }
    None
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

/// Loads `url` in a `viewport` (width, height in CSS pixels) and shoots `frame`, with
/// Chromium's profile in `session_dir`'s temporary directory.
/// CAPTURE_UNAVAILABLE when no Chromium is installed; CAPTURE_FAILED when the page does
/// not load, the element is not there, Chromium fails, or it cannot be confined.
pub(crate) async fn capture(session_dir: &Path, url: &str, viewport: (u32, u32), frame: &Frame) -> Result<Shot> {
    let Some(chromium) = chromium() else {
        return Err(ApiError::new(
            ErrorCode::CaptureUnavailable,
            "No Chromium is installed for screenshots: install the `chromium` package, or set KILN_CHROMIUM to its path.",
        ));
    };
    let (width, height) = (viewport.0.clamp(200, 4000), viewport.1.clamp(150, 4000));
    let tmp = session_dir.join("tmp");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&tmp)
        .map_err(|e| failed(format!("the profile's directory: {e}")))?;
    let profile = tempfile::Builder::new().prefix("capture-").tempdir_in(&tmp).map_err(|e| failed(format!("{e}")))?;
    // Chromium makes a UNIX socket in its temporary directory, whose path must stay under
    // 108 bytes: a short one of its own (0700), as a session's path is long.
    let scratch = tempfile::Builder::new().prefix("kiln-capture-").tempdir().map_err(|e| failed(format!("{e}")))?;
    let env = environment(profile.path(), scratch.path());
    let prepared = confinement(&[profile.path(), scratch.path()], &env)
        .prepare()
        .map_err(|e| failed(format!("Chromium could not be confined: {e}")))?;
    let (to_chromium_read, to_chromium_write) = pipe()?;
    let (from_chromium_read, from_chromium_write) = pipe()?;
    let mut command = Command::new(&chromium, profile.path(), Env::Only(&env))
        .args([
            "--headless",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--disable-extensions",
            "--mute-audio",
            "--hide-scrollbars",
            "--no-proxy-server",
            "--remote-debugging-pipe",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--window-size={width},{height}"));
    // Chromium's own sandbox cannot start as root (CI, containers); the page is the
    // session's own application, loaded from loopback.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        command = command.arg("--no-sandbox");
    }
    let command = command.arg("about:blank").pass_fds(vec![(to_chromium_read, 3), (from_chromium_write, 4)]);
    let mut child = command
        .without_stderr()
        .killed_with_kiln()
        .spawn(Some(&prepared))
        .map_err(|e| failed(format!("Chromium did not start: {e}")))?;
    // Nothing is read from its output; drained so a chatty Chromium never blocks on it.
    if let Some(mut out) = child.inner.stdout.take() {
        tokio::spawn(async move { tokio::io::copy(&mut out, &mut tokio::io::sink()).await });
    }
    let mut cdp = Cdp::new(to_chromium_write, from_chromium_read);
    let deadline = Instant::now() + CAPTURE_LIMIT;
    let shot = cdp.shoot(url, (width, height), frame, deadline).await;
    let _ = timeout_at(deadline, cdp.call(None, "Browser.close", json!({}))).await;
    if timeout_at(Instant::now() + Duration::from_secs(3), child.wait()).await.is_err() {
        child.kill();
    }
    shot
}

/// Chromium's whole environment: where to find programs, a locale, its profile as home and
/// `scratch` as temporary directory. Nothing else of the user's (keys, agent sockets, the
/// display), so the page's process holds nothing worth taking.
fn environment(profile: &Path, scratch: &Path) -> Vec<(String, String)> {
    let profile = profile.display().to_string();
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
    let mut env = vec![
        ("PATH".to_string(), path),
        ("HOME".to_string(), profile.clone()),
        ("TMPDIR".to_string(), scratch.display().to_string()),
        ("XDG_CONFIG_HOME".to_string(), format!("{profile}/.config")),
        ("XDG_CACHE_HOME".to_string(), format!("{profile}/.cache")),
    ];
    for key in ["LANG", "LC_ALL", "TZ"] {
        if let Ok(value) = std::env::var(key) {
            env.push((key.to_string(), value));
        }
    }
    env
}

/// Where Chromium may write: its profile and temporary directory, `/dev/shm` (its processes
/// share memory there) and the devices a program writes to. Kiln's own state is hidden, but
/// for the profile in it.
fn confinement(dirs: &[&Path], env: &[(String, String)]) -> kiln_runtime::sandbox::Confinement {
    let mut confinement = kiln_runtime::sandbox::Confinement::for_commands(env);
    for dir in dirs {
        confinement.allow(*dir);
    }
    confinement.allow("/dev/shm");
    confinement.hide_kiln_state(dirs);
    confinement
}

fn failed(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::CaptureFailed, message.into())
}

fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 writes two descriptors into `fds`, which we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(failed(format!("pipe: {}", std::io::Error::last_os_error())));
    }
    // SAFETY: both were just made by pipe2 and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A DevTools protocol connection over Chromium's pipe: NUL-terminated JSON messages.
struct Cdp {
    writer: std::fs::File,
    messages: mpsc::UnboundedReceiver<Value>,
    /// Events read while waiting for an answer, kept for `wait_event`.
    events: Vec<Value>,
    next_id: u64,
}

impl Cdp {
    fn new(writer: OwnedFd, reader: OwnedFd) -> Cdp {
        let (tx, messages) = mpsc::unbounded_channel();
        let mut reader = std::fs::File::from(reader);
        std::thread::spawn(move || {
            use std::io::Read;
            let mut pending = Vec::new();
            let mut buf = [0u8; 64 * 1024];
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                pending.extend_from_slice(&buf[..n]);
                while let Some(end) = pending.iter().position(|b| *b == 0) {
                    let message: Vec<u8> = pending.drain(..=end).collect();
                    if let Ok(value) = serde_json::from_slice::<Value>(&message[..message.len() - 1]) {
                        if tx.send(value).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Cdp { writer: std::fs::File::from(writer), messages, events: Vec::new(), next_id: 0 }
    }

    async fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Result<Value> {
        use std::io::Write;
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = serde_json::to_vec(&message).expect("json");
        bytes.push(0);
        self.writer.write_all(&bytes).map_err(|e| failed(format!("Chromium went away: {e}")))?;
        loop {
            let message = self.messages.recv().await.ok_or_else(|| failed("Chromium went away"))?;
            if message.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(error) = message.get("error") {
                    return Err(failed(format!("{method}: {}", error["message"].as_str().unwrap_or("failed"))));
                }
                return Ok(message.get("result").cloned().unwrap_or(Value::Null));
            }
            if message.get("method").is_some() {
                self.events.push(message);
            }
        }
    }

    /// Waits until an event `matches` (one already read counts), or `until`.
    async fn wait_event(&mut self, until: Instant, matches: impl Fn(&Value) -> bool) -> bool {
        if self.events.iter().any(&matches) {
            return true;
        }
        loop {
            match timeout_at(until, self.messages.recv()).await {
                Ok(Some(message)) => {
                    let hit = matches(&message);
                    self.events.push(message);
                    if hit {
                        return true;
                    }
                }
                _ => return false,
            }
        }
    }

    async fn shoot(&mut self, url: &str, viewport: (u32, u32), frame: &Frame, deadline: Instant) -> Result<Shot> {
        let work = async {
            let target = self.call(None, "Target.createTarget", json!({ "url": "about:blank" })).await?;
            let target_id = target["targetId"].as_str().unwrap_or_default().to_string();
            let attached =
                self.call(None, "Target.attachToTarget", json!({ "targetId": target_id, "flatten": true })).await?;
            let session = attached["sessionId"].as_str().unwrap_or_default().to_string();
            let s = Some(session.as_str());
            self.call(
                s,
                "Emulation.setDeviceMetricsOverride",
                json!({ "width": viewport.0, "height": viewport.1, "deviceScaleFactor": 1, "mobile": false }),
            )
            .await?;
            self.call(s, "Page.enable", json!({})).await?;
            self.call(s, "Page.setLifecycleEventsEnabled", json!({ "enabled": true })).await?;
            let navigated = self.call(s, "Page.navigate", json!({ "url": url })).await?;
            if let Some(error) = navigated.get("errorText").and_then(Value::as_str).filter(|e| !e.is_empty()) {
                return Err(failed(format!("the page did not load: {error}")));
            }
            let loader = navigated["loaderId"].as_str().unwrap_or_default().to_string();
            let lifecycle = |name: &'static str, loader: String| {
                move |m: &Value| {
                    m["method"] == "Page.lifecycleEvent"
                        && m["params"]["name"] == name
                        && m["params"]["loaderId"] == loader
                }
            };
            if !self.wait_event(deadline, lifecycle("load", loader.clone())).await {
                return Err(failed("the page did not finish loading in time"));
            }
            let settle = (Instant::now() + SETTLE_LIMIT).min(deadline);
            self.wait_event(settle, lifecycle("networkIdle", loader)).await;
            let clip = match frame {
                Frame::Page => None,
                Frame::Region { x, y, width, height } => Some(json!({
                    "x": x.max(0.0), "y": y.max(0.0), "width": width.max(1.0), "height": height.max(1.0), "scale": 1
                })),
                Frame::Element(selector) => Some(self.element_clip(s, selector).await?),
            };
            let mut params = json!({ "format": "png", "captureBeyondViewport": clip.is_some() });
            if let Some(clip) = clip {
                params["clip"] = clip;
            }
            let shot = self.call(s, "Page.captureScreenshot", params).await?;
            let png = base64::engine::general_purpose::STANDARD
                .decode(shot["data"].as_str().unwrap_or_default())
                .map_err(|e| failed(format!("screenshot data: {e}")))?;
            let (width, height) = png_size(&png).ok_or_else(|| failed("Chromium's screenshot is not a PNG"))?;
            Ok(Shot { png, width, height })
        };
        timeout_at(deadline, work).await.unwrap_or_else(|_| Err(failed("the capture took too long")))
    }

    /// The element's box in document coordinates, after scrolling it into view.
    async fn element_clip(&mut self, session: Option<&str>, selector: &str) -> Result<Value> {
        let expression = format!(
            "(() => {{ const e = document.querySelector({}); if (!e) return null; \
             e.scrollIntoView({{block: 'center', inline: 'center'}}); const r = e.getBoundingClientRect(); \
             return {{x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height}}; }})()",
            serde_json::to_string(selector).expect("json")
        );
        let answer =
            self.call(session, "Runtime.evaluate", json!({ "expression": expression, "returnByValue": true })).await?;
        if let Some(text) = answer["exceptionDetails"]["exception"]["description"].as_str() {
            return Err(failed(format!("the selector `{selector}` is not valid: {text}")));
        }
        let rect = &answer["result"]["value"];
        if rect.is_null() {
            return Err(failed(format!("no element matches `{selector}`")));
        }
        let number = |k: &str| rect[k].as_f64().unwrap_or(0.0);
        Ok(json!({
            "x": number("x").max(0.0), "y": number("y").max(0.0),
            "width": number("width").max(1.0), "height": number("height").max(1.0), "scale": 1
        }))
    }
}

/// Width and height from a PNG's IHDR chunk; `None` when it is not a PNG.
pub(crate) fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    if png.len() < 24 || !png.starts_with(SIGNATURE) || &png[12..16] != b"IHDR" {
        return None;
    }
    let width = u32::from_be_bytes(png[16..20].try_into().ok()?);
    let height = u32::from_be_bytes(png[20..24].try_into().ok()?);
    Some((width, height))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_size_reads_the_header_and_refuses_the_rest() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&640u32.to_be_bytes());
        png.extend_from_slice(&480u32.to_be_bytes());
        assert_eq!(png_size(&png), Some((640, 480)));
        assert_eq!(png_size(b"GIF89a............................"), None);
        assert_eq!(png_size(&png[..20]), None);
    }
}
