//! The pull request endpoints: create (with GitHub's duplicate and branch validation),
//! list with `head`/`base`/`state` filters and pagination, get, update, and request reviewers.

use serde_json::{Map, Value};

use crate::git;
use crate::reply::{
    custom_error, field_error, invalid_request, not_found, problems_parsing_json, Answer, DOC_CREATE_PULL,
    DOC_GET_PULL, DOC_LIST_PULLS, DOC_REQUEST_REVIEWERS, DOC_UPDATE_PULL,
};
use crate::store::{now, Pull, Store};

type Fields = Map<String, Value>;

fn object<'a>(body: &'a Value, doc: &str) -> Result<&'a Fields, Answer> {
    body.as_object().ok_or_else(|| problems_parsing_json(doc))
}

/// A string field; `null` counts as absent when `nullable`.
fn string(fields: &Fields, name: &str, nullable: bool, doc: &str) -> Result<Option<String>, Answer> {
    match fields.get(name) {
        None => Ok(None),
        Some(Value::Null) if nullable => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(not_a(name, other, "string", doc)),
    }
}

fn boolean(fields: &Fields, name: &str, doc: &str) -> Result<Option<bool>, Answer> {
    match fields.get(name) {
        None => Ok(None),
        Some(Value::Bool(flag)) => Ok(Some(*flag)),
        Some(other) => Err(not_a(name, other, "boolean", doc)),
    }
}

fn strings(fields: &Fields, name: &str, doc: &str) -> Result<Option<Vec<String>>, Answer> {
    match fields.get(name) {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(text) => Ok(text.clone()),
                other => Err(not_a(&format!("{name}/items"), other, "string", doc)),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(other) => Err(not_a(name, other, "array", doc)),
    }
}

// GitHub's JSON-schema wording: `For 'properties/draft', "yes" is not a boolean.`
fn not_a(name: &str, value: &Value, kind: &str, doc: &str) -> Answer {
    invalid_request(&format!("For 'properties/{name}', {value} is not a {kind}."), doc)
}

fn find_pull(store: &Store, repo: usize, number: &str, doc: &str) -> Result<usize, Answer> {
    let number: u64 = number.parse().map_err(|_| not_found(doc))?;
    store.repos[repo].pulls.iter().position(|pull| pull.number == number).ok_or_else(|| not_found(doc))
}

/// An open pull request other than `except` from the same head into the same base.
fn duplicate(
    store: &Store,
    repo: usize,
    head_repo: usize,
    head_ref: &str,
    base_ref: &str,
    except: Option<u64>,
) -> bool {
    store.repos[repo].pulls.iter().any(|pull| {
        pull.open
            && Some(pull.number) != except
            && pull.head_repo == head_repo
            && pull.head_ref == head_ref
            && pull.base_ref == base_ref
    })
}

fn already_exists(store: &Store, head_repo: usize, head_ref: &str, doc: &str) -> Answer {
    let owner = &store.repos[head_repo].config.owner;
    custom_error("PullRequest", &format!("A pull request already exists for {owner}:{head_ref}."), doc)
}

