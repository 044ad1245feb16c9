//! Opening or updating the pull request: through GitHub's REST API when a token may
//! create one, else `gh` when it is signed in, else a compare link.

use std::path::Path;

use super::context::Ctx;
use super::github;
use super::message::{compare_url, pr_body};
use kiln_types::error::{ErrorCode, Result};
use kiln_types::PullRequestView;

/// The push-access step: `fork` is refused; `auto` with a token asks the API whether it
/// may push; `direct`, or no token, push with what git has.
pub(super) async fn access(ctx: &Ctx<'_>) -> Result<Option<github::Api>> {
    let input = ctx.input;
    let s = &input.settings;
    let steps = &ctx.steps;
    steps.start("access", "Check the repository and push access", None);
    if ctx.owner.is_empty() {
        return Err(steps.stop(
            "access",
            ErrorCode::TargetUnavailable,
            "set the repository (owner/name) in the delivery settings: it cannot be read from the remote's address",
            "",
        ));
    }
    let api = match input.token.as_deref().filter(|t| !t.is_empty()) {
        Some(token) => match github::Api::new(&s.api_url, token, &ctx.owner, &ctx.repo) {
            Ok(api) => Some(api),
            Err(e) => return Err(steps.stop("access", ErrorCode::InvalidInput, &e, "")),
        },
        None => None,
    };
    match s.push_mode.as_str() {
        "fork" => Err(steps.stop(
            "access",
            ErrorCode::TargetUnavailable,
            "fork mode needs the operator's confirmation to create a fork, which Kiln does not offer yet: use push mode `auto` or `direct`",
            "",
        )),
        "direct" => {
            steps.pass("access", &format!("push mode direct: pushing to {}/{} through '{}'", ctx.owner, ctx.repo, s.remote));
            Ok(api)
        }
        "auto" => match &api {
            None => {
                steps.pass("access", &format!("no token: pushing with your own git credentials for '{}'; no API check", s.remote));
                Ok(None)
            }
            Some(client) => match client.can_push().await {
                Ok(true) => {
                    steps.pass("access", &format!("the token may push to {}/{}", ctx.owner, ctx.repo));
                    Ok(api)
                }
                Ok(false) => Err(steps.stop(
                    "access",
                    ErrorCode::TargetUnavailable,
                    &format!(
                        "the token may not push to {}/{}: pushing to a fork (push mode `fork`) needs the operator's confirmation, which Kiln does not offer yet",
                        ctx.owner, ctx.repo
                    ),
                    "",
                )),
                Err(e) => Err(steps.stop("access", ErrorCode::TargetUnavailable, &format!("cannot read {}/{} through the API", ctx.owner, ctx.repo), &e)),
            },
        },
        other => Err(steps.stop("access", ErrorCode::InvalidInput, &format!("unknown push mode '{other}'"), "")),
    }
}

