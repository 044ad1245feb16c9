//! What a client sent, kept so tests can assert on the exact requests Kiln made (path,
//! query, headers, body, and the status it got), and the check that a token travels only
//! in the `Authorization` header.

use std::collections::BTreeMap;

use axum::http::{HeaderMap, Method, Uri};
use kiln_double_support::header_value;
use percent_encoding::percent_decode_str;
use serde::Serialize;
use serde_json::Value;

#[derive(Clone, Debug, Serialize)]
pub struct RecordedRequest {
    pub method: String,
    /// The path without the query, as sent (not percent-decoded).
    pub path: String,
    /// The raw query string, e.g. `head=acme:kiln/cart-1a2b&state=open`.
    pub query: Option<String>,
    /// Lower-case names; repeated headers joined with `, `.
    pub headers: BTreeMap<String, String>,
    /// The body as JSON; `Null` when empty, a JSON string when it was not JSON.
    pub body: Value,
    /// The body as sent (lossy UTF-8).
    pub raw_body: String,
    /// The status the double answered with.
    pub status: u16,
}

impl RecordedRequest {
    pub(crate) fn new(method: &Method, uri: &Uri, headers: &HeaderMap, body: &[u8]) -> Self {
        // What both doubles record, plus the body as sent (a token may hide in what is not
        // JSON) and, once answered, the status.
        let recorded = kiln_double_support::RecordedRequest::new(method, uri, headers, body);
        RecordedRequest {
            method: recorded.method,
            path: recorded.path,
            query: recorded.query,
            headers: recorded.headers,
            body: recorded.body,
            raw_body: String::from_utf8_lossy(body).into_owned(),
            status: 0,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        header_value(&self.headers, name)
    }

    /// The query's `name` parameter, decoded (`None` when absent).
    pub fn query_param(&self, name: &str) -> Option<String> {
        let query = self.query.as_deref()?;
        form_urlencoded::parse(query.as_bytes()).find(|(key, _)| key == name).map(|(_, value)| value.into_owned())
    }

    /// Where `token` appears in this request other than as the whole credential of the
    /// `Authorization` header (`Bearer <token>` or `token <token>`).
    pub fn token_places(&self, token: &str) -> Vec<String> {
        assert!(!token.is_empty(), "token_places: an empty token matches everything");
        let mut places = Vec::new();
        if contains_encoded(&self.path, token) {
            places.push("path".to_owned());
        }
        if self.query.as_deref().is_some_and(|query| contains_encoded(query, token)) {
            places.push("query".to_owned());
        }
        for (name, value) in &self.headers {
            if !value.contains(token) {
                continue;
            }
            if name == "authorization" && credential(value) == Some(token) {
                continue;
            }
            places.push(format!("header {name}"));
        }
        if self.raw_body.contains(token) || self.body.to_string().contains(token) {
            places.push("body".to_owned());
        }
        places
    }
}

/// The credential of an `Authorization` value GitHub accepts: `Bearer X` or `token X`.
pub(crate) fn credential(value: &str) -> Option<&str> {
    let (scheme, rest) = value.trim().split_once(' ')?;
    let scheme = scheme.to_ascii_lowercase();
    (scheme == "bearer" || scheme == "token").then(|| rest.trim())
}

/// Plain, percent-decoded, or form-decoded (`+` for space).
fn contains_encoded(text: &str, token: &str) -> bool {
    text.contains(token)
        || percent_decode_str(text).decode_utf8_lossy().contains(token)
        || percent_decode_str(&text.replace('+', " ")).decode_utf8_lossy().contains(token)
}

/// One place a token showed up where it must not: see [`crate::GithubDouble::token_leaks`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TokenLeak {
    /// Index into [`crate::GithubDouble::requests`].
    pub request: usize,
    pub method: String,
    pub path: String,
    /// `path`, `query`, `header <name>` or `body`.
    pub place: String,
}
