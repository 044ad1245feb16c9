//! The first check every request meets, before any body is read.
//! - Host: in loopback mode it must name this server (`127.0.0.1:<port>`,
//!   `localhost:<port>`, `[::1]:<port>`), so a page on another local port, or a
//!   DNS-rebound name, cannot drive Kiln. Self-hosted servers sit behind names Kiln
//!   cannot know; there a browser session does that job, and Host must only be valid.
//! - A change (any method but GET and HEAD) must come from Kiln's own page: `x-kiln: 1`
//!   (which a form post or a simple cross-site request cannot send), an `Origin` naming
//!   this host when the browser sends one, and `Sec-Fetch-Site` same-origin when sent.
//! - A declared body over the limit is refused here; a chunked one when it is read.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use kiln_engine::types::ServeMode;

use crate::errors::{HttpError, TransportCode};
use crate::ErrorResponse;

#[derive(Clone)]
pub(crate) struct Guard {
    mode: ServeMode,
    loopback_hosts: Vec<String>,
}

impl Guard {
    pub(crate) fn new(mode: ServeMode, port: u16) -> Guard {
        Guard {
            mode,
            loopback_hosts: vec![format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")],
        }
    }

    /// `Ok` when `host` may be served, else why not.
    fn host_allowed(&self, host: Option<&str>) -> Result<(), String> {
        let Some(host) = host.filter(|h| !h.is_empty()) else {
            return Err("the request names no Host".into());
        };
        match self.mode {
            ServeMode::Loopback if self.loopback_hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) => Ok(()),
            ServeMode::Loopback => {
                Err(format!("requests must be addressed to {} (got Host `{}`)", self.loopback_hosts[0], shown(host)))
            }
            ServeMode::SelfHosted if valid_authority(host) => Ok(()),
            ServeMode::SelfHosted => Err(format!("`{}` is not a host name", shown(host))),
        }
    }
}

/// A host name or IP literal with an optional port, nothing else: no user info, path
/// or stray characters that could confuse the `Origin` comparison.
fn valid_authority(host: &str) -> bool {
    match host.parse::<axum::http::uri::Authority>() {
        Ok(authority) => {
            authority.as_str() == host
                && !host.contains('@')
                && host.bytes().all(|b| b.is_ascii_alphanumeric() || b".-:[]_".contains(&b))
        }
        Err(_) => false,
    }
}

fn shown(text: &str) -> String {
    text.chars().take(80).collect::<String>().escape_debug().to_string()
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"))
}

/// Why a change may not come from where it came from, if it may not.
fn cross_site(headers: &HeaderMap, host: &str) -> Option<String> {
    if header(headers, "x-kiln") != Some("1") {
        return Some("a change must come from Kiln's own page (missing `x-kiln: 1`)".into());
    }
    if let Some(origin) = header(headers, "origin") {
        let ours = [format!("http://{host}"), format!("https://{host}")];
        if !ours.iter().any(|o| o.eq_ignore_ascii_case(origin)) {
            return Some(format!("origin `{}` may not change this server", shown(origin)));
        }
    }
    if let Some(site) = header(headers, "sec-fetch-site") {
        if site != "same-origin" && site != "none" {
            return Some(format!("a `{}` request may not change this server", shown(site)));
        }
    }
    None
}

pub(crate) async fn check(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = header(headers, "host");
    if let Err(why) = guard.host_allowed(host) {
        return ErrorResponse(HttpError::new(TransportCode::HostNotAllowed, why)).into_response();
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        if let Some(why) = cross_site(headers, host.unwrap_or_default()) {
            return ErrorResponse(HttpError::new(TransportCode::CrossSiteRefused, why)).into_response();
        }
    }
    let limit = crate::body_limit(request.uri().path());
    let declared = header(headers, "content-length").map(|l| l.parse::<u64>().unwrap_or(u64::MAX));
    if declared.is_some_and(|length| length > limit as u64) {
        return ErrorResponse(crate::too_large(limit)).into_response();
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities() {
        for ok in ["kiln.example.com", "kiln.example.com:8443", "10.0.0.5:4320", "[fd00::1]:4320", "localhost"] {
            assert!(valid_authority(ok), "{ok}");
        }
        for bad in ["", "a b", "user@host", "host/path", "host?x", "host\0", "hôst", "host:port:1"] {
            assert!(!valid_authority(bad), "{bad}");
        }
    }

    #[test]
    fn loopback_hosts_name_the_port() {
        let guard = Guard::new(ServeMode::Loopback, 4320);
        assert!(guard.host_allowed(Some("127.0.0.1:4320")).is_ok());
        assert!(guard.host_allowed(Some("LOCALHOST:4320")).is_ok());
        assert!(guard.host_allowed(Some("[::1]:4320")).is_ok());
        for bad in [
            "127.0.0.1:4321",
            "127.0.0.1",
            "evil.example:4320",
            "127.1:4320",
            "2130706433:4320",
            "0x7f.0.0.1:4320",
            "[::ffff:127.0.0.1]:4320",
        ] {
            assert!(guard.host_allowed(Some(bad)).is_err(), "{bad}");
        }
        assert!(guard.host_allowed(None).is_err());
        assert!(Guard::new(ServeMode::SelfHosted, 4320).host_allowed(None).is_err());
    }
}
