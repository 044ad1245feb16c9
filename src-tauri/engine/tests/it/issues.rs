//! Sessions from GitHub issues through the engine's API, against the GitHub double: the
//! shop on a real bare remote, its clone opened as the workspace, and the delivery settings
//! (repository, the double's API root, a sealed token) saved with `update_settings`. An
//! issue's address or number becomes the brief (typed text, then title, body and comments
//! oldest first with authors and dates); `list_issues` leaves pull requests and closed
//! issues out and reads every page; the pull request a session from an issue delivers says
//! `Closes #N`; every refusal makes nothing, and the token goes nowhere but `Authorization`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use kiln_engine::testing::ids::SessionId;
use kiln_engine::types::*;
use kiln_engine::{Engine, ErrorCode};
use kiln_github_double::{CommentSeed, Config, Fault, GithubDouble, IssueSeed, RepoConfig};

struct World {
    _tmp: tempfile::TempDir,
    host: PathBuf,
    /// A clone of the remote the tests push branches from.
    seed: PathBuf,
    engine: Arc<Engine>,
    github: GithubDouble,
    token: String,
}

async fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let remote = bare_remote(&root, "host", "the shop", |seed| {
        copy_tracked_shop(seed);
        crate::delivery_pr::quick_config(&seed.join("kiln.toml"));
    });
    let host = root.join("host");
    let token = format!("ghp_kilnissue{}", uuid::Uuid::new_v4().simple());
    let github = GithubDouble::spawn(
        Config::new(token.clone())
            .repo(RepoConfig::new("kiln-test", "shop").git_dir(&remote))
            .repo(RepoConfig::new("kiln-test", "tracker")),
    );
    let engine = engine(&root.join("config"));
    open(&engine, &host).await;
    World { _tmp: tmp, seed: root.join("seed"), host, engine, github, token }
}

impl World {
    /// The delivery settings: the repository, the double's API root, the token.
    async fn settings(&self) {
        self.engine
            .update_settings(UpdateSettingsArgs {
                planner_agent: Some(false),
                delivery_repository: Some("kiln-test/shop".into()),
                delivery_api_url: Some(self.github.base_url()),
                delivery_token: Some(self.token.clone()),
                ..Default::default()
            })
            .await
            .unwrap();
    }

    async fn start_from_issue(&self, issue: &str, brief: &str) -> kiln_engine::Result<SessionView> {
        self.engine
            .create_session(CreateSessionArgs {
                brief: brief.into(),
                title: None,
                create_modules: None,
                issue: Some(issue.into()),
            })
            .await
    }

    /// Every session there is, and the sessions' directories on disk.
    async fn made(&self) -> (usize, usize) {
        let listed = self.engine.list_sessions(ListSessionsArgs { include_archived: Some(true) }).await.unwrap().len();
        let dirs = std::fs::read_dir(self.host.join(".kiln/sessions")).map(|d| d.count()).unwrap_or(0);
        (listed, dirs)
    }

    /// An open pull request on the double from a new branch with one commit, made as GitHub
    /// would (it takes the next number, shared with issues).
    async fn open_pull(&self, title: &str) -> u64 {
        let branch = format!("side-{}", uuid::Uuid::new_v4().simple());
        sh_git(&self.seed, &["checkout", "--quiet", "-b", &branch]);
        sh_git(&self.seed, &["commit", "--quiet", "--allow-empty", "-m", title]);
        sh_git(&self.seed, &["push", "--quiet", "origin", &branch]);
        sh_git(&self.seed, &["checkout", "--quiet", "main"]);
        let response = reqwest::Client::builder()
            .no_proxy()
            .build()
            .unwrap()
            .post(format!("{}/repos/kiln-test/shop/pulls", self.github.base_url()))
            .header("user-agent", "kiln-tests")
            .header("accept", "application/vnd.github+json")
            .bearer_auth(&self.token)
            .json(&serde_json::json!({"title": title, "head": branch, "base": "main"}))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(status, 201, "{body}");
        body["number"].as_u64().unwrap()
    }
}

/// An issue about the catalog (the planner picks `@shop/catalog` from its body), with two comments.
fn ratings_issue(w: &World) -> u64 {
    let n = w.github.add_issue(
        "kiln-test",
        "shop",
        IssueSeed::new("Show ratings in the catalog")
            .body("Each product on the @shop/catalog screen should show its rating.")
            .author("alice")
            .labels(["enhancement"])
            .created_at("2026-01-02T03:04:05Z"),
    );
    // Added newest first: the brief still has them oldest first.
    w.github.add_comment(
        "kiln-test",
        "shop",
        n,
        CommentSeed::new("carol", "Stars, please, not numbers.").created_at("2026-01-05T00:00:00Z"),
    );
    w.github.add_comment(
        "kiln-test",
        "shop",
        n,
        CommentSeed::new("bob", "Ratings come from the reviews table.").created_at("2026-01-03T00:00:00Z"),
    );
    n
}

