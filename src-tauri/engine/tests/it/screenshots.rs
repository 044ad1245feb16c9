//! Screenshots of a session's preview through real headless Chromium: the page, one element
//! and a region, each a PNG of the size asked, kept with the session and read back; refusals
//! change nothing. The preview as evidence: a turn that changed files leaves a `turn`
//! screenshot bound to its checkpoint, after the "before" one at checkpoint 0; a capture
//! that fails is said once and the turn passes; clean-up keeps screenshots, deletion does not.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::*;
use kiln_engine::types::*;
use kiln_engine::{Engine, ErrorCode};
use kiln_model_server::{ModelServer, Step};
use serde_json::json;

/// A one-module workspace previewed as static files: a page with a 120 x 40 button.
fn workspace(dir: &Path) -> PathBuf {
    workspace_with(dir, "root = \"modules/app/site\"\n")
}

/// The same workspace, its `[preview]` table's body given.
fn workspace_with(dir: &Path, preview: &str) -> PathBuf {
    let root = dir.join("fx");
    fill(&root, preview);
    root
}

/// Writes the workspace's files into `root`: `preview` is its `[preview]` table's body (and
/// may go on with more tables).
pub(crate) fn fill(root: &Path, preview: &str) {
    std::fs::create_dir_all(root.join("modules/app/site")).unwrap();
    std::fs::write(root.join("package.json"), r#"{"name":"fx","private":true,"workspaces":["modules/*"]}"#).unwrap();
    std::fs::write(root.join("modules/app/package.json"), r#"{"name":"app","version":"1.0.0"}"#).unwrap();
    std::fs::write(
        root.join("modules/app/site/index.html"),
        "<!doctype html><html><body style=\"margin:0\"><h1>Shop</h1>\
         <button id=\"buy\" style=\"width:120px;height:40px;margin:300px 0 0 50px\">Buy</button></body></html>",
    )
    .unwrap();
    std::fs::write(root.join("kiln.toml"), format!("[modules]\nglobs = [\"modules/*\"]\n\n[preview]\n{preview}"))
        .unwrap();
    std::fs::write(root.join(".gitignore"), ".kiln/\nnode_modules/\n").unwrap();
}

fn capture(id: &str) -> CapturePreviewArgs {
    CapturePreviewArgs {
        session_id: id.into(),
        module_id: None,
        path: None,
        selector: None,
        region: None,
        viewport_width: None,
        viewport_height: None,
    }
}

fn png_size(png: &[u8]) -> (u32, u32) {
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    (u32::from_be_bytes(png[16..20].try_into().unwrap()), u32::from_be_bytes(png[20..24].try_into().unwrap()))
}

pub(crate) async fn image(engine: &Engine, id: &str, shot: i64) -> Vec<u8> {
    use base64::Engine as _;
    let image = engine.get_screenshot(ScreenshotArgs { session_id: id.into(), screenshot_id: shot }).await.unwrap();
    base64::engine::general_purpose::STANDARD.decode(image.png_base64).unwrap()
}

#[tokio::test]
async fn the_page_an_element_and_a_region_are_shot_at_their_sizes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = workspace(tmp.path());
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &root).await;
    let s = create(&engine, "In app make the button red").await;
    wait_setup(&engine, &s.id).await;

    let page = engine.capture_preview(capture(&s.id)).await.unwrap();
    assert_eq!((page.kind, page.width, page.height), (ScreenshotKind::Page, 1280, 800));
    assert_eq!(png_size(&image(&engine, &s.id, page.id).await), (1280, 800));

    let element =
        engine.capture_preview(CapturePreviewArgs { selector: Some("#buy".into()), ..capture(&s.id) }).await.unwrap();
    assert_eq!((element.kind, element.width, element.height), (ScreenshotKind::Element, 120, 40));
    assert_eq!(png_size(&image(&engine, &s.id, element.id).await), (120, 40));

    let region = CaptureRegion { x: 10.0, y: 20.0, width: 300.0, height: 90.0 };
    let shot = engine.capture_preview(CapturePreviewArgs { region: Some(region), ..capture(&s.id) }).await.unwrap();
    assert_eq!((shot.kind, shot.width, shot.height), (ScreenshotKind::Region, 300, 90));

    let view = engine.get_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    let ids: Vec<i64> = view.screenshots.iter().map(|s| s.id).collect();
    assert_eq!(ids, vec![page.id, element.id, shot.id]);
    assert_eq!(view.screenshots[0].checkpoint, Some(0));
}

