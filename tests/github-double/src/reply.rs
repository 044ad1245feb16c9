//! How answers go out: GitHub's JSON error bodies (`message`, `documentation_url`, and for
//! validation failures `errors`), and the headers GitHub puts on every API answer.

use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

pub const DOC_REST: &str = "https://docs.github.com/rest";
pub const DOC_CREATE_PULL: &str = "https://docs.github.com/rest/pulls/pulls#create-a-pull-request";
pub const DOC_LIST_PULLS: &str = "https://docs.github.com/rest/pulls/pulls#list-pull-requests";
pub const DOC_GET_PULL: &str = "https://docs.github.com/rest/pulls/pulls#get-a-pull-request";
pub const DOC_UPDATE_PULL: &str = "https://docs.github.com/rest/pulls/pulls#update-a-pull-request";
pub const DOC_REQUEST_REVIEWERS: &str =
    "https://docs.github.com/rest/pulls/review-requests#request-reviewers-for-a-pull-request";
pub const DOC_LIST_ISSUES: &str = "https://docs.github.com/rest/issues/issues#list-repository-issues";
pub const DOC_GET_ISSUE: &str = "https://docs.github.com/rest/issues/issues#get-an-issue";
pub const DOC_ISSUE_COMMENTS: &str = "https://docs.github.com/rest/issues/comments#list-issue-comments";
pub const DOC_GET_REPO: &str = "https://docs.github.com/rest/repos/repos#get-a-repository";
pub const DOC_CREATE_FORK: &str = "https://docs.github.com/rest/repos/forks#create-a-fork";
pub const DOC_GET_USER: &str = "https://docs.github.com/rest/users/users#get-the-authenticated-user";
pub const DOC_RATE_LIMIT: &str = "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api";
pub const DOC_USER_AGENT: &str =
    "https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required";
pub const DOC_VERSIONS: &str = "https://docs.github.com/rest/about-the-rest-api/api-versions";
pub const DOC_MEDIA_TYPES: &str =
    "https://docs.github.com/rest/using-the-rest-api/getting-started-with-the-rest-api#media-types";

/// An answer before the per-request headers are added.
pub struct Answer {
    pub status: StatusCode,
    body: Body,
    headers: Vec<(HeaderName, String)>,
}

enum Body {
    Json(Value),
    Text(String),
}

impl Answer {
    pub fn json(status: u16, value: Value) -> Answer {
        Answer {
            status: StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            body: Body::Json(value),
            headers: Vec::new(),
        }
    }

    pub fn text(status: u16, text: impl Into<String>) -> Answer {
        Answer { body: Body::Text(text.into()), ..Answer::json(status, Value::Null) }
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Answer {
        self.headers.push((HeaderName::from_static(name), value.into()));
        self
    }

    /// The response, with the headers GitHub sends on every answer.
    pub fn into_response(self, api_version: &str, request_id: u64) -> Response {
        let mut response = match self.body {
            Body::Json(value) => {
                let mut response = (self.status, value.to_string()).into_response();
                response
                    .headers_mut()
                    .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json; charset=utf-8"));
                response
            }
            Body::Text(text) => {
                let mut response = (self.status, text).into_response();
                response
                    .headers_mut()
                    .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
                response
            }
        };
        let headers = response.headers_mut();
        let common = [
            ("x-github-api-version-selected", api_version.to_owned()),
            ("x-github-media-type", "github.v3; format=json".to_owned()),
            ("x-github-request-id", format!("D0B1:{request_id:04X}:KILN")),
            ("x-ratelimit-limit", "5000".to_owned()),
            ("x-ratelimit-resource", "core".to_owned()),
        ];
        for (name, value) in common {
            if let Ok(value) = HeaderValue::from_str(&value) {
                headers.insert(name, value);
            }
        }
        for (name, value) in self.headers {
            if let Ok(value) = HeaderValue::from_str(&value) {
                headers.insert(name, value);
            }
        }
        if !headers.contains_key("x-ratelimit-remaining") {
            headers.insert("x-ratelimit-remaining", HeaderValue::from_static("4999"));
        }
        response
    }
}

/// `{"message", "documentation_url", "status"}`, GitHub's body for every error.
pub fn error(status: u16, message: &str, documentation_url: &str) -> Answer {
    Answer::json(
        status,
        json!({"message": message, "documentation_url": documentation_url, "status": status.to_string()}),
    )
}

/// 422 `Validation Failed` with these `errors` objects.
pub fn validation_failed(errors: Vec<Value>, documentation_url: &str) -> Answer {
    Answer::json(
        422,
        json!({
            "message": "Validation Failed",
            "errors": errors,
            "documentation_url": documentation_url,
            "status": "422",
        }),
    )
}

/// 422 with one `custom` error on `resource`, as for a duplicate pull request.
pub fn custom_error(resource: &str, message: &str, documentation_url: &str) -> Answer {
    validation_failed(vec![json!({"resource": resource, "code": "custom", "message": message})], documentation_url)
}

/// 422 with one error on `resource.field` (`code`: `missing_field`, `invalid`, …).
pub fn field_error(resource: &str, field: &str, code: &str, documentation_url: &str) -> Answer {
    validation_failed(vec![json!({"resource": resource, "field": field, "code": code})], documentation_url)
}

/// 422 from the request schema check: `Invalid request.\n\n<detail>`.
pub fn invalid_request(detail: &str, documentation_url: &str) -> Answer {
    error(422, &format!("Invalid request.\n\n{detail}"), documentation_url)
}

/// 400 for a body that is not a JSON object.
pub fn problems_parsing_json(documentation_url: &str) -> Answer {
    error(400, "Problems parsing JSON", documentation_url)
}

pub fn not_found(documentation_url: &str) -> Answer {
    error(404, "Not Found", documentation_url)
}
