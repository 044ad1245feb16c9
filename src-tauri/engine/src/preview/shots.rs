//! A session's preview screenshots: taken through the preview's own gateway (started when
//! it is not running), kept as `screenshots/<id>.png` in the session's directory with a row
//! in `kiln.db` that says what they show. The operator's captures (`capture_preview`) and the
//! screenshots taken after a turn go through `take`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;

use super::capture::{self, Frame};
use super::Preview;
use crate::events::EventBus;
use crate::ids::SessionId;
use crate::workspace::{Context, Workspace};
use kiln_records::objects::files::Kind;
use kiln_records::store::screenshots::{self, NewScreenshot};
use kiln_runtime::clock::now;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::{CapturePreviewArgs, PreviewState, ScreenshotArgs, ScreenshotImage, ScreenshotKind, ScreenshotView};

/// The viewport a capture is taken in unless the request says otherwise.
pub(crate) const DEFAULT_VIEWPORT: (u32, u32) = (1280, 800);

/// Where a screenshot's PNG is kept.
pub(crate) fn file(ws: &Workspace, session: &SessionId, id: i64) -> PathBuf {
    ws.session_dir(session).join("screenshots").join(format!("{id}.png"))
}

/// What to shoot, where.
pub(crate) struct Take<'a> {
    pub kind: ScreenshotKind,
    pub module: Option<&'a str>,
    /// A local path on the preview's origin; the module's first screen (else `/`) when absent.
    pub path: Option<&'a str>,
    pub frame: Frame,
    pub viewport: (u32, u32),
}

/// Captures the session's preview (starting it when it is not running, and waiting until it
/// is ready) and keeps the screenshot, bound to the working copy's current checkpoint.
pub(crate) async fn take(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    id: &SessionId,
    t: Take<'_>,
) -> Result<ScreenshotView> {
    take_at(ws, events, id, t, None).await
}

/// `take`, bound to `checkpoint` when given: a turn's screenshot belongs to the turn's
/// checkpoint even when the next turn has taken another by the time it is shot.
pub(crate) async fn take_at(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    id: &SessionId,
    t: Take<'_>,
    checkpoint: Option<i64>,
) -> Result<ScreenshotView> {
    let session = crate::session::view(ws, id).await?;
    let path = match t.path {
        Some(path) => path.to_string(),
        None => {
            let urls = super::module_urls(ws, &session);
            let module = t.module.and_then(|m| urls.iter().find(|u| u.module_id == m)).or(urls.first());
            module.map(|u| u.path.clone()).unwrap_or_else(|| "/".into())
        }
    };
    super::launch(ws, events, id).await?;
    let url = ready_url(ws, id, &path).await?;
    let shot = capture::capture(&ws.session_dir(id), &url, t.viewport, &t.frame).await?;
    let checkpoint = checkpoint.or_else(|| session.checkpoints.iter().find(|c| c.current).map(|c| c.sequence));
    let shot_id = screenshots::insert(
        &ws.pool,
        NewScreenshot {
            session: id.as_str(),
            kind: t.kind,
            checkpoint,
            module: t.module,
            page_path: &path,
            width: shot.width,
            height: shot.height,
            bytes: shot.png.len() as u64,
            at: &now(),
        },
    )
    .await?;
    let target = file(ws, id, shot_id);
    let written = async {
        tokio::fs::create_dir_all(target.parent().expect("a parent")).await?;
        tokio::fs::write(&target, &shot.png).await
    };
    if let Err(e) = written.await {
        screenshots::delete(&ws.pool, id.as_str(), shot_id).await?;
        return Err(ApiError::internal("writing the screenshot", e));
    }
    // A delivery artifact: in the bucket too, when there is one. The screenshot is kept
    // here either way (a bucket that is down costs other hosts its image, not this one).
    if let Some(bucket) = &ws.objects {
        let kept = Kind::Screenshot;
        if let Err(e) =
            kiln_records::objects::files::keep(bucket, id.as_str(), kept, &shot_id.to_string(), shot.png.clone()).await
        {
            tracing::warn!("screenshot {shot_id} of {id} not in the bucket: {}", e.message);
        }
    }
    let row = screenshots::get(&ws.pool, id.as_str(), shot_id).await?.expect("just written");
    screenshots::view(&row)
}

