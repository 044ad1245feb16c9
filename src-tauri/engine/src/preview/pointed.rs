//! What the operator pointed at in the preview and sent with a message (ARCHITECTURE.md:
//! Preview): picked elements and dragged regions, each with the screenshot
//! `capture_preview` kept. Checked before anything changes (sizes capped, the screenshot
//! this session's own), the screenshots copied where the agent reads them like attachments
//! (`reference/attachments/preview/`, never checkpointed or delivered), and worded for the
//! turn's prompt.

use std::path::PathBuf;

use crate::ids::SessionId;
use crate::workspace::Workspace;
use kiln_records::store::screenshots;
use kiln_runtime::paths;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::{PointedChip, PointedContext, ScreenshotKind};

/// Things pointed at that one message may carry.
pub(crate) const MAX_ITEMS: usize = 8;
const MAX_SELECTOR: usize = 2000;
/// The picking script trims at 4000 characters; this leaves room for its note.
const MAX_HTML: usize = 8 * 1024;
const MAX_STYLES: usize = 32;
const MAX_STYLE_TEXT: usize = 512;
const MAX_PATH: usize = 2000;

/// Where in the working copy the screenshots are copied.
const IN_WORKDIR: &str = "reference/attachments/preview";

/// One thing pointed at, checked.
pub(crate) struct Pointed {
    context: PointedContext,
    kind: ScreenshotKind,
    /// The screenshot as kept with the session.
    source: PathBuf,
    /// Its copy's name in the working copy, relative to its root.
    copy: String,
}

/// Checks everything pointed at, before anything is written: INVALID_INPUT for too many or
/// too large, SCREENSHOT_NOT_FOUND for a screenshot that is not this session's.
pub(crate) async fn check(ws: &Workspace, id: &SessionId, context: &[PointedContext]) -> Result<Vec<Pointed>> {
    if context.len() > MAX_ITEMS {
        return Err(ApiError::invalid(format!(
            "a message carries at most {MAX_ITEMS} things pointed at in the preview"
        )));
    }
    let mut checked = Vec::with_capacity(context.len());
    for item in context {
        check_sizes(item)?;
        let not_found = || {
            ApiError::new(
                ErrorCode::ScreenshotNotFound,
                format!("session {id} has no screenshot {}: capture it again", item.screenshot_id),
            )
        };
        let row = screenshots::get(&ws.pool, id.as_str(), item.screenshot_id).await?.ok_or_else(not_found)?;
        let source = super::shots::file(ws, id, row.id);
        if !source.is_file() {
            return Err(not_found());
        }
        let kind = screenshots::view(&row)?.kind;
        checked.push(Pointed {
            context: item.clone(),
            kind,
            source,
            copy: format!("{IN_WORKDIR}/screenshot-{}.png", row.id),
        });
    }
    Ok(checked)
}

fn check_sizes(item: &PointedContext) -> Result<()> {
    let path = &item.page_path;
    if !path.starts_with('/') || path.starts_with("//") || path.len() > MAX_PATH || path.chars().any(char::is_control) {
        return Err(ApiError::invalid("a pointed page must be a local path on the preview, starting with one `/`"));
    }
    if let Some(selector) = &item.selector {
        if selector.trim().is_empty() || selector.len() > MAX_SELECTOR || selector.chars().any(char::is_control) {
            return Err(ApiError::invalid(format!("a selector must be 1 to {MAX_SELECTOR} characters on one line")));
        }
    }
    if item.html.as_ref().is_some_and(|html| html.len() > MAX_HTML) {
        return Err(ApiError::invalid(format!("a picked element's HTML must be at most {MAX_HTML} bytes")));
    }
    if let Some(styles) = &item.styles {
        let too_long = |text: &String| text.len() > MAX_STYLE_TEXT || text.chars().any(char::is_control);
        if styles.len() > MAX_STYLES
            || styles.iter().any(|(name, value)| name.is_empty() || too_long(name) || too_long(value))
        {
            return Err(ApiError::invalid(format!(
                "a picked element carries at most {MAX_STYLES} styles, each at most {MAX_STYLE_TEXT} characters on one line"
            )));
        }
    }
    Ok(())
}

