//! The work in the delivery worktree: the session's files copied in, a configured
//! command run there (scoped like gates), the lease a push is made under, and putting
//! back what a failed run changed (a pushed branch, local refs, the worktree).

use std::collections::BTreeSet;
use std::path::Path;

use super::context::{Ctx, Undo};
use super::message::shown;
use super::SESSION_TRAILER;
use crate::delivery::git::{put_back_ref, Git};
use kiln_runtime::process;
use kiln_types::error::{ApiError, ErrorCode, Result};

/// The paths `git status` lists in the worktree (to tell what `enable` changed).
pub(super) async fn status_paths(git: &Git) -> BTreeSet<String> {
    match git.status_porcelain().await {
        Ok((entries, _)) => entries.into_iter().map(|(code, path)| format!("{code}\0{path}")).collect(),
        Err(_) => BTreeSet::new(),
    }
}

pub(super) fn copy_files(ctx: &Ctx<'_>) -> Result<String> {
    let root = ctx.wt_workspace();
    let mut lines = Vec::new();
    for (rel, source) in &ctx.input.files {
        // As named, with no link followed on the way: the base branch may hold a link to a
        // directory where the session has a real one, and writing through it would land
        // the file wherever the link leads. A link in the file's own place is replaced or
        // removed itself, never what it points to.
        let dest = kiln_runtime::paths::confine_as_named(&root, rel)?;
        match source {
            Some(source) => {
                let meta = std::fs::symlink_metadata(source)
                    .map_err(|e| ApiError::invalid(format!("{rel}: the session's file cannot be read: {e}")))?;
                if !meta.is_file() {
                    return Err(ApiError::new(
                        ErrorCode::PathNotAllowed,
                        format!("{rel}: the session's copy is not a regular file"),
                    ));
                }
                let existed = dest.symlink_metadata().is_ok();
                if let Some(parent) = dest.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| ApiError::internal(&format!("creating the directory of {rel}"), e))?;
                }
                if dest.symlink_metadata().map(|m| m.is_symlink()).unwrap_or(false) {
                    std::fs::remove_file(&dest)
                        .map_err(|e| ApiError::internal(&format!("replacing the link {rel}"), e))?;
                }
                std::fs::copy(source, &dest).map_err(|e| ApiError::internal(&format!("copying {rel}"), e))?;
                lines.push(format!("{} {rel}", if existed { "updated" } else { "added" }));
            }
            None => match dest.symlink_metadata() {
                Ok(m) if m.is_dir() => {
                    return Err(ApiError::new(
                        ErrorCode::PathNotAllowed,
                        format!("{rel} is a directory in the base branch, not a file"),
                    ))
                }
                Ok(_) => {
                    std::fs::remove_file(&dest).map_err(|e| ApiError::internal(&format!("removing {rel}"), e))?;
                    lines.push(format!("removed {rel}"));
                }
                Err(_) => lines.push(format!("{rel} is already absent from the base branch")),
            },
        }
    }
    if lines.is_empty() {
        lines.push("no files to land".into());
    }
    Ok(lines.join("\n"))
}

/// The scope of a configured command in the delivery worktree: it runs the delivered
/// code, so like gates (`kiln_runtime::process::project_scope`), writing only to the worktree, with the
/// session's cleared environment and home and the worktree's binaries first on PATH.
pub(super) fn command_scope(ctx: &Ctx<'_>, dir: &Path) -> std::io::Result<kiln_runtime::sandbox::Scope> {
    let writable = [ctx.worktree.as_path()];
    process::project_scope(&ctx.input.session_dir, &writable, &[dir], &[], &ctx.input.environment)
}

pub(super) async fn command_step(
    ctx: &Ctx<'_>,
    id: &str,
    title: &str,
    module: Option<&str>,
    command: Option<&str>,
) -> Result<()> {
    let steps = &ctx.steps;
    steps.start(id, title, module);
    let Some(command) = command.filter(|c| !c.trim().is_empty()) else {
        steps.skip(id, &format!("no {} command is configured", id.split(':').next().unwrap_or(id)));
        return Ok(());
    };
    let dir = ctx.wt_workspace();
    let ran = match command_scope(ctx, &dir) {
        Ok(scope) => process::run_scoped(command, &dir, &scope, ctx.input.command_timeout, |_| {}).await,
        Err(e) => Err(e),
    };
    let outcome = match ran {
        Ok(outcome) => outcome,
        Err(e) => {
            return Err(steps.stop(id, ErrorCode::DeliveryBlocked, &format!("`{command}` could not start: {e}"), ""))
        }
    };
    let mut text = format!("$ {command}\n{}", outcome.head);
    if !outcome.tail.is_empty() {
        text.push_str(&format!("\n[… output cut …]\n{}", outcome.tail));
    }
    if outcome.passed() {
        steps.pass(id, &text);
        return Ok(());
    }
    let why = if outcome.timed_out {
        format!("`{command}` did not finish within {} s", ctx.input.command_timeout.as_secs())
    } else {
        format!(
            "`{command}` failed (exit {})",
            outcome.exit_code.map(|c| c.to_string()).unwrap_or_else(|| "by a signal".into())
        )
    };
    Err(steps.stop(id, ErrorCode::DeliveryBlocked, &format!("{title}: {why}"), &text))
}