/// The Chromium that shoots an agent's page runs confined like a gate: no new privileges
/// (so in a Landlock domain), its profile in the session's own temporary directory, and
/// none of Kiln's environment (cargo's variables, here). The profile goes with the capture.
#[tokio::test]
async fn the_screenshot_browser_runs_confined_in_the_session() {
    let tmp = tempfile::tempdir().unwrap();
    let root = workspace(tmp.path());
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &root).await;
    let s = create(&engine, "In app make the button red").await;
    wait_setup(&engine, &s.id).await;
    let profiles = root.join(".kiln/sessions").join(&s.id).join("tmp");
    let marker = format!("HOME={}/capture-", profiles.canonicalize().unwrap_or(profiles.clone()).display());

    // Every process of the capture, as /proc shows it while it runs: (status, environment).
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (done, marker) = (done.clone(), marker.clone());
        std::thread::spawn(move || {
            let mut seen = std::collections::HashMap::new();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                for entry in std::fs::read_dir("/proc").unwrap().flatten() {
                    let dir = entry.path();
                    let Ok(environ) = std::fs::read(dir.join("environ")) else { continue };
                    let environ = String::from_utf8_lossy(&environ).replace('\0', "\n");
                    if environ.lines().any(|l| l.starts_with(&marker)) {
                        // A process that ended between the two reads has no status left to
                        // check: what an earlier scan saw of it stands.
                        let Ok(status) = std::fs::read_to_string(dir.join("status")) else { continue };
                        if status.is_empty() {
                            continue;
                        }
                        seen.insert(entry.file_name(), (status, environ));
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            seen
        })
    };
    let page = engine.capture_preview(capture(&s.id)).await;
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let seen = watcher.join().unwrap();
    let page = page.unwrap();
    assert_eq!((page.width, page.height), (1280, 800));
    assert!(!seen.is_empty(), "no process of the capture had its home in {marker}");
    for (status, environ) in seen.values() {
        assert!(status.lines().any(|l| l.split_whitespace().eq(["NoNewPrivs:", "1"])), "not confined:\n{status}");
        assert!(!environ.contains("CARGO"), "Kiln's environment reached Chromium:\n{environ}");
    }
    let left: Vec<_> = std::fs::read_dir(&profiles).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(left.iter().all(|n| !n.to_string_lossy().starts_with("capture-")), "a profile was left: {left:?}");
}

