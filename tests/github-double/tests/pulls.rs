//! The pull request endpoints as GitHub documents them: create (numbers, JSON shape,
//! the 422 duplicate and validation errors), list by head, update, request reviewers,
//! forks as heads, and branch checks against a real bare repository.

mod support;

use std::path::Path;
use std::process::Command;

use kiln_github_double::{Config, GithubDouble, RepoConfig};
use reqwest::Method;
use serde_json::{json, Value};
use support::{api, create_pull, double, send, TOKEN};

fn pr(head: &str) -> Value {
    json!({"title": "kiln: add cart", "head": head, "base": "main", "body": "What changed"})
}

#[tokio::test]
async fn create_answers_201_with_the_pull_request_and_numbers_count_up_per_repository() {
    let github = double().await;
    let response = api(&github, Method::POST, "/repos/acme/shop/pulls")
        .json(&json!({"title": "kiln: add cart", "head": "kiln/cart-1a2b", "base": "main",
                      "body": "What changed", "draft": true, "maintainer_can_modify": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let base = github.base_url();
    assert_eq!(response.headers()["location"], format!("{base}/repos/acme/shop/pulls/1"));
    assert_eq!(response.headers()["content-type"], "application/json; charset=utf-8");
    assert_eq!(response.headers()["x-github-api-version-selected"], "2022-11-28");
    let pull: Value = response.json().await.unwrap();
    assert_eq!(pull["number"], 1);
    assert!(pull["id"].as_u64().unwrap() > 0);
    assert_eq!(pull["url"], format!("{base}/repos/acme/shop/pulls/1"));
    assert_eq!(pull["html_url"], format!("{base}/acme/shop/pull/1"));
    assert_eq!(pull["state"], "open");
    assert_eq!(pull["title"], "kiln: add cart");
    assert_eq!(pull["body"], "What changed");
    assert_eq!(pull["draft"], true);
    assert_eq!(pull["maintainer_can_modify"], false);
    assert_eq!(pull["user"]["login"], "kiln-bot");
    assert_eq!(pull["head"]["ref"], "kiln/cart-1a2b");
    assert_eq!(pull["head"]["label"], "acme:kiln/cart-1a2b");
    assert_eq!(pull["head"]["sha"].as_str().unwrap().len(), 40);
    assert_eq!(pull["head"]["repo"]["full_name"], "acme/shop");
    assert_eq!(pull["base"]["ref"], "main");
    assert_eq!(pull["base"]["label"], "acme:main");
    assert_eq!(pull["requested_reviewers"], json!([]));
    assert_eq!(pull["merged"], false);
    assert!(pull["created_at"].as_str().unwrap().ends_with('Z'));

    let (status, second) = create_pull(&github, "acme/shop", pr("kiln/other-3c4d")).await;
    assert_eq!((status, &second["number"]), (201, &json!(2)));
    assert_ne!(second["id"], pull["id"]);
    let (status, elsewhere) =
        create_pull(&github, "acme/docs", json!({"title": "t", "head": "kiln/a", "base": "trunk"})).await;
    assert_eq!((status, &elsewhere["number"]), (201, &json!(1)));
    assert_eq!(elsewhere["body"], Value::Null);
    assert_eq!(github.pulls("acme", "shop").len(), 2);
}

#[tokio::test]
async fn a_second_open_pull_request_for_the_same_head_and_base_is_422() {
    let github = double().await;
    assert_eq!(create_pull(&github, "acme/shop", pr("kiln/cart-1a2b")).await.0, 201);
    let (status, body) = create_pull(&github, "acme/shop", pr("kiln/cart-1a2b")).await;
    assert_eq!(status, 422);
    assert_eq!(
        body,
        json!({
            "message": "Validation Failed",
            "errors": [{"resource": "PullRequest", "code": "custom",
                        "message": "A pull request already exists for acme:kiln/cart-1a2b."}],
            "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
            "status": "422",
        })
    );
    // `owner:branch` names the same head.
    let (status, _) = create_pull(&github, "acme/shop", pr("acme:kiln/cart-1a2b")).await;
    assert_eq!(status, 422);
    // Another base is another pull request.
    let mut other_base = pr("kiln/cart-1a2b");
    other_base["base"] = json!("release");
    assert_eq!(create_pull(&github, "acme/shop", other_base).await.0, 201);
    assert_eq!(github.pulls("acme", "shop").len(), 2);

    // Once closed, the head is free again; reopening the old one is then the duplicate.
    let (status, closed) =
        send(api(&github, Method::PATCH, "/repos/acme/shop/pulls/1").json(&json!({"state": "closed"}))).await;
    assert_eq!((status, &closed["state"]), (200, &json!("closed")));
    assert!(closed["closed_at"].is_string());
    let (status, again) = create_pull(&github, "acme/shop", pr("kiln/cart-1a2b")).await;
    assert_eq!((status, &again["number"]), (201, &json!(3)));
    let (status, body) =
        send(api(&github, Method::PATCH, "/repos/acme/shop/pulls/1").json(&json!({"state": "open"}))).await;
    assert_eq!(status, 422);
    assert_eq!(body["errors"][0]["message"], "A pull request already exists for acme:kiln/cart-1a2b.");
}

#[tokio::test]
async fn bad_create_bodies_get_githubs_validation_answers() {
    let github = double().await;
    let cases = [
        (json!({"title": "t", "base": "main"}), 422, "Invalid request.\n\n\"head\" wasn't supplied."),
        (json!({"title": "t", "head": "x"}), 422, "Invalid request.\n\n\"base\" wasn't supplied."),
        (
            json!({"title": 5, "head": "x", "base": "main"}),
            422,
            "Invalid request.\n\nFor 'properties/title', 5 is not a string.",
        ),
        (
            json!({"title": "t", "head": "x", "base": "main", "draft": "yes"}),
            422,
            "Invalid request.\n\nFor 'properties/draft', \"yes\" is not a boolean.",
        ),
        (json!({"head": "x", "base": "main"}), 422, "Validation Failed"),
        (json!({"title": "t", "head": "stranger:x", "base": "main"}), 422, "Validation Failed"),
        (json!(["not", "an", "object"]), 400, "Problems parsing JSON"),
    ];
    for (body, want_status, want_message) in cases {
        let (status, answer) = create_pull(&github, "acme/shop", body.clone()).await;
        assert_eq!((status, answer["message"].as_str().unwrap()), (want_status, want_message), "{body}");
        assert!(answer["documentation_url"].is_string());
    }
    let (_, missing_title) = create_pull(&github, "acme/shop", json!({"head": "x", "base": "main"})).await;
    assert_eq!(
        missing_title["errors"],
        json!([{"resource": "PullRequest", "field": "title", "code": "missing_field"}])
    );
    let (_, unknown_fork) =
        create_pull(&github, "acme/shop", json!({"title": "t", "head": "stranger:x", "base": "main"})).await;
    assert_eq!(unknown_fork["errors"], json!([{"resource": "PullRequest", "field": "head", "code": "invalid"}]));
    let (status, _) = send(
        api(&github, Method::POST, "/repos/acme/shop/pulls")
            .header("content-type", "application/json")
            .body("{not json"),
    )
    .await;
    assert_eq!(status, 400);
    let (status, body) = create_pull(&github, "acme/nowhere", pr("kiln/x")).await;
    assert_eq!((status, &body["message"]), (404, &json!("Not Found")));
    assert!(github.pulls("acme", "shop").is_empty());
}

#[tokio::test]
async fn list_filters_by_owner_and_branch_state_and_base() {
    let github = double().await;
    for head in ["kiln/cart-1a2b", "kiln/search-5e6f", "kiln/cart-1a2b-old"] {
        assert_eq!(create_pull(&github, "acme/shop", pr(head)).await.0, 201);
    }
    send(api(&github, Method::PATCH, "/repos/acme/shop/pulls/3").json(&json!({"state": "closed"}))).await;

    let list = |query: &str| {
        let request = api(&github, Method::GET, &format!("/repos/acme/shop/pulls{query}"));
        async move {
            let (status, body) = send(request).await;
            assert_eq!(status, 200, "{body}");
            body.as_array().unwrap().iter().map(|pull| pull["number"].as_u64().unwrap()).collect::<Vec<_>>()
        }
    };
    assert_eq!(list("?head=acme:kiln/cart-1a2b&state=open").await, [1]);
    assert_eq!(list("?head=acme%3Akiln%2Fcart-1a2b&state=open").await, [1]);
    assert_eq!(list("?head=ACME:kiln/cart-1a2b").await, [1]);
    assert_eq!(list("?head=acme:kiln/cart-1a2b-old&state=open").await, Vec::<u64>::new());
    assert_eq!(list("?head=acme:kiln/cart-1a2b-old&state=closed").await, [3]);
    assert_eq!(list("?head=acme:kiln/nothing").await, Vec::<u64>::new());
    assert_eq!(list("?head=someone:kiln/cart-1a2b").await, Vec::<u64>::new());
    // As on GitHub: a head without `user:` filters nothing.
    assert_eq!(list("?head=kiln/cart-1a2b").await, [2, 1]);
    assert_eq!(list("").await, [2, 1]);
    assert_eq!(list("?state=all").await, [3, 2, 1]);
    assert_eq!(list("?state=all&direction=asc").await, [1, 2, 3]);
    assert_eq!(list("?base=main").await, [2, 1]);
    assert_eq!(list("?base=release").await, Vec::<u64>::new());
    let (status, _) = send(api(&github, Method::GET, "/repos/acme/shop/pulls?state=merged")).await;
    assert_eq!(status, 422);

    let response = api(&github, Method::GET, "/repos/acme/shop/pulls?state=all&per_page=2").send().await.unwrap();
    let link = response.headers()["link"].to_str().unwrap().to_owned();
    assert!(link.contains("page=2>; rel=\"next\""), "{link}");
    assert!(link.contains("rel=\"last\""), "{link}");
    assert_eq!(list("?state=all&per_page=2&page=2").await, [1]);
}

#[tokio::test]
async fn get_and_update_a_pull_request() {
    let github = double().await;
    create_pull(&github, "acme/shop", pr("kiln/cart-1a2b")).await;
    let (status, updated) = send(
        api(&github, Method::PATCH, "/repos/acme/shop/pulls/1")
            .json(&json!({"title": "kiln: update cart", "body": "Second delivery"})),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(updated["title"], "kiln: update cart");
    assert_eq!(updated["body"], "Second delivery");
    assert_eq!(updated["number"], 1);
    assert_eq!(updated["state"], "open");
    let (status, fetched) = send(api(&github, Method::GET, "/repos/acme/shop/pulls/1")).await;
    assert_eq!((status, &fetched["title"]), (200, &json!("kiln: update cart")));
    assert_eq!(github.pulls("acme", "shop")[0]["body"], "Second delivery");

    let (status, _) = send(api(&github, Method::PATCH, "/repos/acme/shop/pulls/9").json(&json!({"title": "x"}))).await;
    assert_eq!(status, 404);
    let (status, _) = send(api(&github, Method::GET, "/repos/acme/shop/pulls/abc")).await;
    assert_eq!(status, 404);
    let (status, body) =
        send(api(&github, Method::PATCH, "/repos/acme/shop/pulls/1").json(&json!({"state": "merged"}))).await;
    assert_eq!(status, 422, "{body}");
}

#[tokio::test]
async fn reviewers_are_requested_and_accumulate() {
    let github = GithubDouble::start(
        Config::new(TOKEN)
            .login("kiln-bot")
            .repo(RepoConfig::new("acme", "shop").collaborators(["alice", "bob", "kiln-bot"])),
    )
    .await;
    create_pull(&github, "acme/shop", pr("kiln/cart-1a2b")).await;
    let path = "/repos/acme/shop/pulls/1/requested_reviewers";

    let (status, pull) =
        send(api(&github, Method::POST, path).json(&json!({"reviewers": ["alice"], "team_reviewers": ["web"]}))).await;
    assert_eq!(status, 201);
    assert_eq!(pull["number"], 1);
    assert_eq!(pull["requested_reviewers"][0]["login"], "alice");
    assert_eq!(pull["requested_reviewers"][0]["type"], "User");
    assert_eq!(pull["requested_teams"][0]["slug"], "web");
    let (status, pull) = send(api(&github, Method::POST, path).json(&json!({"reviewers": ["bob", "alice"]}))).await;
    assert_eq!(status, 201);
    let logins: Vec<&str> =
        pull["requested_reviewers"].as_array().unwrap().iter().map(|user| user["login"].as_str().unwrap()).collect();
    assert_eq!(logins, ["alice", "bob"]);

    let (status, body) = send(api(&github, Method::POST, path).json(&json!({"reviewers": ["kiln-bot"]}))).await;
    assert_eq!(status, 422);
    assert_eq!(body["errors"][0]["message"], "Review cannot be requested from pull request author.");
    let (status, body) = send(api(&github, Method::POST, path).json(&json!({"reviewers": ["mallory"]}))).await;
    assert_eq!(status, 422);
    assert!(body["errors"][0]["message"]
        .as_str()
        .unwrap()
        .starts_with("Reviews may only be requested from collaborators."));
    let (status, body) = send(api(&github, Method::POST, path).json(&json!({}))).await;
    assert_eq!(status, 422);
    assert!(body["message"].as_str().unwrap().starts_with("Invalid request."));
    let (status, _) = send(api(&github, Method::POST, path).json(&json!({"reviewers": "alice"}))).await;
    assert_eq!(status, 422);
    let (status, _) = send(
        api(&github, Method::POST, "/repos/acme/shop/pulls/7/requested_reviewers")
            .json(&json!({"reviewers": ["alice"]})),
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(github.pulls("acme", "shop")[0]["requested_reviewers"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn a_head_in_the_users_fork_is_named_user_colon_branch() {
    let github = double().await;
    let (status, fork) = send(api(&github, Method::POST, "/repos/acme/shop/forks")).await;
    assert_eq!(status, 202);
    assert_eq!(fork["full_name"], "kiln-bot/shop");
    assert_eq!(fork["fork"], true);
    assert_eq!(fork["parent"]["full_name"], "acme/shop");
    assert_eq!(fork["permissions"]["push"], true);
    // Forking again answers the same fork.
    let (_, again) = send(api(&github, Method::POST, "/repos/acme/shop/forks").json(&json!({}))).await;
    assert_eq!(again["id"], fork["id"]);

    let (status, pull) = create_pull(&github, "acme/shop", pr("kiln-bot:kiln/cart-1a2b")).await;
    assert_eq!(status, 201, "{pull}");
    assert_eq!(pull["head"]["label"], "kiln-bot:kiln/cart-1a2b");
    assert_eq!(pull["head"]["repo"]["full_name"], "kiln-bot/shop");
    assert_eq!(pull["base"]["repo"]["full_name"], "acme/shop");
    let (_, listed) = send(api(&github, Method::GET, "/repos/acme/shop/pulls?head=kiln-bot:kiln/cart-1a2b")).await;
    assert_eq!(listed.as_array().unwrap().len(), 1);
    let (_, listed) = send(api(&github, Method::GET, "/repos/acme/shop/pulls?head=acme:kiln/cart-1a2b")).await;
    assert_eq!(listed.as_array().unwrap().len(), 0);
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

#[tokio::test]
async fn with_a_git_dir_branches_must_exist_and_shas_are_real() {
    let temp = std::env::temp_dir().join(format!("kiln-github-double-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&temp);
    let (remote, work) = (temp.join("remote.git"), temp.join("work"));
    std::fs::create_dir_all(&work).unwrap();
    git(&temp, &["init", "--quiet", "--bare", "remote.git"]);
    git(&work, &["init", "--quiet", "-b", "main"]);
    std::fs::write(work.join("a.txt"), "a").unwrap();
    git(&work, &["add", "a.txt"]);
    git(&work, &["commit", "--quiet", "-m", "base"]);
    let remote_arg = remote.to_str().unwrap();
    git(&work, &["push", "--quiet", remote_arg, "main", "main:kiln/empty"]);
    std::fs::write(work.join("b.txt"), "b").unwrap();
    git(&work, &["add", "b.txt"]);
    git(&work, &["commit", "--quiet", "-m", "change"]);
    let head_sha = git(&work, &["rev-parse", "HEAD"]);
    git(&work, &["push", "--quiet", remote_arg, "HEAD:refs/heads/kiln/cart-1a2b"]);

    let github = GithubDouble::start(Config::new(TOKEN).repo(RepoConfig::new("acme", "shop").git_dir(&remote))).await;
    let (status, body) = create_pull(&github, "acme/shop", pr("kiln/missing")).await;
    assert_eq!(status, 422);
    assert_eq!(body["errors"], json!([{"resource": "PullRequest", "field": "head", "code": "invalid"}]));
    let mut missing_base = pr("kiln/cart-1a2b");
    missing_base["base"] = json!("develop");
    let (status, body) = create_pull(&github, "acme/shop", missing_base).await;
    assert_eq!(status, 422);
    assert_eq!(body["errors"], json!([{"resource": "PullRequest", "field": "base", "code": "invalid"}]));
    let (status, body) = create_pull(&github, "acme/shop", pr("kiln/empty")).await;
    assert_eq!(status, 422);
    assert_eq!(body["errors"][0]["message"], "No commits between main and kiln/empty");

    let (status, pull) = create_pull(&github, "acme/shop", pr("kiln/cart-1a2b")).await;
    assert_eq!(status, 201, "{pull}");
    assert_eq!(pull["head"]["sha"], head_sha.as_str());
    let (_, repo) = send(api(&github, Method::GET, "/repos/acme/shop")).await;
    assert!(repo["clone_url"].as_str().unwrap().starts_with("file://"));

    // A second delivery pushes the branch on; the same pull request shows the new head.
    std::fs::write(work.join("c.txt"), "c").unwrap();
    git(&work, &["add", "c.txt"]);
    git(&work, &["commit", "--quiet", "-m", "again"]);
    let moved = git(&work, &["rev-parse", "HEAD"]);
    git(&work, &["push", "--quiet", remote_arg, "HEAD:refs/heads/kiln/cart-1a2b"]);
    let (_, listed) = send(api(&github, Method::GET, "/repos/acme/shop/pulls?head=acme:kiln/cart-1a2b")).await;
    assert_eq!(listed[0]["number"], 1);
    assert_eq!(listed[0]["head"]["sha"], moved.as_str());
    drop(github);
    std::fs::remove_dir_all(&temp).unwrap();
}
