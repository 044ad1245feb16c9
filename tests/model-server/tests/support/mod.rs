//! Client side of the tests: a loopback-only HTTP client and a server-sent event
//! parser that reads frames the way provider SDKs do.

#![allow(dead_code)] // each test file uses its own subset

use serde_json::Value;

/// A client that never consults proxy settings, so test traffic stays on 127.0.0.1.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

pub async fn post(client: &reqwest::Client, url: &str, body: &Value) -> reqwest::Response {
    assert!(url.starts_with("http://127.0.0.1:"), "loopback only: {url}");
    client.post(url).json(body).send().await.unwrap()
}

/// `(event name or "", data)` per frame; data is parsed JSON, or a JSON string when
/// it is not JSON (the Chat Completions `[DONE]` sentinel).
pub fn sse_events(stream: &str) -> Vec<(String, Value)> {
    stream
        .split("\n\n")
        .filter(|frame| !frame.trim().is_empty())
        .map(|frame| {
            let mut name = String::new();
            let mut data = Vec::new();
            for line in frame.lines() {
                if let Some(value) = line.strip_prefix("event:") {
                    name = value.trim().to_owned();
                } else if let Some(value) = line.strip_prefix("data:") {
                    data.push(value.strip_prefix(' ').unwrap_or(value));
                }
            }
            let data = data.join("\n");
            let value = serde_json::from_str(&data).unwrap_or(Value::String(data));
            (name, value)
        })
        .collect()
}

pub fn names(events: &[(String, Value)]) -> Vec<&str> {
    events.iter().map(|(name, _)| name.as_str()).collect()
}
