//! The static preview: files of `[preview] root` in the session's working copy, held open
//! since the preview started. The URL path is checked by `paths::relative` like every
//! name Kiln did not make itself, then opened beneath that handle (`paths::beneath`), so
//! `..`, `.git`, `.kiln` and links leading out are refused (404), however the tree is
//! changed meanwhile.

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
use kiln_runtime::paths::{self, beneath::Beneath};

pub(super) async fn serve(root: &Beneath, request: &Request<Incoming>) -> Response<Body> {
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
    let Ok(mut file) = paths::relative(&relative) else { return not_found() };
    let Ok(mut opened) = root.open_read(&file) else { return not_found() };
    let Ok(mut metadata) = opened.metadata() else { return not_found() };
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
        file.push("index.html");
        let Ok(index) = root.open_read(&file) else { return not_found() };
        let Ok(index_metadata) = index.metadata() else { return not_found() };
        (opened, metadata) = (index, index_metadata);
    }
    // The length of what was opened: nothing is looked at by name after the open.
    if !metadata.is_file() {
        return not_found();
    }
    let opened = tokio::fs::File::from_std(opened);

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

/// The Content-Type by extension, by the rule every listener of Kiln's shares.
fn mime_for(path: &Path) -> HeaderValue {
    HeaderValue::try_from(kiln_runtime::listening::content_type(path))
        .unwrap_or(HeaderValue::from_static("application/octet-stream"))
}
