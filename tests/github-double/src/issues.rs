//! The issue endpoints Kiln reads to start a session from an issue: list a repository's
//! issues (which, as on GitHub, lists its pull requests too, each marked by a
//! `pull_request` key), get one (a pull request's number answers the pull request as an
//! issue), and list an issue's comments, oldest first. Lists page as GitHub's do (30 a
//! page, `per_page` up to 100, a `Link` header when there are more).

use serde_json::{json, Value};

use crate::config::{CommentSeed, IssueSeed};
use crate::pulls::link_header;
use crate::reply::{field_error, not_found, Answer, DOC_GET_ISSUE, DOC_ISSUE_COMMENTS, DOC_LIST_ISSUES};
use crate::store::{now, Comment, Issue, Pull, Store};

/// One entry of `GET /repos/{owner}/{repo}/issues`: an issue, or a pull request seen as one.
enum Entry<'a> {
    Issue(&'a Issue),
    Pull(&'a Pull),
}

impl Entry<'_> {
    fn open(&self) -> bool {
        match self {
            Entry::Issue(issue) => issue.open,
            Entry::Pull(pull) => pull.open,
        }
    }

    fn seq(&self) -> u64 {
        match self {
            Entry::Issue(issue) => issue.created_seq,
            Entry::Pull(pull) => pull.created_seq,
        }
    }

    fn json(&self, store: &Store, repo: usize) -> Value {
        match self {
            Entry::Issue(issue) => issue_json(store, repo, issue),
            Entry::Pull(pull) => pull_as_issue(store, repo, pull),
        }
    }
}

/// Seeds an issue; returns its number.
pub(crate) fn add(store: &mut Store, repo: usize, seed: IssueSeed) -> u64 {
    let number = store.next_number(repo);
    let id = store.next_pull_id();
    let created_seq = store.tick();
    let author = seed.author.unwrap_or_else(|| store.login.clone());
    store.repos[repo].issues.push(Issue {
        id,
        number,
        title: seed.title,
        body: seed.body,
        author,
        labels: seed.labels,
        open: seed.open,
        created_at: seed.created_at.unwrap_or_else(now),
        created_seq,
        comments: Vec::new(),
    });
    number
}

/// Seeds a comment on issue `number`; returns its id, or `None` when there is no such issue.
pub(crate) fn comment(store: &mut Store, repo: usize, number: u64, seed: CommentSeed) -> Option<u64> {
    let id = store.next_pull_id();
    let issue = store.repos[repo].issues.iter_mut().find(|issue| issue.number == number)?;
    issue.comments.push(Comment {
        id,
        author: seed.author,
        body: seed.body,
        created_at: seed.created_at.unwrap_or_else(now),
    });
    // GitHub keeps a conversation in time order; a seeded date may be earlier than the last.
    issue.comments.sort_by(|a, b| a.created_at.cmp(&b.created_at));
    Some(id)
}

/// `GET /repos/{owner}/{repo}/issues?state=&per_page=&page=&direction=`: newest first.
pub fn list(store: &Store, repo: usize, query: &str, path: &str) -> Result<Answer, Answer> {
    let doc = DOC_LIST_ISSUES;
    let mut state = "open".to_owned();
    let mut ascending = false;
    let (mut per_page, mut page) = (30usize, 1usize);
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        match key.as_ref() {
            "state" => state = value.into_owned(),
            "direction" => match value.as_ref() {
                "asc" => ascending = true,
                "desc" => ascending = false,
                _ => return Err(field_error("Issue", "direction", "invalid", doc)),
            },
            "per_page" => per_page = value.parse().unwrap_or(30).clamp(1, 100),
            "page" => page = value.parse().unwrap_or(1).max(1),
            _ => {}
        }
    }
    if !["open", "closed", "all"].contains(&state.as_str()) {
        return Err(field_error("Issue", "state", "invalid", doc));
    }
    let stored = &store.repos[repo];
    let mut entries: Vec<Entry> = stored
        .issues
        .iter()
        .map(Entry::Issue)
        .chain(stored.pulls.iter().map(Entry::Pull))
        .filter(|entry| match state.as_str() {
            "open" => entry.open(),
            "closed" => !entry.open(),
            _ => true,
        })
        .collect();
    entries.sort_by_key(Entry::seq);
    if !ascending {
        entries.reverse();
    }
    let last = entries.len().div_ceil(per_page).max(1);
    let items: Vec<Value> =
        entries.iter().skip((page - 1) * per_page).take(per_page).map(|entry| entry.json(store, repo)).collect();
    let mut answer = Answer::json(200, Value::Array(items));
    if last > 1 {
        answer = answer.header("link", link_header(&store.base_url, path, query, page, last));
    }
    Ok(answer)
}

/// `GET /repos/{owner}/{repo}/issues/{number}`: the issue, or the pull request as an issue.
pub fn get(store: &Store, repo: usize, number: &str) -> Result<Answer, Answer> {
    let number: u64 = number.parse().map_err(|_| not_found(DOC_GET_ISSUE))?;
    let stored = &store.repos[repo];
    if let Some(issue) = stored.issues.iter().find(|issue| issue.number == number) {
        return Ok(Answer::json(200, issue_json(store, repo, issue)));
    }
    match stored.pulls.iter().find(|pull| pull.number == number) {
        Some(pull) => Ok(Answer::json(200, pull_as_issue(store, repo, pull))),
        None => Err(not_found(DOC_GET_ISSUE)),
    }
}

