//! The double's state (repositories, their pull requests and issues, queued faults) and how
//! it is rendered as GitHub's JSON: users, repositories and pull requests (issues: `issues.rs`).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::config::{Config, Endpoint, Fault, RepoConfig};
use crate::git;

pub(crate) struct Store {
    pub token: String,
    pub login: String,
    pub scopes: String,
    /// `http://127.0.0.1:PORT`: API URLs and `html_url`s point back at the double.
    pub base_url: String,
    pub repos: Vec<Repo>,
    pub faults: HashMap<Endpoint, VecDeque<Fault>>,
    next_pull_id: u64,
    /// Orders updates made within the same second.
    clock: u64,
    pub answered: u64,
}

pub(crate) struct Repo {
    pub config: RepoConfig,
    pub id: u64,
    pub pulls: Vec<Pull>,
    pub issues: Vec<Issue>,
    /// Branches made or moved through the API (`git/refs`, `contents`), by name: their tip.
    pub api_branches: BTreeMap<String, String>,
    /// Files put through the Contents API, by `(branch, path)`.
    pub files: BTreeMap<(String, String), StoredFile>,
}

pub(crate) struct Issue {
    pub id: u64,
    pub number: u64,
    pub title: String,
    pub body: Option<String>,
    pub author: String,
    pub labels: Vec<String>,
    pub open: bool,
    pub created_at: String,
    pub created_seq: u64,
    pub comments: Vec<Comment>,
}

pub(crate) struct Comment {
    pub id: u64,
    pub author: String,
    pub body: String,
    pub created_at: String,
}

/// A file committed through the Contents API.
#[derive(Clone)]
pub(crate) struct StoredFile {
    /// Its blob's id.
    pub sha: String,
    pub bytes: Vec<u8>,
    pub base64: String,
    /// The commit message it was put with.
    pub message: String,
}

pub(crate) struct Pull {
    pub id: u64,
    pub number: u64,
    pub title: String,
    pub body: Option<String>,
    pub open: bool,
    pub draft: bool,
    pub maintainer_can_modify: bool,
    pub author: String,
    /// The repository (index into `Store::repos`) the head branch lives in.
    pub head_repo: usize,
    pub head_ref: String,
    pub base_ref: String,
    pub reviewers: Vec<String>,
    pub teams: Vec<String>,
    pub created_at: String,
    pub updated_at: String,
    pub closed_at: Option<String>,
    pub created_seq: u64,
    pub updated_seq: u64,
}

impl Store {
    pub fn new(config: Config, base_url: String) -> Store {
        let mut store = Store {
            token: config.token,
            login: config.login,
            scopes: config.scopes,
            base_url,
            repos: Vec::new(),
            faults: HashMap::new(),
            next_pull_id: 2_000_000_001,
            clock: 0,
            answered: 0,
        };
        for repo in config.repos {
            store.add_repo(repo);
        }
        store
    }

    /// Adds `config`, or replaces the configuration of the repository with its name
    /// (keeping its pull requests). Returns its index.
    pub fn add_repo(&mut self, config: RepoConfig) -> usize {
        if let Some(index) = self.find(&config.owner, &config.name) {
            self.repos[index].config = config;
            return index;
        }
        let id = 700_000_001 + self.repos.len() as u64;
        self.repos.push(Repo {
            config,
            id,
            pulls: Vec::new(),
            issues: Vec::new(),
            api_branches: BTreeMap::new(),
            files: BTreeMap::new(),
        });
        self.repos.len() - 1
    }

    pub fn find(&self, owner: &str, name: &str) -> Option<usize> {
        self.repos.iter().position(|repo| {
            repo.config.owner.eq_ignore_ascii_case(owner) && repo.config.name.eq_ignore_ascii_case(name)
        })
    }

    /// A repository owned by `owner` that is `base`'s fork (or has its name).
    pub fn fork_of(&self, owner: &str, base: usize) -> Option<usize> {
        let full_name = self.repos[base].config.full_name();
        let name = &self.repos[base].config.name;
        self.repos.iter().position(|repo| {
            repo.config.owner.eq_ignore_ascii_case(owner)
                && (repo.config.fork_of.as_deref().is_some_and(|of| of.eq_ignore_ascii_case(&full_name))
                    || repo.config.name.eq_ignore_ascii_case(name))
        })
    }