/// `POST /repos/{owner}/{repo}/pulls`
pub fn create(store: &mut Store, repo: usize, body: &Value) -> Result<Answer, Answer> {
    let doc = DOC_CREATE_PULL;
    let fields = object(body, doc)?;
    let title = string(fields, "title", false, doc)?;
    let head = string(fields, "head", false, doc)?;
    let base = string(fields, "base", false, doc)?;
    let text = string(fields, "body", true, doc)?;
    let draft = boolean(fields, "draft", doc)?.unwrap_or(false);
    let maintainer_can_modify = boolean(fields, "maintainer_can_modify", doc)?.unwrap_or(true);
    string(fields, "head_repo", false, doc)?;
    let Some(head) = head else {
        return Err(invalid_request("\"head\" wasn't supplied.", doc));
    };
    let Some(base) = base else {
        return Err(invalid_request("\"base\" wasn't supplied.", doc));
    };
    let Some(title) = title.filter(|title| !title.trim().is_empty()) else {
        return Err(field_error("PullRequest", "title", "missing_field", doc));
    };

    // `branch` is a branch of this repository; `user:branch` one of user's fork.
    let (head_owner, head_ref) = match head.split_once(':') {
        Some((owner, branch)) => (owner.to_owned(), branch.to_owned()),
        None => (store.repos[repo].config.owner.clone(), head.clone()),
    };
    let head_repo = if head_owner.eq_ignore_ascii_case(&store.repos[repo].config.owner) {
        Some(repo)
    } else {
        store.fork_of(&head_owner, repo)
    };
    let Some(head_repo) = head_repo.filter(|_| !head_ref.is_empty()) else {
        return Err(field_error("PullRequest", "head", "invalid", doc));
    };
    if base.is_empty() {
        return Err(field_error("PullRequest", "base", "invalid", doc));
    }
    if duplicate(store, repo, head_repo, &head_ref, &base, None) {
        return Err(already_exists(store, head_repo, &head_ref, doc));
    }
    let Some(base_sha) = store.branch_sha(repo, &base) else {
        return Err(field_error("PullRequest", "base", "invalid", doc));
    };
    let Some(head_sha) = store.branch_sha(head_repo, &head_ref) else {
        return Err(field_error("PullRequest", "head", "invalid", doc));
    };
    let base_git = store.repos[repo].config.git_dir.clone();
    let head_git = store.repos[head_repo].config.git_dir.clone();
    let no_commits = match (&base_git, &head_git) {
        (Some(base_dir), Some(head_dir)) if base_dir == head_dir => git::is_ancestor(base_dir, &head_sha, &base_sha),
        (Some(_), Some(_)) => head_sha == base_sha,
        _ => false,
    };
    if no_commits {
        return Err(custom_error("PullRequest", &format!("No commits between {base} and {head}"), doc));
    }

    let now = now();
    let seq = store.tick();
    let pull = Pull {
        id: store.next_pull_id(),
        number: store.next_number(repo),
        title,
        body: text,
        open: true,
        draft,
        maintainer_can_modify,
        author: store.login.clone(),
        head_repo,
        head_ref,
        base_ref: base,
        reviewers: Vec::new(),
        teams: Vec::new(),
        created_at: now.clone(),
        updated_at: now,
        closed_at: None,
        created_seq: seq,
        updated_seq: seq,
    };
    let value = store.pull_json(repo, &pull);
    store.repos[repo].pulls.push(pull);
    let location = value["url"].as_str().unwrap_or_default().to_owned();
    Ok(Answer::json(201, value).header("location", location))
}

