//! The `git-pr` target behind the `Target` interface: whether it can be used here (a
//! git repository with the configured remote, and `targets` naming it), the branch it
//! pushes, and its steps. The steps after the gates (fetch, worktree, branch, copy,
//! install, enable, typecheck, guardrail, commit, push, pull request) belong to the
//! git-pr implementation (`git_pr::deliver`), which reports them through the same
//! `StepSink`; this wrapper runs the gates first and resolves its input.

use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::git_pr::{Evidence, EvidenceMode, EvidenceShot, GateRow, GitPrBody, GitPrInput, GitPrModule};
use super::plan::{ModuleChanges, StepSpec};
use super::{Applied, Delivering, StepSink, Target, TargetPlan};
use crate::ids::SessionId;
use crate::workspace::Workspace;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

pub(crate) struct GitPrTarget;

impl Target for GitPrTarget {
    fn available(&self, ws: &Workspace, settings: &DeliverySettingsView) -> std::result::Result<(), String> {
        if !ws.config.delivery.targets.iter().any(|t| t == "git-pr") {
            return Err("`[delivery] targets` in kiln.toml omits it".into());
        }
        let Some(git) = &ws.git else { return Err("the workspace is not in a git repository".into()) };
        let repo = git2::Repository::open(&git.workdir)
            .map_err(|e| format!("the git repository cannot be read: {}", e.message()))?;
        if repo.find_remote(&settings.remote).is_err() {
            return Err(format!("the repository has no remote `{}`", settings.remote));
        }
        // What the run itself would refuse at its first step (an unknown owner/name, push
        // mode `fork`, an unusable base or prefix) makes it unavailable now, with that reason.
        super::git_pr::available(Some(&git.workdir), settings)
    }

    async fn plan(
        &self,
        _: &Arc<Workspace>,
        id: &SessionId,
        settings: &DeliverySettingsView,
        changes: &[ModuleChanges],
        modules: &[PlannedModule],
    ) -> Result<TargetPlan> {
        // Exactly the steps `git_pr::deliver` reports, by the same ids and in its order:
        // a planned step it never reports would stay pending, and one it reports that the
        // plan lacks would be put before the first pending one, out of order.
        let branch = branch(settings, changes, id);
        let mut steps = vec![
            StepSpec::new("gates", "Run every gate", None),
            StepSpec::new("access", "Check the repository and push access", None),
            StepSpec::new("fetch", format!("Fetch {} {}", settings.remote, settings.base), None),
            StepSpec::new(
                "worktree",
                format!("Create a worktree of {}/{} on {branch}", settings.remote, settings.base),
                None,
            ),
            StepSpec::new("copy", "Copy and remove files", None),
            StepSpec::new("install", "Install dependencies", None),
        ];
        // `enable` is set only for a new module when `[delivery] enable` is configured.
        let enabled: Vec<&PlannedModule> = modules.iter().filter(|m| m.enable).collect();
        if enabled.is_empty() {
            steps.push(StepSpec::new("enable", "Enable new modules", None));
        }
        for m in enabled {
            steps.push(StepSpec::new(
                format!("enable:{}", m.module_id),
                format!("Enable {}", m.module_id),
                Some(&m.module_id),
            ));
        }
        for (title, id) in [
            ("Typecheck", "typecheck"),
            ("Guardrail", "guardrail"),
            ("Commit", "commit"),
            ("Push", "push"),
            ("Pull request", "pull-request"),
            ("Clean up", "cleanup"),
        ] {
            steps.push(StepSpec::new(id, title, None));
        }
        Ok(TargetPlan { blockers: Vec::new(), steps, branch: Some(branch) })
    }

    async fn apply(&self, ctx: &Delivering, sink: &dyn StepSink) -> Result<Applied> {
        super::steps::gates_step(ctx, sink).await?;
        let input = input(ctx).await?;
        let landed: Vec<String> = input.files.iter().map(|(p, _)| p.clone()).collect();
        let pull_request = super::git_pr::deliver(input, sink).await?;
        Ok(Applied { landed, pull_request: Some(pull_request) })
    }
}

