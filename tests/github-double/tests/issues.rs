//! The issue endpoints as GitHub documents them: an issue's JSON, its comments oldest first,
//! the repository's list that holds pull requests too (marked by `pull_request`), numbers
//! shared with pull requests, paging by `Link`, and 404s.

mod support;

use kiln_github_double::{CommentSeed, IssueSeed};
use reqwest::Method;
use serde_json::{json, Value};
use support::{api, create_pull, double, send};

fn numbers(list: &Value) -> Vec<u64> {
    list.as_array().unwrap().iter().map(|item| item["number"].as_u64().unwrap()).collect()
}

#[tokio::test]
async fn an_issue_answers_with_githubs_fields_and_its_comments_oldest_first() {
    let github = double().await;
    let number = github.add_issue(
        "acme",
        "shop",
        IssueSeed::new("The cart forgets its total")
            .body("Steps: add two items, remove one.")
            .author("alice")
            .labels(["bug", "cart"])
            .created_at("2026-01-02T03:04:05Z"),
    );
    assert_eq!(number, 1);
    // Seeded out of order: listed in time order, as GitHub keeps a conversation.
    github.add_comment("acme", "shop", 1, CommentSeed::new("alice", "Still there.").created_at("2026-01-04T00:00:00Z"));
    github.add_comment("acme", "shop", 1, CommentSeed::new("bob", "Seen it too.").created_at("2026-01-03T00:00:00Z"));

    let (status, issue) = send(api(&github, Method::GET, "/repos/acme/shop/issues/1")).await;
    assert_eq!(status, 200);
    let base = github.base_url();
    assert_eq!(issue["number"], 1);
    assert_eq!(issue["title"], "The cart forgets its total");
    assert_eq!(issue["body"], "Steps: add two items, remove one.");
    assert_eq!(issue["user"]["login"], "alice");
    assert_eq!(issue["state"], "open");
    assert_eq!(issue["comments"], 2);
    assert_eq!(issue["html_url"], format!("{base}/acme/shop/issues/1"));
    assert_eq!(issue["url"], format!("{base}/repos/acme/shop/issues/1"));
    assert_eq!(issue["created_at"], "2026-01-02T03:04:05Z");
    assert_eq!(issue["updated_at"], "2026-01-04T00:00:00Z");
    let labels: Vec<&str> = issue["labels"].as_array().unwrap().iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(labels, ["bug", "cart"]);
    assert!(issue.get("pull_request").is_none(), "an issue has no pull_request key");

    let (status, comments) = send(api(&github, Method::GET, "/repos/acme/shop/issues/1/comments")).await;
    assert_eq!(status, 200);
    let said: Vec<(&str, &str, &str)> = comments
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["user"]["login"].as_str().unwrap(), c["body"].as_str().unwrap(), c["created_at"].as_str().unwrap()))
        .collect();
    assert_eq!(
        said,
        [("bob", "Seen it too.", "2026-01-03T00:00:00Z"), ("alice", "Still there.", "2026-01-04T00:00:00Z")]
    );
    assert!(comments[0]["html_url"].as_str().unwrap().contains("/acme/shop/issues/1#issuecomment-"));
}

