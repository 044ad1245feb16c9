//! Client side of the tests: a loopback-only client that sends what a well-behaved GitHub
//! client sends (User-Agent, `Accept: application/vnd.github+json`, API version, token).

#![allow(dead_code)] // each test file uses its own subset

use kiln_github_double::{Config, GithubDouble, RepoConfig};
use reqwest::{Method, RequestBuilder, Response};
use serde_json::Value;

pub const TOKEN: &str = "ghp_kilnTestToken0123456789abcdef";

/// A client that never consults proxy settings and sends no headers of its own
/// (reqwest adds no User-Agent unless told to).
pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// acme/shop (writable) and acme/docs, token [`TOKEN`], signed in as `kiln-bot`.
pub async fn double() -> GithubDouble {
    GithubDouble::start(
        Config::new(TOKEN)
            .login("kiln-bot")
            .repo(RepoConfig::new("acme", "shop"))
            .repo(RepoConfig::new("acme", "docs").default_branch("trunk")),
    )
    .await
}

/// A request with no headers at all.
pub fn bare(github: &GithubDouble, method: Method, path: &str) -> RequestBuilder {
    let url = format!("{}{path}", github.base_url());
    assert!(url.starts_with("http://127.0.0.1:"), "loopback only: {url}");
    client().request(method, url)
}

/// A request with everything GitHub asks for.
pub fn api(github: &GithubDouble, method: Method, path: &str) -> RequestBuilder {
    bare(github, method, path)
        .header("user-agent", "kiln-tests/0.1")
        .header("accept", "application/vnd.github+json")
        .header("x-github-api-version", "2022-11-28")
        .header("authorization", format!("Bearer {TOKEN}"))
}

/// `request` with `name` set to `value`, replacing what [`api`] put there (reqwest's
/// `.header()` would add a second value instead).
pub fn with(request: RequestBuilder, name: &'static str, value: impl AsRef<str>) -> RequestBuilder {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(name, value.as_ref().parse().unwrap());
    request.headers(headers)
}

pub async fn send(request: RequestBuilder) -> (u16, Value) {
    let response: Response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, value)
}

pub async fn create_pull(github: &GithubDouble, repo: &str, body: Value) -> (u16, Value) {
    send(api(github, Method::POST, &format!("/repos/{repo}/pulls")).json(&body)).await
}
