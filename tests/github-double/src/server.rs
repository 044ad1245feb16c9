//! Routing: every request is recorded with the status it got; before any route it must
//! pass GitHub's checks in order (User-Agent, API version, Accept, token), then a queued
//! fault for its endpoint answers instead, else the endpoint does.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, Method, Uri};
use axum::response::Response;
use axum::Router;
use kiln_double_support::lock;
use percent_encoding::percent_decode_str;
use serde_json::{json, Value};

use crate::config::{Endpoint, Fault, DEFAULT_API_VERSION, SUPPORTED_API_VERSIONS};
use crate::contents::{self, DOC_CREATE_REF, DOC_GET_CONTENT, DOC_GET_REF, DOC_PUT_CONTENT};
use crate::record::{credential, RecordedRequest};
use crate::reply::{
    custom_error, error, not_found, Answer, DOC_CREATE_FORK, DOC_CREATE_PULL, DOC_GET_ISSUE, DOC_GET_PULL,
    DOC_GET_REPO, DOC_GET_USER, DOC_ISSUE_COMMENTS, DOC_LIST_ISSUES, DOC_LIST_PULLS, DOC_MEDIA_TYPES, DOC_RATE_LIMIT,
    DOC_REQUEST_REVIEWERS, DOC_REST, DOC_UPDATE_PULL, DOC_USER_AGENT, DOC_VERSIONS,
};
use crate::store::{user_id, Store};
use crate::{issues, pulls, repos};

pub(crate) struct Shared {
    pub store: Mutex<Store>,
    pub requests: Mutex<Vec<RecordedRequest>>,
}

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    // One fallback handler sees every method and path, so nothing escapes recording.
    Router::new().fallback(handle).with_state(shared)
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut request = RecordedRequest::new(&method, &uri, &headers, &body);
    let version = joined(&headers, "x-github-api-version");
    let selected = match version.as_deref() {
        Some(version) if SUPPORTED_API_VERSIONS.contains(&version) => version,
        _ => DEFAULT_API_VERSION,
    };
    let (answer, request_id) = {
        let mut store = lock(&shared.store);
        store.answered += 1;
        let answer = answer(&mut store, &method, &uri, &headers, version.as_deref(), &request.body);
        (answer, store.answered)
    };
    let response = answer.into_response(selected, request_id);
    request.status = response.status().as_u16();
    lock(&shared.requests).push(request);
    response
}

fn answer(
    store: &mut Store,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    version: Option<&str>,
    body: &Value,
) -> Answer {
    // GitHub turns away a request without a User-Agent before looking at anything else.
    let user_agent = headers.get(header::USER_AGENT).map(|value| value.as_bytes());
    if user_agent.is_none_or(|value| value.iter().all(u8::is_ascii_whitespace)) {
        return Answer::text(
            403,
            format!(
                "Request forbidden by administrative rules. Please make sure your request has a User-Agent header ({DOC_USER_AGENT}). Check https://developer.github.com for other possible causes.\n"
            ),
        );
    }
    if let Some(version) = version {
        if !SUPPORTED_API_VERSIONS.contains(&version) {
            return error(
                400,
                &format!(
                    "Unsupported 'X-GitHub-Api-Version' header: '{version}'. Supported versions: {}.",
                    SUPPORTED_API_VERSIONS.join(", ")
                ),
                DOC_VERSIONS,
            );
        }
    }
    let accept = joined(headers, header::ACCEPT.as_str());
    if !accept.as_deref().is_some_and(accepts_json) {
        return error(
            415,
            &format!(
                "Unsupported 'Accept' header: {}. Send 'application/vnd.github+json'.",
                accept.map_or("(none)".to_owned(), |value| format!("'{value}'"))
            ),
            DOC_MEDIA_TYPES,
        );
    }
    // Exactly one Authorization header, carrying exactly the configured token.
    let credentials: Vec<_> = headers.get_all(header::AUTHORIZATION).iter().collect();
    match credentials.as_slice() {
        [] => return error(401, "Requires authentication", DOC_REST),
        [value] => {
            let value = String::from_utf8_lossy(value.as_bytes());
            if store.token.is_empty() || credential(&value) != Some(store.token.as_str()) {
                return error(401, "Bad credentials", DOC_REST);
            }
        }
        _ => return error(401, "Bad credentials", DOC_REST),
    }
    let scopes = store.scopes.clone();
    route(store, method, uri, body).header("x-oauth-scopes", scopes)
}

/// Every value of a header joined with `, ` (a repeated header is one list in HTTP).
fn joined(headers: &HeaderMap, name: &str) -> Option<String> {
    let values: Vec<String> =
        headers.get_all(name).iter().map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned()).collect();
    (!values.is_empty()).then(|| values.join(", "))
}

/// `application/vnd.github+json`, `application/vnd.github.<anything>+json` or `application/json`.
fn accepts_json(accept: &str) -> bool {
    accept.split(',').any(|range| {
        let media = range.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
        media == "application/json"
            || media == "application/vnd.github+json"
            || (media.starts_with("application/vnd.github.") && media.ends_with("+json"))
    })
}

