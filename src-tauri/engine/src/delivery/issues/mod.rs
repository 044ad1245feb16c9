//! Sessions from GitHub issues (ARCHITECTURE.md: Delivery): the delivery repository's
//! open issues for the picker, and one issue read as a new session's brief. Both go through
//! the git-pr target's own settings (API root, repository from the setting or the remote,
//! the sealed token, sent only in `Authorization`). `reference` reads which issue is meant,
//! `brief` words it. Every refusal comes before anything is made, and no message carries
//! the token.

mod brief;
mod reference;

use serde_json::Value;

use crate::delivery::git_pr::github::{Api, Failure};
use crate::workspace::{Context, Workspace};
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::{DeliverySettingsView, EmptyArgs, GetIssueArgs, IssueLink, IssueSummary};
use reference::IssueRef;

/// How many pages of 100 open issues the picker reads.
const LIST_PAGES: usize = 3;
/// How many pages of 100 comments a brief reads (more than its size cap can hold).
const COMMENT_PAGES: usize = 2;

/// An issue read for a new session.
#[derive(Debug, Clone)]
pub(crate) struct Fetched {
    pub link: IssueLink,
    pub title: String,
    /// The brief: the operator's text, then the issue and its comments.
    pub brief: String,
}

/// The delivery settings and the repository a bare number belongs to.
struct Delivery {
    settings: DeliverySettingsView,
    repository: Option<(String, String)>,
}

async fn delivery(ws: &Workspace) -> Result<Delivery> {
    let settings = crate::settings::delivery(ws).await?;
    let remote_url = ws
        .git
        .as_ref()
        .and_then(|git| git2::Repository::open(&git.workdir).ok())
        .and_then(|repo| repo.find_remote(&settings.remote).ok().and_then(|r| r.url().map(str::to_string)))
        .unwrap_or_default();
    let repository = crate::delivery::git_pr::owner_repo(settings.repository.as_deref(), &remote_url);
    Ok(Delivery { settings, repository })
}

/// The API for `owner/repo` with the delivery token; TARGET_UNAVAILABLE without one.
async fn api(ws: &Workspace, settings: &DeliverySettingsView, owner: &str, repo: &str) -> Result<Api> {
    let token = crate::settings::delivery_token(ws).await?.filter(|t| !t.trim().is_empty()).ok_or_else(|| {
        ApiError::new(
            ErrorCode::TargetUnavailable,
            format!(
                "no GitHub token is set for {} in the delivery settings: Kiln reads issues with it",
                settings.api_url
            ),
        )
    })?;
    Api::new(&settings.api_url, &token, owner, repo)
        .map_err(|e| ApiError::new(ErrorCode::TargetUnavailable, kiln_runtime::redact::redact_owned(e)))
}

/// A failed call, worded: GitHub's answer is redacted (it never should hold the token).
fn unavailable(what: &str, failure: Failure) -> ApiError {
    let why = match failure.status {
        Some(401) => "GitHub refused the delivery token (check it in the delivery settings)".to_string(),
        _ => failure.message,
    };
    ApiError::new(ErrorCode::TargetUnavailable, kiln_runtime::redact::redact_owned(format!("{what}: {why}")))
}

/// The delivery repository's open issues, newest first, pull requests left out.
pub(crate) async fn list(cx: &Context, _: EmptyArgs) -> Result<Vec<IssueSummary>> {
    let ws = &cx.ws;
    let Delivery { settings, repository } = delivery(ws).await?;
    let (owner, repo) = repository.ok_or_else(|| {
        ApiError::new(
            ErrorCode::TargetUnavailable,
            "set the repository (owner/name) in the delivery settings: it cannot be read from the remote's address",
        )
    })?;
    let api = api(ws, &settings, &owner, &repo).await?;
    let (items, _) = api
        .get_all("/issues", "state=open&per_page=100", LIST_PAGES)
        .await
        .map_err(|f| unavailable(&format!("the issues of {owner}/{repo} could not be read"), f))?;
    // GitHub lists pull requests among the issues, each marked by a `pull_request` key.
    Ok(items.iter().filter(|item| item.get("pull_request").is_none()).map(summary).collect())
}

