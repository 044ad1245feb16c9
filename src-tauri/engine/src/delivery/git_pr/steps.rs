//! The git-pr run in order: prepare (the branch, the base, the token's origin), then each
//! step reported through a [`StepSink`] with redacted output; the worktree always removed,
//! and on failure the branch it made removed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::context::{Ctx, Steps, Undo};
use super::landing::{cleanup, command_step, copy_files, lease, status_paths, unpush};
use super::message::{branch_name, commit_message, commit_style, commit_subject_for, shown};
use super::policy::{check_branch_part, guardrail, owner_repo, token_origin_for};
use super::pull_request::{access, pull_request};
use super::GitPrInput;
use crate::delivery::git::{recent_subjects, Git, Redactor};
use crate::delivery::StepSink;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::PullRequestView;

/// Runs the git-pr delivery: each step through `sink`, the worktree always removed, and
/// on failure the branch it made removed (locally, and on the remote when this run pushed
/// it and the pull request could not be made).
pub async fn deliver(input: GitPrInput, sink: &dyn StepSink) -> Result<PullRequestView> {
    let mut redactor = Redactor::new();
    if let Some(token) = input.token.as_deref().filter(|t| !t.is_empty()) {
        redactor.add(token);
    }
    let steps = Steps { sink, redactor };
    let ctx = prepare(&input, steps)?;
    let mut undo = Undo::default();
    let result = run(&ctx, &mut undo).await;
    cleanup(&ctx, &undo, result.is_ok()).await;
    result
}

/// Checks the input and works out the names; nothing runs.
pub(super) fn prepare<'a>(input: &'a GitPrInput, steps: Steps<'a>) -> Result<Ctx<'a>> {
    let s = &input.settings;
    // A direct session may have changed only files outside every module.
    if input.modules.is_empty() && input.root_files.is_empty() {
        return Err(ApiError::invalid("a delivery needs at least one module or changed file"));
    }
    for (what, name) in [("remote", &s.remote), ("base branch", &s.base), ("branch prefix", &s.branch_prefix)] {
        check_branch_part(name)
            .map_err(|why| ApiError::invalid(format!("the {what} '{name}' is not usable: {why}")))?;
    }
    let session_ok =
        !input.session_id.is_empty() && input.session_id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if !session_ok {
        return Err(ApiError::new(ErrorCode::InvalidSessionId, "the session id is not usable"));
    }
    let host_repo =
        input.host_repo.canonicalize().map_err(|e| ApiError::invalid(format!("{}: {e}", input.host_repo.display())))?;
    let workspace_rel = if input.workspace_dir.is_absolute() {
        let real = input.workspace_dir.canonicalize().unwrap_or_else(|_| input.workspace_dir.clone());
        real.strip_prefix(&host_repo).map(Path::to_path_buf).map_err(|_| {
            ApiError::invalid(format!(
                "the workspace {} is not inside {}",
                input.workspace_dir.display(),
                host_repo.display()
            ))
        })?
    } else if input.workspace_dir.as_os_str().is_empty() || input.workspace_dir == Path::new(".") {
        PathBuf::new()
    } else {
        kiln_runtime::paths::relative(&input.workspace_dir.to_string_lossy())?
    };
    let worktree = if input.worktree_dir.is_absolute() {
        input.worktree_dir.clone()
    } else {
        input.host_repo.join(&input.worktree_dir)
    };
    let remote_url = git2::Repository::open(&input.host_repo)
        .ok()
        .and_then(|r| r.find_remote(&s.remote).ok().and_then(|remote| remote.url().map(String::from)))
        .unwrap_or_default();
    let (owner, repo) = owner_repo(s.repository.as_deref(), &remote_url).unwrap_or_default();
    let token_for_git =
        (input.token.is_some() && token_origin_for(&s.api_url, &remote_url)).then_some(remote_url.clone());
    if let (Some(token), Some(url)) = (&input.token, &token_for_git) {
        Git::new(&input.host_repo).with_token(token, url).map_err(|e| ApiError::invalid(e.message))?;
    }
    Ok(Ctx {
        branch: branch_name(&s.branch_prefix, &input.modules, &input.session_id),
        base_ref: format!("{}/{}", s.remote, s.base),
        input,
        steps,
        worktree,
        workspace_rel,
        owner,
        repo,
        token_for_git,
    })
}

