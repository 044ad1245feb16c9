//! Sessions as the UI sees them: their modules, checkpoints, attachments, usage, and a
//! module's specification.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum SessionKind {
    NewModule,
    EditModule,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum SessionState {
    Planning,
    AwaitingApproval,
    Editing,
    Running,
    Review,
    Blocked,
    Delivered,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ModuleChange {
    New,
    Edit,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionModule {
    pub id: String,
    pub directory: String,
    pub kind: ModuleChange,
    pub joined_at: String,
    pub base_sequence: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum SetupState {
    None,
    Running,
    Passed,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointView {
    pub sequence: i64,
    pub at: String,
    /// A name for people, unique within the session: the operator message that led to
    /// it (first line, clipped to 80 characters; "Autosave: <message>" for an autosave),
    /// "Start" for the starting point, else what made it; a repeated name gets " (2)",
    /// " (3)"….
    pub label: String,
    pub role: Option<String>,
    pub module: Option<String>,
    /// The transcript entry that closes the turn this checkpoint follows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub entry_id: Option<i64>,
    /// Whether the working copy is this checkpoint now: the one most recently taken or
    /// restored to.
    pub current: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentView {
    pub id: String,
    pub name: String,
    pub kind: String,
    pub size: i64,
    pub added_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionView {
    pub id: String,
    pub kind: SessionKind,
    pub modules: Vec<SessionModule>,
    pub title: String,
    pub brief: String,
    pub role: Option<String>,
    pub driver: Option<String>,
    pub model: Option<String>,
    pub resume_ids: BTreeMap<String, String>,
    pub auto_continue: bool,
    pub chain_depth: i64,
    pub state: SessionState,
    /// Whether a process of this session (a turn, its setup) is running now.
    pub running: bool,
    pub setup: SetupState,
    pub created_at: String,
    pub updated_at: String,
    pub delivered_at: Option<String>,
    pub archived_at: Option<String>,
    pub rejected_at: Option<String>,
    pub deleted_at: Option<String>,
    pub attachments: Vec<AttachmentView>,
    pub checkpoints: Vec<CheckpointView>,
    /// The role the next message goes to when none is picked (an asker, a paused chain).
    pub pending_role: Option<String>,
    pub usage: UsageView,
    /// Each module's auto-review report, checked against its files as they are now.
    pub reviews: Vec<ReviewView>,
    /// Whether the working copy's checkpoint (the current one) differs from the session's
    /// start: `false` means its turns changed nothing (so there is nothing to deliver).
    pub changed: bool,
    /// The agent's permission requests waiting for the operator (cards in the chat), oldest
    /// first; absent when none waits, which is most of the time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<PermissionCard>>", optional)]
    pub permissions: Vec<PermissionCard>,
    /// Screenshots of the session's preview, oldest first: after turns (the filmstrip) and
    /// captured by the operator. Absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<ScreenshotView>>", optional)]
    pub screenshots: Vec<ScreenshotView>,
    /// The operator's comments on lines of the diff, oldest first; absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<ReviewCommentView>>", optional)]
    pub review_comments: Vec<ReviewCommentView>,
    /// The group of candidates this session is one of (best-of-N), when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub group_id: Option<String>,
    /// Its place in the group, from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub candidate: Option<i64>,
    /// Its turn waits for a free slot (`[session] max_parallel_turns`); absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub waiting: bool,
    /// The GitHub issue the session started from; its pull request closes it.
    pub issue: Option<IssueLink>,
    /// The checkpoint the session's change is measured from (its diff, delivery): 0, the
    /// start, until the session took in what changed in the workspace
    /// (`update_from_workspace`); absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[ts(as = "Option<i64>", optional)]
    pub base_sequence: i64,
    /// Files that update left with conflict markers (`<<<<<<<`) and that still hold them:
    /// nothing is delivered until they are resolved. Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub conflicts: Vec<String>,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// Tokens and cost of a set of turns. `cost_usd` adds up what providers reported;
/// `unknown_cost_turns` counts turns whose provider reported none (never shown as free).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UsageTotals {
    pub turns: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
    pub cost_usd: Option<f64>,
    pub unknown_cost_turns: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RoleUsage {
    pub role: String,
    pub usage: UsageTotals,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UsageView {
    pub total: UsageTotals,
    pub by_role: Vec<RoleUsage>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RestoreCheckpointArgs {
    pub session_id: String,
    pub sequence: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModuleArgs {
    pub session_id: String,
    pub module_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveSpecArgs {
    pub session_id: String,
    pub module_id: String,
    pub text: String,
}

/// A module's specification as it stands in the session's working copy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SpecView {
    pub module_id: String,
    /// Workspace-relative path of the specification file.
    pub path: String,
    /// `None` when the module has no specification yet.
    pub text: Option<String>,
    /// The `status:` line of its front matter.
    pub status: Option<String>,
    /// Approved as it stands: an approval recorded for this exact text, or unchanged
    /// since the session's base where it was already approved.
    pub approved: bool,
}
