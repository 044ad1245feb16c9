//! What a test sets up before (and while) the double runs: the token it accepts, the
//! signed-in user, the repositories it knows, and the faults it should answer with.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

/// The login `GET /user` answers with unless [`Config::login`] says otherwise.
pub const DEFAULT_LOGIN: &str = "kiln-test";
/// The API version answered when a request names none (GitHub's default).
pub const DEFAULT_API_VERSION: &str = "2022-11-28";
/// The `X-GitHub-Api-Version` values GitHub documents; any other is answered 400.
pub const SUPPORTED_API_VERSIONS: &[&str] = &["2022-11-28", "2026-03-10"];

/// The double's starting state.
#[derive(Clone, Debug)]
pub struct Config {
    /// The one token accepted in `Authorization: Bearer …` (or `token …`).
    pub token: String,
    /// The user the token belongs to: `GET /user`, and the author of created pull requests.
    pub login: String,
    /// Sent as `X-OAuth-Scopes` on authenticated answers, as GitHub does for classic tokens.
    pub scopes: String,
    pub repos: Vec<RepoConfig>,
}

impl Config {
    /// Accepts `token`, signed in as [`DEFAULT_LOGIN`] with the `repo` scope, no repositories yet.
    pub fn new(token: impl Into<String>) -> Config {
        Config { token: token.into(), login: DEFAULT_LOGIN.into(), scopes: "repo".into(), repos: Vec::new() }
    }

    pub fn login(mut self, login: impl Into<String>) -> Config {
        self.login = login.into();
        self
    }

    pub fn scopes(mut self, scopes: impl Into<String>) -> Config {
        self.scopes = scopes.into();
        self
    }

    pub fn repo(mut self, repo: RepoConfig) -> Config {
        self.repos.push(repo);
        self
    }
}

/// One repository the double serves. Names are matched case-insensitively, as on GitHub.
#[derive(Clone, Debug)]
pub struct RepoConfig {
    pub owner: String,
    pub name: String,
    pub default_branch: String,
    pub private: bool,
    /// What the token may do here (`permissions` in `GET /repos/{owner}/{repo}`).
    pub permissions: Permissions,
    /// A (bare) git repository standing for this one's branches. When set, creating a pull
    /// request checks that `base` and `head` exist there and that head has commits base
    /// lacks, and `head.sha`/`base.sha` are the branches' current commits; `clone_url` is
    /// its `file://` URL. When unset, any branch name is taken and shas are made up.
    pub git_dir: Option<PathBuf>,
    /// When set, reviewers outside this list are refused (GitHub only asks collaborators).
    pub collaborators: Option<Vec<String>>,
    /// `owner/name` of the repository this one is a fork of.
    pub fork_of: Option<String>,
}

impl RepoConfig {
    /// `owner/name` on `main`, public, writable by the token.
    pub fn new(owner: impl Into<String>, name: impl Into<String>) -> RepoConfig {
        RepoConfig {
            owner: owner.into(),
            name: name.into(),
            default_branch: "main".into(),
            private: false,
            permissions: Permissions::WRITE,
            git_dir: None,
            collaborators: None,
            fork_of: None,
        }
    }

    pub fn default_branch(mut self, branch: impl Into<String>) -> RepoConfig {
        self.default_branch = branch.into();
        self
    }

    pub fn private(mut self, private: bool) -> RepoConfig {
        self.private = private;
        self
    }

    pub fn permissions(mut self, permissions: Permissions) -> RepoConfig {
        self.permissions = permissions;
        self
    }

    /// The token may read but not push ([`Permissions::READ`]).
    pub fn read_only(self) -> RepoConfig {
        self.permissions(Permissions::READ)
    }

    pub fn git_dir(mut self, path: impl Into<PathBuf>) -> RepoConfig {
        self.git_dir = Some(path.into());
        self
    }

    pub fn collaborators<S: Into<String>>(mut self, logins: impl IntoIterator<Item = S>) -> RepoConfig {
        self.collaborators = Some(logins.into_iter().map(Into::into).collect());
        self
    }

    pub fn fork_of(mut self, full_name: impl Into<String>) -> RepoConfig {
        self.fork_of = Some(full_name.into());
        self
    }

    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }
}

/// The `permissions` object of a repository answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Permissions {
    pub admin: bool,
    pub maintain: bool,
    pub push: bool,
    pub triage: bool,
    pub pull: bool,
}

