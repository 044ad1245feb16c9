//! Best-of-N groups as the UI sees them: one brief fanned out to candidate sessions, the
//! comparison of the candidates side by side, and the pick of a winner.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::*;

/// One candidate of a new group: the agent that runs it and, optionally, its model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CandidateChoice {
    pub driver: String,
    #[serde(default)]
    #[ts(optional)]
    pub model: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateSessionGroupArgs {
    pub brief: String,
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
    /// As `create_session`'s: module ids confirmed as new modules.
    #[serde(default)]
    #[ts(optional)]
    pub create_modules: Option<Vec<String>>,
    /// 2 to 5, each made a session of its own.
    pub candidates: Vec<CandidateChoice>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GroupIdArgs {
    pub group_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompareCandidatesArgs {
    pub group_id: String,
    /// The session whose tree is the base of the diff.
    pub left: String,
    /// The session whose tree is compared with it.
    pub right: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PickCandidateArgs {
    pub group_id: String,
    pub session_id: String,
}

/// Tests counted from a gate's output, when its runner printed a summary Kiln reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TestCounts {
    pub passed: i64,
    pub failed: i64,
}

/// One gate's latest result for a candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CandidateGate {
    /// Null for the gates of the whole working copy (dependencies, module-schema).
    pub module: Option<String>,
    pub gate: String,
    pub status: GateStatus,
    /// Null when the output carried no summary Kiln reads.
    pub tests: Option<TestCounts>,
}

/// A module's review verdict, for the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CandidateReview {
    pub module_id: String,
    pub passed: bool,
    pub stale: bool,
    pub summary: String,
}

/// One candidate as the comparison shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CandidateView {
    pub session_id: String,
    /// Its place in the group, from 0.
    pub candidate: i64,
    pub title: String,
    pub driver: Option<String>,
    pub model: Option<String>,
    pub state: SessionState,
    pub running: bool,
    /// Its turn waits for a free slot.
    pub waiting: bool,
    pub archived_at: Option<String>,
    pub delivered_at: Option<String>,
    /// Files changed against the session's start, and their lines; null when its working
    /// copy cannot be read (deleted, or removed by the clean-up).
    pub files_changed: Option<i64>,
    pub additions: Option<i64>,
    pub deletions: Option<i64>,
    pub gates: Vec<CandidateGate>,
    pub reviews: Vec<CandidateReview>,
    /// Tokens and cost of its turns; an unknown cost stays unknown.
    pub usage: UsageTotals,
    /// From its creation to its last turn's end (to now while a turn runs); null before
    /// any turn ran.
    pub elapsed_ms: Option<i64>,
    /// Its newest preview screenshot, when one was taken.
    pub screenshot_id: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GroupView {
    pub id: String,
    pub title: String,
    pub brief: String,
    pub created_at: String,
    /// The candidate picked for delivery, once one is.
    pub picked_session_id: Option<String>,
    pub picked_at: Option<String>,
    pub candidates: Vec<CandidateView>,
}

/// A group in the dashboard's list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GroupSummary {
    pub id: String,
    pub title: String,
    pub created_at: String,
    pub picked_session_id: Option<String>,
    /// Its candidates' sessions, in their order.
    pub session_ids: Vec<String>,
}
