//! kiln-github-double: GitHub's REST API on 127.0.0.1, limited to the endpoints Kiln's
//! git-pr delivery and issue sessions use, so those tests can run offline and assert on every request.
//!
//! ```no_run
//! use kiln_github_double::{Config, GithubDouble, RepoConfig};
//!
//! # async fn example() {
//! let github = GithubDouble::start(
//!     Config::new("ghp_test").repo(RepoConfig::new("acme", "shop")),
//! )
//! .await;
//! // Point Kiln's GitHub API base URL at github.base_url() (where https://api.github.com would be).
//! // ... deliver ...
//! let created = github.requests_to("POST", "/repos/acme/shop/pulls");
//! assert_eq!(created[0].status, 201);
//! github.assert_token_only_in_authorization("ghp_test");
//! # }
//! ```
//!
//! **Checks on every request**, in GitHub's order: no `User-Agent` → 403 with GitHub's plain
//! text "Request forbidden by administrative rules…"; an `X-GitHub-Api-Version` GitHub does
//! not document → 400; an `Accept` that names neither `application/vnd.github+json` (or a
//! `vnd.github.*+json` type) nor `application/json` → 415 (stricter than GitHub, which takes
//! `*/*`, so Kiln is held to the documented header); no `Authorization` → 401 `Requires
//! authentication`; one that is not `Bearer <token>` or `token <token>` with the configured
//! token → 401 `Bad credentials`. Answers carry `X-GitHub-Api-Version-Selected` (the
//! requested version, else `2022-11-28`), `X-GitHub-Media-Type`, `X-GitHub-Request-Id`,
//! `X-RateLimit-*` and, once authenticated, `X-OAuth-Scopes`.
//!
//! **Endpoints** (unknown paths, repositories and numbers: 404 `Not Found`):
//! - `GET /user` → 200 the user.
//! - `GET /repos/{owner}/{repo}` → 200 with `full_name`, `default_branch`, `permissions
//!   {admin, maintain, push, triage, pull}`, `clone_url`, `fork`/`parent`.
//! - `POST /repos/{owner}/{repo}/forks` → 202 the fork (created for the user, or reused).
//! - `POST /repos/{owner}/{repo}/pulls` `{title, head, base, body?, draft?,
//!   maintainer_can_modify?}` → 201 the pull request (and `Location`); numbers count up per
//!   repository from 1. `head` is `branch` or `user:branch` (a fork the double knows). An
//!   open pull request for the same head and base → 422 `A pull request already exists for
//!   owner:branch.`; missing `head`/`base` or a wrong type → 422 `Invalid request…`; no
//!   title → 422 `missing_field`; with a [`RepoConfig::git_dir`], a missing branch → 422
//!   `invalid` on `base`/`head` and a head with nothing new → 422 `No commits between …`.
//! - `GET /repos/{owner}/{repo}/pulls?state=open|closed|all&head=user:branch&base=&sort=&direction=&per_page=&page=`
//!   → 200 an array (newest first, 30 a page, `Link` when there are more). As on GitHub,
//!   `head` filters only in the `user:branch` form; a bare branch name is ignored.
//! - `GET /repos/{owner}/{repo}/pulls/{number}` → 200.
//! - `PATCH /repos/{owner}/{repo}/pulls/{number}` `{title?, body?, state?, base?,
//!   maintainer_can_modify?}` → 200.
//! - `POST /repos/{owner}/{repo}/pulls/{number}/requested_reviewers` `{reviewers?,
//!   team_reviewers?}` → 201 the pull request with `requested_reviewers [{login, …}]` and
//!   `requested_teams [{slug, …}]` (added to those already requested). Neither list → 422;
//!   the author as reviewer → 422 `Review cannot be requested from pull request author.`;
//!   with [`RepoConfig::collaborators`], anyone else → 422 `Reviews may only be requested
//!   from collaborators…`.
//!
//! - `GET /repos/{owner}/{repo}/issues?state=open|closed|all&direction=&per_page=&page=` → 200
//!   the issues and, as on GitHub, the pull requests (each with a `pull_request` key), newest
//!   first, paged like the pull requests.
//! - `GET /repos/{owner}/{repo}/issues/{number}` → 200 the issue (a pull request's number:
//!   the pull request as an issue, with `pull_request`).
//! - `GET /repos/{owner}/{repo}/issues/{number}/comments?per_page=&page=` → 200 its comments,
//!   oldest first, paged. Issues and comments are seeded with [`GithubDouble::add_issue`] and
//!   [`GithubDouble::add_comment`]; issues and pull requests share numbers.
//! - `GET /repos/{owner}/{repo}/git/ref/heads/{branch}` → 200 the reference `{ref, node_id,
//!   url, object {sha, type, url}}`; `POST /repos/{owner}/{repo}/git/refs` `{ref, sha}` → 201
//!   (422 `Reference already exists`, 422 `Object does not exist`).
//! - `GET /repos/{owner}/{repo}/contents/{path}?ref=` → 200 a file put through the API;
//!   `PUT /repos/{owner}/{repo}/contents/{path}` `{message, content (base64), branch?, sha?}`
//!   → 201 `{content, commit}` (200 replacing a file; its `sha` missing → 422 `"sha" wasn't
//!   supplied.`, stale → 409; an unknown branch → 404). Files and API-made branches live in
//!   memory ([`GithubDouble::file`]); a `git_dir` is read, never written.
//!
//! Pull request JSON has GitHub's fields: `id`, `node_id`, `number`, `url`, `html_url`
//! (both on the double's address), `state`, `title`, `body`, `draft`, `user {login}`,
//! `head {label, ref, sha, user, repo}`, `base {…}`, `requested_reviewers`,
//! `requested_teams`, timestamps and the rest as null/empty.
//!
//! **Faults**: [`GithubDouble::fail_next`] queues a [`Fault`] for the next call to an
//! [`Endpoint`] (after the header checks; it changes nothing), [`GithubDouble::set_push`]
//! flips `permissions.push`, [`GithubDouble::set_token`] rotates the accepted token.
//!
//! **Recording**: every request, whatever it got, is a [`RecordedRequest`] in arrival
//! order, with the status answered. [`GithubDouble::token_leaks`] and
//! [`GithubDouble::assert_token_only_in_authorization`] check a token went nowhere else.
//!
//! The server runs on its own thread and runtime, so a test may block (on git, on a child
//! process) without starving it. It only binds 127.0.0.1 and stops when dropped.

