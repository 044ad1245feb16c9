//! The pull request providers of the git-pr target: GitHub's REST API with the sealed
//! token (sent only in `Authorization`, never in a URL or a body), and the `gh` CLI when
//! it is installed and signed in, run with an allowlisted environment. Every error text
//! returned here is still redacted by the caller before anyone sees it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, USER_AGENT};
use serde_json::{json, Value};

use kiln_runtime::process::{self, Command, Env};

/// The API version Kiln is written against.
pub(crate) const API_VERSION: &str = "2022-11-28";
const TIMEOUT: Duration = Duration::from_secs(60);

/// An open or created pull request.
#[derive(Debug, Clone)]
pub(crate) struct Pull {
    pub number: Option<u64>,
    pub url: String,
}

/// A call GitHub did not answer with success: its status when it answered at all.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub status: Option<u16>,
    pub message: String,
}

/// GitHub's REST API for one repository.
pub(crate) struct Api {
    client: reqwest::Client,
    root: String,
    owner: String,
    repo: String,
}

/// `name` as one URL path segment of a GitHub owner or repository name.
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && name != "."
        && name != ".."
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

fn loopback(url: &str) -> bool {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = host.rsplit('@').next().unwrap_or(host);
    host.starts_with("127.") || host.starts_with("localhost") || host.starts_with("[::1]")
}

