//! Fault injection: the next call to an endpoint answers 500, 422, 401, a rate limit or
//! anything else, changes nothing, and the call after it behaves normally again.

mod support;

use kiln_github_double::{Endpoint, Fault};
use reqwest::Method;
use serde_json::json;
use support::{api, create_pull, double, send, with};

fn pr() -> serde_json::Value {
    json!({"title": "kiln: add cart", "head": "kiln/cart-1a2b", "base": "main"})
}

#[tokio::test]
async fn the_next_create_can_fail_with_500_422_or_401_and_creates_nothing() {
    let github = double().await;
    github.fail_next_create(Fault::ServerError);
    github.fail_next_create(Fault::Unprocessable("Head sha can't be blank".into()));
    github.fail_next_create(Fault::BadCredentials);

    let (status, body) = create_pull(&github, "acme/shop", pr()).await;
    assert_eq!((status, &body["message"]), (500, &json!("Server Error")));
    let (status, body) = create_pull(&github, "acme/shop", pr()).await;
    assert_eq!(status, 422);
    assert_eq!(
        body,
        json!({
            "message": "Validation Failed",
            "errors": [{"resource": "PullRequest", "code": "custom", "message": "Head sha can't be blank"}],
            "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
            "status": "422",
        })
    );
    let (status, body) = create_pull(&github, "acme/shop", pr()).await;
    assert_eq!((status, &body["message"]), (401, &json!("Bad credentials")));
    assert!(github.pulls("acme", "shop").is_empty());

    let (status, pull) = create_pull(&github, "acme/shop", pr()).await;
    assert_eq!((status, &pull["number"]), (201, &json!(1)));
    let statuses: Vec<u16> =
        github.requests_to("POST", "/repos/acme/shop/pulls").iter().map(|request| request.status).collect();
    assert_eq!(statuses, [500, 422, 401, 201]);
}

#[tokio::test]
async fn faults_wait_for_their_endpoint_and_header_checks_come_first() {
    let github = double().await;
    github.fail_next(Endpoint::RequestReviewers, Fault::RateLimited);
    github.fail_next(Endpoint::ListPulls, Fault::Custom { status: 502, body: json!({"message": "Bad Gateway"}) });
    github.fail_next(Endpoint::GetRepo, Fault::ServerError);

    // A request turned away by the header checks does not use up the fault.
    let (status, _) = send(with(api(&github, Method::GET, "/repos/acme/shop"), "authorization", "Bearer nope")).await;
    assert_eq!(status, 401);
    assert_eq!(send(api(&github, Method::GET, "/repos/acme/shop")).await.0, 500);
    assert_eq!(send(api(&github, Method::GET, "/repos/acme/shop")).await.0, 200);

    assert_eq!(create_pull(&github, "acme/shop", pr()).await.0, 201);
    let (status, body) = send(api(&github, Method::GET, "/repos/acme/shop/pulls?head=acme:kiln/cart-1a2b")).await;
    assert_eq!((status, body), (502, json!({"message": "Bad Gateway"})));

    let response = api(&github, Method::POST, "/repos/acme/shop/pulls/1/requested_reviewers")
        .json(&json!({"reviewers": ["alice"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    assert_eq!(response.headers()["x-ratelimit-remaining"], "0");
    let body: serde_json::Value = response.json().await.unwrap();
    assert!(body["message"].as_str().unwrap().starts_with("API rate limit exceeded"));
    assert_eq!(github.pulls("acme", "shop")[0]["requested_reviewers"], json!([]));

    github.fail_next_create(Fault::ServerError);
    github.clear_faults();
    let (status, _) =
        create_pull(&github, "acme/shop", json!({"title": "t", "head": "kiln/other", "base": "main"})).await;
    assert_eq!(status, 201);
}