/// Opens or updates the pull request: API with the token, else gh, else a compare link.
/// On failure, `(message, output)`.
pub(super) async fn pull_request(
    ctx: &Ctx<'_>,
    api: Option<&github::Api>,
    subject: &str,
) -> std::result::Result<(PullRequestView, String), (String, String)> {
    let input = ctx.input;
    let s = &input.settings;
    let title = input.body.title.clone().filter(|t| !t.trim().is_empty()).unwrap_or_else(|| subject.to_string());
    let (screenshots, shown) = super::evidence::section(ctx, api).await;
    let body = pr_body(input, &format!("{}/{}", ctx.owner, ctx.repo), screenshots.as_deref());
    let view = |url: String, number: Option<u64>, via: &str, created: bool| PullRequestView {
        url,
        number,
        branch: ctx.branch.clone(),
        via: via.into(),
        created,
    };

    if let Some(api) = api {
        let mut out: Vec<String> = [shown].into_iter().filter(|l| !l.is_empty()).collect();
        let existing = api
            .find_open(&ctx.branch, &s.base)
            .await
            .map_err(|e| (format!("the pull request could not be looked up: {e}"), String::new()))?;
        let (pull, created) = match existing.and_then(|p| p.number.map(|n| (n, p))) {
            Some((number, _)) => {
                let pull = api
                    .update(number, &title, &body)
                    .await
                    .map_err(|e| (format!("the pull request #{number} could not be updated: {e}"), String::new()))?;
                out.push(format!("updated the open pull request #{number}: {}", pull.url));
                (pull, false)
            }
            None => {
                let pull = api
                    .create(&ctx.branch, &s.base, &title, &body)
                    .await
                    .map_err(|e| (format!("the pull request could not be created: {e}"), String::new()))?;
                out.push(format!("created pull request #{}: {}", pull.number.unwrap_or(0), pull.url));
                (pull, true)
            }
        };
        if !s.reviewers.is_empty() {
            if let Some(number) = pull.number {
                match api.request_reviewers(number, &s.reviewers).await {
                    Ok(()) => out.push(format!("requested reviews from {}", s.reviewers.join(", "))),
                    // The pull request stands; a reviewer GitHub refuses is worth saying, not undoing.
                    Err(e) => out.push(format!("warning: reviewers could not be requested: {e}")),
                }
            }
        }
        return Ok((view(pull.url, pull.number, "api", created), out.join("\n")));
    }

    if let Some(gh) = github::find_gh(input.gh_program.as_deref()) {
        let dir = &input.host_repo;
        let repo = format!("{}/{}", ctx.owner, ctx.repo);
        if let Ok((true, _, _)) = github::gh(&gh, dir, &["auth", "status"], None).await {
            return gh_pull_request(ctx, &gh, &repo, &title, &body)
                .await
                .map(|(url, number, created, out)| (view(url, number, "gh", created), out));
        }
    }

    let url = compare_url(&s.api_url, &ctx.owner, &ctx.repo, &s.base, &ctx.branch);
    let out = format!("no token and no signed-in gh: open the pull request from the compare page\n{url}");
    Ok((view(url, None, "compare", true), out))
}

pub(super) async fn gh_pull_request(
    ctx: &Ctx<'_>,
    gh: &Path,
    repo: &str,
    title: &str,
    body: &str,
) -> std::result::Result<(String, Option<u64>, bool, String), (String, String)> {
    let s = &ctx.input.settings;
    let dir = &ctx.input.host_repo;
    let fail = |what: &str, out: String| (format!("gh could not {what}"), out);
    let (ok, stdout, both) = github::gh(
        gh,
        dir,
        &["pr", "list", "--repo", repo, "--head", &ctx.branch, "--state", "open", "--json", "number,url"],
        None,
    )
    .await
    .map_err(|e| fail("list pull requests", e))?;
    if !ok {
        return Err(fail("list pull requests", both));
    }
    let listed: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap_or(serde_json::Value::Null);
    if let Some(first) = listed.as_array().and_then(|a| a.first()) {
        let number = first.get("number").and_then(|n| n.as_u64());
        let url = first.get("url").and_then(|u| u.as_str()).unwrap_or_default().to_string();
        let n = number.map(|n| n.to_string()).unwrap_or_default();
        let (ok, _, both) =
            github::gh(gh, dir, &["pr", "edit", &n, "--repo", repo, "--title", title, "--body-file", "-"], Some(body))
                .await
                .map_err(|e| fail("update the pull request", e))?;
        if !ok {
            return Err(fail("update the pull request", both));
        }
        return Ok((url.clone(), number, false, format!("updated the open pull request #{n} with gh: {url}")));
    }
    let mut args = vec![
        "pr",
        "create",
        "--repo",
        repo,
        "--head",
        &ctx.branch,
        "--base",
        &s.base,
        "--title",
        title,
        "--body-file",
        "-",
    ];
    let reviewers = s.reviewers.join(",");
    if !reviewers.is_empty() {
        args.extend(["--reviewer", &reviewers]);
    }
    let (ok, stdout, both) =
        github::gh(gh, dir, &args, Some(body)).await.map_err(|e| fail("create the pull request", e))?;
    if !ok {
        return Err(fail("create the pull request", both));
    }
    let url = stdout.lines().rev().find(|l| l.trim().starts_with("http")).unwrap_or_default().trim().to_string();
    let number = url.rsplit('/').next().and_then(|n| n.parse().ok());
    Ok((url.clone(), number, true, format!("created the pull request with gh: {url}\n{both}")))
}