/// Copies the screenshots into the working copy, where the prompt names them.
pub(crate) fn copy(ws: &Workspace, id: &SessionId, pointed: &[Pointed]) -> Result<()> {
    let workdir = ws.session_workdir(id);
    for item in pointed {
        let bytes = std::fs::read(&item.source).map_err(|e| ApiError::internal("reading a screenshot", e))?;
        let (dir, name) = item.copy.rsplit_once('/').expect("a directory and a name");
        crate::attachments::write_new(&paths::confine_no_links(&workdir, dir)?.join(name), &bytes)?;
    }
    Ok(())
}

/// What the operator message shows.
pub(crate) fn chips(pointed: &[Pointed]) -> Vec<PointedChip> {
    pointed
        .iter()
        .map(|p| PointedChip {
            screenshot_id: p.context.screenshot_id,
            kind: p.kind,
            page_path: p.context.page_path.clone(),
            selector: p.context.selector.clone(),
        })
        .collect()
}

/// The part of the turn's prompt that says what was pointed at; `None` when nothing was.
pub(crate) fn note(pointed: &[Pointed]) -> Option<String> {
    if pointed.is_empty() {
        return None;
    }
    let mut out = format!(
        "The operator pointed at {} thing(s) in the running application (the preview) with this message; \
         each screenshot is a file of the working copy, to look at.",
        pointed.len()
    );
    for (n, item) in pointed.iter().enumerate() {
        let c = &item.context;
        let n = n + 1;
        let what = match (&c.selector, item.kind) {
            (Some(selector), _) => format!("The element `{selector}`"),
            (None, ScreenshotKind::Region) => "A region".to_string(),
            (None, _) => "The page".to_string(),
        };
        out.push_str(&format!("\n\n{n}. {what} on the page `{}`. Screenshot: `{}`.", c.page_path, item.copy));
        if let Some(html) = c.html.as_deref().filter(|h| !h.trim().is_empty()) {
            let fence = "`".repeat(longest_backtick_run(html).max(2) + 1);
            out.push_str(&format!("\nIts HTML (trimmed):\n{fence}html\n{}\n{fence}", html.trim_end()));
        }
        if let Some(styles) = c.styles.as_ref().filter(|s| !s.is_empty()) {
            let listed: Vec<String> = styles.iter().map(|(name, value)| format!("`{name}: {value}`")).collect();
            out.push_str(&format!("\nIts computed styles: {}.", listed.join(", ")));
        }
    }
    Some(out)
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_with_backticks_gets_a_longer_fence() {
        assert_eq!(longest_backtick_run("a ``` b ` c"), 3);
        assert_eq!(longest_backtick_run("plain"), 0);
    }

    #[test]
    fn sizes_are_capped() {
        let fine = PointedContext {
            screenshot_id: 1,
            page_path: "/shop".into(),
            selector: Some("#buy".into()),
            html: Some("<button>Buy</button>".into()),
            styles: Some([("color".to_string(), "red".to_string())].into()),
        };
        assert!(check_sizes(&fine).is_ok());
        let refused = [
            PointedContext { page_path: "https://example.com/".into(), ..fine.clone() },
            PointedContext { selector: Some("a\nb".into()), ..fine.clone() },
            PointedContext { html: Some("x".repeat(MAX_HTML + 1)), ..fine.clone() },
            PointedContext { styles: Some((0..40).map(|n| (format!("p{n}"), "v".to_string())).collect()), ..fine },
        ];
        for item in refused {
            assert_eq!(check_sizes(&item).unwrap_err().code, ErrorCode::InvalidInput, "{item:?}");
        }
    }
}