impl Permissions {
    pub const ADMIN: Permissions = Permissions { admin: true, maintain: true, push: true, triage: true, pull: true };
    pub const WRITE: Permissions = Permissions { admin: false, maintain: false, push: true, triage: true, pull: true };
    pub const READ: Permissions = Permissions { admin: false, maintain: false, push: false, triage: false, pull: true };
}

/// The endpoints the double serves; a [`Fault`] is queued for one of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// `GET /user`
    GetUser,
    /// `GET /repos/{owner}/{repo}`
    GetRepo,
    /// `POST /repos/{owner}/{repo}/forks`
    CreateFork,
    /// `GET /repos/{owner}/{repo}/pulls`
    ListPulls,
    /// `POST /repos/{owner}/{repo}/pulls`
    CreatePull,
    /// `GET /repos/{owner}/{repo}/pulls/{number}`
    GetPull,
    /// `PATCH /repos/{owner}/{repo}/pulls/{number}`
    UpdatePull,
    /// `POST /repos/{owner}/{repo}/pulls/{number}/requested_reviewers`
    RequestReviewers,
    /// `GET /repos/{owner}/{repo}/issues`
    ListIssues,
    /// `GET /repos/{owner}/{repo}/issues/{number}`
    GetIssue,
    /// `GET /repos/{owner}/{repo}/issues/{number}/comments`
    ListIssueComments,
    /// `GET /repos/{owner}/{repo}/git/ref/heads/{branch}`
    GetRef,
    /// `POST /repos/{owner}/{repo}/git/refs`
    CreateRef,
    /// `GET /repos/{owner}/{repo}/contents/{path}`
    GetContent,
    /// `PUT /repos/{owner}/{repo}/contents/{path}`
    PutContent,
}

/// An issue a test puts in a repository ([`crate::GithubDouble::add_issue`]).
#[derive(Clone, Debug)]
pub struct IssueSeed {
    pub title: String,
    pub body: Option<String>,
    /// Its author's login; by default the signed-in user.
    pub author: Option<String>,
    pub labels: Vec<String>,
    pub open: bool,
    /// `YYYY-MM-DDTHH:MM:SSZ`; by default now.
    pub created_at: Option<String>,
}

impl IssueSeed {
    /// An open issue with this title, no body, no labels.
    pub fn new(title: impl Into<String>) -> IssueSeed {
        IssueSeed { title: title.into(), body: None, author: None, labels: Vec::new(), open: true, created_at: None }
    }

    pub fn body(mut self, body: impl Into<String>) -> IssueSeed {
        self.body = Some(body.into());
        self
    }

    pub fn author(mut self, login: impl Into<String>) -> IssueSeed {
        self.author = Some(login.into());
        self
    }

    pub fn labels<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> IssueSeed {
        self.labels = names.into_iter().map(Into::into).collect();
        self
    }

    pub fn closed(mut self) -> IssueSeed {
        self.open = false;
        self
    }

    pub fn created_at(mut self, at: impl Into<String>) -> IssueSeed {
        self.created_at = Some(at.into());
        self
    }
}

/// A comment a test adds to an issue ([`crate::GithubDouble::add_comment`]).
#[derive(Clone, Debug)]
pub struct CommentSeed {
    pub author: String,
    pub body: String,
    /// `YYYY-MM-DDTHH:MM:SSZ`; by default now.
    pub created_at: Option<String>,
}

impl CommentSeed {
    pub fn new(author: impl Into<String>, body: impl Into<String>) -> CommentSeed {
        CommentSeed { author: author.into(), body: body.into(), created_at: None }
    }

    pub fn created_at(mut self, at: impl Into<String>) -> CommentSeed {
        self.created_at = Some(at.into());
        self
    }
}

/// A canned failure for the next call to an endpoint. It is answered after the request
/// passed the header checks (User-Agent, version, Accept, token) and changes nothing.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    /// 500 `{"message": "Server Error", …}`.
    ServerError,
    /// 401 `{"message": "Bad credentials", …}`, as for a revoked token.
    BadCredentials,
    /// 422 `Validation Failed` with one `{"resource": "PullRequest", "code": "custom", "message": …}` error.
    Unprocessable(String),
    /// 403 primary rate limit: `x-ratelimit-remaining: 0` and GitHub's message.
    RateLimited,
    /// Any status with this JSON body.
    Custom { status: u16, body: Value },
}