impl Api {
    pub(crate) fn new(api_url: &str, token: &str, owner: &str, repo: &str) -> Result<Api, String> {
        if !(api_url.starts_with("https://") || api_url.starts_with("http://")) || api_url.contains(char::is_whitespace)
        {
            return Err(format!("the API root '{api_url}' is not an http(s) address"));
        }
        if !valid_name(owner) || !valid_name(repo) {
            return Err(format!("'{owner}/{repo}' is not a repository name"));
        }
        let mut headers = HeaderMap::new();
        let mut auth = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| "the token holds characters a header cannot carry".to_string())?;
        auth.set_sensitive(true);
        headers.insert(AUTHORIZATION, auth);
        headers.insert(ACCEPT, HeaderValue::from_static("application/vnd.github+json"));
        headers.insert(USER_AGENT, HeaderValue::from_static("kiln"));
        headers.insert("x-github-api-version", HeaderValue::from_static(API_VERSION));
        let mut builder = reqwest::Client::builder()
            .default_headers(headers)
            // A redirect could carry the header elsewhere: none is followed.
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(15))
            .timeout(TIMEOUT);
        if loopback(api_url) {
            builder = builder.no_proxy();
        }
        let client = builder.build().map_err(|e| format!("could not set up the HTTP client: {e}"))?;
        Ok(Api { client, root: api_url.trim_end_matches('/').to_string(), owner: owner.into(), repo: repo.into() })
    }

    fn repo_path(&self) -> String {
        format!("/repos/{}/{}", self.owner, self.repo)
    }

    /// One call: the JSON of a 2xx answer, else GitHub's message.
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        query: Option<String>,
        body: Option<Value>,
    ) -> Result<Value, String> {
        let (url, shown) = self.address(&method, path, query);
        self.send(method, &url, &shown, body).await.map(|(value, _)| value).map_err(|failure| failure.message)
    }

    /// `call`, with a 404 answered as `None` (a branch or file that is not there yet).
    async fn call_found(
        &self,
        method: reqwest::Method,
        path: &str,
        query: Option<String>,
        body: Option<Value>,
    ) -> Result<Option<Value>, String> {
        let (url, shown) = self.address(&method, path, query);
        match self.send(method, &url, &shown, body).await {
            Ok((value, _)) => Ok(Some(value)),
            Err(Failure { status: Some(404), .. }) => Ok(None),
            Err(failure) => Err(failure.message),
        }
    }

    /// The URL of `path` (with `query`) on the API, and how a message names the call.
    fn address(&self, method: &reqwest::Method, path: &str, query: Option<String>) -> (String, String) {
        let mut url = format!("{}{path}", self.root);
        if let Some(query) = query {
            url.push('?');
            url.push_str(&query);
        }
        (url, format!("{method} {path}"))
    }

    /// One request to `url`: the JSON of a 2xx answer and its `Link: rel="next"` page,
    /// else the status and GitHub's message (`shown` names the call, never the token).
    async fn send(
        &self,
        method: reqwest::Method,
        url: &str,
        shown: &str,
        body: Option<Value>,
    ) -> Result<(Value, Option<String>), Failure> {
        let mut request = self.client.request(method, url);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request
            .send()
            .await
            .map_err(|e| Failure { status: None, message: format!("{shown}: {}", describe(&e)) })?;
        let status = response.status();
        let next = response.headers().get(reqwest::header::LINK).and_then(|v| v.to_str().ok()).and_then(next_link);
        let text = response.text().await.unwrap_or_default();
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if status.is_success() {
            return Ok((value, next));
        }
        Err(Failure {
            status: Some(status.as_u16()),
            message: format!("{shown} answered {}: {}", status.as_u16(), github_message(&value, &text)),
        })
    }

    /// `GET /repos/{owner}/{repo}{rest}?query`.
    pub(crate) async fn get(&self, rest: &str, query: Option<String>) -> Result<Value, Failure> {
        let path = format!("{}{rest}", self.repo_path());
        let mut url = format!("{}{path}", self.root);
        if let Some(query) = query {
            url.push('?');
            url.push_str(&query);
        }
        self.send(reqwest::Method::GET, &url, &format!("GET {path}"), None).await.map(|(value, _)| value)
    }

    /// Every item of a list under `/repos/{owner}/{repo}{rest}`, page after page by the
    /// `Link` header, at most `pages` pages; `true` when more pages were left unread. A
    /// next page on another origin than the API root is not followed (the token would go there).
    pub(crate) async fn get_all(&self, rest: &str, query: &str, pages: usize) -> Result<(Vec<Value>, bool), Failure> {
        let path = format!("{}{rest}", self.repo_path());
        let shown = format!("GET {path}");
        let mut url = format!("{}{path}?{query}", self.root);
        let mut items = Vec::new();
        for _ in 0..pages {
            let (value, next) = self.send(reqwest::Method::GET, &url, &shown, None).await?;
            items.extend(value.as_array().cloned().unwrap_or_default());
            match next.filter(|next| next.starts_with(&format!("{}/", self.root))) {
                Some(next) => url = next,
                None => return Ok((items, false)),
            }
        }
        Ok((items, true))
    }

    /// Whether the token may push to the repository (`permissions.push`).
    pub(crate) async fn can_push(&self) -> Result<bool, String> {
        let repo = self.call(reqwest::Method::GET, &self.repo_path(), None, None).await?;
        Ok(repo.pointer("/permissions/push").and_then(Value::as_bool).unwrap_or(false))
    }

    /// The open pull request from `branch` (in this repository) into `base`, if any.
    pub(crate) async fn find_open(&self, branch: &str, base: &str) -> Result<Option<Pull>, String> {
        let query = form_urlencoded::Serializer::new(String::new())
            .append_pair("state", "open")
            .append_pair("head", &format!("{}:{branch}", self.owner))
            .append_pair("base", base)
            .finish();
        let list = self.call(reqwest::Method::GET, &format!("{}/pulls", self.repo_path()), Some(query), None).await?;
        let found = list.as_array().and_then(|pulls| {
            pulls.iter().find(|p| p.pointer("/head/ref").and_then(Value::as_str).is_none_or(|r| r == branch))
        });
        Ok(found.map(pull))
    }

    pub(crate) async fn update(&self, number: u64, title: &str, body: &str) -> Result<Pull, String> {
        let path = format!("{}/pulls/{number}", self.repo_path());
        let value = self.call(reqwest::Method::PATCH, &path, None, Some(json!({"title": title, "body": body}))).await?;
        Ok(pull(&value))
    }

    pub(crate) async fn create(&self, branch: &str, base: &str, title: &str, body: &str) -> Result<Pull, String> {
        let path = format!("{}/pulls", self.repo_path());
        let payload =
            json!({"title": title, "head": branch, "base": base, "body": body, "maintainer_can_modify": true});
        let value = self.call(reqwest::Method::POST, &path, None, Some(payload)).await?;
        Ok(pull(&value))
    }

    /// Makes `branch` from `from`'s tip unless it exists (`GET`/`POST .../git/refs`).
    pub(crate) async fn ensure_branch(&self, branch: &str, from: &str) -> Result<(), String> {
        let get = reqwest::Method::GET;
        let path = |b: &str| format!("{}/git/ref/heads/{}", self.repo_path(), b);
        if self.call_found(get.clone(), &path(branch), None, None).await?.is_some() {
            return Ok(());
        }
        let base = self.call(get, &path(from), None, None).await?;
        let sha = base.pointer("/object/sha").and_then(Value::as_str).ok_or("the base branch has no commit")?;
        let refs = format!("{}/git/refs", self.repo_path());
        let payload = json!({"ref": format!("refs/heads/{branch}"), "sha": sha});
        self.call(reqwest::Method::POST, &refs, None, Some(payload)).await?;
        Ok(())
    }

    /// The web address of `path` on `branch`, if the file is there (`GET .../contents/{path}`).
    pub(crate) async fn file_url(&self, path: &str, branch: &str) -> Result<Option<String>, String> {
        let query = form_urlencoded::Serializer::new(String::new()).append_pair("ref", branch).finish();
        let found = self.call_found(reqwest::Method::GET, &self.contents_path(path), Some(query), None).await?;
        Ok(found.and_then(|v| v.get("html_url").and_then(Value::as_str).map(String::from)))
    }

    /// Commits `bytes` as the new file `path` on `branch` (`PUT .../contents/{path}`) and
    /// answers its web address.
    pub(crate) async fn put_file(
        &self,
        path: &str,
        branch: &str,
        message: &str,
        bytes: &[u8],
    ) -> Result<String, String> {
        use base64::Engine as _;
        let content = base64::engine::general_purpose::STANDARD.encode(bytes);
        let payload = json!({"message": message, "content": content, "branch": branch});
        let value = self.call(reqwest::Method::PUT, &self.contents_path(path), None, Some(payload)).await?;
        value.pointer("/content/html_url").and_then(Value::as_str).map(String::from).ok_or("no html_url".into())
    }

    fn contents_path(&self, path: &str) -> String {
        let segments: Vec<String> = path
            .split('/')
            .map(|s| percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string())
            .collect();
        format!("{}/contents/{}", self.repo_path(), segments.join("/"))
    }

    /// Asks `reviewers` (users, and `org/team` for teams) to review pull request `number`.
    pub(crate) async fn request_reviewers(&self, number: u64, reviewers: &[String]) -> Result<(), String> {
        let (teams, users): (Vec<&String>, Vec<&String>) = reviewers.iter().partition(|r| r.contains('/'));
        let teams: Vec<&str> = teams.iter().filter_map(|t| t.split_once('/').map(|(_, slug)| slug)).collect();
        let path = format!("{}/pulls/{number}/requested_reviewers", self.repo_path());
        self.call(reqwest::Method::POST, &path, None, Some(json!({"reviewers": users, "team_reviewers": teams})))
            .await?;
        Ok(())
    }
}

