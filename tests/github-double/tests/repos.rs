//! The signed-in user and the repository answer push mode `auto` reads: `permissions`,
//! `default_branch`, `full_name`, and how a read-only repository looks.

mod support;

use kiln_github_double::{Config, GithubDouble, Permissions, RepoConfig};
use reqwest::Method;
use serde_json::json;
use support::{api, double, send, TOKEN};

#[tokio::test]
async fn the_user_is_the_configured_login() {
    let github = double().await;
    let (status, user) = send(api(&github, Method::GET, "/user")).await;
    assert_eq!(status, 200);
    assert_eq!(user["login"], "kiln-bot");
    assert_eq!(user["type"], "User");
    assert!(user["id"].as_u64().unwrap() > 0);

    let default = GithubDouble::start(Config::new(TOKEN)).await;
    let (_, user) = send(api(&default, Method::GET, "/user")).await;
    assert_eq!(user["login"], kiln_github_double::DEFAULT_LOGIN);
}

#[tokio::test]
async fn a_repository_answers_with_permissions_default_branch_and_full_name() {
    let github = double().await;
    let (status, repo) = send(api(&github, Method::GET, "/repos/acme/shop")).await;
    assert_eq!(status, 200);
    assert_eq!(repo["full_name"], "acme/shop");
    assert_eq!(repo["name"], "shop");
    assert_eq!(repo["owner"]["login"], "acme");
    assert_eq!(repo["default_branch"], "main");
    assert_eq!(repo["private"], false);
    assert_eq!(repo["fork"], false);
    assert_eq!(
        repo["permissions"],
        json!({"admin": false, "maintain": false, "push": true, "triage": true, "pull": true})
    );
    let (_, docs) = send(api(&github, Method::GET, "/repos/acme/docs")).await;
    assert_eq!(docs["default_branch"], "trunk");
    assert_ne!(docs["id"], repo["id"]);
    // GitHub matches owner and name without regard to case.
    let (status, same) = send(api(&github, Method::GET, "/repos/ACME/Shop")).await;
    assert_eq!((status, &same["id"]), (200, &repo["id"]));
}

#[tokio::test]
async fn a_read_only_repository_says_push_false() {
    let github = double().await;
    github.set_read_only("acme", "shop");
    let (_, repo) = send(api(&github, Method::GET, "/repos/acme/shop")).await;
    assert_eq!(repo["permissions"]["push"], false);
    assert_eq!(repo["permissions"]["pull"], true);
    github.set_push("acme", "shop", true);
    let (_, repo) = send(api(&github, Method::GET, "/repos/acme/shop")).await;
    assert_eq!(repo["permissions"]["push"], true);

    let configured = GithubDouble::start(
        Config::new(TOKEN)
            .repo(RepoConfig::new("acme", "shop").read_only().private(true))
            .repo(RepoConfig::new("acme", "admin").permissions(Permissions::ADMIN)),
    )
    .await;
    let (_, repo) = send(api(&configured, Method::GET, "/repos/acme/shop")).await;
    assert_eq!(
        (&repo["permissions"]["push"], &repo["private"], &repo["visibility"]),
        (&json!(false), &json!(true), &json!("private"))
    );
    let (_, repo) = send(api(&configured, Method::GET, "/repos/acme/admin")).await;
    assert_eq!(repo["permissions"]["admin"], true);

    configured.add_repo(RepoConfig::new("acme", "late"));
    assert_eq!(send(api(&configured, Method::GET, "/repos/acme/late")).await.0, 200);
}