/// `GET /repos/{owner}/{repo}/issues/{number}/comments?per_page=&page=`: oldest first.
pub fn comments(store: &Store, repo: usize, number: &str, query: &str, path: &str) -> Result<Answer, Answer> {
    let number: u64 = number.parse().map_err(|_| not_found(DOC_ISSUE_COMMENTS))?;
    let stored = &store.repos[repo];
    let list: &[Comment] = match stored.issues.iter().find(|issue| issue.number == number) {
        Some(issue) => &issue.comments,
        // A pull request's conversation is an issue's too; the double keeps none for them.
        None if stored.pulls.iter().any(|pull| pull.number == number) => &[],
        None => return Err(not_found(DOC_ISSUE_COMMENTS)),
    };
    let (mut per_page, mut page) = (30usize, 1usize);
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        match key.as_ref() {
            "per_page" => per_page = value.parse().unwrap_or(30).clamp(1, 100),
            "page" => page = value.parse().unwrap_or(1).max(1),
            _ => {}
        }
    }
    let last = list.len().div_ceil(per_page).max(1);
    let items: Vec<Value> = list
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .map(|comment| comment_json(store, repo, number, comment))
        .collect();
    let mut answer = Answer::json(200, Value::Array(items));
    if last > 1 {
        answer = answer.header("link", link_header(&store.base_url, path, query, page, last));
    }
    Ok(answer)
}

fn label_json(store: &Store, repo: usize, name: &str) -> Value {
    let id = crate::store::user_id(&format!("label:{name}"));
    json!({
        "id": id,
        "node_id": format!("LA_kwDO{id:08X}"),
        "url": format!("{}/repos/{}/labels/{name}", store.base_url, store.repos[repo].config.full_name()),
        "name": name,
        "color": "ededed",
        "default": false,
        "description": null,
    })
}

fn issue_json(store: &Store, repo: usize, issue: &Issue) -> Value {
    let full_name = store.repos[repo].config.full_name();
    let api = format!("{}/repos/{full_name}/issues/{}", store.base_url, issue.number);
    let updated_at =
        issue.comments.last().map_or(&issue.created_at, |comment| &comment.created_at).max(&issue.created_at);
    json!({
        "id": issue.id,
        "node_id": format!("I_kwDO{:010X}", issue.id),
        "url": api,
        "repository_url": format!("{}/repos/{full_name}", store.base_url),
        "labels_url": format!("{api}/labels{{/name}}"),
        "comments_url": format!("{api}/comments"),
        "events_url": format!("{api}/events"),
        "html_url": format!("{}/{full_name}/issues/{}", store.base_url, issue.number),
        "number": issue.number,
        "state": if issue.open { "open" } else { "closed" },
        "state_reason": if issue.open { Value::Null } else { json!("completed") },
        "title": issue.title,
        "body": issue.body,
        "user": store.user_json(&issue.author),
        "labels": issue.labels.iter().map(|name| label_json(store, repo, name)).collect::<Vec<_>>(),
        "assignee": null,
        "assignees": [],
        "milestone": null,
        "locked": false,
        "comments": issue.comments.len(),
        "created_at": issue.created_at,
        "updated_at": updated_at,
        "closed_at": if issue.open { Value::Null } else { json!(updated_at) },
        "author_association": association(store, repo, &issue.author),
    })
}

/// A pull request as the issues endpoints show it: an issue with a `pull_request` key.
fn pull_as_issue(store: &Store, repo: usize, pull: &Pull) -> Value {
    let full_name = store.repos[repo].config.full_name();
    let api = format!("{}/repos/{full_name}/issues/{}", store.base_url, pull.number);
    let html = format!("{}/{full_name}/pull/{}", store.base_url, pull.number);
    json!({
        "id": pull.id,
        "node_id": format!("PR_kwDO{:010X}", pull.id),
        "url": api,
        "repository_url": format!("{}/repos/{full_name}", store.base_url),
        "comments_url": format!("{api}/comments"),
        "html_url": html,
        "number": pull.number,
        "state": if pull.open { "open" } else { "closed" },
        "title": pull.title,
        "body": pull.body,
        "user": store.user_json(&pull.author),
        "labels": [],
        "assignee": null,
        "assignees": [],
        "milestone": null,
        "locked": false,
        "comments": 0,
        "created_at": pull.created_at,
        "updated_at": pull.updated_at,
        "closed_at": pull.closed_at,
        "draft": pull.draft,
        "author_association": association(store, repo, &pull.author),
        "pull_request": {
            "url": format!("{}/repos/{full_name}/pulls/{}", store.base_url, pull.number),
            "html_url": html,
            "diff_url": format!("{html}.diff"),
            "patch_url": format!("{html}.patch"),
            "merged_at": null,
        },
    })
}

fn comment_json(store: &Store, repo: usize, number: u64, comment: &Comment) -> Value {
    let full_name = store.repos[repo].config.full_name();
    json!({
        "id": comment.id,
        "node_id": format!("IC_kwDO{:010X}", comment.id),
        "url": format!("{}/repos/{full_name}/issues/comments/{}", store.base_url, comment.id),
        "html_url": format!("{}/{full_name}/issues/{number}#issuecomment-{}", store.base_url, comment.id),
        "issue_url": format!("{}/repos/{full_name}/issues/{number}", store.base_url),
        "body": comment.body,
        "user": store.user_json(&comment.author),
        "created_at": comment.created_at,
        "updated_at": comment.created_at,
        "author_association": association(store, repo, &comment.author),
    })
}

fn association(store: &Store, repo: usize, login: &str) -> &'static str {
    if login.eq_ignore_ascii_case(&store.repos[repo].config.owner) {
        "OWNER"
    } else {
        "NONE"
    }
}
