//! The shapes that cross to the UI: views, operation arguments and events. The UI's
//! `ui/src/api/types.ts` is generated from these by ts-rs, and a test fails when the
//! committed file drifts from them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

pub use crate::config::Workflow;
pub use crate::error::{ApiError, ErrorCode};
pub use crate::modules::{ModuleInfo, Toolchain};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RoleSummary {
    pub id: String,
    pub name: String,
}

/// What Kiln found in a workspace's own tooling (SPEC §10): shown the first time a
/// workspace is opened, printed by `kiln detect`, saved as `kiln.toml` on request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DetectionView {
    pub root: String,
    /// The workspace's `kiln.toml`, when it has one.
    pub config_path: Option<String>,
    pub workflow: Workflow,
    pub modules: Vec<DetectedModule>,
    pub toolchains: Vec<ToolchainCheck>,
    /// The install step run after a session's working copy is made.
    pub setup: Option<DetectedCommand>,
    /// The same, as the `kiln.toml` that "Save as kiln.toml" writes.
    pub toml: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DetectedModule {
    pub id: String,
    pub directory: String,
    pub toolchain: Toolchain,
    pub gates: Vec<DetectedGate>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DetectedGate {
    /// `dependencies`, `typecheck`, `tests`, `format` or `lint`.
    pub gate: String,
    /// `None`: not configured (never a blocker).
    pub command: Option<String>,
    /// Where the command came from, or why there is none.
    pub source: String,
    /// For a gate with no command: what would give it one.
    pub hint: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DetectedCommand {
    pub command: String,
    pub source: String,
}

/// A toolchain the workspace needs and what this machine has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolchainCheck {
    /// The command: `node`, `pnpm`, `cargo`, `python3`, `uv`, `go`, `make`…
    pub name: String,
    /// The version this machine has, `None` when it is missing.
    pub found: Option<String>,
    /// The version the repository asks for (`go 1.23` in go.mod, `engines.node`…).
    pub required: Option<String>,
    pub ok: bool,
    /// What to install, when not ok.
    pub message: Option<String>,
}

/// "Save as kiln.toml": the set-up as the operator edited it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveConfigArgs {
    pub workflow: Workflow,
    /// The install step; empty for none.
    pub setup: Option<String>,
    pub modules: Vec<SaveModuleGates>,
    /// Replace an existing `kiln.toml` (otherwise `CONFIG_EXISTS`).
    #[serde(default)]
    pub replace: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveModuleGates {
    pub id: String,
    /// Gate name to command; an empty command is written as off (not configured).
    pub gates: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceView {
    pub root: String,
    pub name: String,
    pub is_git: bool,
    pub config_path: Option<String>,
    /// `direct` unless the workspace's `kiln.toml` chooses `specs`.
    pub workflow: Workflow,
    /// The roles the composer's picker offers: `engineer` and the workspace's own in
    /// the direct workflow, the specialists in specs.
    pub roles: Vec<RoleSummary>,
    pub id_pattern: Option<String>,
    pub modules: Vec<ModuleInfo>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    Desktop,
    Serve,
}

/// Who `kiln serve` trusts (SPEC §18). Chosen on the command line or by `KILN_MODE`,
/// never over HTTP. The desktop app is `loopback`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ServeMode {
    /// The machine: requests must name the loopback address and port; local agent
    /// CLIs are offered.
    #[default]
    Loopback,
    /// Whoever holds an access token: a browser session is required for everything,
    /// and only bring-your-own-key drivers are offered.
    SelfHosted,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppState {
    pub version: String,
    pub transport: Transport,
    pub mode: ServeMode,
    /// Whether this browser holds a connection; set by `kiln serve`, absent on the desktop.
    #[ts(optional)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connected: Option<bool>,
    pub workspace: Option<WorkspaceView>,
    pub recent_workspaces: Vec<String>,
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum EntryKind {
    User,
    Agent,
    System,
    Tool,
    Gate,
    Handoff,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptEntry {
    pub id: i64,
    pub session_id: String,
    pub kind: EntryKind,
    pub module: Option<String>,
    pub role: Option<String>,
    pub text: String,
    pub created_at: String,
}

/// What changed, streamed to every open view (Tauri channel or server-sent events).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum EventBody {
    Session {
        session: SessionView,
    },
    Transcript {
        entry: TranscriptEntry,
    },
    #[serde(rename_all = "camelCase")]
    SessionRemoved {
        session_id: String,
    },
    Workspace {
        workspace: WorkspaceView,
    },
    /// A session's preview changed state (starting, ready, crashed, stopped…).
    Preview {
        preview: PreviewView,
    },
    /// A delivery run moved: a step started, finished or failed, or the run ended.
    Delivery {
        run: DeliveryRun,
    },
    /// The subscriber asked to resume from an event no longer kept: refetch everything.
    Resync,
    /// What a session's agent is doing right now (streamed text, a provider retrying):
    /// ephemeral, never stored in the transcript; the next `Live` of the session replaces it.
    Live {
        live: LiveView,
    },
}

/// The phase a `LiveView` belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum LivePhase {
    Planning,
    Setup,
    Turn,
}

/// A session's live activity. A view with `text` and `status` both `None` clears it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LiveView {
    pub session_id: String,
    pub phase: LivePhase,
    pub role: Option<String>,
    pub module: Option<String>,
    /// The agent's prose of the current stretch so far, not yet written to the
    /// transcript; `None` once it is written (or nothing is streaming).
    pub text: Option<String>,
    /// One updating status line for the phase, or `None` when the phase ended or cleared.
    pub status: Option<LiveStatus>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum LiveStatusKind {
    /// The provider failed and the agent is trying again.
    Retrying,
    /// The provider failed for good (the phase ends).
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LiveStatus {
    pub kind: LiveStatusKind,
    /// Words for people, e.g. "The provider is overloaded (529)".
    pub message: String,
    pub attempt: Option<u32>,
    pub max_attempts: Option<u32>,
    /// A stable short reason: `auth`, `rate-limit`, `overloaded`, `network` or `other`.
    pub reason: String,
    /// The HTTP status, when known.
    pub http_status: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct KilnEvent {
    pub id: u64,
    pub at: String,
    pub body: EventBody,
}

/// Where a session's change can be delivered (SPEC §12).
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

/// Where a session's preview stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum PreviewState {
    /// Not running (never started, stopped, or stopped for idleness).
    Stopped,
    /// The command runs; waiting for `ready`.
    Starting,
    /// Answering through its gateway.
    Ready,
    /// Exited and about to be started again (after a backoff).
    Restarting,
    /// Gave up: it exited too often, never became ready, or could not start. See `message` and `log`.
    Crashed,
}

/// How the preview is made: the `[preview] command`, or the files of `[preview] root`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum PreviewKind {
    Command,
    Static,
    /// The workspace configures no preview.
    None,
}

/// Where a module's first screen is in the preview (`[preview] module_url`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModuleUrl {
    pub module_id: String,
    /// A path on the preview's origin, e.g. `/?module=cart`.
    pub path: String,
}

/// What the connected application answered for the preview (`data = "bridge"`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BridgeActivity {
    pub url: String,
    /// `GET`s the session's application answered 404 and the bridge answered.
    pub forwarded: u64,
    /// Requests the bridge could not answer (down, or an error): marked unavailable.
    pub unavailable: u64,
    /// Requests refused rather than forwarded (other methods, `/api/auth/*`).
    pub refused: u64,
}

