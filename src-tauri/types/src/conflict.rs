//! The conflicts an update from the workspace left in a session's working copy, one per
//! place both sides changed, and the user's pick for one of them.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Every file of the session that still holds conflict markers, with its conflicts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConflictsView {
    pub files: Vec<ConflictFile>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConflictFile {
    pub path: String,
    /// Empty when the file still holds a marker but no whole conflict (one was edited by
    /// hand half way): it is then the user's or the agent's to finish in the file.
    pub conflicts: Vec<ConflictView>,
}

/// One conflict: the session's side and the workspace's, as the file holds them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConflictView {
    /// Names this conflict as it stands: a resolution sent after the file changed there
    /// is refused (CONFLICT_NOT_FOUND) rather than landing on another.
    pub id: String,
    /// The 1-based line of its `<<<<<<<` marker.
    pub line: u32,
    pub session: String,
    pub workspace: String,
    /// What both sides started from, when the markers carry it.
    pub base: Option<String>,
}

/// Which side of a conflict to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ConflictKeep {
    Session,
    Workspace,
    /// The session's lines, then the workspace's.
    Both,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolveConflictArgs {
    pub session_id: String,
    pub path: String,
    /// The conflict's id from `get_conflicts`.
    pub conflict_id: String,
    pub keep: ConflictKeep,
}
