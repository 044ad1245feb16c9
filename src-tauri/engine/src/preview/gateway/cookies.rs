//! Cookie isolation. Cookies are not scoped by port, so every preview, and Kiln's own
//! `kiln_session_<port>`, share the browser's cookies for 127.0.0.1. The application
//! runs code an agent wrote: it must see only its own cookies. So its cookies are
//! stored under `kp<gateway port>_<name>` (`Set-Cookie` renamed on the way out, any
//! `Domain` dropped so it stays host-only) and handed back as `<name>`; every other
//! cookie, the gateway's own included, stays with the browser.

use hyper::header::{HeaderMap, HeaderValue, COOKIE, SET_COOKIE};
use subtle::ConstantTimeEq;

/// The gateway's admission cookie.
pub(super) fn gateway_cookie(port: u16) -> String {
    format!("kiln_preview_{port}")
}

/// The prefix the application's cookies are stored under.
fn app_prefix(port: u16) -> String {
    format!("kp{port}_")
}

/// The `name=value` pairs of every `Cookie` header, names and values trimmed.
fn pairs(headers: &HeaderMap) -> impl Iterator<Item = (&[u8], &[u8])> {
    headers.get_all(COOKIE).iter().flat_map(|value| value.as_bytes().split(|&b| b == b';')).filter_map(|pair| {
        let at = pair.iter().position(|&b| b == b'=')?;
        Some((pair[..at].trim_ascii(), pair[at + 1..].trim_ascii()))
    })
}

/// Whether the request carries the gateway's cookie with the secret.
pub(super) fn admitted(headers: &HeaderMap, port: u16, secret: &str) -> bool {
    let name = gateway_cookie(port);
    // Every match is compared, so the timing does not say which one was right.
    pairs(headers)
        .filter(|(given, _)| *given == name.as_bytes())
        .fold(false, |found, (_, value)| bool::from(value.ct_eq(secret.as_bytes())) | found)
}

/// Keeps only the application's own cookies, under their own names.
pub(super) fn for_app(headers: &mut HeaderMap, port: u16) {
    let prefix = app_prefix(port);
    let mut kept: Vec<u8> = Vec::new();
    for (name, value) in pairs(headers) {
        let Some(name) = name.strip_prefix(prefix.as_bytes()).filter(|name| !name.is_empty()) else { continue };
        if !kept.is_empty() {
            kept.extend_from_slice(b"; ");
        }
        kept.extend_from_slice(name);
        kept.push(b'=');
        kept.extend_from_slice(value);
    }
    headers.remove(COOKIE);
    if let Ok(value) = HeaderValue::from_bytes(&kept) {
        if !kept.is_empty() {
            headers.insert(COOKIE, value);
        }
    }
}

/// Renames every `Set-Cookie` of the application's answer into its own prefix and
/// drops `Domain`; one without a name is dropped.
pub(super) fn from_app(headers: &mut HeaderMap, port: u16) {
    let prefix = app_prefix(port);
    let renamed: Vec<HeaderValue> =
        headers.get_all(SET_COOKIE).iter().filter_map(|value| rename(value.as_bytes(), &prefix)).collect();
    headers.remove(SET_COOKIE);
    for value in renamed {
        headers.append(SET_COOKIE, value);
    }
}

fn rename(set_cookie: &[u8], prefix: &str) -> Option<HeaderValue> {
    let mut parts = set_cookie.split(|&b| b == b';');
    let pair = parts.next()?;
    let at = pair.iter().position(|&b| b == b'=')?;
    let name = pair[..at].trim_ascii();
    if name.is_empty() {
        return None;
    }
    let mut out = prefix.as_bytes().to_vec();
    out.extend_from_slice(name);
    out.push(b'=');
    out.extend_from_slice(pair[at + 1..].trim_ascii());
    for attribute in parts {
        let key = attribute.split(|&b| b == b'=').next().unwrap_or_default().trim_ascii();
        if key.eq_ignore_ascii_case(b"domain") {
            continue;
        }
        out.push(b';');
        out.extend_from_slice(attribute);
    }
    HeaderValue::from_bytes(&out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_cookies(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(COOKIE, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn only_this_previews_cookies_reach_the_app() {
        let mut headers = with_cookies(&[
            "kiln_session_4320=s3cret; kp5000_sid=a; kp6000_sid=b",
            "kiln_preview_5000=x;kp5000_theme=dark",
        ]);
        for_app(&mut headers, 5000);
        assert_eq!(headers.get_all(COOKIE).iter().collect::<Vec<_>>(), ["sid=a; theme=dark"]);

        let mut headers = with_cookies(&["kiln_session_4320=s3cret; kp6000_sid=b"]);
        for_app(&mut headers, 5000);
        assert!(headers.get(COOKIE).is_none());
    }

    #[test]
    fn admission_needs_the_exact_secret() {
        assert!(admitted(&with_cookies(&["a=1; kiln_preview_5000=right"]), 5000, "right"));
        assert!(admitted(&with_cookies(&["kiln_preview_5000=wrong; kiln_preview_5000=right"]), 5000, "right"));
        assert!(!admitted(&with_cookies(&["kiln_preview_5000=wrong"]), 5000, "right"));
        assert!(!admitted(&with_cookies(&["kiln_preview_6000=right"]), 5000, "right"));
        assert!(!admitted(&HeaderMap::new(), 5000, "right"));
    }

    #[test]
    fn set_cookie_is_prefixed_and_host_only() {
        let mut headers = HeaderMap::new();
        headers.append(SET_COOKIE, HeaderValue::from_static("sid=abc; Domain=127.0.0.1; Path=/; HttpOnly"));
        headers.append(SET_COOKIE, HeaderValue::from_static("theme=dark;domain=.example; Max-Age=60"));
        headers.append(SET_COOKIE, HeaderValue::from_static("=nameless"));
        from_app(&mut headers, 5000);
        let values: Vec<_> = headers.get_all(SET_COOKIE).iter().map(|v| v.to_str().unwrap()).collect();
        assert_eq!(values, ["kp5000_sid=abc; Path=/; HttpOnly", "kp5000_theme=dark; Max-Age=60"]);
    }
}