mod config;
mod contents;
mod git;
mod issues;
mod pulls;
mod record;
mod reply;
mod repos;
mod server;
mod store;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use kiln_double_support::{lock, LoopbackPort, LoopbackServer};
use serde_json::Value;

pub use config::{
    CommentSeed, Config, Endpoint, Fault, IssueSeed, Permissions, RepoConfig, DEFAULT_API_VERSION, DEFAULT_LOGIN,
    SUPPORTED_API_VERSIONS,
};
pub use record::{RecordedRequest, TokenLeak};

use server::Shared;
use store::Store;

/// A running double; dropping it shuts the server down.
pub struct GithubDouble {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    // Held only so that dropping the GithubDouble stops serving.
    _server: LoopbackServer,
}

impl GithubDouble {
    /// Starts a double on a free loopback port.
    pub async fn start(config: Config) -> GithubDouble {
        Self::spawn(config)
    }

    /// [`GithubDouble::start`] for callers without an async context.
    pub fn spawn(config: Config) -> GithubDouble {
        Self::spawn_on(0, config).expect("bind 127.0.0.1:0")
    }

    /// Starts a double on 127.0.0.1:`port` (0 for any free port).
    pub fn spawn_on(port: u16, config: Config) -> std::io::Result<GithubDouble> {
        let port = LoopbackPort::bind(port)?;
        let addr = port.addr;
        // The store needs the address: pull request JSON carries URLs on the double.
        let shared = Arc::new(Shared {
            store: Mutex::new(Store::new(config, format!("http://{addr}"))),
            requests: Mutex::new(Vec::new()),
        });
        let server = port.serve("kiln-github-double", server::router(shared.clone()))?;
        Ok(GithubDouble { addr, shared, _server: server })
    }

