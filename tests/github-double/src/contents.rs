//! Branches made through the API and files committed through the Contents API, kept in
//! memory (a configured `git_dir` is read, never written): what Kiln's screenshot upload
//! uses. `GET /repos/{o}/{r}/git/ref/heads/{branch}`, `POST /repos/{o}/{r}/git/refs`,
//! `GET` and `PUT /repos/{o}/{r}/contents/{path}`. Shapes and messages as GitHub answers
//! them (the `PUT` answer as recorded in github/rest-api-description#107; `"sha" wasn't
//! supplied.` and `Reference already exists` as octokit and its users recorded them).

use serde_json::{json, Value};

use crate::reply::{error, invalid_request, not_found, problems_parsing_json, Answer};
use crate::store::{fake_sha, now, Store, StoredFile};

pub const DOC_GET_REF: &str = "https://docs.github.com/rest/git/refs#get-a-reference";
pub const DOC_CREATE_REF: &str = "https://docs.github.com/rest/git/refs#create-a-reference";
pub const DOC_GET_CONTENT: &str = "https://docs.github.com/rest/repos/contents#get-repository-content";
pub const DOC_PUT_CONTENT: &str = "https://docs.github.com/rest/repos/contents#create-or-update-file-contents";

fn ref_json(store: &Store, repo: usize, branch: &str, sha: &str) -> Value {
    let api = format!("{}/repos/{}", store.base_url, store.repos[repo].config.full_name());
    json!({
        "ref": format!("refs/heads/{branch}"),
        "node_id": format!("REF_{}", &sha[..12]),
        "url": format!("{api}/git/refs/heads/{branch}"),
        "object": {"sha": sha, "type": "commit", "url": format!("{api}/git/commits/{sha}")},
    })
}

/// `GET /repos/{owner}/{repo}/git/ref/heads/{branch}`
pub fn get_ref(store: &Store, repo: usize, branch: &str) -> Answer {
    match store.ref_sha(repo, branch) {
        Some(sha) => Answer::json(200, ref_json(store, repo, branch, &sha)),
        None => not_found(DOC_GET_REF),
    }
}

/// `POST /repos/{owner}/{repo}/git/refs` `{ref, sha}`: a branch at a known commit.
pub fn create_ref(store: &mut Store, repo: usize, body: &Value) -> Result<Answer, Answer> {
    let doc = DOC_CREATE_REF;
    let fields = body.as_object().ok_or_else(|| problems_parsing_json(doc))?;
    let text = |name: &str| match fields.get(name) {
        Some(Value::String(text)) => Ok(text.clone()),
        None => Err(invalid_request(&format!("\"{name}\" wasn't supplied."), doc)),
        Some(other) => Err(invalid_request(&format!("For 'properties/{name}', {other} is not a string."), doc)),
    };
    let (name, sha) = (text("ref")?, text("sha")?);
    let Some(branch) = name.strip_prefix("refs/heads/").filter(|b| !b.is_empty()) else {
        return Err(error(422, "Reference name must start with 'refs/' and have at least two slashes.", doc));
    };
    if store.ref_sha(repo, branch).is_some() {
        return Err(error(422, "Reference already exists", doc));
    }
    if !store.knows_commit(repo, &sha) {
        return Err(error(422, "Object does not exist", doc));
    }
    store.repos[repo].api_branches.insert(branch.to_owned(), sha.clone());
    Ok(Answer::json(201, ref_json(store, repo, branch, &sha)))
}

fn content_json(store: &Store, repo: usize, branch: &str, path: &str, file: &StoredFile) -> Value {
    let full_name = store.repos[repo].config.full_name();
    let api = format!("{}/repos/{full_name}", store.base_url);
    let html = format!("{}/{full_name}/blob/{branch}/{path}", store.base_url);
    let url = format!("{api}/contents/{path}?ref={branch}");
    let git = format!("{api}/git/blobs/{}", file.sha);
    json!({
        "name": path.rsplit('/').next().unwrap_or(path),
        "path": path,
        "sha": file.sha,
        "size": file.bytes.len(),
        "url": url,
        "html_url": html,
        "git_url": git,
        "download_url": format!("{}/raw/{full_name}/{branch}/{path}", store.base_url),
        "type": "file",
        "_links": {"self": url, "git": git, "html": html},
    })
}

