//! API composition with the connected application (ARCHITECTURE.md: Preview, `data = "bridge"`): under
//! `/api/`, what the session's application answered 404 to a GET or HEAD is asked of
//! the connected application instead, with the workspace's token and nothing of the
//! browser's (no cookie, no Authorization). It is read only: other methods are
//! refused, and `/api/auth/…` is never forwarded. Every answer says where it came from
//! in `x-kiln-source`: `session`, `bridge`, `bridge-refused` or `bridge-unavailable`.

use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::StreamExt;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{HeaderValue, ACCEPT, ACCEPT_LANGUAGE, ALLOW, AUTHORIZATION, SET_COOKIE};
use hyper::{Method, Request, Response, StatusCode};
use percent_encoding::percent_decode_str;
use serde_json::json;

use super::proxy::remove_hop_by_hop;
use super::reply::{self, Body, BoxError, SOURCE};
use super::{Activity, BridgeTarget};
use kiln_types::error::{ApiError, Result};

/// The connected application and the client that talks to it.
pub(super) struct Bridge {
    target: BridgeTarget,
    client: reqwest::Client,
}

/// What composition needs of the browser's request, taken before it is forwarded.
pub(super) struct Asked {
    method: Method,
    path: String,
    path_and_query: String,
    accept: Option<HeaderValue>,
    accept_language: Option<HeaderValue>,
}

impl Asked {
    pub(super) fn of(request: &Request<Incoming>) -> Asked {
        let uri = request.uri();
        Asked {
            method: request.method().clone(),
            path: uri.path().to_string(),
            path_and_query: uri.path_and_query().map_or_else(|| uri.path().to_string(), |pq| pq.as_str().to_string()),
            accept: request.headers().get(ACCEPT).cloned(),
            accept_language: request.headers().get(ACCEPT_LANGUAGE).cloned(),
        }
    }
}

/// Whether composition applies to this path at all.
pub(super) fn applies(path: &str) -> bool {
    path.starts_with("/api/")
}

impl Bridge {
    pub(super) fn new(target: BridgeTarget) -> Result<Bridge> {
        let mut client = reqwest::Client::builder();
        // A proxy set for the machine is for the outside world; one on this machine is
        // reached directly, so the token is not handed to a proxy on the way.
        let loopback =
            reqwest::Url::parse(&target.url).ok().and_then(|url| url.host_str().map(is_loopback)).unwrap_or(false);
        if loopback {
            client = client.no_proxy();
        }
        let client = client
            // A redirect could take the token elsewhere: the browser gets it instead.
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(5))
            .read_timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| ApiError::internal("making the preview's bridge client", e))?;
        Ok(Bridge { target, client })
    }

    /// The answer for the browser, given the application's.
    pub(super) async fn compose(
        &self,
        activity: &Activity,
        asked: Asked,
        mut answer: Response<Body>,
    ) -> Response<Body> {
        if answer.status() != StatusCode::NOT_FOUND {
            answer.headers_mut().insert(SOURCE, HeaderValue::from_static("session"));
            return answer;
        }
        if !forwardable(&asked.path) {
            activity.refused.fetch_add(1, Ordering::Relaxed);
            answer.headers_mut().insert(SOURCE, HeaderValue::from_static("session"));
            return answer;
        }
        if asked.method != Method::GET && asked.method != Method::HEAD {
            activity.refused.fetch_add(1, Ordering::Relaxed);
            let mut refused = reply::json(
                StatusCode::METHOD_NOT_ALLOWED,
                json!({"error": "the connected application is read only in the preview"}),
                "bridge-refused",
            );
            refused.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
            return refused;
        }
        match self.fetch(&asked).await {
            Ok(bridged) => {
                activity.forwarded.fetch_add(1, Ordering::Relaxed);
                bridged
            }
            Err(e) => {
                // reqwest's message names the URL, never the headers, so no token.
                tracing::debug!("preview bridge: {e}");
                activity.unavailable.fetch_add(1, Ordering::Relaxed);
                reply::json(
                    StatusCode::BAD_GATEWAY,
                    json!({"error": "the connected application is unavailable"}),
                    "bridge-unavailable",
                )
            }
        }
    }

    async fn fetch(&self, asked: &Asked) -> Result<Response<Body>, reqwest::Error> {
        let url = format!("{}{}", self.target.url.trim_end_matches('/'), asked.path_and_query);
        let mut request = self.client.request(asked.method.clone(), url);
        if let Some(token) = &self.target.token {
            if let Ok(mut value) = HeaderValue::from_str(&format!("Bearer {token}")) {
                value.set_sensitive(true);
                request = request.header(AUTHORIZATION, value);
            }
        }
        for (name, value) in [(ACCEPT, &asked.accept), (ACCEPT_LANGUAGE, &asked.accept_language)] {
            if let Some(value) = value {
                request = request.header(name, value.clone());
            }
        }
        let bridged = request.send().await?;
        let mut answer =
            Response::builder().status(bridged.status()).body(reply::empty()).expect("a status and no headers");
        *answer.headers_mut() = bridged.headers().clone();
        let headers = answer.headers_mut();
        remove_hop_by_hop(headers);
        // Its cookies belong to it, not to the preview's origin.
        headers.remove(SET_COOKIE);
        headers.remove("set-cookie2");
        headers.insert(SOURCE, HeaderValue::from_static("bridge"));
        let frames = bridged.bytes_stream().map(|chunk| chunk.map(Frame::data).map_err(BoxError::from));
        *answer.body_mut() = StreamBody::new(frames).boxed_unsync();
        Ok(answer)
    }
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether a path may be asked of the connected application: not `/api/auth` or
/// below, however spelled. The path is read as a server might (percent-decoded, `;`
/// parameters and trailing dots ignored), and any path with `.`/`..`, empty segments
/// or backslashes is refused rather than guessed at.
fn forwardable(path: &str) -> bool {
    let Ok(decoded) = percent_decode_str(path).decode_utf8() else { return false };
    let segments: Vec<&str> = decoded.strip_prefix('/').unwrap_or(&decoded).split('/').collect();
    let last = segments.len() - 1;
    for (i, segment) in segments.iter().enumerate() {
        if matches!(*segment, "." | "..") || segment.contains('\\') || (segment.is_empty() && i != last) {
            return false;
        }
    }
    let name =
        |segment: &str| segment.split(';').next().unwrap_or("").trim_end_matches(['.', ' ']).to_ascii_lowercase();
    !(segments.len() >= 2 && name(segments[0]) == "api" && name(segments[1]) == "auth")
}

#[cfg(test)]
mod tests {
    use super::forwardable;

    #[test]
    fn auth_is_never_forwarded_however_spelled() {
        for path in ["/api/products", "/api/products/7", "/api/authors", "/api/"] {
            assert!(forwardable(path), "{path}");
        }
        for path in [
            "/api/auth",
            "/api/auth/",
            "/api/auth/session",
            "/api/AUTH/session",
            "/api/%61uth/session",
            "/api/auth%2Fsession",
            "/api/auth;x=1/session",
            "/api/auth./session",
            "/api//auth/session",
            "/api/x/../auth/session",
            "/api/x/%2e%2e/auth/session",
            "/api/x\\..\\auth",
            "/api/%ff",
        ] {
            assert!(!forwardable(path), "{path}");
        }
    }
}