#[tokio::test]
async fn refusals_keep_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = workspace(tmp.path());
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &root).await;
    let s = create(&engine, "In app make the button red").await;
    wait_setup(&engine, &s.id).await;
    let region = CaptureRegion { x: 0.0, y: 0.0, width: 10.0, height: 10.0 };
    let cases = [
        (
            CapturePreviewArgs { selector: Some("#buy".into()), region: Some(region.clone()), ..capture(&s.id) },
            ErrorCode::InvalidInput,
        ),
        (
            CapturePreviewArgs { region: Some(CaptureRegion { width: 0.0, ..region.clone() }), ..capture(&s.id) },
            ErrorCode::InvalidInput,
        ),
        (
            CapturePreviewArgs { region: Some(CaptureRegion { x: f64::NAN, ..region }), ..capture(&s.id) },
            ErrorCode::InvalidInput,
        ),
        (CapturePreviewArgs { path: Some("https://example.com/".into()), ..capture(&s.id) }, ErrorCode::InvalidInput),
        (CapturePreviewArgs { viewport_width: Some(50), ..capture(&s.id) }, ErrorCode::InvalidInput),
        (CapturePreviewArgs { module_id: Some("nope".into()), ..capture(&s.id) }, ErrorCode::ModuleNotFound),
        (CapturePreviewArgs { selector: Some("#missing".into()), ..capture(&s.id) }, ErrorCode::CaptureFailed),
    ];
    for (args, code) in cases {
        let err = engine.capture_preview(args.clone()).await.unwrap_err();
        assert_eq!(err.code, code, "{args:?}: {err:?}");
    }
    let missing =
        engine.get_screenshot(ScreenshotArgs { session_id: s.id.clone(), screenshot_id: 1 }).await.unwrap_err();
    assert_eq!(missing.code, ErrorCode::ScreenshotNotFound);
    let view = engine.get_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert!(view.screenshots.is_empty(), "{:?}", view.screenshots);
    assert!(!root
        .join(".kiln/sessions")
        .join(&s.id)
        .join("screenshots")
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some()));
}

/// A turn of Kiln's own loop (scripted) that makes the button red, then a passing review.
pub(crate) fn red_button() -> Vec<Step> {
    vec![
        Step::tool(
            "write_file",
            json!({"path": "modules/app/site/index.html", "content": "<!doctype html><html><body style=\"margin:0;background:#c00\"><h1>Shop</h1></body></html>"}),
        ),
        Step::text("Made it red.\nHANDOFF: none - done"),
        Step::text("Looked.\nREVIEW: pass - fine"),
    ]
}

pub(crate) async fn say(engine: &Engine, id: &str, text: &str) {
    let message = SendMessageArgs {
        session_id: id.into(),
        text: text.into(),
        role: None,
        module: None,
        driver: None,
        model: None,
        context: None,
    };
    engine.send_message(message).await.unwrap();
}