/// A session's live preview.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PreviewView {
    pub session_id: String,
    pub kind: PreviewKind,
    pub state: PreviewState,
    /// The gateway's origin, e.g. `http://127.0.0.1:41234`, while it runs.
    pub origin: Option<String>,
    /// The first URL to load in the frame: it carries the preview's secret, which the
    /// gateway turns into an HttpOnly cookie and strips with a redirect.
    pub enter_url: Option<String>,
    /// The port the application listens on (`$PORT`), for the command kind.
    pub port: Option<u16>,
    /// Why it stopped or crashed, in words.
    pub message: Option<String>,
    /// The last lines of the process's output (stdout and stderr).
    pub log: Vec<String>,
    /// Times it was started again after exiting.
    pub restarts: u32,
    /// `fixtures` or `bridge`.
    pub data: String,
    pub bridge: Option<BridgeActivity>,
    /// Each session module's first screen.
    pub module_urls: Vec<ModuleUrl>,
}

// ---- operation arguments ----

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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetTranscriptArgs {
    pub session_id: String,
    #[serde(default)]
    #[ts(optional)]
    pub after: Option<i64>,
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

/// What a group of the session diff holds (SPEC §9).
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
    Failed,
    /// It has a command and did not run: not success, it blocks delivery.
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

/// Whether a driver can run here, and why not when it cannot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DriverStatus {
    pub id: String,
    pub available: bool,
    /// The binary found, the endpoint set, or what to do to make it available.
    pub detail: String,
    /// What the binary's `--version` says (its first line), for a local CLI that
    /// answered; `None` when not installed or it would not say.
    pub version: Option<String>,
    /// Whether it is signed in, where that can be told without the network: an API key in
    /// the environment Kiln gives the CLI or the credentials file its login writes; for
    /// the OpenAI-compatible driver, whether a key is stored. `None` when not installed or
    /// when it cannot be told (the macOS keychain).
    pub signed_in: Option<bool>,
}