/// `GET /repos/{owner}/{repo}/pulls?state=&head=&base=&sort=&direction=&per_page=&page=`
pub fn list(store: &Store, repo: usize, query: &str, path: &str) -> Result<Answer, Answer> {
    let doc = DOC_LIST_PULLS;
    let mut state = "open".to_owned();
    let mut head = None;
    let mut base = None;
    let mut sort = "created".to_owned();
    let mut direction = None;
    let mut per_page = 30usize;
    let mut page = 1usize;
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        match key.as_ref() {
            "state" => state = value.into_owned(),
            "head" => head = Some(value.into_owned()),
            "base" => base = Some(value.into_owned()),
            "sort" => sort = value.into_owned(),
            "direction" => direction = Some(value.into_owned()),
            "per_page" => per_page = value.parse().unwrap_or(30).clamp(1, 100),
            "page" => page = value.parse().unwrap_or(1).max(1),
            _ => {}
        }
    }
    if !["open", "closed", "all"].contains(&state.as_str()) {
        return Err(field_error("PullRequest", "state", "invalid", doc));
    }
    if !["created", "updated", "popularity", "long-running"].contains(&sort.as_str()) {
        return Err(field_error("PullRequest", "sort", "invalid", doc));
    }
    let ascending = match direction.as_deref() {
        None => sort == "long-running",
        Some("asc") => true,
        Some("desc") => false,
        Some(_) => return Err(field_error("PullRequest", "direction", "invalid", doc)),
    };
    // GitHub only filters by head in the `user:ref-name` form; a bare branch name is ignored.
    let head = head.as_deref().and_then(|head| head.split_once(':'));

    let mut pulls: Vec<&Pull> = store.repos[repo]
        .pulls
        .iter()
        .filter(|pull| match state.as_str() {
            "open" => pull.open,
            "closed" => !pull.open,
            _ => true,
        })
        .filter(|pull| {
            head.is_none_or(|(owner, branch)| {
                store.repos[pull.head_repo].config.owner.eq_ignore_ascii_case(owner) && pull.head_ref == branch
            })
        })
        .filter(|pull| base.as_deref().is_none_or(|base| pull.base_ref == base))
        .collect();
    pulls.sort_by_key(|pull| if sort == "updated" { pull.updated_seq } else { pull.created_seq });
    if !ascending {
        pulls.reverse();
    }

    let total = pulls.len();
    let last = total.div_ceil(per_page).max(1);
    let items: Vec<Value> =
        pulls.into_iter().skip((page - 1) * per_page).take(per_page).map(|pull| store.pull_json(repo, pull)).collect();
    let mut answer = Answer::json(200, Value::Array(items));
    if last > 1 {
        answer = answer.header("link", link_header(&store.base_url, path, query, page, last));
    }
    Ok(answer)
}

/// RFC 8288 `Link` with GitHub's `prev`/`next`/`first`/`last` relations.
pub(crate) fn link_header(base_url: &str, path: &str, query: &str, page: usize, last: usize) -> String {
    let others: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
        .filter(|(key, _)| key != "page")
        .map(|(key, value)| (key.into_owned(), value.into_owned()))
        .collect();
    let url = |page: usize| {
        let mut query = form_urlencoded::Serializer::new(String::new());
        for (key, value) in &others {
            query.append_pair(key, value);
        }
        query.append_pair("page", &page.to_string());
        format!("<{base_url}{path}?{}>", query.finish())
    };
    let mut links = Vec::new();
    if page > 1 {
        links.push(format!("{}; rel=\"prev\"", url(page - 1)));
    }
    if page < last {
        links.push(format!("{}; rel=\"next\"", url(page + 1)));
        links.push(format!("{}; rel=\"last\"", url(last)));
    }
    if page > 1 {
        links.push(format!("{}; rel=\"first\"", url(1)));
    }
    links.join(", ")
}

/// `GET /repos/{owner}/{repo}/pulls/{number}`
pub fn get(store: &Store, repo: usize, number: &str) -> Result<Answer, Answer> {
    let index = find_pull(store, repo, number, DOC_GET_PULL)?;
    Ok(Answer::json(200, store.pull_json(repo, &store.repos[repo].pulls[index])))
}