    pub fn take_fault(&mut self, endpoint: Endpoint) -> Option<Fault> {
        self.faults.get_mut(&endpoint)?.pop_front()
    }

    pub fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    pub fn next_pull_id(&mut self) -> u64 {
        let id = self.next_pull_id;
        self.next_pull_id += 1;
        id
    }

    /// The next number in `repo`: pull requests and issues share numbers, as on GitHub.
    pub fn next_number(&self, repo: usize) -> u64 {
        (self.repos[repo].pulls.len() + self.repos[repo].issues.len()) as u64 + 1
    }

    /// The commit a branch of `repo` points at: the real one when the repository has a
    /// git directory, else a stable made-up sha.
    pub fn branch_sha(&self, repo: usize, branch: &str) -> Option<String> {
        if let Some(sha) = self.repos[repo].api_branches.get(branch) {
            return Some(sha.clone());
        }
        let config = &self.repos[repo].config;
        match &config.git_dir {
            Some(git_dir) => git::branch_sha(git_dir, branch),
            None => Some(fake_sha(&format!("{}:{branch}", config.full_name()))),
        }
    }

    /// A branch's tip as the refs and contents endpoints see it: one the API made or moved,
    /// else one of the `git_dir`; without a `git_dir`, only the default branch (the pull
    /// request endpoints, which take any name there, use [`Store::branch_sha`]).
    pub fn ref_sha(&self, repo: usize, branch: &str) -> Option<String> {
        let config = &self.repos[repo].config;
        if config.git_dir.is_none()
            && !self.repos[repo].api_branches.contains_key(branch)
            && branch != config.default_branch
        {
            return None;
        }
        self.branch_sha(repo, branch)
    }

    /// Whether `sha` is a commit of `repo`: a branch tip the API made or moved, or (with a
    /// `git_dir`) a commit there; without a `git_dir` any 40-hex id passes.
    pub fn knows_commit(&self, repo: usize, sha: &str) -> bool {
        if self.repos[repo].api_branches.values().any(|tip| tip == sha) {
            return true;
        }
        match &self.repos[repo].config.git_dir {
            Some(git_dir) => git::has_commit(git_dir, sha),
            None => sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()),
        }
    }

    pub fn user_json(&self, login: &str) -> Value {
        let id = user_id(login);
        json!({
            "login": login,
            "id": id,
            "node_id": format!("U_kgDO{id:08X}"),
            "avatar_url": format!("{}/avatars/{login}", self.base_url),
            "url": format!("{}/users/{login}", self.base_url),
            "html_url": format!("{}/{login}", self.base_url),
            "type": "User",
            "site_admin": false,
        })
    }

    pub fn repo_json(&self, index: usize) -> Value {
        let repo = &self.repos[index];
        let config = &repo.config;
        let full_name = config.full_name();
        let clone_url = match &config.git_dir {
            Some(git_dir) => format!("file://{}", git_dir.display()),
            None => format!("{}/{full_name}.git", self.base_url),
        };
        let mut value = json!({
            "id": repo.id,
            "node_id": format!("R_kgDO{:08X}", repo.id),
            "name": config.name,
            "full_name": full_name,
            "owner": self.user_json(&config.owner),
            "private": config.private,
            "visibility": if config.private { "private" } else { "public" },
            "html_url": format!("{}/{full_name}", self.base_url),
            "url": format!("{}/repos/{full_name}", self.base_url),
            "pulls_url": format!("{}/repos/{full_name}/pulls{{/number}}", self.base_url),
            "clone_url": clone_url,
            "git_url": clone_url,
            "ssh_url": clone_url,
            "fork": config.fork_of.is_some(),
            "default_branch": config.default_branch,
            "archived": false,
            "disabled": false,
            "permissions": config.permissions,
            "allow_forking": true,
        });
        if let Some(parent) = config.fork_of.as_deref().and_then(|of| of.split_once('/')) {
            if let Some(parent) = self.find(parent.0, parent.1) {
                let parent = self.repo_summary(parent);
                value["parent"] = parent.clone();
                value["source"] = parent;
            }
        }
        value
    }

    /// The short repository object nested in pull requests and forks.
    fn repo_summary(&self, index: usize) -> Value {
        let config = &self.repos[index].config;
        let full_name = config.full_name();
        json!({
            "id": self.repos[index].id,
            "name": config.name,
            "full_name": full_name,
            "owner": self.user_json(&config.owner),
            "private": config.private,
            "html_url": format!("{}/{full_name}", self.base_url),
            "url": format!("{}/repos/{full_name}", self.base_url),
            "fork": config.fork_of.is_some(),
            "default_branch": config.default_branch,
        })
    }

    pub fn pull_json(&self, repo: usize, pull: &Pull) -> Value {
        let config = &self.repos[repo].config;
        let full_name = config.full_name();
        let api = format!("{}/repos/{full_name}", self.base_url);
        let html = format!("{}/{full_name}/pull/{}", self.base_url, pull.number);
        let head_owner = &self.repos[pull.head_repo].config.owner;
        let side = |owner: &str, repo_index: usize, branch: &str| {
            json!({
                "label": format!("{owner}:{branch}"),
                "ref": branch,
                "sha": self.branch_sha(repo_index, branch),
                "user": self.user_json(owner),
                "repo": self.repo_summary(repo_index),
            })
        };
        let association = if pull.author.eq_ignore_ascii_case(&config.owner) {
            "OWNER"
        } else if config.permissions.push {
            "COLLABORATOR"
        } else {
            "CONTRIBUTOR"
        };
        json!({
            "url": format!("{api}/pulls/{}", pull.number),
            "id": pull.id,
            "node_id": format!("PR_kwDO{:010X}", pull.id),
            "html_url": html,
            "diff_url": format!("{html}.diff"),
            "patch_url": format!("{html}.patch"),
            "issue_url": format!("{api}/issues/{}", pull.number),
            "commits_url": format!("{api}/pulls/{}/commits", pull.number),
            "number": pull.number,
            "state": if pull.open { "open" } else { "closed" },
            "locked": false,
            "title": pull.title,
            "user": self.user_json(&pull.author),
            "body": pull.body,
            "labels": [],
            "milestone": null,
            "created_at": pull.created_at,
            "updated_at": pull.updated_at,
            "closed_at": pull.closed_at,
            "merged_at": null,
            "merge_commit_sha": null,
            "assignee": null,
            "assignees": [],
            "requested_reviewers": pull.reviewers.iter().map(|login| self.user_json(login)).collect::<Vec<_>>(),
            "requested_teams": pull.teams.iter().map(|slug| team_json(slug)).collect::<Vec<_>>(),
            "head": side(head_owner, pull.head_repo, &pull.head_ref),
            "base": side(&config.owner, repo, &pull.base_ref),
            "author_association": association,
            "draft": pull.draft,
            "merged": false,
            "mergeable": null,
            "maintainer_can_modify": pull.maintainer_can_modify,
        })
    }
}