/// Which commands agents may run (SPEC §7), answered for them by Kiln: the setting
/// "commands" in Settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum CommandPolicy {
    /// Commands in the working copy: the agent runs shell commands (builds, tests) and
    /// edits files without asking, confined by the OS where it can be.
    #[default]
    Workdir,
    /// No commands: edits only; the agents' shell tools are turned off.
    None,
}

/// Whether the commands agents run are confined by the OS here (`crate::sandbox`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConfinementView {
    pub available: bool,
    /// `landlock`, or `none` where the kernel lacks it.
    pub mechanism: String,
    /// The kernel's Landlock ABI version.
    pub abi: Option<u32>,
    /// `full`, `partial` (Landlock ABI 1 or 2) or `none`.
    pub enforcement: String,
    /// One sentence saying what commands may write, or that they run with the policy alone.
    pub detail: String,
}

/// The workspace's driver settings. A key is never sent back: only its fingerprint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    pub default_driver: String,
    /// Which commands agents may run.
    pub command_policy: CommandPolicy,
    /// Whether this server lets agents run commands at all: a self-hosted server started
    /// without `--allow-agent-commands` does not, whatever the policy says.
    pub commands_allowed: bool,
    /// How their commands are confined on this machine.
    pub confinement: ConfinementView,
    pub claude_path: Option<String>,
    pub codex_path: Option<String>,
    pub openai_base_url: Option<String>,
    pub openai_model: Option<String>,
    pub openai_key_fingerprint: Option<String>,
    /// Whether the planner agent amends the rules' classification of a new session.
    pub planner_agent: bool,
    /// The drivers this server offers (in self-hosted mode, bring-your-own-key only).
    pub drivers: Vec<DriverStatus>,
    /// The connected application (`[preview] bridge`): the address set here, else kiln.toml's.
    pub bridge_url: Option<String>,
    /// Its access token's fingerprint, when a token is stored for `bridge_url`.
    pub bridge_token_fingerprint: Option<String>,
    pub delivery: DeliverySettingsView,
}

/// Changes to the settings: an absent field stays as it is, an empty string clears it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateSettingsArgs {
    #[serde(default)]
    #[ts(optional)]
    pub default_driver: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub planner_agent: Option<bool>,
    /// `workdir` (commands in the working copy) or `none` (no commands).
    #[serde(default)]
    #[ts(optional)]
    pub command_policy: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub claude_path: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub codex_path: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub openai_base_url: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub openai_model: Option<String>,
    /// Stored sealed; required again whenever the endpoint changes, so a stored key is
    /// never sent to a host it was not given for.
    #[serde(default)]
    #[ts(optional)]
    pub openai_key: Option<String>,
    /// The connected application's address; changing it requires `bridge_token` in the
    /// same request, so a stored token is never sent to another host.
    #[serde(default)]
    #[ts(optional)]
    pub bridge_url: Option<String>,
    /// Stored sealed, bound to `bridge_url`.
    #[serde(default)]
    #[ts(optional)]
    pub bridge_token: Option<String>,
    /// `owner/name` on the provider.
    #[serde(default)]
    #[ts(optional)]
    pub delivery_repository: Option<String>,
    /// Logins asked to review each pull request.
    #[serde(default)]
    #[ts(optional)]
    pub delivery_reviewers: Option<Vec<String>>,
    /// `auto`, `direct` or `fork`.
    #[serde(default)]
    #[ts(optional)]
    pub delivery_push_mode: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub delivery_remote: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub delivery_base: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub delivery_branch_prefix: Option<String>,
    /// Changing it requires `delivery_token` in the same request.
    #[serde(default)]
    #[ts(optional)]
    pub delivery_api_url: Option<String>,
    /// Stored sealed, bound to `delivery_api_url`; saving never pushes anything.
    #[serde(default)]
    #[ts(optional)]
    pub delivery_token: Option<String>,
}

