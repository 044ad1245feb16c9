//! What a client sent, kept so tests can assert on the exact requests it made (method,
//! path, query, headers, body).

use std::collections::BTreeMap;

use axum::http::{HeaderMap, Method, Uri};
use serde::Serialize;
use serde_json::Value;

#[derive(Clone, Debug, Serialize)]
pub struct RecordedRequest {
    pub method: String,
    /// The path without the query, as sent (not percent-decoded), e.g. `/v1/messages` for
    /// `/v1/messages?beta=true`.
    pub path: String,
    /// The raw query string, e.g. `beta=true`.
    pub query: Option<String>,
    /// Lower-case names; repeated headers joined with `, `.
    pub headers: BTreeMap<String, String>,
    /// The body as JSON; `Null` when empty, a JSON string when it was not JSON.
    pub body: Value,
}

impl RecordedRequest {
    pub fn new(method: &Method, uri: &Uri, headers: &HeaderMap, body: &[u8]) -> Self {
        let mut map: BTreeMap<String, String> = BTreeMap::new();
        for (name, value) in headers {
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            map.entry(name.as_str().to_owned())
                .and_modify(|joined| {
                    joined.push_str(", ");
                    joined.push_str(&value);
                })
                .or_insert(value);
        }
        let body = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(body).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
        };
        RecordedRequest {
            method: method.as_str().to_owned(),
            path: uri.path().to_owned(),
            query: uri.query().map(str::to_owned),
            headers: map,
            body,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        header_value(&self.headers, name)
    }
}

/// A header of a recorded request by name, in any case: for doubles that record more than
/// [`RecordedRequest`] in a type of their own.
pub fn header_value<'a>(headers: &'a BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    headers.get(&name.to_ascii_lowercase()).map(String::as_str)
}
