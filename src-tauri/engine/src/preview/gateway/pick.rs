//! The picking script (`pick.js`, ARCHITECTURE.md: Preview): served by the gateway alone at
//! `/__kiln/pick.js`, behind the same cookie as the rest, and added as one `<script>` tag
//! to the HTML documents the gateway forwards to a frame or a tab, so Kiln's view can
//! ask the page which element the operator points at. Nothing is written into the
//! working copy: the tag exists only in what the gateway sends.
//!
//! A document is asked of the application in `identity` encoding so the tag can be
//! added; an answer that is compressed anyway is passed on untouched. The tag goes in
//! as the body streams: only the bytes up to the end of `<head…>` are held back (at
//! most `HOLD_LIMIT`). A `Content-Security-Policy` header that limits scripts is given
//! a nonce the tag carries; a policy in a `<meta>` tag is not rewritten (the script is
//! then blocked on such a page, and picking does not start).

use futures_util::StreamExt;
use http_body_util::{BodyExt, BodyStream, StreamBody};
use hyper::body::{Bytes, Frame};
use hyper::header::{
    HeaderMap, HeaderValue, ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE,
    X_CONTENT_TYPE_OPTIONS,
};
use hyper::{Method, Response, StatusCode};

use super::reply::{self, Body, BoxError};

/// Where the gateway serves the script.
pub(super) const SCRIPT_PATH: &str = "/__kiln/pick.js";

const SCRIPT: &str = include_str!("pick.js");

/// Bytes of a document held back while looking for the end of its `<head…>` tag.
const HOLD_LIMIT: usize = 64 * 1024;

const CSP: &str = "content-security-policy";

/// The script itself.
pub(super) fn script() -> Response<Body> {
    let mut response = Response::new(reply::full(SCRIPT));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/javascript; charset=utf-8"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// Whether the request loads a document into a frame or a tab (`Sec-Fetch-Dest`), the
/// only answers the tag is added to. A browser that sends no `Sec-Fetch-Dest` (an older
/// webview) is judged by what a navigation asks for first: `Accept: text/html…`.
pub(super) fn wants_script(method: &Method, headers: &HeaderMap) -> bool {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_ascii_lowercase);
    let document = match text("sec-fetch-dest") {
        Some(dest) => dest == "document" || dest == "iframe",
        None => text("accept").is_some_and(|accept| accept.starts_with("text/html")),
    };
    method == Method::GET && document
}

/// Asks the application for a body the tag can be added to.
pub(super) fn ask_identity(headers: &mut HeaderMap) {
    headers.insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
}