/// Resolves what the git-pr implementation needs from the session, config and settings.
async fn input(ctx: &Delivering) -> Result<GitPrInput> {
    let ws = &ctx.ws;
    let git = ws
        .git
        .as_ref()
        .ok_or_else(|| ApiError::new(ErrorCode::TargetUnavailable, "the workspace is not in a git repository"))?;
    let d = &ws.config.delivery;
    let workdir = ws.session_workdir(&ctx.id);
    let mut input = GitPrInput::new(&git.workdir, ctx.id.to_string(), ctx.settings.clone());
    input.environment = ws.config.environment.clone();
    input.session_dir = ctx.ws.session_dir(&ctx.id);
    input.workspace_dir = git.prefix.trim_end_matches('/').into();
    for c in &ctx.changes {
        input.files.extend(c.written.iter().map(|p| (p.clone(), Some(workdir.join(p)))));
        input.files.extend(c.deleted.iter().map(|p| (p.clone(), None)));
        // Direct workflow: the files outside every module land too, allowed one by one.
        if c.group == DiffGroup::Outside {
            input.root_files.extend(c.paths().cloned());
            continue;
        }
        input.modules.push(GitPrModule {
            id: c.module.id.clone(),
            directory: c.module.directory.clone(),
            is_new: c.module.kind == ModuleChange::New,
            enable: d
                .enable
                .as_deref()
                .filter(|e| !e.trim().is_empty())
                .map(|e| super::steps::substitute(e, &c.module)),
        });
    }
    input.max_changed_files = d.max_changed_files as usize;
    input.max_new_dependencies = d.max_new_dependencies as usize;
    input.new_dependencies = ctx.modules.iter().flat_map(|m| m.new_packages.iter().cloned()).collect();
    input.install = d.install.clone().filter(|c| !c.trim().is_empty());
    input.typecheck = d.typecheck.clone().filter(|c| !c.trim().is_empty());
    input.token = crate::settings::delivery_token(ws).await?;
    input.title = Some(ctx.session.title.clone());
    input.brief = Some(ctx.session.brief.clone());
    input.session_commits = kiln_records::checkout::commits_made(&ws.open_store()?, &workdir, ctx.id.as_str());
    let gates = crate::gates::latest(ws, &ctx.id).await?;
    input.body = GitPrBody {
        title: None,
        what_changed: ctx.session.brief.clone(),
        gates: gates
            .iter()
            .map(|g| GateRow {
                module: g.module.clone(),
                gate: g.gate.clone(),
                status: super::steps::gate_status_text(g.status).into(),
                note: g.note.clone(),
                duration_ms: g.duration_ms.max(0) as u64,
            })
            .collect(),
        added: ctx.modules.iter().flat_map(|m| m.added.iter().cloned()).collect(),
        modified: ctx.modules.iter().flat_map(|m| m.overwritten.iter().cloned()).collect(),
        removed: ctx.modules.iter().flat_map(|m| m.deleted.iter().cloned()).collect(),
        spec_hashes: ctx
            .session
            .modules
            .iter()
            .filter_map(|m| {
                let text = std::fs::read(workdir.join(&m.directory).join(&ws.config.modules.spec)).ok()?;
                Some((m.id.clone(), Sha256::digest(&text).iter().map(|b| format!("{b:02x}")).collect()))
            })
            .collect(),
        closes: ctx.session.issue.clone(),
        anyway: ctx.anyway.as_ref().map(|a| (a.reason.clone(), a.blockers.clone())),
    };
    input.evidence = evidence(ctx).await?;
    Ok(input)
}

/// The session's before (checkpoint 0) and after (its newest turn) screenshots, and how
/// `[delivery] screenshots` wants them carried.
async fn evidence(ctx: &Delivering) -> Result<Evidence> {
    let ws = &ctx.ws;
    let d = &ws.config.delivery;
    let turn_shots: Vec<ScreenshotView> =
        ctx.session.screenshots.iter().filter(|s| s.kind == ScreenshotKind::Turn).cloned().collect();
    let before = turn_shots.iter().find(|s| s.checkpoint == Some(0));
    let after = turn_shots.iter().rev().find(|s| s.checkpoint.is_some_and(|c| c > 0));
    let shots = [("before", before), ("after", after)]
        .into_iter()
        .filter_map(|(label, shot)| {
            let shot = shot?;
            Some(EvidenceShot {
                label,
                checkpoint: shot.checkpoint.unwrap_or(0),
                png: crate::preview::shots::file(ws, &ctx.id, shot.id),
            })
        })
        .collect();
    Ok(Evidence {
        mode: EvidenceMode::parse(&d.screenshots).unwrap_or_default(),
        path: d.screenshots_path.trim_matches('/').to_string(),
        preview: crate::preview::evidence::configured(ws),
        shots,
    })
}

/// `<prefix>/<module-dir>-<session id prefix>`: the first module's directory's last part,
/// named exactly as `git_pr::deliver` names the branch it pushes (`git_pr::branch_name`).
pub(crate) fn branch(settings: &DeliverySettingsView, changes: &[ModuleChanges], id: &SessionId) -> String {
    let first: Vec<GitPrModule> = changes
        .iter()
        .take(1)
        .map(|c| GitPrModule {
            id: c.module.id.clone(),
            directory: c.module.directory.clone(),
            is_new: false,
            enable: None,
        })
        .collect();
    super::git_pr::branch_name(&settings.branch_prefix, &first, id.as_str())
}