#[tokio::test]
async fn the_list_holds_pull_requests_marked_and_numbers_are_shared() {
    let github = double().await;
    assert_eq!(github.add_issue("acme", "shop", IssueSeed::new("first")), 1);
    let (status, pull) =
        create_pull(&github, "acme/shop", json!({"title": "a change", "head": "kiln/x", "base": "main"})).await;
    assert_eq!((status, &pull["number"]), (201, &json!(2)), "a pull request takes the next number after an issue");
    assert_eq!(github.add_issue("acme", "shop", IssueSeed::new("closed one").closed()), 3);
    assert_eq!(github.add_issue("acme", "shop", IssueSeed::new("latest")), 4);

    let (status, open) = send(api(&github, Method::GET, "/repos/acme/shop/issues?state=open")).await;
    assert_eq!(status, 200);
    assert_eq!(numbers(&open), [4, 2, 1], "open only, newest first, the pull request among them");
    let marked: Vec<bool> = open.as_array().unwrap().iter().map(|i| i.get("pull_request").is_some()).collect();
    assert_eq!(marked, [false, true, false]);
    assert_eq!(open[1]["pull_request"]["html_url"], format!("{}/acme/shop/pull/2", github.base_url()));
    let (_, all) = send(api(&github, Method::GET, "/repos/acme/shop/issues?state=all&direction=asc")).await;
    assert_eq!(numbers(&all), [1, 2, 3, 4]);

    // The pull request's number answers it as an issue, with the key.
    let (status, as_issue) = send(api(&github, Method::GET, "/repos/acme/shop/issues/2")).await;
    assert_eq!(status, 200);
    assert_eq!(as_issue["title"], "a change");
    assert!(as_issue["pull_request"].is_object());
    let (status, none) = send(api(&github, Method::GET, "/repos/acme/shop/issues/2/comments")).await;
    assert_eq!((status, none), (200, json!([])));
}

#[tokio::test]
async fn lists_page_with_a_link_header() {
    let github = double().await;
    for n in 0..5 {
        github.add_issue("acme", "shop", IssueSeed::new(format!("issue {n}")));
    }
    github.add_comment("acme", "shop", 1, CommentSeed::new("bob", "one"));
    github.add_comment("acme", "shop", 1, CommentSeed::new("bob", "two"));
    github.add_comment("acme", "shop", 1, CommentSeed::new("bob", "three"));

    let response = api(&github, Method::GET, "/repos/acme/shop/issues?per_page=2").send().await.unwrap();
    let link = response.headers()["link"].to_str().unwrap().to_owned();
    assert!(link.contains("per_page=2&page=2>; rel=\"next\""), "{link}");
    assert!(link.contains("page=3>; rel=\"last\""), "{link}");
    assert_eq!(numbers(&response.json().await.unwrap()), [5, 4]);
    let (_, last) = send(api(&github, Method::GET, "/repos/acme/shop/issues?per_page=2&page=3")).await;
    assert_eq!(numbers(&last), [1]);
    let one_page = api(&github, Method::GET, "/repos/acme/shop/issues").send().await.unwrap();
    assert!(one_page.headers().get("link").is_none());

    let response =
        api(&github, Method::GET, "/repos/acme/shop/issues/1/comments?per_page=2&page=2").send().await.unwrap();
    let link = response.headers()["link"].to_str().unwrap().to_owned();
    assert!(link.contains("rel=\"prev\"") && !link.contains("rel=\"next\""), "{link}");
    let page: Value = response.json().await.unwrap();
    assert_eq!(page.as_array().unwrap().iter().map(|c| c["body"].as_str().unwrap()).collect::<Vec<_>>(), ["three"]);
}

#[tokio::test]
async fn unknown_issues_and_repositories_are_404() {
    let github = double().await;
    github.add_issue("acme", "shop", IssueSeed::new("only"));
    for path in [
        "/repos/acme/shop/issues/9",
        "/repos/acme/shop/issues/x",
        "/repos/acme/shop/issues/9/comments",
        "/repos/acme/nowhere/issues",
        "/repos/acme/nowhere/issues/1",
    ] {
        let (status, body) = send(api(&github, Method::GET, path)).await;
        assert_eq!((status, body["message"].as_str()), (404, Some("Not Found")), "{path}");
    }
    let (status, _) = send(api(&github, Method::GET, "/repos/acme/shop/issues?state=nope")).await;
    assert_eq!(status, 422);
    // The other repository has no issues at all.
    let (status, list) = send(api(&github, Method::GET, "/repos/acme/docs/issues")).await;
    assert_eq!((status, list), (200, json!([])));
}
