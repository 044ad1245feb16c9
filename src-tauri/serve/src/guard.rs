//! The loopback guard: a request must be addressed to this server by name
//! (`Host: 127.0.0.1:<port>` or `localhost:<port>`), so a page on another local port
//! cannot drive Kiln through DNS rebinding; a mutation must also come from Kiln's own
//! page (`x-kiln: 1`, and a matching `Origin` when the browser sends one). Refused
//! requests get 403 before their body is read.

use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use kiln_engine::{ApiError, ErrorCode};

use crate::ErrorResponse;

#[derive(Clone)]
pub struct Allowed {
    hosts: Vec<String>,
}

impl Allowed {
    pub fn for_port(port: u16) -> Allowed {
        Allowed { hosts: vec![format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")] }
    }
}

fn refuse(message: String) -> Response {
    ErrorResponse(ApiError::new(ErrorCode::HostNotAllowed, message)).into_response()
}

pub async fn check(State(allowed): State<Allowed>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers.get("host").and_then(|h| h.to_str().ok()).unwrap_or("");
    if !allowed.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
        return refuse(format!("requests must be addressed to {} (got Host `{host}`)", allowed.hosts[0]));
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        if headers.get("x-kiln").and_then(|v| v.to_str().ok()) != Some("1") {
            return refuse("a change must come from Kiln's own page (missing `x-kiln: 1`)".into());
        }
        if let Some(origin) = headers.get("origin").and_then(|v| v.to_str().ok()) {
            let expected = [format!("http://{host}")];
            if !expected.iter().any(|e| e.eq_ignore_ascii_case(origin)) {
                return refuse(format!("origin `{origin}` may not change this server"));
            }
        }
        if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
            if site != "same-origin" && site != "none" {
                return refuse(format!("a `{site}` request may not change this server"));
            }
        }
    }
    next.run(request).await
}
