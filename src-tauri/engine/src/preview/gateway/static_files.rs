//! The static preview: files of `[preview] root` in the session's working copy. The URL
//! path goes through `paths::confine` like every name Kiln did not make itself, so
//! `..`, `.git`, `.kiln` and links leading out are refused (404), and the file is
//! opened without following a link planted after that check.

use std::path::Path;

use futures_util::StreamExt;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{
    HeaderValue, ALLOW, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, LOCATION, X_CONTENT_TYPE_OPTIONS,
};
use hyper::{Method, Request, Response, StatusCode};
use percent_encoding::percent_decode_str;

use super::reply::{self, Body, BoxError};
use crate::paths;

pub(super) async fn serve(root: &Path, request: &Request<Incoming>) -> Response<Body> {
    let head = request.method() == Method::HEAD;
    if request.method() != Method::GET && !head {
        let mut refused =
            reply::page(StatusCode::METHOD_NOT_ALLOWED, "Not allowed", "A static preview only reads files.", false);
        refused.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return refused;
    }
    let raw = request.uri().path();
    let Ok(decoded) = percent_decode_str(raw).decode_utf8() else { return not_found() };
    let relative = match decoded.trim_start_matches('/') {
        "" => ".".to_string(),
        relative => relative.to_string(),
    };
    let Ok(mut file) = paths::confine(root, &relative) else { return not_found() };
    let Ok(mut metadata) = tokio::fs::metadata(&file).await else { return not_found() };
    if metadata.is_dir() {
        if !raw.ends_with('/') {
            // So the page's relative links resolve inside the directory. The location is
            // relative (`./<last segment>/`): the path itself as the location would turn
            // `//evil.example` into a link to another site.
            let query = request.uri().query().map(|q| format!("?{q}")).unwrap_or_default();
            let mut moved = reply::empty_response(StatusCode::FOUND);
            if let Ok(location) = HeaderValue::from_str(&format!("{}{query}", directory_location(raw))) {
                moved.headers_mut().insert(LOCATION, location);
            }
            moved.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
            return moved;
        }
        // `index.html` itself may be a link leading out: confined again.
        let Ok(index) = paths::confine(root, &format!("{relative}/index.html")) else { return not_found() };
        let Ok(index_metadata) = tokio::fs::metadata(&index).await else { return not_found() };
        (file, metadata) = (index, index_metadata);
    }
    if !metadata.is_file() {
        return not_found();
    }
    let Ok(opened) = open_no_follow(&file).await else { return not_found() };
    // The length of what was opened, not of what was looked at before.
    let Ok(metadata) = opened.metadata().await else { return not_found() };
    if !metadata.is_file() {
        return not_found();
    }

    let body = if head {
        reply::empty()
    } else {
        let frames =
            tokio_util::io::ReaderStream::new(opened).map(|chunk| chunk.map(Frame::data).map_err(BoxError::from));
        StreamBody::new(frames).boxed_unsync()
    };
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, mime_for(&file));
    headers.insert(CONTENT_LENGTH, HeaderValue::from(metadata.len()));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// Where a directory asked for without its trailing slash moves to: `./<last segment>/`,
/// relative to the page, so however many slashes lead the path (`//evil.example`,
/// which a browser reads as another host) the answer stays on the preview's origin.
fn directory_location(raw: &str) -> String {
    let last = raw.trim_start_matches('/').rsplit('/').next().unwrap_or_default();
    format!("./{last}/")
}

fn not_found() -> Response<Body> {
    reply::page(StatusCode::NOT_FOUND, "Not found", "There is no such file in the preview.", false)
}

/// Opens for reading, refusing a link in the last place (where a link could have been
/// put since `confine` resolved the path).
async fn open_no_follow(file: &Path) -> std::io::Result<tokio::fs::File> {
    let mut options = tokio::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    options.custom_flags(libc::O_NOFOLLOW);
    options.open(file).await
}

/// The Content-Type by extension, by the rule every listener of Kiln's shares.
fn mime_for(path: &Path) -> HeaderValue {
    HeaderValue::try_from(crate::listening::content_type(path))
        .unwrap_or(HeaderValue::from_static("application/octet-stream"))
}