/// What the push may replace: `(None)` when the branch must not exist, or its current
/// SHA when its tip is this session's (a second delivery). A branch someone else made is
/// `BRANCH_MOVED`, with the push step failed.
pub(super) async fn lease(ctx: &Ctx<'_>) -> Result<(Option<String>, Vec<String>)> {
    let s = &ctx.input.settings;
    let steps = &ctx.steps;
    let host = ctx.host();
    let (current, out) = match host.remote_branch_sha(&s.remote, &ctx.branch).await {
        Ok(found) => found,
        Err(e) => return Err(steps.git_stop("push", e)),
    };
    let mut lines = vec![shown(&out)];
    let Some(sha) = current else {
        lines.push(format!("{} does not exist on {}: creating it", ctx.branch, s.remote));
        return Ok((None, lines));
    };
    match host.fetch(&s.remote, &ctx.branch).await {
        Ok(out) => lines.push(shown(&out)),
        Err(e) => return Err(steps.git_stop("push", e)),
    }
    let trailer = format!("{SESSION_TRAILER}: {}", ctx.input.session_id);
    let ours = git2::Repository::open(&ctx.input.host_repo)
        .ok()
        .and_then(|repo| {
            let oid = git2::Oid::from_str(&sha).ok()?;
            let commit = repo.find_commit(oid).ok()?;
            let message = commit.message().unwrap_or_default().to_string();
            Some(message.lines().any(|l| l.trim() == trailer))
        })
        .unwrap_or(false);
    if !ours {
        let message = format!(
            "the branch '{}' already exists on '{}' at {} and was not made by this session (its tip has no `{trailer}`): nothing was pushed, so that work is kept",
            ctx.branch,
            s.remote,
            &sha[..sha.len().min(12)]
        );
        return Err(steps.stop("push", ErrorCode::BranchMoved, &message, &lines.join("\n")));
    }
    lines.push(format!(
        "{} is this session's earlier delivery ({}): replacing it only if it is still there",
        ctx.branch,
        &sha[..sha.len().min(12)]
    ));
    Ok((Some(sha), lines))
}

/// Puts the remote branch back after a pull request could not be made: deleted when this
/// run created it, else back to the session's earlier delivery; both with a lease on what
/// this run pushed, so nobody else's push is undone.
pub(super) async fn unpush(ctx: &Ctx<'_>, previous: Option<&str>, pushed: &str) -> String {
    let s = &ctx.input.settings;
    let host = ctx.host();
    match previous {
        None => match host.delete_remote_branch(&s.remote, &ctx.branch, pushed).await {
            Ok(out) => format!("removed the branch {} this run pushed to {}\n{}", ctx.branch, s.remote, shown(&out)),
            Err(e) => format!(
                "the branch {} this run pushed could not be removed from {}: {}",
                ctx.branch, s.remote, e.message
            ),
        },
        Some(old) => {
            let restored = git2::Repository::open(&ctx.input.host_repo).and_then(|repo| {
                let oid = git2::Oid::from_str(old)?;
                repo.reference(&format!("refs/heads/{}", ctx.branch), oid, true, "kiln: put back the earlier delivery")
                    .map(|_| ())
            });
            if let Err(e) = restored {
                return format!("the earlier delivery of {} could not be put back locally: {e}", ctx.branch);
            }
            match host.push(&s.remote, &ctx.branch, &ctx.branch, Some(pushed)).await {
                Ok(out) => {
                    format!("put {} on {} back to the earlier delivery {old}\n{}", ctx.branch, s.remote, shown(&out))
                }
                Err(e) => format!("{} on {} could not be put back to {old}: {}", ctx.branch, s.remote, e.message),
            }
        }
    }
}

/// The last step: remove the worktree always; on failure, the local branch (or put it
/// back to an earlier delivery) and a remote-tracking ref this run made.
pub(super) async fn cleanup(ctx: &Ctx<'_>, undo: &Undo, succeeded: bool) {
    let steps = &ctx.steps;
    let title = if succeeded { "Remove the worktree" } else { "Remove the worktree and the branch" };
    steps.start("cleanup", title, None);
    let host = ctx.host();
    let mut lines = Vec::new();
    let mut ok = true;
    match host.worktree_remove(&ctx.worktree).await {
        Ok(out) => lines.push(shown(&out)),
        Err(e) => {
            ok = false;
            lines.push(format!("the worktree {} could not be removed: {}", ctx.worktree.display(), e.message));
        }
    }
    // An empty `.kiln/worktrees` left behind is no worktree; leave the directory alone.
    if !succeeded && undo.branch_touched {
        let local = format!("refs/heads/{}", ctx.branch);
        let tracking = format!("refs/remotes/{}/{}", ctx.input.settings.remote, ctx.branch);
        for (name, before) in [(&local, &undo.local_before), (&tracking, &undo.tracking_before)] {
            match put_back_ref(&ctx.input.host_repo, name, before.as_deref()) {
                Ok(Some(line)) => lines.push(line),
                Ok(None) => {}
                Err(e) => {
                    ok = false;
                    lines.push(format!("{name} could not be put back: {e}"));
                }
            }
        }
    }
    let text = lines.join("\n");
    if ok {
        steps.pass("cleanup", &text);
    } else {
        steps.fail("cleanup", &text);
    }
}
