//! Review comments: the operator's remarks on lines of a session's diff, kept per session
//! and sent to the agent as one turn (`send_review`).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a comment stands. `open` until sent; `sent` while the turn that carries it runs;
/// then `addressed` ("addressed?": its lines changed in that turn, for the operator to
/// resolve) or `open` again (they did not, and `note` says so); `resolved` is the
/// operator's word, and can be taken back to `open`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ReviewCommentState {
    Open,
    Sent,
    Addressed,
    Resolved,
}

/// One comment, as the session view carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReviewCommentView {
    pub id: String,
    /// Workspace-relative, as the diff names the file.
    pub path: String,
    /// Lines of the working copy (the diff's new side), 1-based, inclusive. After a turn
    /// that changed lines above them, they are moved to where the same lines are now.
    pub start_line: i64,
    pub end_line: i64,
    /// What those lines held when the comment was made, read by Kiln from the working copy.
    pub quote: String,
    pub body: String,
    pub state: ReviewCommentState,
    /// The turn it was sent with, once that turn ended.
    pub turn_id: Option<i64>,
    /// Why it is open again after it was sent (its lines did not change, the turn was cut short).
    pub note: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AddReviewCommentArgs {
    pub session_id: String,
    pub path: String,
    pub start_line: i64,
    pub end_line: i64,
    pub body: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateReviewCommentArgs {
    pub session_id: String,
    pub comment_id: String,
    pub body: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReviewCommentArgs {
    pub session_id: String,
    pub comment_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolveReviewCommentArgs {
    pub session_id: String,
    pub comment_id: String,
    /// `false` takes a resolved (or addressed) comment back to open.
    pub resolved: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendReviewArgs {
    pub session_id: String,
    /// The operator's words before the comments, if any.
    #[serde(default)]
    #[ts(optional)]
    pub message: Option<String>,
}