/// `PATCH /repos/{owner}/{repo}/pulls/{number}`: `title`, `body`, `state`, `base`,
/// `maintainer_can_modify`.
pub fn update(store: &mut Store, repo: usize, number: &str, body: &Value) -> Result<Answer, Answer> {
    let doc = DOC_UPDATE_PULL;
    let index = find_pull(store, repo, number, doc)?;
    let fields = object(body, doc)?;
    let title = string(fields, "title", false, doc)?;
    let text = string(fields, "body", true, doc)?;
    let state = string(fields, "state", false, doc)?;
    let base = string(fields, "base", false, doc)?;
    let maintainer_can_modify = boolean(fields, "maintainer_can_modify", doc)?;
    let open = match state.as_deref() {
        None => None,
        Some("open") => Some(true),
        Some("closed") => Some(false),
        Some(other) => {
            return Err(invalid_request(
                &format!("For 'properties/state', \"{other}\" is not one of [\"open\", \"closed\"]."),
                doc,
            ))
        }
    };
    if title.as_deref().is_some_and(|title| title.trim().is_empty()) {
        return Err(field_error("PullRequest", "title", "missing_field", doc));
    }
    let pull = &store.repos[repo].pulls[index];
    let (head_repo, head_ref, number) = (pull.head_repo, pull.head_ref.clone(), pull.number);
    let new_base = base.clone().unwrap_or_else(|| pull.base_ref.clone());
    let will_be_open = open.unwrap_or(pull.open);
    if let Some(base) = &base {
        if store.branch_sha(repo, base).is_none() {
            return Err(field_error("PullRequest", "base", "invalid", doc));
        }
    }
    if will_be_open && duplicate(store, repo, head_repo, &head_ref, &new_base, Some(number)) {
        return Err(already_exists(store, head_repo, &head_ref, doc));
    }

    let now = now();
    let seq = store.tick();
    let pull = &mut store.repos[repo].pulls[index];
    if let Some(title) = title {
        pull.title = title;
    }
    if fields.contains_key("body") {
        pull.body = text;
    }
    if let Some(flag) = maintainer_can_modify {
        pull.maintainer_can_modify = flag;
    }
    pull.base_ref = new_base;
    if let Some(open) = open {
        if pull.open && !open {
            pull.closed_at = Some(now.clone());
        } else if !pull.open && open {
            pull.closed_at = None;
        }
        pull.open = open;
    }
    pull.updated_at = now;
    pull.updated_seq = seq;
    let pull = &store.repos[repo].pulls[index];
    Ok(Answer::json(200, store.pull_json(repo, pull)))
}

/// `POST /repos/{owner}/{repo}/pulls/{number}/requested_reviewers`
pub fn request_reviewers(store: &mut Store, repo: usize, number: &str, body: &Value) -> Result<Answer, Answer> {
    let doc = DOC_REQUEST_REVIEWERS;
    let index = find_pull(store, repo, number, doc)?;
    let fields = object(body, doc)?;
    let reviewers = strings(fields, "reviewers", doc)?;
    let teams = strings(fields, "team_reviewers", doc)?;
    if reviewers.is_none() && teams.is_none() {
        return Err(invalid_request(
            "No subschema in \"anyOf\" matched.\n\"reviewers\" wasn't supplied.\n\"team_reviewers\" wasn't supplied.",
            doc,
        ));
    }
    let reviewers = reviewers.unwrap_or_default();
    let teams = teams.unwrap_or_default();
    let pull = &store.repos[repo].pulls[index];
    if reviewers.iter().any(|login| login.eq_ignore_ascii_case(&pull.author)) {
        return Err(custom_error("PullRequest", "Review cannot be requested from pull request author.", doc));
    }
    let config = &store.repos[repo].config;
    if let Some(collaborators) = &config.collaborators {
        let outsider =
            reviewers.iter().any(|login| !collaborators.iter().any(|known| known.eq_ignore_ascii_case(login)));
        if outsider {
            return Err(custom_error(
                "PullRequest",
                &format!(
                    "Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the {} repository.",
                    config.full_name()
                ),
                doc,
            ));
        }
    }

    let now = now();
    let seq = store.tick();
    let pull = &mut store.repos[repo].pulls[index];
    for login in reviewers {
        if !pull.reviewers.iter().any(|known| known.eq_ignore_ascii_case(&login)) {
            pull.reviewers.push(login);
        }
    }
    for slug in teams {
        if !pull.teams.iter().any(|known| known.eq_ignore_ascii_case(&slug)) {
            pull.teams.push(slug);
        }
    }
    pull.updated_at = now;
    pull.updated_seq = seq;
    let pull = &store.repos[repo].pulls[index];
    Ok(Answer::json(201, store.pull_json(repo, pull)))
}