fn summary(item: &Value) -> IssueSummary {
    IssueSummary {
        number: item.get("number").and_then(Value::as_i64).unwrap_or_default(),
        title: brief::text(item, "title"),
        author: brief::login(item),
        labels: brief::labels(item),
        updated_at: brief::text(item, "updated_at"),
        url: brief::text(item, "html_url"),
    }
}

/// One issue, as [`fetch`] reads it (its title shown before a session is created).
pub(crate) async fn get(cx: &Context, args: GetIssueArgs) -> Result<IssueSummary> {
    let (ws, reference) = (&cx.ws, args.issue.as_str());
    let read = read(ws, reference).await?;
    Ok(summary(&read.issue))
}

/// An issue GitHub answered, with the API that read it.
struct Read {
    settings: DeliverySettingsView,
    issue_ref: IssueRef,
    api: Api,
    issue: Value,
}

/// Reads the issue `reference` names; refuses a pull request.
async fn read(ws: &Workspace, reference: &str) -> Result<Read> {
    let Delivery { settings, repository } = delivery(ws).await?;
    let issue_ref = reference::parse(reference, &settings.api_url, repository.as_ref())?;
    let api = api(ws, &settings, &issue_ref.owner, &issue_ref.repo).await?;
    let issue = api.get(&format!("/issues/{}", issue_ref.number), None).await.map_err(|f| match f.status {
        // GitHub answers 404 for an issue the token may not see, too.
        Some(404) | Some(410) => ApiError::new(
            ErrorCode::IssueNotFound,
            format!(
                "there is no issue #{} in {} (or the token may not see it)",
                issue_ref.number,
                issue_ref.full_name()
            ),
        ),
        _ => unavailable(&format!("the issue {}#{} could not be read", issue_ref.full_name(), issue_ref.number), f),
    })?;
    if issue.get("pull_request").is_some() {
        return Err(ApiError::invalid(format!(
            "#{} of {} is a pull request, not an issue: start from an issue",
            issue_ref.number,
            issue_ref.full_name()
        )));
    }
    Ok(Read { settings, issue_ref, api, issue })
}

/// Reads the issue `reference` names (an address or a number of the delivery repository)
/// with its comments, and words the brief: `typed` first, then the issue.
pub(crate) async fn fetch(ws: &Workspace, reference: &str, typed: &str) -> Result<Fetched> {
    let Read { settings, issue_ref, api, issue } = read(ws, reference).await?;
    let name = format!("{}#{}", issue_ref.full_name(), issue_ref.number);
    let (comments, unread) = api
        .get_all(&format!("/issues/{}/comments", issue_ref.number), "per_page=100", COMMENT_PAGES)
        .await
        .map_err(|f| unavailable(&format!("the comments of {name} could not be read"), f))?;
    let mut comments: Vec<brief::Comment> = comments.iter().map(brief::Comment::from_json).collect();
    // GitHub answers oldest first; kept so whatever the answer's order (ISO dates sort as text).
    comments.sort_by(|a, b| a.at.cmp(&b.at));
    let url = match brief::text(&issue, "html_url") {
        url if url.starts_with("https://") || url.starts_with("http://") => url,
        _ => format!(
            "{}/{}/issues/{}",
            crate::delivery::git_pr::web_root(&settings.api_url),
            issue_ref.full_name(),
            issue_ref.number
        ),
    };
    let brief = brief::compose(typed, &name, &url, &issue, &comments, unread);
    Ok(Fetched {
        link: IssueLink { url, number: issue_ref.number as i64, repo: issue_ref.full_name() },
        title: brief::text(&issue, "title").trim().to_string(),
        brief: kiln_runtime::redact::redact_owned(brief),
    })
}