/// The gateway's entry URL for `path`, once the preview answers (its `ready`).
async fn ready_url(ws: &Workspace, id: &SessionId, path: &str) -> Result<String> {
    let wait = Duration::from_secs(ws.config.preview.ready_timeout_seconds.unwrap_or(60)) + Duration::from_secs(5);
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let preview = ws.previews.get::<Preview>(id.as_str());
        let Some(preview) = preview else {
            return Err(ApiError::new(ErrorCode::CaptureFailed, "the preview stopped before it could be captured"));
        };
        match preview.state() {
            PreviewState::Ready => {
                let gateway = preview.gateway.lock().unwrap();
                let gateway =
                    gateway.as_ref().ok_or_else(|| ApiError::new(ErrorCode::CaptureFailed, "the preview stopped"))?;
                return Ok(gateway.enter_url(path));
            }
            PreviewState::Crashed | PreviewState::Stopped => {
                let why = preview.view().message.unwrap_or_else(|| "it is not running".into());
                return Err(ApiError::new(ErrorCode::CaptureFailed, format!("the preview is not running: {why}")));
            }
            PreviewState::Starting | PreviewState::Restarting => {}
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(ApiError::new(ErrorCode::CaptureFailed, "the preview did not become ready in time"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `capture_preview`: the operator's capture of the page, an element or a region.
pub(crate) async fn capture_preview(cx: &Context, args: CapturePreviewArgs) -> Result<ScreenshotView> {
    let Context { ws, events } = cx;
    let id = SessionId::parse(&args.session_id)?;
    let invalid = |m: &str| ApiError::new(ErrorCode::InvalidInput, m.to_string());
    let (kind, frame) = match (&args.selector, &args.region) {
        (Some(_), Some(_)) => return Err(invalid("give a selector or a region, not both")),
        (Some(selector), None) => {
            let selector = selector.trim();
            if selector.is_empty() || selector.len() > 2000 {
                return Err(invalid("the selector must be 1 to 2000 characters"));
            }
            (ScreenshotKind::Element, Frame::Element(selector.to_string()))
        }
        (None, Some(r)) => {
            let fine = |v: f64, max: f64| v.is_finite() && (0.0..=max).contains(&v);
            if !(fine(r.x, 100_000.0) && fine(r.y, 100_000.0) && fine(r.width, 10_000.0) && fine(r.height, 10_000.0))
                || r.width < 1.0
                || r.height < 1.0
            {
                return Err(invalid(
                    "the region must be inside the page, at least 1 pixel and at most 10000 wide and high",
                ));
            }
            (ScreenshotKind::Region, Frame::Region { x: r.x, y: r.y, width: r.width, height: r.height })
        }
        (None, None) => (ScreenshotKind::Page, Frame::Page),
    };
    if let Some(path) = &args.path {
        if !path.starts_with('/') || path.starts_with("//") || path.len() > 2000 || path.contains(['\n', '\r']) {
            return Err(invalid("the path must be a local path on the preview, starting with one `/`"));
        }
    }
    let viewport =
        (args.viewport_width.unwrap_or(DEFAULT_VIEWPORT.0), args.viewport_height.unwrap_or(DEFAULT_VIEWPORT.1));
    if !(200..=4000).contains(&viewport.0) || !(150..=4000).contains(&viewport.1) {
        return Err(invalid("the viewport must be 200 to 4000 pixels wide and 150 to 4000 high"));
    }
    let session = crate::session::view(ws, &id).await?;
    if let Some(module) = &args.module_id {
        if !session.modules.iter().any(|m| &m.id == module) {
            return Err(ApiError::new(ErrorCode::ModuleNotFound, format!("session {id} has no module `{module}`")));
        }
    }
    take(ws, events, &id, Take { kind, module: args.module_id.as_deref(), path: args.path.as_deref(), frame, viewport })
        .await
}

/// `get_screenshot`: the screenshot and its PNG.
pub(crate) async fn image(cx: &Context, args: ScreenshotArgs) -> Result<ScreenshotImage> {
    let ws = &cx.ws;
    let id = SessionId::parse(&args.session_id)?;
    crate::session::view(ws, &id).await?;
    let not_found = || {
        ApiError::new(ErrorCode::ScreenshotNotFound, format!("session {id} has no screenshot {}", args.screenshot_id))
    };
    let row = screenshots::get(&ws.pool, id.as_str(), args.screenshot_id).await?.ok_or_else(not_found)?;
    let png = match tokio::fs::read(file(ws, &id, row.id)).await {
        Ok(png) => png,
        // Taken on another host (or this one's copy lost): the bucket's, when it has it.
        Err(_) => match &ws.objects {
            Some(bucket) => {
                kiln_records::objects::files::recall(bucket, id.as_str(), Kind::Screenshot, &row.id.to_string())
                    .await?
                    .ok_or_else(not_found)?
            }
            None => return Err(not_found()),
        },
    };
    Ok(ScreenshotImage {
        screenshot: screenshots::view(&row)?,
        png_base64: base64::engine::general_purpose::STANDARD.encode(png),
    })
}