pub(super) async fn run(ctx: &Ctx<'_>, undo: &mut Undo) -> Result<PullRequestView> {
    let input = ctx.input;
    let s = &input.settings;
    let steps = &ctx.steps;
    let api = access(ctx).await?;

    // fetch
    steps.start("fetch", &format!("Fetch {} {}", s.remote, s.base), None);
    match ctx.host().fetch(&s.remote, &s.base).await {
        Ok(out) => steps.pass("fetch", &shown(&out)),
        Err(e) => return Err(steps.git_stop("fetch", e)),
    }

    // worktree
    steps.start("worktree", &format!("Create a worktree of {} on {}", ctx.base_ref, ctx.branch), None);
    let host = ctx.host();
    let mut output = Vec::new();
    match host.worktree_remove(&ctx.worktree).await {
        Ok(out) => {
            if !out.output.trim().is_empty() {
                output.push(format!("cleaned what an earlier run left:\n{}", shown(&out)));
            }
        }
        Err(e) => return Err(steps.git_stop("worktree", e)),
    }
    undo.local_before = host.rev_parse(&format!("refs/heads/{}", ctx.branch)).await.ok().flatten();
    undo.tracking_before = host.rev_parse(&format!("refs/remotes/{}/{}", s.remote, ctx.branch)).await.ok().flatten();
    undo.branch_touched = true;
    match host.worktree_add(&ctx.worktree, &ctx.base_ref, &ctx.branch).await {
        Ok(out) => output.push(shown(&out)),
        Err(e) => return Err(steps.git_stop("worktree", e)),
    }
    steps.pass("worktree", &output.join("\n"));

    // copy and removals
    steps.start("copy", "Copy the session's files and apply its removals", None);
    match copy_files(ctx) {
        Ok(out) => match super::evidence::write_committed(ctx) {
            Ok(shots) if shots.is_empty() => steps.pass("copy", &out),
            Ok(shots) => steps.pass("copy", &format!("{out}\n{shots}")),
            Err(e) => return Err(steps.stop("copy", ErrorCode::Internal, &e, "")),
        },
        Err(e) => return Err(steps.stop("copy", e.code, &e.message, "")),
    }

    // install
    command_step(ctx, "install", "Install dependencies", None, input.install.as_deref()).await?;

    // enable (new modules)
    let wt = ctx.wt();
    let before_enable = status_paths(&wt).await;
    let mut any_enable = false;
    for module in &input.modules {
        if module.is_new && module.enable.is_some() {
            any_enable = true;
            let id = format!("enable:{}", module.id);
            command_step(ctx, &id, &format!("Enable {}", module.id), Some(&module.id), module.enable.as_deref())
                .await?;
        }
    }
    if !any_enable {
        steps.start("enable", "Enable new modules", None);
        steps.skip("enable", "no new module to enable");
    }
    let enabled_paths: BTreeSet<String> = if any_enable {
        status_paths(&wt).await.difference(&before_enable).cloned().collect()
    } else {
        BTreeSet::new()
    };

    // typecheck
    command_step(ctx, "typecheck", "Typecheck", None, input.typecheck.as_deref()).await?;

    // guardrail
    steps.start(
        "guardrail",
        "Check what changed: the session's modules, lockfiles and root files only, within the limits",
        None,
    );
    let (changed, _) = match wt.changed_paths(&ctx.base_ref).await {
        Ok(found) => found,
        Err(e) => return Err(steps.git_stop("guardrail", e)),
    };
    let verdict = guardrail(ctx, &changed, &enabled_paths);
    match verdict {
        Ok(report) => steps.pass("guardrail", &report),
        Err((message, report)) => return Err(steps.stop("guardrail", ErrorCode::DeliveryBlocked, &message, &report)),
    }

    // commit: the subject in the base branch's own style, as `git log` shows it
    let subject = commit_subject_for(
        input,
        &commit_style(&recent_subjects(&input.host_repo, &format!("refs/remotes/{}", ctx.base_ref))),
    );
    let message = commit_message(input, &subject);
    steps.start("commit", &format!("Commit \"{subject}\""), None);
    let commit_sha = match wt.commit(&message, None).await {
        Ok((sha, out)) => {
            steps.pass("commit", &format!("{}\ncommitted {sha}", shown(&out)));
            sha
        }
        Err(e) => return Err(steps.git_stop("commit", e)),
    };

    // push
    steps.start("push", &format!("Push {} to {}", ctx.branch, s.remote), None);
    let (expected, mut push_out) = match lease(ctx).await {
        Ok(found) => found,
        Err(e) => return Err(e),
    };
    match host.push(&s.remote, &ctx.branch, &ctx.branch, expected.as_deref()).await {
        Ok(out) => {
            push_out.push(shown(&out));
            steps.pass("push", &push_out.join("\n"));
        }
        Err(e) => return Err(steps.git_stop("push", e)),
    }

    // pull request
    steps.start("pull-request", "Open the pull request", None);
    match pull_request(ctx, api.as_ref(), &subject).await {
        Ok((view, out)) => {
            steps.pass("pull-request", &out);
            Ok(view)
        }
        Err((message, out)) => {
            let undone = unpush(ctx, expected.as_deref(), &commit_sha).await;
            Err(steps.stop("pull-request", ErrorCode::TargetUnavailable, &message, &format!("{out}\n{undone}")))
        }
    }
}