#[tokio::test]
async fn an_issue_becomes_the_brief_with_its_comments_and_the_session_links_to_it() {
    let w = world().await;
    w.settings().await;
    let n = ratings_issue(&w);
    let url = format!("https://github.com/kiln-test/shop/issues/{n}");

    let s = w.start_from_issue(&url, "Keep the change small.").await.unwrap();
    assert_eq!(s.title, "Show ratings in the catalog");
    assert_eq!(s.modules.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["@shop/catalog"]);
    let html = format!("{}/kiln-test/shop/issues/{n}", w.github.base_url());
    assert_eq!(s.issue, Some(IssueLink { url: html.clone(), number: n as i64, repo: "kiln-test/shop".into() }));
    let brief = &s.brief;
    assert!(
        brief.starts_with("Keep the change small.\n\nGitHub issue kiln-test/shop#1: Show ratings in the catalog\n"),
        "{brief}"
    );
    assert!(brief.contains(&html), "{brief}");
    assert!(brief.contains("Opened by @alice on 2026-01-02T03:04:05Z; labels: enhancement."), "{brief}");
    assert!(brief.contains("Each product on the @shop/catalog screen should show its rating."), "{brief}");
    let bob = brief.find("@bob on 2026-01-03T00:00:00Z:\nRatings come from the reviews table.").expect(brief);
    let carol = brief.find("@carol on 2026-01-05T00:00:00Z:\nStars, please, not numbers.").expect(brief);
    assert!(bob < carol, "comments oldest first: {brief}");

    // The link is stored: it survives a new engine on the same workspace.
    let id = s.id.clone();
    let ws_root = w.host.clone();
    drop(w.engine);
    let engine = engine(&w._tmp.path().join("config2"));
    open_when_released(&engine, &ws_root, Duration::from_secs(30)).await;
    let again = engine.get_session(SessionIdArgs { session_id: id }).await.unwrap();
    assert_eq!(again.issue.as_ref().map(|i| i.number), Some(n as i64));

    // A number of the delivery repository works too, with no text typed.
    let by_number = engine
        .create_session(CreateSessionArgs {
            brief: String::new(),
            title: Some("Ratings".into()),
            create_modules: None,
            issue: Some(format!("#{n}")),
        })
        .await
        .unwrap();
    assert_eq!(by_number.title, "Ratings", "a typed title wins");
    assert!(by_number.brief.starts_with("GitHub issue kiln-test/shop#1:"), "{}", by_number.brief);
    w.github.assert_token_only_in_authorization(&w.token);
    assert!(!by_number.brief.contains(&w.token));
}

#[tokio::test]
async fn the_open_issues_are_listed_without_pull_requests_from_every_page() {
    let w = world().await;
    w.settings().await;
    let first = ratings_issue(&w);
    let pull = w.open_pull("A pull request is no issue").await;
    w.github.add_issue("kiln-test", "shop", IssueSeed::new("Closed long ago").closed());
    // More than one page of 100: the list follows the Link header.
    for i in 0..101 {
        w.github.add_issue("kiln-test", "shop", IssueSeed::new(format!("Chore {i}")).labels(["chore"]));
    }
    let list = w.engine.list_issues(EmptyArgs {}).await.unwrap();
    assert_eq!(list.len(), 102, "every open issue, no pull request, no closed issue");
    assert!(list.iter().all(|i| i.number != pull as i64 && i.title != "Closed long ago"));
    assert_eq!(list[0].title, "Chore 100", "newest first");
    let ratings = list.iter().find(|i| i.number == first as i64).unwrap();
    assert_eq!(
        (ratings.title.as_str(), ratings.author.as_str(), ratings.labels.clone()),
        ("Show ratings in the catalog", "alice", vec!["enhancement".to_string()])
    );
    assert_eq!(ratings.url, format!("{}/kiln-test/shop/issues/{first}", w.github.base_url()));
    assert_eq!(ratings.updated_at, "2026-01-05T00:00:00Z");
    let pages = w.github.requests_to("GET", "/repos/kiln-test/shop/issues");
    assert_eq!(pages.len(), 2, "two pages read");
    assert_eq!(pages[1].query_param("page").as_deref(), Some("2"));
    w.github.assert_token_only_in_authorization(&w.token);
}