/// `GET /repos/{owner}/{repo}/contents/{path}?ref=branch`: a file put through the API.
pub fn get(store: &Store, repo: usize, path: &str, query: &str) -> Answer {
    let branch = form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == "ref")
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| store.repos[repo].config.default_branch.clone());
    match store.repos[repo].files.get(&(branch.clone(), path.to_owned())) {
        Some(file) => {
            let mut value = content_json(store, repo, &branch, path, file);
            value["encoding"] = json!("base64");
            value["content"] = json!(file.base64.clone());
            Answer::json(200, value)
        }
        None => not_found(DOC_GET_CONTENT),
    }
}

/// `PUT /repos/{owner}/{repo}/contents/{path}` `{message, content, branch?, sha?}`: 201 a
/// new file, 200 a replaced one (its blob `sha` required, and current).
pub fn put(store: &mut Store, repo: usize, path: &str, body: &Value) -> Result<Answer, Answer> {
    use base64::Engine as _;
    let doc = DOC_PUT_CONTENT;
    let fields = body.as_object().ok_or_else(|| problems_parsing_json(doc))?;
    let text = |name: &str| match fields.get(name) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(invalid_request(&format!("For 'properties/{name}', {other} is not a string."), doc)),
    };
    let Some(message) = text("message")? else {
        return Err(invalid_request("\"message\" wasn't supplied.", doc));
    };
    let Some(content) = text("content")? else {
        return Err(invalid_request("\"content\" wasn't supplied.", doc));
    };
    let sha = text("sha")?;
    let branch = text("branch")?.unwrap_or_else(|| store.repos[repo].config.default_branch.clone());
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(content.replace(['\n', '\r'], ""))
        .map_err(|_| error(422, "content is not valid Base64", doc))?;
    let Some(parent) = store.ref_sha(repo, &branch) else {
        return Err(error(404, &format!("Branch {branch} not found"), doc));
    };
    let key = (branch.clone(), path.to_owned());
    let existing = store.repos[repo].files.get(&key).map(|f| f.sha.clone());
    match (&existing, &sha) {
        (Some(_), None) => return Err(invalid_request("\"sha\" wasn't supplied.", doc)),
        (Some(current), Some(given)) if current != given => {
            return Err(error(409, &format!("{path} does not match {given}"), doc));
        }
        _ => {}
    }
    let tick = store.tick();
    let file = StoredFile {
        sha: fake_sha(&format!("blob:{}", content)),
        base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
        bytes,
        message: message.clone(),
    };
    let commit = fake_sha(&format!("commit:{parent}:{path}:{tick}"));
    store.repos[repo].api_branches.insert(branch.clone(), commit.clone());
    let full_name = store.repos[repo].config.full_name();
    let api = format!("{}/repos/{full_name}", store.base_url);
    let who = json!({"name": store.login, "email": format!("{}@users.noreply.github.com", store.login), "date": now()});
    let answer = json!({
        "content": content_json(store, repo, &branch, path, &file),
        "commit": {
            "sha": commit,
            "node_id": format!("C_{}", &commit[..12]),
            "url": format!("{api}/git/commits/{commit}"),
            "html_url": format!("{}/{full_name}/commit/{commit}", store.base_url),
            "author": who,
            "committer": who,
            "message": message,
            "tree": {"url": format!("{api}/git/trees/{}", fake_sha(&format!("tree:{commit}"))), "sha": fake_sha(&format!("tree:{commit}"))},
            "parents": [{"url": format!("{api}/git/commits/{parent}"), "html_url": format!("{}/{full_name}/commit/{parent}", store.base_url), "sha": parent}],
            "verification": {"verified": false, "reason": "unsigned", "signature": null, "payload": null, "verified_at": null},
        },
    });
    store.repos[repo].files.insert(key, file);
    Ok(Answer::json(if existing.is_some() { 200 } else { 201 }, answer))
}
