//! Disk use and clean-up: what `disk_usage` measures of `.kiln/` and what `clean_up`
//! removes (or would remove) of archived and rejected sessions' working copies.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The workspace's `.kiln/` on disk. Sizes are allocated bytes (blocks on disk, as `du`
/// counts them, each hard-linked file once), not the files' lengths: what removing them
/// would free.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiskUsageView {
    /// `.kiln/store.git`: every session's base snapshots and checkpoints.
    pub store_bytes: u64,
    /// `.kiln/sessions` as a whole (a directory no session record names included).
    pub sessions_bytes: u64,
    /// One per session directory in `.kiln/sessions`.
    pub sessions: Vec<SessionDiskUsage>,
    pub measured_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionDiskUsage {
    pub session_id: String,
    /// `sessions/<id>/workspace`; null when the session has no working copy (removed by
    /// clean-up, or lost).
    pub working_copy_bytes: Option<u64>,
    /// `sessions/<id>/attachments`: the stored attachments.
    pub attachments_bytes: u64,
    /// The rest of the session's directory: the stat cache (`index`) and the directory itself.
    pub other_bytes: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CleanUpArgs {
    /// Remove the working copies; without it only say what would be removed.
    #[serde(default)]
    #[ts(optional)]
    pub apply: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CleanUpView {
    /// Whether the working copies were removed (false: a dry run).
    pub applied: bool,
    /// The sessions whose working copy was (or would be) removed.
    pub sessions: Vec<CleanedSession>,
    /// Archived or rejected sessions with a working copy that clean-up leaves, and why.
    pub skipped: Vec<SkippedSession>,
    /// What was freed (applied), or would be (a dry run): the sum of `sessions[].bytes`.
    pub freed_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CleanedSession {
    pub session_id: String,
    pub title: String,
    /// The working copy and its stat cache, allocated bytes.
    pub bytes: u64,
    /// The checkpoint the working copy is rebuilt from when the session is used again. A
    /// dry run reads nothing of the working copy, so it names the newest checkpoint now;
    /// applied, a working copy changed since then gets its own checkpoint first.
    pub checkpoint: i64,
    /// Applied only: the working copy had changes no checkpoint held, so clean-up took
    /// one ("Before clean-up") before removing it. Always false in a dry run.
    pub checkpoint_taken: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SkippedSession {
    pub session_id: String,
    pub title: String,
    pub reason: String,
}