#[tokio::test]
async fn every_refusal_makes_nothing() {
    let w = world().await;
    let n = ratings_issue(&w);
    let url = format!("https://github.com/kiln-test/shop/issues/{n}");

    // No token and no repository yet: the code git-pr uses when it is unavailable.
    w.engine
        .update_settings(UpdateSettingsArgs {
            planner_agent: Some(false),
            delivery_api_url: Some(w.github.base_url()),
            ..Default::default()
        })
        .await
        .unwrap();
    let no_token = w.start_from_issue(&url, "").await.unwrap_err();
    assert_eq!(no_token.code, ErrorCode::TargetUnavailable, "{no_token:?}");
    assert!(no_token.message.contains("token"), "{no_token:?}");
    let no_repo = w.start_from_issue("7", "").await.unwrap_err();
    assert_eq!(no_repo.code, ErrorCode::TargetUnavailable, "{no_repo:?}");
    assert_eq!(w.engine.list_issues(EmptyArgs {}).await.unwrap_err().code, ErrorCode::TargetUnavailable);
    assert!(w.github.requests().is_empty(), "nothing was asked of GitHub without a token");

    w.settings().await;
    let pull = w.open_pull("A change").await;
    let cases: Vec<(String, ErrorCode)> = vec![
        ("https://gitlab.com/kiln-test/shop/issues/1".into(), ErrorCode::InvalidInput),
        (format!("https://github.com/kiln-test/shop/pull/{pull}"), ErrorCode::InvalidInput),
        ("Fix the catalog".into(), ErrorCode::InvalidInput),
        ("https://github.com/kiln-test/shop/issues/1/../2".into(), ErrorCode::InvalidInput),
        (format!("#{pull}"), ErrorCode::InvalidInput),
        ("https://github.com/kiln-test/shop/issues/404".into(), ErrorCode::IssueNotFound),
        ("https://github.com/kiln-test/elsewhere/issues/1".into(), ErrorCode::IssueNotFound),
    ];
    for (reference, code) in cases {
        let e = w.start_from_issue(&reference, "text").await.unwrap_err();
        assert_eq!(e.code, code, "{reference}: {e:?}");
        if reference == format!("#{pull}") {
            assert!(e.message.contains("is a pull request"), "{e:?}");
        }
    }

    // GitHub refusing the token, or failing: unavailable, and the token is not in the message.
    w.github.fail_next(kiln_github_double::Endpoint::GetIssue, Fault::BadCredentials);
    let refused = w.start_from_issue(&url, "").await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::TargetUnavailable, "{refused:?}");
    assert!(refused.message.contains("refused the delivery token"), "{refused:?}");
    w.github.fail_next(kiln_github_double::Endpoint::ListIssueComments, Fault::ServerError);
    let failed = w.start_from_issue(&url, "").await.unwrap_err();
    assert_eq!(failed.code, ErrorCode::TargetUnavailable, "{failed:?}");
    w.github.fail_next(kiln_github_double::Endpoint::ListIssues, Fault::ServerError);
    assert_eq!(w.engine.list_issues(EmptyArgs {}).await.unwrap_err().code, ErrorCode::TargetUnavailable);
    for e in [&no_token, &refused, &failed] {
        assert!(!e.message.contains(&w.token), "{e:?}");
    }

    assert_eq!(w.made().await, (0, 0), "no session record and no session directory");
    w.github.assert_token_only_in_authorization(&w.token);
}

#[tokio::test]
async fn the_pull_request_of_a_session_from_an_issue_closes_it() {
    let w = world().await;
    w.settings().await;
    let n = ratings_issue(&w);
    let s = w.start_from_issue(&n.to_string(), "").await.unwrap();
    let workdir = w.host.join(".kiln/sessions").join(&s.id).join("workspace");
    write(&workdir.join("modules/catalog/src/client/ratings.js"), "export const ratings = [];\n");

    let gates = w.engine.check_modules(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert!(gates.iter().all(|g| matches!(g.status, GateStatus::Passed | GateStatus::NotConfigured)), "{gates:#?}");
    let ws = w.engine.workspace().unwrap();
    let sid = SessionId::parse(&s.id).unwrap();
    for m in w.engine.get_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap().modules {
        kiln_engine::testing::review::store(&ws, &sid, &m, true, "ready", "REVIEW: pass - ready").await.unwrap();
    }
    let plan = w
        .engine
        .plan_delivery(PlanDeliveryArgs { session_id: s.id.clone(), target: Some(DeliveryTarget::GitPr) })
        .await
        .unwrap();
    assert!(plan.blockers.is_empty(), "{:#?}", plan.blockers);
    w.engine
        .deliver(DeliverArgs {
            session_id: s.id.clone(),
            target: plan.target,
            plan_id: plan.plan_id.clone(),
            anyway: None,
        })
        .await
        .unwrap();
    let run = delivery_finished(&w.engine, &s.id, Duration::from_secs(120)).await;
    assert_eq!(run.state, DeliveryState::Delivered, "{run:#?}");

    let pulls = w.github.pulls("kiln-test", "shop");
    assert_eq!(pulls.len(), 1, "{pulls:#?}");
    let body = pulls[0]["body"].as_str().unwrap();
    assert!(body.contains(&format!("\nCloses #{n}\n")), "{body}");
    assert!(!body.contains("Closes kiln-test/"), "the issue is in the base repository: {body}");
    assert_ne!(pulls[0]["number"].as_u64(), Some(n), "issues and pull requests share numbers");
    w.github.assert_token_only_in_authorization(&w.token);
}