fn route(store: &mut Store, method: &Method, uri: &Uri, body: &Value) -> Answer {
    let segments: Vec<String> = uri
        .path()
        .split('/')
        .filter(|segment| !segment.is_empty())
        .map(|segment| percent_decode_str(segment).decode_utf8_lossy().into_owned())
        .collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let query = uri.query().unwrap_or_default();

    // A branch name or a file path is the rest of the path, slashes and all.
    let rest = |from: usize| segments.get(from..).map(|s| s.join("/")).unwrap_or_default();
    let (endpoint, doc, repo, number) = match (method.as_str(), segments.as_slice()) {
        ("GET", ["repos", owner, name, "git", "ref", "heads", _, ..]) => {
            (Endpoint::GetRef, DOC_GET_REF, Some((*owner, *name)), None)
        }
        ("POST", ["repos", owner, name, "git", "refs"]) => {
            (Endpoint::CreateRef, DOC_CREATE_REF, Some((*owner, *name)), None)
        }
        ("GET", ["repos", owner, name, "contents", _, ..]) => {
            (Endpoint::GetContent, DOC_GET_CONTENT, Some((*owner, *name)), None)
        }
        ("PUT", ["repos", owner, name, "contents", _, ..]) => {
            (Endpoint::PutContent, DOC_PUT_CONTENT, Some((*owner, *name)), None)
        }
        ("GET", ["user"]) => (Endpoint::GetUser, DOC_GET_USER, None, None),
        ("GET", ["repos", owner, name]) => (Endpoint::GetRepo, DOC_GET_REPO, Some((*owner, *name)), None),
        ("POST", ["repos", owner, name, "forks"]) => {
            (Endpoint::CreateFork, DOC_CREATE_FORK, Some((*owner, *name)), None)
        }
        ("GET", ["repos", owner, name, "pulls"]) => (Endpoint::ListPulls, DOC_LIST_PULLS, Some((*owner, *name)), None),
        ("POST", ["repos", owner, name, "pulls"]) => {
            (Endpoint::CreatePull, DOC_CREATE_PULL, Some((*owner, *name)), None)
        }
        ("GET", ["repos", owner, name, "pulls", number]) => {
            (Endpoint::GetPull, DOC_GET_PULL, Some((*owner, *name)), Some(*number))
        }
        ("PATCH", ["repos", owner, name, "pulls", number]) => {
            (Endpoint::UpdatePull, DOC_UPDATE_PULL, Some((*owner, *name)), Some(*number))
        }
        ("POST", ["repos", owner, name, "pulls", number, "requested_reviewers"]) => {
            (Endpoint::RequestReviewers, DOC_REQUEST_REVIEWERS, Some((*owner, *name)), Some(*number))
        }
        ("GET", ["repos", owner, name, "issues"]) => {
            (Endpoint::ListIssues, DOC_LIST_ISSUES, Some((*owner, *name)), None)
        }
        ("GET", ["repos", owner, name, "issues", number]) => {
            (Endpoint::GetIssue, DOC_GET_ISSUE, Some((*owner, *name)), Some(*number))
        }
        ("GET", ["repos", owner, name, "issues", number, "comments"]) => {
            (Endpoint::ListIssueComments, DOC_ISSUE_COMMENTS, Some((*owner, *name)), Some(*number))
        }
        _ => return not_found(DOC_REST),
    };
    // An unknown (or, on GitHub, invisible) repository is a plain 404.
    let repo = match repo {
        Some((owner, name)) => match store.find(owner, name) {
            Some(index) => index,
            None => return not_found(doc),
        },
        None => usize::MAX,
    };
    if let Some(fault) = store.take_fault(endpoint) {
        return fault_answer(fault, doc, user_id(&store.login));
    }
    let number = number.unwrap_or_default();
    let result = match endpoint {
        Endpoint::GetUser => Ok(repos::user(store)),
        Endpoint::GetRepo => Ok(repos::get(store, repo)),
        Endpoint::CreateFork => repos::fork(store, repo, body),
        Endpoint::ListPulls => pulls::list(store, repo, query, uri.path()),
        Endpoint::CreatePull => pulls::create(store, repo, body),
        Endpoint::GetPull => pulls::get(store, repo, number),
        Endpoint::UpdatePull => pulls::update(store, repo, number, body),
        Endpoint::RequestReviewers => pulls::request_reviewers(store, repo, number, body),
        Endpoint::ListIssues => issues::list(store, repo, query, uri.path()),
        Endpoint::GetIssue => issues::get(store, repo, number),
        Endpoint::ListIssueComments => issues::comments(store, repo, number, query, uri.path()),
        Endpoint::GetRef => Ok(contents::get_ref(store, repo, &rest(6))),
        Endpoint::CreateRef => contents::create_ref(store, repo, body),
        Endpoint::GetContent => Ok(contents::get(store, repo, &rest(4), query)),
        Endpoint::PutContent => contents::put(store, repo, &rest(4), body),
    };
    result.unwrap_or_else(|refusal| refusal)
}

fn fault_answer(fault: Fault, doc: &str, user: u64) -> Answer {
    match fault {
        Fault::ServerError => error(500, "Server Error", DOC_REST),
        Fault::BadCredentials => error(401, "Bad credentials", DOC_REST),
        Fault::Unprocessable(message) => custom_error("PullRequest", &message, doc),
        Fault::RateLimited => error(403, &format!("API rate limit exceeded for user ID {user}."), DOC_RATE_LIMIT)
            .header("x-ratelimit-remaining", "0")
            .header("x-ratelimit-reset", "4102444800"),
        Fault::Custom { status, body } => Answer::json(status, if body.is_null() { json!({}) } else { body }),
    }
}