/// The answer with the tag added when it is an uncompressed HTML document with a body.
pub(super) fn inject(mut answer: Response<Body>) -> Response<Body> {
    let status = answer.status();
    if status.is_informational() || status == StatusCode::NO_CONTENT || status == StatusCode::NOT_MODIFIED {
        return answer;
    }
    let headers = answer.headers_mut();
    let html = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/html"));
    let encoded = headers
        .get_all(CONTENT_ENCODING)
        .iter()
        .any(|v| !v.to_str().unwrap_or("x").trim().eq_ignore_ascii_case("identity"));
    if !html || encoded {
        return answer;
    }
    let nonce = allow_in_policy(headers);
    let tag = match &nonce {
        Some(nonce) => format!(r#"<script src="{SCRIPT_PATH}" nonce="{nonce}"></script>"#),
        None => format!(r#"<script src="{SCRIPT_PATH}"></script>"#),
    };
    let length = headers.get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if let Some(length) = length {
        headers.insert(CONTENT_LENGTH, HeaderValue::from(length + tag.len() as u64));
    }
    answer.map(|body| with_tag(body, Bytes::from(tag)))
}

/// The body with `tag` added after the `<head…>` tag (else after `<html…>` or the
/// doctype, else first), holding back only what comes before that place.
fn with_tag(body: Body, tag: Bytes) -> Body {
    struct State {
        frames: BodyStream<Body>,
        held: Option<Vec<u8>>,
        tag: Bytes,
        after: Option<Frame<Bytes>>,
    }
    let state = State { frames: BodyStream::new(body), held: Some(Vec::new()), tag, after: None };
    let frames = futures_util::stream::unfold(state, |mut s| async move {
        if let Some(frame) = s.after.take() {
            return Some((Ok(frame), s));
        }
        loop {
            let next = s.frames.next().await;
            let Some(held) = s.held.as_mut() else {
                return next.map(|frame| (frame, s));
            };
            match next {
                Some(Ok(frame)) if frame.is_data() => {
                    held.extend_from_slice(frame.data_ref().expect("data"));
                    let at = head_end(held).or((held.len() > HOLD_LIMIT).then(|| fallback(held)));
                    if let Some(at) = at {
                        let out = joined(s.held.take().expect("held"), at, &s.tag);
                        return Some((Ok(Frame::data(out)), s));
                    }
                }
                // The end of the data (or trailers): the tag goes where it best can.
                Some(Ok(frame)) => {
                    let held = s.held.take().expect("held");
                    let at = fallback(&held);
                    s.after = Some(frame);
                    return Some((Ok(Frame::data(joined(held, at, &s.tag))), s));
                }
                Some(Err(e)) => return Some((Err::<Frame<Bytes>, BoxError>(e), s)),
                None => {
                    let held = s.held.take().expect("held");
                    let at = fallback(&held);
                    return Some((Ok(Frame::data(joined(held, at, &s.tag))), s));
                }
            }
        }
    });
    StreamBody::new(frames).boxed_unsync()
}

fn joined(held: Vec<u8>, at: usize, tag: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(held.len() + tag.len());
    out.extend_from_slice(&held[..at]);
    out.extend_from_slice(tag);
    out.extend_from_slice(&held[at..]);
    Bytes::from(out)
}

/// Just after the `>` of the first `<head>` or `<head …>` tag, once it has all arrived.
fn head_end(html: &[u8]) -> Option<usize> {
    tag_end(html, b"<head")
}

/// Where the tag goes when no `<head>` came: after `<html…>`, else after the doctype,
/// else first.
fn fallback(html: &[u8]) -> usize {
    head_end(html).or_else(|| tag_end(html, b"<html")).or_else(|| tag_end(html, b"<!doctype")).unwrap_or(0)
}

/// Just after the `>` closing the first tag `name` (compared without case, and followed by
/// `>` or whitespace, so `<header>` is not `<head>`).
fn tag_end(html: &[u8], name: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = find_ignore_case(&html[from..], name) {
        let start = from + found;
        let next = html.get(start + name.len())?;
        if *next == b'>' || next.is_ascii_whitespace() {
            let close = html[start..].iter().position(|b| *b == b'>')?;
            return Some(start + close + 1);
        }
        from = start + 1;
    }
    None
}

fn find_ignore_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
}

/// Adds a fresh nonce to each `Content-Security-Policy` header whose scripts it limits
/// (`script-src-elem`, else `script-src`, else `default-src`), and answers it; `None` when
/// no policy limits scripts.
fn allow_in_policy(headers: &mut HeaderMap) -> Option<String> {
    let policies: Vec<String> =
        headers.get_all(CSP).iter().filter_map(|v| v.to_str().ok()).map(str::to_string).collect();
    if policies.is_empty() {
        return None;
    }
    let nonce = nonce();
    let mut changed = false;
    let rewritten: Vec<String> = policies
        .iter()
        .map(|policy| match with_nonce(policy, &nonce) {
            Some(policy) => {
                changed = true;
                policy
            }
            None => policy.clone(),
        })
        .collect();
    if !changed {
        return None;
    }
    headers.remove(CSP);
    for policy in rewritten {
        if let Ok(value) = HeaderValue::from_str(&policy) {
            headers.append(CSP, value);
        }
    }
    Some(nonce)
}

/// One policy with `'nonce-…'` added to the directive that governs script elements;
/// `None` when none does. `'none'` goes, since it means nothing beside a source.
fn with_nonce(policy: &str, nonce: &str) -> Option<String> {
    let directives: Vec<&str> = policy.split(';').map(str::trim).filter(|d| !d.is_empty()).collect();
    let name = |d: &str| d.split_ascii_whitespace().next().unwrap_or("").to_ascii_lowercase();
    let governing = ["script-src-elem", "script-src", "default-src"]
        .into_iter()
        .find_map(|wanted| directives.iter().position(|d| name(d) == wanted))?;
    let out: Vec<String> = directives
        .iter()
        .enumerate()
        .map(|(i, d)| {
            if i != governing {
                return d.to_string();
            }
            let mut words: Vec<&str> =
                d.split_ascii_whitespace().filter(|w| !w.eq_ignore_ascii_case("'none'")).collect();
            let source = format!("'nonce-{nonce}'");
            words.push(&source);
            words.join(" ")
        })
        .collect();
    Some(out.join("; "))
}

/// 128 random bits, base64.
fn nonce() -> String {
    use aes_gcm::aead::rand_core::RngCore;
    use base64::Engine as _;
    let mut bytes = [0u8; 16];
    aes_gcm::aead::OsRng.fill_bytes(&mut bytes);
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tag_goes_after_the_head_tag_else_where_it_can() {
        assert_eq!(head_end(b"<!doctype html><html><head><title>"), Some(27));
        assert_eq!(head_end(b"<html><HEAD lang=\"x\">x"), Some(21));
        assert_eq!(head_end(b"<html><header>x</header>"), None);
        assert_eq!(head_end(b"<html><head"), None, "not all there yet");
        assert_eq!(fallback(b"<!DOCTYPE html><html lang=en><body>"), 29);
        assert_eq!(fallback(b"<!DOCTYPE html><p>"), 15);
        assert_eq!(fallback(b"<p>hi"), 0);
    }

    #[test]
    fn a_policy_that_limits_scripts_gets_the_nonce() {
        assert_eq!(
            with_nonce("default-src 'self'; script-src 'strict-dynamic' 'nonce-a'", "N").unwrap(),
            "default-src 'self'; script-src 'strict-dynamic' 'nonce-a' 'nonce-N'"
        );
        assert_eq!(with_nonce("default-src 'none'; img-src *", "N").unwrap(), "default-src 'nonce-N'; img-src *");
        assert_eq!(
            with_nonce("script-src 'self'; script-src-elem 'sha256-x'", "N").unwrap(),
            "script-src 'self'; script-src-elem 'sha256-x' 'nonce-N'"
        );
        assert_eq!(with_nonce("img-src *; frame-ancestors 'self'", "N"), None);
    }
}