fn team_json(slug: &str) -> Value {
    let id = user_id(slug);
    json!({"id": id, "node_id": format!("T_kwDO{id:08X}"), "name": slug, "slug": slug})
}

fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
}

/// A stable id per login, so answers are predictable across runs.
pub(crate) fn user_id(login: &str) -> u64 {
    fnv(&login.to_ascii_lowercase()) % 90_000_000 + 1_000_000
}

/// 40 hex digits derived from `seed`.
pub(crate) fn fake_sha(seed: &str) -> String {
    let mut sha = String::new();
    let mut salt = 0u8;
    while sha.len() < 40 {
        sha.push_str(&format!("{:016x}", fnv(&format!("{salt}{seed}"))));
        salt += 1;
    }
    sha.truncate(40);
    sha
}

pub(crate) fn now() -> String {
    let seconds = SystemTime::now().duration_since(UNIX_EPOCH).map(|elapsed| elapsed.as_secs()).unwrap_or(0);
    iso8601(seconds)
}

/// `YYYY-MM-DDTHH:MM:SSZ`, the form GitHub's timestamps take.
pub(crate) fn iso8601(seconds: u64) -> String {
    let (year, month, day) = civil_from_days((seconds / 86_400) as i64);
    let rest = seconds % 86_400;
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

// Howard Hinnant's days-to-civil algorithm.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_iso8601() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso8601(1_669_593_600 + 3_723), "2022-11-28T01:02:03Z");
    }

    #[test]
    fn made_up_shas_are_stable_hex() {
        let sha = fake_sha("acme/shop:main");
        assert_eq!(sha.len(), 40);
        assert!(sha.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(sha, fake_sha("acme/shop:main"));
        assert_ne!(sha, fake_sha("acme/shop:other"));
    }
}
