//! The arguments of the operations (`operations.rs`), each a JSON object.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::*;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct EmptyArgs {}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OpenWorkspaceArgs {
    pub path: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListSessionsArgs {
    #[serde(default)]
    #[ts(optional)]
    pub include_archived: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlanDeliveryArgs {
    pub session_id: String,
    /// Default: `[delivery] default`, else the first available target.
    #[serde(default)]
    #[ts(optional)]
    pub target: Option<DeliveryTarget>,
}

/// The one confirmation for all modules of the session: the plan it confirms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeliverArgs {
    pub session_id: String,
    pub target: DeliveryTarget,
    pub plan_id: String,
    /// Deliver past the plan's gate blockers, for this reason (recorded in the transcript
    /// and the pull request). Refused when another kind of blocker stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub anyway: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionIdArgs {
    pub session_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateSessionArgs {
    pub brief: String,
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
    /// Module ids the operator confirmed as new modules: a brief naming an id no module
    /// has is `MODULE_UNKNOWN` unless the id is listed here.
    #[serde(default)]
    #[ts(optional)]
    pub create_modules: Option<Vec<String>>,
    /// A GitHub issue to start from: its address (`https://github.com/owner/repo/issues/N`)
    /// or a number (`12`, `#12`) of the delivery repository. Its title, body and comments
    /// become the brief, after any text in `brief` (which may then be empty).
    #[serde(default)]
    #[ts(optional)]
    pub issue: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetTranscriptArgs {
    pub session_id: String,
    /// Only the entries after this one (a resync asks for what it missed).
    #[serde(default)]
    #[ts(optional)]
    pub after: Option<i64>,
    /// Only the entries before this one (the older part of a transcript opened at its end).
    #[serde(default)]
    #[ts(optional)]
    pub before: Option<i64>,
    /// Only the newest this many of the entries asked for: a long transcript opens with its end
    /// drawn while the rest loads.
    #[serde(default)]
    #[ts(optional)]
    pub last: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AddModuleArgs {
    pub session_id: String,
    pub module_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StopArgs {
    pub session_id: String,
    #[serde(default)]
    #[ts(optional)]
    pub stop: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteSessionArgs {
    pub session_id: String,
    #[serde(default)]
    #[ts(optional)]
    pub stop: Option<bool>,
    #[serde(default)]
    #[ts(optional)]
    pub keep_transcript: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendMessageArgs {
    pub session_id: String,
    pub text: String,
    /// The composer's role picker: this turn only.
    #[serde(default)]
    #[ts(optional)]
    pub role: Option<String>,
    /// The composer's module picker: this turn only.
    #[serde(default)]
    #[ts(optional)]
    pub module: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub driver: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub model: Option<String>,
    /// What the operator pointed at in the preview, for this turn's prompt (at most 8).
    #[serde(default)]
    #[ts(optional)]
    pub context: Option<Vec<PointedContext>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApproveSpecArgs {
    pub session_id: String,
    pub module_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AddAttachmentArgs {
    pub session_id: String,
    /// The file's own name; Kiln stores it under a safe name.
    pub name: String,
    pub data_base64: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RemoveAttachmentArgs {
    pub session_id: String,
    pub attachment_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateSessionArgs {
    pub session_id: String,
    #[serde(default)]
    #[ts(optional)]
    pub auto_continue: Option<bool>,
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetDiffArgs {
    pub session_id: String,
    /// Only this module's files; every module of the session when absent.
    #[serde(default)]
    #[ts(optional)]
    pub module_id: Option<String>,
}

/// Whose models to list: a driver's id (`claude`, `codex`, `openai-compatible`, an ACP
/// agent's), or the default driver's when absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListModelsArgs {
    #[serde(default)]
    #[ts(optional)]
    pub driver: Option<String>,
}
