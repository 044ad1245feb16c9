//! Screenshots of a session's preview through real headless Chromium: the page, one element
//! and a region, each a PNG of the size asked, kept with the session and read back; refusals
//! change nothing.

use std::path::{Path, PathBuf};

use crate::common::*;
use kiln_engine::types::*;
use kiln_engine::{Engine, ErrorCode};

/// A one-module workspace previewed as static files: a page with a 120 x 40 button.
fn workspace(dir: &Path) -> PathBuf {
    let root = dir.join("fx");
    std::fs::create_dir_all(root.join("modules/app/site")).unwrap();
    std::fs::write(root.join("package.json"), r#"{"name":"fx","private":true,"workspaces":["modules/*"]}"#).unwrap();
    std::fs::write(root.join("modules/app/package.json"), r#"{"name":"app","version":"1.0.0"}"#).unwrap();
    std::fs::write(
        root.join("modules/app/site/index.html"),
        "<!doctype html><html><body style=\"margin:0\"><h1>Shop</h1>\
         <button id=\"buy\" style=\"width:120px;height:40px;margin:300px 0 0 50px\">Buy</button></body></html>",
    )
    .unwrap();
    std::fs::write(
        root.join("kiln.toml"),
        "[modules]\nglobs = [\"modules/*\"]\n\n[preview]\nroot = \"modules/app/site\"\n",
    )
    .unwrap();
    root
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

async fn image(engine: &Engine, id: &str, shot: i64) -> Vec<u8> {
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