/// The `rel="next"` address of a `Link` header (RFC 8288, as GitHub sends it).
fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|link| {
        let (url, params) = link.split_once(';')?;
        let next = params.split(';').any(|p| p.trim().replace(' ', "") == "rel=\"next\"");
        next.then(|| url.trim().trim_start_matches('<').trim_end_matches('>').to_string())
    })
}

fn pull(value: &Value) -> Pull {
    Pull {
        number: value.get("number").and_then(Value::as_u64),
        url: value.get("html_url").and_then(Value::as_str).unwrap_or_default().to_string(),
    }
}

/// GitHub's `message` and each `errors[].message` (or `code` on `field`).
fn github_message(value: &Value, raw: &str) -> String {
    let Some(message) = value.get("message").and_then(Value::as_str) else {
        let raw = raw.trim();
        return if raw.is_empty() { "no message".into() } else { raw.chars().take(300).collect() };
    };
    let details: Vec<String> = value
        .get("errors")
        .and_then(Value::as_array)
        .map(|errors| {
            errors
                .iter()
                .filter_map(|e| {
                    e.get("message").and_then(Value::as_str).map(String::from).or_else(|| {
                        let code = e.get("code").and_then(Value::as_str)?;
                        Some(
                            format!("{code} {}", e.get("field").and_then(Value::as_str).unwrap_or(""))
                                .trim()
                                .to_string(),
                        )
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    if details.is_empty() {
        message.to_string()
    } else {
        format!("{message} ({})", details.join("; "))
    }
}

fn describe(e: &reqwest::Error) -> String {
    // The URL is Kiln's own (API root and path, never a secret); say what failed.
    if e.is_timeout() {
        "no answer in time".into()
    } else if e.is_connect() {
        "cannot connect".into()
    } else {
        let mut text = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            text.push_str(&format!(": {s}"));
            source = s.source();
        }
        text
    }
}

// ---------------------------------------------------------------------------------------
// gh

/// `gh` on PATH (or the configured program when it exists).
pub(crate) fn find_gh(configured: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = configured {
        return path.is_file().then(|| path.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join("gh")).find(|p| p.is_file())
}

/// What `gh` gets on top of git's allowlist (`kiln_runtime::process::Env::Tool`): gh's own
/// configuration, never a token variable (gh reads its own signed-in credentials).
fn gh_env() -> Vec<(OsString, OsString)> {
    let mut env = Vec::new();
    for key in ["GH_CONFIG_DIR", "GH_HOST", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"] {
        if let Some(value) = std::env::var_os(key) {
            env.push((key.into(), value));
        }
    }
    env.push(("GH_PROMPT_DISABLED".into(), "1".into()));
    env.push(("GH_NO_UPDATE_NOTIFIER".into(), "1".into()));
    env.push(("NO_COLOR".into(), "1".into()));
    env.push(("GIT_TERMINAL_PROMPT".into(), "0".into()));
    env
}

/// One gh command: `(success, stdout, stdout+stderr)`.
pub(crate) async fn gh(
    program: &Path,
    dir: &Path,
    args: &[&str],
    stdin: Option<&str>,
) -> Result<(bool, String, String), String> {
    let cmd = Command::new(program, dir, Env::Tool(gh_env()))
        .args(args)
        .input(stdin.map(|s| s.as_bytes().to_vec()))
        .own_session();
    let mut child = cmd.spawn(None).map_err(|e| format!("could not start gh: {e}"))?;
    let out =
        process::collect(&mut child, Duration::from_secs(120), true).await.map_err(|e| format!("gh failed: {e}"))?;
    if out.timed_out {
        return Err(format!("`gh {}` did not finish within 120 s", args.first().unwrap_or(&"")));
    }
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    // stdout and stderr as they interleaved, with a long run's middle cut.
    let both = format!("{}{}", String::from_utf8_lossy(&out.head), String::from_utf8_lossy(&out.tail));
    let success = out.status.is_some_and(|s| s.success());
    Ok((success, stdout, both))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages() {
        let v = json!({"message": "Validation Failed", "errors": [{"message": "A pull request already exists for a:b."}, {"code": "invalid", "field": "base"}]});
        assert_eq!(github_message(&v, ""), "Validation Failed (A pull request already exists for a:b.; invalid base)");
        assert_eq!(github_message(&Value::Null, " Forbidden "), "Forbidden");
    }

    #[test]
    fn next_pages() {
        let link = "<http://h/r?page=1>; rel=\"prev\", <http://h/r?per_page=2&page=3>; rel=\"next\", <http://h/r?page=5>; rel=\"last\"";
        assert_eq!(next_link(link).as_deref(), Some("http://h/r?per_page=2&page=3"));
        assert_eq!(next_link("<http://h/r?page=1>; rel=\"prev\""), None);
    }

    #[test]
    fn names() {
        assert!(
            valid_name("acme")
                && valid_name("shop.js")
                && !valid_name("a/b")
                && !valid_name("..")
                && !valid_name("a?x")
        );
    }
}
