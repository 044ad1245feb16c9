//! The `git-pr` target behind the `Target` interface: whether it can be used here (a
//! git repository with the configured remote, and `targets` naming it), the branch it
//! pushes, and its steps. The steps after the gates (fetch, worktree, branch, copy,
//! install, enable, typecheck, guardrail, commit, push, pull request) belong to the
//! git-pr implementation, which reports them through the same `StepSink`.

use std::sync::Arc;

use super::plan::{ModuleChanges, StepSpec};
use super::{Applied, Context, StepSink, Target, TargetPlan};
use crate::api::types::*;
use crate::error::{ApiError, ErrorCode, Result};
use crate::ids::SessionId;
use crate::workspace::Workspace;

pub struct GitPrTarget;

impl Target for GitPrTarget {
    fn available(&self, ws: &Workspace, settings: &DeliverySettingsView) -> std::result::Result<(), String> {
        if !ws.config.delivery.targets.iter().any(|t| t == "git-pr") {
            return Err("`[delivery] targets` in kiln.toml omits it".into());
        }
        let Some(git) = &ws.git else { return Err("the workspace is not in a git repository".into()) };
        let repo = git2::Repository::open(&git.workdir).map_err(|e| format!("the git repository cannot be read: {}", e.message()))?;
        if repo.find_remote(&settings.remote).is_err() {
            return Err(format!("the repository has no remote `{}`", settings.remote));
        }
        Ok(())
    }

    async fn plan(&self, _: &Arc<Workspace>, id: &SessionId, settings: &DeliverySettingsView, changes: &[ModuleChanges], modules: &[PlannedModule]) -> Result<TargetPlan> {
        let mut steps = vec![
            StepSpec::new("gates", "Run every gate", None),
            StepSpec::new("fetch", format!("Fetch {} {}", settings.remote, settings.base), None),
            StepSpec::new("worktree", format!("Temporary worktree of {}/{}", settings.remote, settings.base), None),
            StepSpec::new("branch", "Create the session branch", None),
            StepSpec::new("copy", "Copy and remove files", None),
            StepSpec::new("install", "Install dependencies", None),
        ];
        for m in modules.iter().filter(|m| m.enable) {
            steps.push(StepSpec::new(format!("enable:{}", m.module_id), format!("Enable {}", m.module_id), Some(&m.module_id)));
        }
        for (title, id) in [("Typecheck", "typecheck"), ("Guardrail", "guardrail"), ("Commit", "commit"), ("Push", "push"), ("Pull request", "pull-request")] {
            steps.push(StepSpec::new(id, title, None));
        }
        Ok(TargetPlan { blockers: Vec::new(), steps, branch: Some(branch(settings, changes, id)) })
    }

    async fn apply(&self, ctx: &Context, sink: &dyn StepSink) -> Result<Applied> {
        super::run::gates_step(ctx, sink).await?;
        // The git-pr steps proper are not wired into this build yet.
        let _ = sink;
        Err(ApiError::new(ErrorCode::TargetUnavailable, "the git-pr target is not part of this build yet"))
    }
}

/// `<prefix>/<module-dir>-<session id prefix>`: the first module's directory's last part.
pub fn branch(settings: &DeliverySettingsView, changes: &[ModuleChanges], id: &SessionId) -> String {
    let dir = changes.first().map(|c| c.module.directory.trim_end_matches('/').rsplit('/').next().unwrap_or("").to_string()).unwrap_or_default();
    format!("{}/{}-{}", settings.branch_prefix.trim_end_matches('/'), dir, &id.as_str()[..8])
}
