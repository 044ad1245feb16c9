//! Diffs of a session's modules against their base, and gate results.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum FileStatus {
    Added,
    Modified,
    Deleted,
    Renamed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum LineKind {
    Context,
    Add,
    Delete,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffLine {
    pub kind: LineKind,
    pub old_line: Option<i64>,
    pub new_line: Option<i64>,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    pub old_start: i64,
    pub old_lines: i64,
    pub new_start: i64,
    pub new_lines: i64,
    pub header: String,
    pub lines: Vec<DiffLine>,
}

/// One changed file, workspace-relative. Binary files and very large ones carry no hunks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    pub path: String,
    pub old_path: Option<String>,
    pub status: FileStatus,
    pub binary: bool,
    pub too_large: bool,
    pub additions: i64,
    pub deletions: i64,
    pub hunks: Vec<Hunk>,
}

/// The id of the diff group (and plan group) of the files in no module (direct workflow):
/// no module id can be it, since npm, Cargo, Python and Go package names never hold `(`.
pub const OUTSIDE_MODULES_ID: &str = "(repository)";

/// What a group of the session diff holds (ARCHITECTURE.md: Diff).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum DiffGroup {
    /// A module of the session, against its base.
    Module,
    /// Direct workflow: a module of the workspace the session has not taken in, whose files
    /// changed anyway (the engineer may write anywhere), against checkpoint 0. Its own group,
    /// so it reads as that module's change; delivering it needs the module in the session
    /// (its gates and review), which the plan says.
    OtherModule,
    /// Direct workflow: changed files in no module of the workspace (a root lockfile,
    /// `CHANGELOG.md`, `.github/…`), against checkpoint 0. `module_id` is
    /// [`OUTSIDE_MODULES_ID`], `directory` is empty; shown as "Repository root (outside
    /// every module)". Only present when such files changed.
    Outside,
}

/// A group of the session's changes: a module's against its base (checkpoint 0, or its
/// state when it joined), or, in the direct workflow, a changed module not in the session
/// or the files outside every module (see [`DiffGroup`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModuleDiff {
    /// The module's id; `(repository)` (`OUTSIDE_MODULES_ID`) for the files outside every module.
    pub module_id: String,
    /// The module's directory; empty for the files outside every module.
    pub directory: String,
    pub group: DiffGroup,
    pub base_sequence: i64,
    pub files: Vec<FileDiff>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffView {
    pub modules: Vec<ModuleDiff>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum GateStatus {
    Passed,
    /// It fails because of the session's change (it passes at the session's base, or
    /// fails there with fewer tests): a blocker, handed back to the agent.
    Failed,
    /// It fails the same way at the session's base: there before the session, shown as
    /// such, never a blocker.
    FailingBefore,
    /// It has a command and did not run (`note` says why: setup failed…): not success,
    /// it blocks delivery.
    Skipped,
    /// No command applies (none detected, none configured): shown with a hint, never a blocker.
    NotConfigured,
}

/// One gate's latest result. `skipped` is never success.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GateResultView {
    pub id: i64,
    pub module: Option<String>,
    pub gate: String,
    pub command: String,
    pub status: GateStatus,
    /// Where the command came from: `kiln.toml`, or what Kiln detected it from
    /// (`package.json scripts.test`, `vitest.config.ts at the root`, …).
    pub source: String,
    pub exit_code: Option<i64>,
    pub duration_ms: i64,
    pub output_head: String,
    /// Empty when the whole output fit in the head.
    pub output_tail: String,
    pub at: String,
    /// The verdict in words beyond the status: "1 new failure: `name`", "3 failures, all
    /// there before this session", "not run: setup failed: …"; empty when there is none.
    pub note: String,
    /// Whether it judged the working copy's files as they are now: `false` after a
    /// restore or an edit it did not see; absent when that is unknown (the session's
    /// setup, results kept before Kiln recorded it).
    #[serde(default)]
    #[ts(optional)]
    pub current: Option<bool>,
}