/// The TypeScript declarations of every type above, in dependency order: the content
/// of `ui/src/api/types.ts` after its header.
pub fn typescript() -> String {
    // Every integer the API carries (entry ids, sequences, sizes) fits a JS number.
    let cfg = ts_rs::Config::new().with_large_int("number");
    let decls = [
        ErrorCode::decl(&cfg),
        ApiError::decl(&cfg),
        Toolchain::decl(&cfg),
        ModuleInfo::decl(&cfg),
        WorkspaceView::decl(&cfg),
        Transport::decl(&cfg),
        ServeMode::decl(&cfg),
        AppState::decl(&cfg),
        SessionKind::decl(&cfg),
        SessionState::decl(&cfg),
        ModuleChange::decl(&cfg),
        SessionModule::decl(&cfg),
        SetupState::decl(&cfg),
        CheckpointView::decl(&cfg),
        AttachmentView::decl(&cfg),
        UsageTotals::decl(&cfg),
        RoleUsage::decl(&cfg),
        UsageView::decl(&cfg),
        SessionView::decl(&cfg),
        EntryKind::decl(&cfg),
        TranscriptEntry::decl(&cfg),
        EventBody::decl(&cfg),
        LivePhase::decl(&cfg),
        LiveView::decl(&cfg),
        LiveStatusKind::decl(&cfg),
        LiveStatus::decl(&cfg),
        ReviewView::decl(&cfg),
        DeliveryTarget::decl(&cfg),
        TargetOption::decl(&cfg),
        PlannedModule::decl(&cfg),
        Blocker::decl(&cfg),
        DeliveryPlan::decl(&cfg),
        StepState::decl(&cfg),
        DeliveryStep::decl(&cfg),
        DeliveryState::decl(&cfg),
        PullRequestView::decl(&cfg),
        DeliveryRun::decl(&cfg),
        DeliverySettingsView::decl(&cfg),
        PlanDeliveryArgs::decl(&cfg),
        DeliverArgs::decl(&cfg),
        PreviewState::decl(&cfg),
        PreviewKind::decl(&cfg),
        ModuleUrl::decl(&cfg),
        BridgeActivity::decl(&cfg),
        PreviewView::decl(&cfg),
        KilnEvent::decl(&cfg),
        EmptyArgs::decl(&cfg),
        OpenWorkspaceArgs::decl(&cfg),
        ListSessionsArgs::decl(&cfg),
        SessionIdArgs::decl(&cfg),
        CreateSessionArgs::decl(&cfg),
        GetTranscriptArgs::decl(&cfg),
        AddModuleArgs::decl(&cfg),
        StopArgs::decl(&cfg),
        DeleteSessionArgs::decl(&cfg),
        SendMessageArgs::decl(&cfg),
        ApproveSpecArgs::decl(&cfg),
        GetDiffArgs::decl(&cfg),
        FileStatus::decl(&cfg),
        LineKind::decl(&cfg),
        DiffLine::decl(&cfg),
        Hunk::decl(&cfg),
        FileDiff::decl(&cfg),
        DiffGroup::decl(&cfg),
        ModuleDiff::decl(&cfg),
        DiffView::decl(&cfg),
        GateStatus::decl(&cfg),
        Workflow::decl(&cfg),
        RoleSummary::decl(&cfg),
        DetectionView::decl(&cfg),
        DetectedModule::decl(&cfg),
        DetectedGate::decl(&cfg),
        DetectedCommand::decl(&cfg),
        ToolchainCheck::decl(&cfg),
        SaveConfigArgs::decl(&cfg),
        SaveModuleGates::decl(&cfg),
        GateResultView::decl(&cfg),
        RestoreCheckpointArgs::decl(&cfg),
        ModuleArgs::decl(&cfg),
        SaveSpecArgs::decl(&cfg),
        SpecView::decl(&cfg),
        AddAttachmentArgs::decl(&cfg),
        RemoveAttachmentArgs::decl(&cfg),
        UpdateSessionArgs::decl(&cfg),
        DriverStatus::decl(&cfg),
        CommandPolicy::decl(&cfg),
        ConfinementView::decl(&cfg),
        SettingsView::decl(&cfg),
        UpdateSettingsArgs::decl(&cfg),
    ];
    let mut out = String::from(TYPES_HEADER);
    for decl in decls {
        out.push('\n');
        out.push_str("export ");
        out.push_str(&decl);
        out.push('\n');
    }
    out
}

pub const TYPES_HEADER: &str = "// Generated from the engine's Rust types by ts-rs (see src-tauri/engine/src/api/types.rs).\n// Do not edit by hand: `KILN_UPDATE_TYPES=1 cargo test -p kiln-engine --test it types::` rewrites it.\n";