/// Waits (at most `limit`) until the session holds `n` screenshots of the kind `turn`.
pub(crate) async fn turn_shots(engine: &Engine, id: &str, n: usize, limit: Duration) -> Vec<ScreenshotView> {
    let deadline = Instant::now() + limit;
    loop {
        let view = engine.get_session(SessionIdArgs { session_id: id.into() }).await.unwrap();
        let shots: Vec<ScreenshotView> =
            view.screenshots.into_iter().filter(|s| s.kind == ScreenshotKind::Turn).collect();
        if shots.len() >= n {
            return shots;
        }
        assert!(Instant::now() < deadline, "only {} turn screenshot(s) after {limit:?}: {shots:?}", shots.len());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub(crate) async fn system_lines(engine: &Engine, id: &str) -> Vec<String> {
    let all = engine
        .get_transcript(GetTranscriptArgs { session_id: id.into(), after: None, before: None, last: None })
        .await
        .unwrap();
    all.into_iter().filter(|e| e.kind == EntryKind::System).map(|e| e.text).collect()
}

fn pixel_is_red(png: &[u8]) -> bool {
    let decoder = png::Decoder::new(std::io::Cursor::new(png));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    // A pixel below the heading, in the middle of the page.
    let at = (400 * info.width as usize + 640) * channels;
    buf[at] > 150 && buf[at + 1] < 60 && buf[at + 2] < 60
}

#[tokio::test]
async fn a_turn_that_changed_files_leaves_its_screenshot_after_the_before_one() {
    let tmp = tempfile::tempdir().unwrap();
    let root = workspace(tmp.path());
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &root).await;
    let server = ModelServer::start(red_button()).await;
    use_scripted_model(&engine, &server, false).await;
    let s = create(&engine, "In app make the page red").await;
    wait_setup(&engine, &s.id).await;
    say(&engine, &s.id, "Make the page red").await;
    let settled = wait_settled(&engine, &s.id, Duration::from_secs(90)).await;
    assert_eq!(settled.state, SessionState::Review, "{:#?}", system_lines(&engine, &s.id).await);

    let shots = turn_shots(&engine, &s.id, 2, Duration::from_secs(60)).await;
    let turn_checkpoint = settled.checkpoints.iter().map(|c| c.sequence).max().unwrap();
    assert!(turn_checkpoint >= 1, "{:?}", settled.checkpoints);
    assert_eq!(shots.iter().map(|s| s.checkpoint).collect::<Vec<_>>(), vec![Some(0), Some(turn_checkpoint)]);
    assert_eq!(shots[1].module_id.as_deref(), Some("app"));
    assert_eq!((shots[1].width, shots[1].height), (1280, 800));
    // The before shows the white page, the after the red one.
    assert!(!pixel_is_red(&image(&engine, &s.id, shots[0].id).await));
    assert!(pixel_is_red(&image(&engine, &s.id, shots[1].id).await));
    let lines = system_lines(&engine, &s.id).await;
    assert!(!lines.iter().any(|l| l.contains("No screenshot")), "{lines:#?}");

    // Clean-up of the archived session keeps its screenshots; deleting it forgets them.
    engine.archive_session(StopArgs { session_id: s.id.clone(), stop: None }).await.unwrap();
    engine.clean_up(CleanUpArgs { apply: Some(true) }).await.unwrap();
    assert_eq!(png_size(&image(&engine, &s.id, shots[1].id).await), (1280, 800));
    let args = DeleteSessionArgs { session_id: s.id.clone(), stop: None, keep_transcript: Some(true) };
    engine.delete_session(args).await.unwrap();
    let view = engine.get_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert!(view.screenshots.is_empty(), "{:?}", view.screenshots);
    let gone = engine.get_screenshot(ScreenshotArgs { session_id: s.id.clone(), screenshot_id: shots[1].id }).await;
    assert_eq!(gone.unwrap_err().code, ErrorCode::ScreenshotNotFound);
}

#[tokio::test]
async fn a_failing_capture_is_said_once_and_the_turn_passes() {
    let tmp = tempfile::tempdir().unwrap();
    // A preview that never becomes ready: every capture fails.
    let root =
        workspace_with(tmp.path(), "command = \"sleep 600\"\nready = \"never printed\"\nready_timeout_seconds = 1\n");
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &root).await;
    let mut script = red_button();
    script.truncate(2);
    script.push(Step::text("Looked.\nREVIEW: pass - fine"));
    let server = ModelServer::start(script).await;
    use_scripted_model(&engine, &server, false).await;
    let s = create(&engine, "In app make the page red").await;
    wait_setup(&engine, &s.id).await;
    say(&engine, &s.id, "Make the page red").await;
    let settled = wait_settled(&engine, &s.id, Duration::from_secs(90)).await;
    assert_eq!(settled.state, SessionState::Review, "{:#?}", system_lines(&engine, &s.id).await);
    // The turn's own capture fails quickly (the preview has crashed by then): wait for the
    // session's view to stop changing rather than for a line that must not come.
    let deadline = Instant::now() + Duration::from_secs(20);
    let said = loop {
        let lines = system_lines(&engine, &s.id).await;
        let said: Vec<String> = lines.into_iter().filter(|l| l.starts_with("No screenshot of the preview")).collect();
        if !said.is_empty() || Instant::now() >= deadline {
            break said;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(said.len(), 1, "{said:#?}");
    let view = engine.get_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert!(view.screenshots.is_empty(), "{:?}", view.screenshots);
    assert_eq!(view.state, SessionState::Review);
}

fn message(id: &str, text: &str, context: Vec<PointedContext>) -> SendMessageArgs {
    SendMessageArgs {
        session_id: id.into(),
        text: text.into(),
        role: None,
        module: None,
        driver: None,
        model: None,
        context: Some(context),
    }
}

/// A picked element goes with the next message: the prompt the model is sent names its
/// selector, page, HTML, styles and screenshot, whose copy the agent can read; the operator
/// message shows it as a chip. Refusals record nothing and send nothing.
#[tokio::test]
async fn what_the_operator_pointed_at_goes_into_the_next_prompt() {
    let tmp = tempfile::tempdir().unwrap();
    let root = workspace(tmp.path());
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &root).await;
    let server = kiln_model_server::ModelServer::start(vec![kiln_model_server::Step::text(
        "Looked at it.\nHANDOFF: none - done",
    )])
    .await;
    use_scripted_model(&engine, &server, false).await;
    let s = create(&engine, "In app make the button red").await;
    wait_setup(&engine, &s.id).await;
    let shot =
        engine.capture_preview(CapturePreviewArgs { selector: Some("#buy".into()), ..capture(&s.id) }).await.unwrap();
    let html = "<button id=\"buy\" style=\"width:120px\">Buy ```now```</button>";
    let picked = PointedContext {
        screenshot_id: shot.id,
        page_path: "/".into(),
        selector: Some("#buy".into()),
        html: Some(html.into()),
        styles: Some([("color".to_string(), "rgb(0, 0, 0)".to_string())].into()),
    };

    let refusals = [
        (vec![PointedContext { screenshot_id: shot.id + 100, ..picked.clone() }], ErrorCode::ScreenshotNotFound),
        (vec![picked.clone(); 9], ErrorCode::InvalidInput),
        (vec![PointedContext { html: Some("x".repeat(9000)), ..picked.clone() }], ErrorCode::InvalidInput),
        (vec![PointedContext { page_path: "//evil.example/".into(), ..picked.clone() }], ErrorCode::InvalidInput),
    ];
    for (context, code) in refusals {
        let err = engine.send_message(message(&s.id, "Make it red", context)).await.unwrap_err();
        assert_eq!(err.code, code, "{err:?}");
    }
    let workdir = root.join(".kiln/sessions").join(&s.id).join("workspace");
    assert!(!workdir.join("reference/attachments/preview").exists(), "nothing copied for a refused message");
    let before = engine
        .get_transcript(GetTranscriptArgs { session_id: s.id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    assert!(before.iter().all(|e| e.kind != EntryKind::User), "a refused message is not recorded");
    assert!(server.requests().is_empty());

    engine.send_message(message(&s.id, "Make this button red", vec![picked])).await.unwrap();
    wait_settled(&engine, &s.id, std::time::Duration::from_secs(60)).await;
    let messages = server.requests()[0].body["messages"].clone();
    let prompt: String =
        messages.as_array().unwrap().iter().filter_map(|m| m["content"].as_str()).collect::<Vec<_>>().join("\n");
    let copy = format!("reference/attachments/preview/screenshot-{}.png", shot.id);
    for expected in
        ["Make this button red", "The element `#buy` on the page `/`", &copy, "````html", "`color: rgb(0, 0, 0)`"]
    {
        assert!(prompt.contains(expected), "{expected} not in {prompt}");
    }
    assert!(prompt.contains(&format!("````html\n{html}\n````")), "the HTML, whole: {prompt}");

    assert_eq!(std::fs::read(workdir.join(&copy)).unwrap(), image(&engine, &s.id, shot.id).await);
    let transcript = engine
        .get_transcript(GetTranscriptArgs { session_id: s.id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    let user = transcript.iter().find(|e| e.kind == EntryKind::User).unwrap();
    assert_eq!(user.text, "Make this button red", "the message itself, without the note");
    let chips = user.context.clone().unwrap();
    assert_eq!(chips.len(), 1);
    assert_eq!(
        (chips[0].screenshot_id, chips[0].kind, chips[0].selector.as_deref(), chips[0].page_path.as_str()),
        (shot.id, ScreenshotKind::Element, Some("#buy"), "/")
    );
}
