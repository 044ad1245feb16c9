//! Delivery (ARCHITECTURE.md: Delivery, "eject"): the targets that land a session's change as code the
//! user owns (into the workspace, or as a pull request), behind one interface:
//! `available` (with the reason when not), `plan`, `apply` reporting each step through
//! a `StepSink`. `plan` builds the plan, `run` starts, records and persists runs,
//! `workspace` is the workspace target, `pr` wraps the git-pr target, `steps` holds the
//! steps both share, `git` is the git CLI layer the git-pr target uses, and `issues` reads
//! GitHub issues with the git-pr target's settings for sessions that start from one.

pub(crate) mod git;
pub(crate) mod git_pr;
pub(crate) mod issues;
pub(crate) mod plan;
pub(crate) mod pr;
pub(crate) mod run;
pub(crate) mod steps;
pub(crate) mod workspace;

use std::future::Future;
use std::sync::Arc;

use crate::events::EventBus;
use crate::ids::SessionId;
use crate::workspace::Workspace;
use kiln_types::error::Result;
use kiln_types::*;
use plan::{ModuleChanges, StepSpec};

/// Where a target reports its steps while it applies a delivery. The run records each
/// call (persisted and sent as `EventBody::Delivery`), so a target never touches the
/// store or the event bus itself. Object-safe so targets take `&dyn StepSink`.
pub trait StepSink: Send + Sync {
    /// A step began; `module` names the module it is about, if it is per module.
    fn start(&self, id: &str, title: &str, module: Option<&str>);
    /// The step finished successfully with its (already redacted) output.
    fn pass(&self, id: &str, output: &str);
    /// The step failed; the target stops after reporting this.
    fn fail(&self, id: &str, output: &str);
    /// The step was not needed (e.g. no `build` command), with the reason.
    fn skip(&self, id: &str, why: &str);
}

/// What a delivery works on: the session as it was confirmed, its changes and the
/// module part of the plan, plus what redacts outputs (the workspace's sealed secrets).
pub(crate) struct Delivering {
    pub ws: Arc<Workspace>,
    pub events: Arc<EventBus>,
    pub id: SessionId,
    pub session: SessionView,
    pub run_id: String,
    pub changes: Vec<ModuleChanges>,
    pub modules: Vec<PlannedModule>,
    pub restart_needed: bool,
    pub redactor: kiln_runtime::redact::Redactor,
    pub settings: DeliverySettingsView,
    /// The operator's reason for delivering past the plan's gate blockers, and those blockers.
    pub anyway: Option<Anyway>,
}

/// Delivering past gate blockers: who decided is the operator, the reason is theirs.
#[derive(Debug, Clone)]
pub(crate) struct Anyway {
    pub reason: String,
    /// The blockers' messages as the plan showed them.
    pub blockers: Vec<String>,
}

/// A target's own part of a plan.
pub(crate) struct TargetPlan {
    /// Besides the review and gate blockers every target shares.
    pub blockers: Vec<Blocker>,
    pub steps: Vec<StepSpec>,
    pub branch: Option<String>,
}

/// What a run that passed every step produced.
pub(crate) struct Applied {
    pub landed: Vec<String>,
    pub pull_request: Option<PullRequestView>,
}

/// One delivery target. Statically dispatched (`run` matches on `DeliveryTarget`), so
/// `plan` and `apply` can be plain async functions.
pub(crate) trait Target: Send + Sync {
    /// `Err(reason)` when it cannot be used in this workspace now.
    /// `settings` are the workspace's delivery settings (remote, base, prefix…).
    fn available(&self, ws: &Workspace, settings: &DeliverySettingsView) -> std::result::Result<(), String>;

    fn plan(
        &self,
        ws: &Arc<Workspace>,
        id: &SessionId,
        settings: &DeliverySettingsView,
        changes: &[ModuleChanges],
        modules: &[PlannedModule],
    ) -> impl Future<Output = Result<TargetPlan>> + Send;

    /// Runs every step in order, reporting each; stops at the first failure and returns
    /// its error (after `sink.fail`). Gates are the first step of every target.
    fn apply(&self, ctx: &Delivering, sink: &dyn StepSink) -> impl Future<Output = Result<Applied>> + Send;
}
