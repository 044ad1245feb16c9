//! The checks every request passes before any endpoint: User-Agent (403), API version
//! (400), Accept (415) and the token (401), with GitHub's bodies, and nothing changes
//! when one fails.

mod support;

use reqwest::Method;
use serde_json::{json, Value};
use support::{api, bare, double, send, with, TOKEN};

#[tokio::test]
async fn a_request_without_a_user_agent_is_403_before_anything_else() {
    let github = double().await;
    let response = bare(&github, Method::POST, "/repos/acme/shop/pulls")
        .header("accept", "application/vnd.github+json")
        .header("authorization", format!("Bearer {TOKEN}"))
        .json(&json!({"title": "t", "head": "kiln/a", "base": "main"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
    let text = response.text().await.unwrap();
    assert!(
        text.starts_with(
            "Request forbidden by administrative rules. Please make sure your request has a User-Agent header"
        ),
        "{text}"
    );
    // Not even a bad token is looked at first, and nothing was created.
    let (status, _) = send(bare(&github, Method::GET, "/user").header("authorization", "Bearer wrong")).await;
    assert_eq!(status, 403);
    let (status, _) = send(with(api(&github, Method::GET, "/user"), "user-agent", "  ")).await;
    assert_eq!(status, 403);
    assert!(github.pulls("acme", "shop").is_empty());
    assert_eq!(github.requests().iter().map(|r| r.status).collect::<Vec<_>>(), [403, 403, 403]);
}

#[tokio::test]
async fn a_missing_or_wrong_token_is_401_with_githubs_body() {
    let github = double().await;
    let without = || {
        bare(&github, Method::POST, "/repos/acme/shop/pulls")
            .header("user-agent", "kiln-tests")
            .header("accept", "application/vnd.github+json")
            .json(&json!({"title": "t", "head": "kiln/a", "base": "main"}))
    };
    let (status, body) = send(without()).await;
    assert_eq!(status, 401);
    assert_eq!(
        body,
        json!({"message": "Requires authentication", "documentation_url": "https://docs.github.com/rest", "status": "401"})
    );
    for credential in [
        "Bearer ghp_wrong".to_owned(),
        format!("Basic {TOKEN}"),
        format!("Bearer {TOKEN}x"),
        TOKEN.to_owned(),
        "Bearer".to_owned(),
    ] {
        let (status, body) = send(without().header("authorization", &credential)).await;
        assert_eq!(status, 401, "{credential}");
        assert_eq!(
            body,
            json!({"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"})
        );
    }
    // Two Authorization headers are refused even when one is right.
    let (status, _) = send(api(&github, Method::GET, "/user").header("authorization", "Bearer other")).await;
    assert_eq!(status, 401);
    assert!(github.pulls("acme", "shop").is_empty());

    // Both schemes GitHub takes for a token work.
    let (status, _) = send(without().header("authorization", format!("token {TOKEN}"))).await;
    assert_eq!(status, 201);
    let (status, body) = send(
        bare(&github, Method::GET, "/user")
            .header("user-agent", "kiln-tests")
            .header("accept", "application/json")
            .header("authorization", format!("bearer {TOKEN}")),
    )
    .await;
    assert_eq!((status, &body["login"]), (200, &json!("kiln-bot")));
}

#[tokio::test]
async fn set_token_rotates_the_accepted_token() {
    let github = double().await;
    assert_eq!(send(api(&github, Method::GET, "/user")).await.0, 200);
    github.set_token("ghp_rotated");
    assert_eq!(send(api(&github, Method::GET, "/user")).await.0, 401);
    let (status, _) = send(with(api(&github, Method::GET, "/user"), "authorization", "Bearer ghp_rotated")).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn accept_must_name_githubs_json_media_type() {
    let github = double().await;
    // reqwest's default `*/*`, and no Accept at all.
    let (status, body) = send(
        bare(&github, Method::GET, "/user")
            .header("user-agent", "kiln-tests")
            .header("authorization", format!("Bearer {TOKEN}")),
    )
    .await;
    assert_eq!(status, 415, "{body}");
    assert!(body["message"].as_str().unwrap().contains("Accept"));
    assert!(body["documentation_url"].is_string());
    for accept in ["text/html", "application/xml"] {
        let (status, _) = send(with(api(&github, Method::GET, "/user"), "accept", accept)).await;
        assert_eq!(status, 415, "{accept}");
    }
    for accept in [
        "application/vnd.github+json",
        "application/vnd.github.v3+json",
        "application/json",
        "text/plain, application/vnd.github+json;q=0.9",
    ] {
        let (status, _) = send(with(api(&github, Method::GET, "/user"), "accept", accept)).await;
        assert_eq!(status, 200, "{accept}");
    }
}

#[tokio::test]
async fn the_api_version_header_is_honoured() {
    let github = double().await;
    let response = api(&github, Method::GET, "/user").send().await.unwrap();
    assert_eq!(response.headers()["x-github-api-version-selected"], "2022-11-28");
    assert_eq!(response.headers()["x-oauth-scopes"], "repo");
    assert!(response.headers().contains_key("x-github-request-id"));
    assert!(response.headers().contains_key("x-ratelimit-remaining"));

    let response = with(api(&github, Method::GET, "/user"), "x-github-api-version", "2026-03-10").send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-github-api-version-selected"], "2026-03-10");

    // Without the header GitHub answers with its default version.
    let response = bare(&github, Method::GET, "/user")
        .header("user-agent", "kiln-tests")
        .header("accept", "application/vnd.github+json")
        .header("authorization", format!("Bearer {TOKEN}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-github-api-version-selected"], "2022-11-28");

    let (status, body) = send(with(api(&github, Method::GET, "/user"), "x-github-api-version", "2021-01-01")).await;
    assert_eq!(status, 400);
    assert!(body["message"].as_str().unwrap().contains("2021-01-01"), "{body}");
}

#[tokio::test]
async fn unknown_paths_and_methods_are_404() {
    let github = double().await;
    for (method, path) in
        [(Method::GET, "/repos/acme/shop/labels"), (Method::DELETE, "/repos/acme/shop/pulls/1"), (Method::GET, "/")]
    {
        let (status, body) = send(api(&github, method.clone(), path)).await;
        assert_eq!(status, 404, "{method} {path}");
        assert_eq!(body["message"], "Not Found");
    }
    let (status, body): (u16, Value) = send(api(&github, Method::GET, "/repos/acme/nowhere")).await;
    assert_eq!((status, &body["message"]), (404, &json!("Not Found")));
}