    /// `http://127.0.0.1:PORT`: the API root, where `https://api.github.com` would be.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// The requests with this method and path (path without the query).
    pub fn requests_to(&self, method: &str, path: &str) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|request| request.method.eq_ignore_ascii_case(method) && request.path == path)
            .collect()
    }

    /// The pull requests of `owner/repo` as the API would show them now, by number.
    pub fn pulls(&self, owner: &str, repo: &str) -> Vec<Value> {
        let store = lock(&self.shared.store);
        let Some(index) = store.find(owner, repo) else {
            return Vec::new();
        };
        store.repos[index].pulls.iter().map(|pull| store.pull_json(index, pull)).collect()
    }

    /// Adds an issue to `owner/repo` and returns its number (the next one of the repository,
    /// shared with pull requests). Panics when the double does not know the repository.
    pub fn add_issue(&self, owner: &str, repo: &str, issue: IssueSeed) -> u64 {
        let mut store = lock(&self.shared.store);
        let index = known(&store, owner, repo);
        issues::add(&mut store, index, issue)
    }

    /// Adds a comment to issue `number` of `owner/repo` and returns its id. Panics when
    /// there is no such repository or issue.
    pub fn add_comment(&self, owner: &str, repo: &str, number: u64, comment: CommentSeed) -> u64 {
        let mut store = lock(&self.shared.store);
        let index = known(&store, owner, repo);
        issues::comment(&mut store, index, number, comment)
            .unwrap_or_else(|| panic!("kiln-github-double: no issue #{number} in {owner}/{repo}"))
    }

    /// The bytes of `path` on `branch` of `owner/repo`, as put through the Contents API,
    /// with the commit message it came with.
    pub fn file(&self, owner: &str, repo: &str, branch: &str, path: &str) -> Option<(Vec<u8>, String)> {
        let store = lock(&self.shared.store);
        let index = store.find(owner, repo)?;
        let file = store.repos[index].files.get(&(branch.to_owned(), path.to_owned()))?;
        Some((file.bytes.clone(), file.message.clone()))
    }

    /// The files put through the Contents API on `branch` of `owner/repo`, by path.
    pub fn files(&self, owner: &str, repo: &str, branch: &str) -> Vec<String> {
        let store = lock(&self.shared.store);
        let Some(index) = store.find(owner, repo) else { return Vec::new() };
        store.repos[index].files.keys().filter(|(b, _)| b == branch).map(|(_, p)| p.clone()).collect()
    }

    /// Answers the next call to `endpoint` with `fault`; several queue up in order.
    pub fn fail_next(&self, endpoint: Endpoint, fault: Fault) {
        lock(&self.shared.store).faults.entry(endpoint).or_default().push_back(fault);
    }

    /// [`GithubDouble::fail_next`] for `POST /repos/{owner}/{repo}/pulls`.
    pub fn fail_next_create(&self, fault: Fault) {
        self.fail_next(Endpoint::CreatePull, fault);
    }

    /// Drops every queued fault.
    pub fn clear_faults(&self) {
        lock(&self.shared.store).faults.clear();
    }

    /// Sets `permissions.push` (and `maintain`/`admin` off when false) on `owner/repo`.
    /// Panics when the double does not know the repository.
    pub fn set_push(&self, owner: &str, repo: &str, push: bool) {
        let mut store = lock(&self.shared.store);
        let index = known(&store, owner, repo);
        let permissions = &mut store.repos[index].config.permissions;
        permissions.push = push;
        if !push {
            permissions.maintain = false;
            permissions.admin = false;
        }
    }

    /// The token may read `owner/repo` but not push to it.
    pub fn set_read_only(&self, owner: &str, repo: &str) {
        self.set_push(owner, repo, false);
    }

    /// Adds a repository, or replaces the configuration of one with its name.
    pub fn add_repo(&self, repo: RepoConfig) {
        lock(&self.shared.store).add_repo(repo);
    }

    /// Accepts `token` from now on instead of the configured one (the old one gets 401).
    pub fn set_token(&self, token: impl Into<String>) {
        lock(&self.shared.store).token = token.into();
    }

    /// Every place `token` appears in a recorded request other than as the credential of
    /// its `Authorization` header: the path or query (also percent-decoded), any other
    /// header, or the body. Panics on an empty token.
    pub fn token_leaks(&self, token: &str) -> Vec<TokenLeak> {
        self.requests()
            .iter()
            .enumerate()
            .flat_map(|(index, request)| {
                request.token_places(token).into_iter().map(move |place| TokenLeak {
                    request: index,
                    method: request.method.clone(),
                    path: request.path.clone(),
                    place,
                })
            })
            .collect()
    }

    /// Panics, naming each request and place, when [`GithubDouble::token_leaks`] finds any.
    pub fn assert_token_only_in_authorization(&self, token: &str) {
        let leaks = self.token_leaks(token);
        if !leaks.is_empty() {
            let list: Vec<String> = leaks
                .iter()
                .map(|leak| format!("request {} ({} {}): {}", leak.request, leak.method, leak.path, leak.place))
                .collect();
            panic!("the token appeared outside the Authorization header:\n  {}", list.join("\n  "));
        }
    }
}

fn known(store: &Store, owner: &str, repo: &str) -> usize {
    store.find(owner, repo).unwrap_or_else(|| panic!("kiln-github-double: no repository {owner}/{repo}"))
}
