//! Kiln's own API as the hostile suites speak it: requests as Kiln's page sends them,
//! connecting, and the session cookie a connect sets, checked against the contract.

use serde_json::{json, Value};

use crate::http::{Req, Resp};

pub(crate) fn host(port: u16) -> String {
    format!("127.0.0.1:{port}")
}

/// A request as Kiln's own page sends it, without a cookie.
pub(crate) fn page_req(port: u16, op: &str, body: &Value) -> Req {
    Req::new("POST", &format!("/api/{op}")).header("Host", &host(port)).header("x-kiln", "1").json(body)
}

pub(crate) fn connect_req(port: u16, token: Option<&str>) -> Req {
    let body = match token {
        Some(t) => json!({ "token": t }),
        None => json!({}),
    };
    page_req(port, "connect", &body)
}

/// The `Max-Age` of the `kiln_session_<port>` cookie an answer sets.
pub(crate) fn max_age_of(resp: &Resp, port: u16) -> Option<i64> {
    let set = resp.headers_named("set-cookie").into_iter().find(|c| c.starts_with(&format!("kiln_session_{port}=")))?;
    set.split(';').find_map(|a| a.trim().to_ascii_lowercase().strip_prefix("max-age=").and_then(|v| v.parse().ok()))
}

/// The cookie a successful connect set, checked against the contract's attributes.
pub(crate) fn cookie_of(resp: &Resp, port: u16) -> Result<String, String> {
    let name = format!("kiln_session_{port}");
    let set = resp
        .headers_named("set-cookie")
        .into_iter()
        .find(|c| c.starts_with(&format!("{name}=")))
        .ok_or_else(|| format!("no `Set-Cookie: {name}=…` in {:?}", resp.headers))?
        .to_string();
    let mut parts = set.split(';').map(str::trim);
    let pair = parts.next().unwrap().to_string();
    let attrs: Vec<String> = parts.map(|p| p.to_ascii_lowercase()).collect();
    for want in ["httponly", "samesite=strict", "secure", "path=/"] {
        if !attrs.iter().any(|a| a == want) {
            return Err(format!("the cookie lacks `{want}`: {set}"));
        }
    }
    let max_age = max_age_of(resp, port).ok_or_else(|| format!("the cookie has no Max-Age: {set}"))?;
    if !(1..=12 * 3600).contains(&max_age) {
        return Err(format!("Max-Age {max_age} is not within 12 hours: {set}"));
    }
    let secret = &pair[name.len() + 1..];
    if secret.len() < 32 {
        return Err(format!("a cookie secret of {} characters is guessable: {set}", secret.len()));
    }
    Ok(pair)
}
