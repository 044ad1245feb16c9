//! The signed-in user (`GET /user`), a repository with the token's `permissions`
//! (`GET /repos/{owner}/{repo}`, what push mode `auto` reads), and forking.

use serde_json::Value;

use crate::config::{Permissions, RepoConfig};
use crate::reply::{invalid_request, problems_parsing_json, Answer, DOC_CREATE_FORK};
use crate::store::Store;

/// `GET /user`
pub fn user(store: &Store) -> Answer {
    Answer::json(200, store.user_json(&store.login))
}

/// `GET /repos/{owner}/{repo}`
pub fn get(store: &Store, repo: usize) -> Answer {
    Answer::json(200, store.repo_json(repo))
}

/// `POST /repos/{owner}/{repo}/forks` body `{organization?, name?, default_branch_only?}`:
/// 202 with the fork, which the token administers; an existing fork is answered as is.
pub fn fork(store: &mut Store, repo: usize, body: &Value) -> Result<Answer, Answer> {
    let doc = DOC_CREATE_FORK;
    let empty = serde_json::Map::new();
    let fields = match body {
        Value::Null => &empty,
        Value::Object(fields) => fields,
        _ => return Err(problems_parsing_json(doc)),
    };
    let text = |name: &str| match fields.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(invalid_request(&format!("For 'properties/{name}', {other} is not a string."), doc)),
    };
    let owner = text("organization")?.unwrap_or_else(|| store.login.clone());
    let source = &store.repos[repo].config;
    let name = text("name")?.unwrap_or_else(|| source.name.clone());
    let index = match store.find(&owner, &name) {
        Some(index) => index,
        None => {
            let config = RepoConfig::new(owner, name)
                .default_branch(source.default_branch.clone())
                .private(source.private)
                .permissions(Permissions::ADMIN)
                .fork_of(source.full_name());
            store.add_repo(config)
        }
    };
    Ok(Answer::json(202, store.repo_json(index)))
}
