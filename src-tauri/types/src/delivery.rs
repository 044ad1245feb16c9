//! Delivery plans and runs, pull requests, and a module's review.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::*;

/// Where a session's change can be delivered (ARCHITECTURE.md: Delivery).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum DeliveryTarget {
    /// Copied into the workspace itself.
    Workspace,
    /// A branch pushed to the remote and a pull request.
    GitPr,
}

/// A target and whether it can be used now, with the reason when not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TargetOption {
    pub target: DeliveryTarget,
    pub available: bool,
    pub reason: Option<String>,
}

/// What delivering does to one module, or to the files outside every module (direct workflow).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PlannedModule {
    /// The module's id; `(repository)` (`OUTSIDE_MODULES_ID`) for the files outside every module.
    pub module_id: String,
    /// Empty for the files outside every module.
    pub directory: String,
    /// A module of the session, a changed module not in it, or the files outside every
    /// module (direct workflow), as the diff groups them.
    pub group: DiffGroup,
    pub kind: ModuleChange,
    /// Files the session added (workspace-relative).
    pub added: Vec<String>,
    /// Files that exist in the target and will be overwritten.
    pub overwritten: Vec<String>,
    /// Files the session deleted.
    pub deleted: Vec<String>,
    /// Packages its manifests add that the workspace lacks.
    pub new_packages: Vec<String>,
    /// A new module that must be enabled (`[delivery] enable`).
    pub enable: bool,
}

/// Why delivery cannot go ahead now: a missing or stale review, a gate that failed or
/// was skipped, files the workspace changed since the session's base.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Blocker {
    pub code: ErrorCode,
    pub message: String,
    pub module_id: Option<String>,
    pub paths: Vec<String>,
    /// A gate blocker, which the operator may deliver past with a written reason
    /// (`deliver`'s `anyway`); review, conflict and target guardrails are never overridable.
    pub overridable: bool,
}

/// What delivering the session to a target will do; `plan_id` binds a confirmation to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryPlan {
    pub session_id: String,
    pub target: DeliveryTarget,
    pub available_targets: Vec<TargetOption>,
    pub modules: Vec<PlannedModule>,
    /// The gates that run first, e.g. `tests (@shop/cart)`.
    pub gates: Vec<String>,
    /// The steps in order, as the run will show them.
    pub steps: Vec<String>,
    /// Whether the running application must restart to pick the change up.
    pub restart_needed: bool,
    /// Empty when it can go ahead.
    pub blockers: Vec<Blocker>,
    /// For git-pr: the branch it pushes.
    pub branch: Option<String>,
    /// A digest of the plan: `deliver` refuses a confirmation of another plan.
    pub plan_id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum StepState {
    Pending,
    Running,
    Passed,
    Failed,
    Skipped,
}

/// One step of a delivery as it happens: its output is redacted before it is stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryStep {
    pub id: String,
    pub title: String,
    pub module_id: Option<String>,
    pub state: StepState,
    pub output: String,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum DeliveryState {
    Running,
    Delivered,
    Failed,
}

/// How a git-pr delivery ended up reviewable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PullRequestView {
    /// The pull request's page, or a compare link when none could be created.
    pub url: String,
    pub number: Option<u64>,
    pub branch: String,
    /// `api`, `gh` or `compare`.
    pub via: String,
    /// False when a second delivery updated an open pull request.
    pub created: bool,
}

/// A delivery run of a session: its steps as they start, finish or fail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryRun {
    pub id: String,
    pub session_id: String,
    pub target: DeliveryTarget,
    pub state: DeliveryState,
    pub steps: Vec<DeliveryStep>,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub pull_request: Option<PullRequestView>,
    /// What landed (workspace-relative paths), once delivered.
    pub landed: Vec<String>,
    pub error: Option<ApiError>,
}

/// The workspace's delivery settings (`[delivery.git]` defaults, overridden here).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DeliverySettingsView {
    /// `owner/name` on the provider.
    pub repository: Option<String>,
    pub reviewers: Vec<String>,
    /// `auto`, `direct` or `fork`.
    pub push_mode: String,
    pub remote: String,
    pub base: String,
    pub branch_prefix: String,
    /// The provider's API root (default `https://api.github.com`).
    pub api_url: String,
    /// The provider token's fingerprint, when one is stored for `api_url`.
    pub token_fingerprint: Option<String>,
}

/// A module's auto-review report as Kiln stored it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReviewView {
    pub module_id: String,
    pub passed: bool,
    /// The module's files changed since the review: it no longer counts.
    pub stale: bool,
    /// The verdict line's reason.
    pub summary: String,
    /// The whole report (correctness, security, compatibility, lifecycle, tests, UI).
    pub report: String,
    pub created_at: String,
}
