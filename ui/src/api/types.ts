// Generated from Kiln's Rust types by ts-rs (see src-tauri/types/src/typescript.rs).
// Do not edit by hand: `KILN_UPDATE_TYPES=1 cargo test -p kiln-types` rewrites it.

export type AcpAgentView = { 
/**
 * Its driver id: `acp:gemini`, …, `acp:custom`.
 */
id: string, name: string, 
/**
 * The command line Kiln runs (the binary's name and its arguments); for the custom
 * agent, the line set in Settings ("" when none is).
 */
command: string, 
/**
 * The command a user runs to install it.
 */
installHint: string, 
/**
 * The binary's path set in Settings, for a preset not on PATH.
 */
path: string | null, };

export type AddAttachmentArgs = { sessionId: string, 
/**
 * The file's own name; Kiln stores it under a safe name.
 */
name: string, dataBase64: string, };

export type AddModuleArgs = { sessionId: string, moduleId: string, };

export type AddReviewCommentArgs = { sessionId: string, path: string, startLine: number, endLine: number, body: string, };

export type AnswerPermissionArgs = { sessionId: string, 
/**
 * The card's `id`.
 */
requestId: string, 
/**
 * One of the card's options' `id`.
 */
optionId: string, };

export type ApiError = { code: ErrorCode, message: string, };

export type AppState = { version: string, transport: Transport, mode: ServeMode, 
/**
 * Whether this browser holds a connection; set by `kiln serve`, absent on the desktop.
 */
connected?: boolean, workspace: WorkspaceView | null, recentWorkspaces: Array<string>, 
/**
 * Whether this engine offers terminals at all (not in self-hosted mode without
 * `--allow-terminals`).
 */
terminals: boolean, 
/**
 * Whether the claude and codex terminal kinds are offered (never in self-hosted mode:
 * the local CLIs carry the operator's login).
 */
agentTerminals: boolean, 
/**
 * The id of the last event sent before this answer: a view that subscribes since it
 * hears every change after it, including those made while its first questions were
 * being answered.
 */
lastEvent: number, };

export type ApproveSpecArgs = { sessionId: string, moduleId: string, };

export type AttachmentView = { id: string, name: string, kind: string, size: number, addedAt: string, };

export type Blocker = { code: ErrorCode, message: string, moduleId: string | null, paths: Array<string>, 
/**
 * A gate blocker, which the operator may deliver past with a written reason
 * (`deliver`'s `anyway`); review, conflict and target guardrails are never overridable.
 */
overridable: boolean, };

export type BridgeActivity = { url: string, 
/**
 * `GET`s the session's application answered 404 and the bridge answered.
 */
forwarded: number, 
/**
 * Requests the bridge could not answer (down, or an error): marked unavailable.
 */
unavailable: number, 
/**
 * Requests refused rather than forwarded (other methods, `/api/auth/*`).
 */
refused: number, };

export type CandidateChoice = { driver: string, model?: string, };

export type CandidateGate = { 
/**
 * Null for the gates of the whole working copy (dependencies, module-schema).
 */
module: string | null, gate: string, status: GateStatus, 
/**
 * Null when the output carried no summary Kiln reads.
 */
tests: TestCounts | null, };

export type CandidateReview = { moduleId: string, passed: boolean, stale: boolean, summary: string, };

export type CandidateView = { sessionId: string, 
/**
 * Its place in the group, from 0.
 */
candidate: number, title: string, driver: string | null, model: string | null, state: SessionState, running: boolean, 
/**
 * Its turn waits for a free slot.
 */
waiting: boolean, archivedAt: string | null, deliveredAt: string | null, 
/**
 * Files changed against the session's start, and their lines; null when its working
 * copy cannot be read (deleted, or removed by the clean-up).
 */
filesChanged: number | null, additions: number | null, deletions: number | null, gates: Array<CandidateGate>, reviews: Array<CandidateReview>, 
/**
 * Tokens and cost of its turns; an unknown cost stays unknown.
 */
usage: UsageTotals, 
/**
 * From its creation to its last turn's end (to now while a turn runs); null before
 * any turn ran.
 */
elapsedMs: number | null, 
/**
 * Its newest preview screenshot, when one was taken.
 */
screenshotId: number | null, };

export type CapturePreviewArgs = { sessionId: string, moduleId?: string, path?: string, selector?: string, region?: CaptureRegion, viewportWidth?: number, viewportHeight?: number, };

export type CaptureRegion = { x: number, y: number, width: number, height: number, };

export type CheckpointView = { sequence: number, at: string, 
/**
 * A name for people, unique within the session: the operator message that led to
 * it (first line, clipped to 80 characters; "Autosave: <message>" for an autosave),
 * "Start" for the starting point, else what made it; a repeated name gets " (2)",
 * " (3)"….
 */
label: string, role: string | null, module: string | null, 
/**
 * The transcript entry that closes the turn this checkpoint follows.
 */
entryId?: number, 
/**
 * Whether the working copy is this checkpoint now: the one most recently taken or
 * restored to.
 */
current: boolean, };

export type CleanUpArgs = { 
/**
 * Remove the working copies; without it only say what would be removed.
 */
apply?: boolean, };

export type CleanUpView = { 
/**
 * Whether the working copies were removed (false: a dry run).
 */
applied: boolean, 
/**
 * The sessions whose working copy was (or would be) removed.
 */
sessions: Array<CleanedSession>, 
/**
 * Archived or rejected sessions with a working copy that clean-up leaves, and why.
 */
skipped: Array<SkippedSession>, 
/**
 * What was freed (applied), or would be (a dry run): the sum of `sessions[].bytes`.
 */
freedBytes: number, };

export type CleanedSession = { sessionId: string, title: string, 
/**
 * The working copy and its stat cache, allocated bytes.
 */
bytes: number, 
/**
 * The checkpoint the working copy is rebuilt from when the session is used again. A
 * dry run reads nothing of the working copy, so it names the newest checkpoint now;
 * applied, a working copy changed since then gets its own checkpoint first.
 */
checkpoint: number, 
/**
 * Applied only: the working copy had changes no checkpoint held, so clean-up took
 * one ("Before clean-up") before removing it. Always false in a dry run.
 */
checkpointTaken: boolean, };

export type CommandPolicy = "workdir" | "none";

export type CompareCandidatesArgs = { groupId: string, 
/**
 * The session whose tree is the base of the diff.
 */
left: string, 
/**
 * The session whose tree is compared with it.
 */
right: string, };

export type ConfinementView = { available: boolean, 
/**
 * `landlock`, or `none` where the kernel lacks it.
 */
mechanism: string, 
/**
 * The kernel's Landlock ABI version.
 */
abi: number | null, 
/**
 * `full`, `partial` (Landlock ABI 1 or 2) or `none`.
 */
enforcement: string, 
/**
 * One sentence saying what commands may write, or that they run with the policy alone.
 */
detail: string, };

export type ConflictFile = { path: string, 
/**
 * Empty when the file still holds a marker but no whole conflict (one was edited by
 * hand half way): it is then the user's or the agent's to finish in the file.
 */
conflicts: Array<ConflictView>, };

export type ConflictKeep = "session" | "workspace" | "both";

export type ConflictView = { 
/**
 * Names this conflict as it stands: a resolution sent after the file changed there
 * is refused (CONFLICT_NOT_FOUND) rather than landing on another.
 */
id: string, 
/**
 * The 1-based line of its `<<<<<<<` marker.
 */
line: number, session: string, workspace: string, 
/**
 * What both sides started from, when the markers carry it.
 */
base: string | null, };

export type ConflictsView = { files: Array<ConflictFile>, };

export type CreateSessionArgs = { brief: string, title?: string, 
/**
 * Module ids the operator confirmed as new modules: a brief naming an id no module
 * has is `MODULE_UNKNOWN` unless the id is listed here.
 */
createModules?: Array<string>, 
/**
 * A GitHub issue to start from: its address (`https://github.com/owner/repo/issues/N`)
 * or a number (`12`, `#12`) of the delivery repository. Its title, body and comments
 * become the brief, after any text in `brief` (which may then be empty).
 */
issue?: string, };

export type CreateSessionGroupArgs = { brief: string, title?: string, 
/**
 * As `create_session`'s: module ids confirmed as new modules.
 */
createModules?: Array<string>, 
/**
 * 2 to 5, each made a session of its own.
 */
candidates: Array<CandidateChoice>, };

export type DeleteSessionArgs = { sessionId: string, stop?: boolean, keepTranscript?: boolean, };

export type DeliverArgs = { sessionId: string, target: DeliveryTarget, planId: string, 
/**
 * Deliver past the plan's gate blockers, for this reason (recorded in the transcript
 * and the pull request). Refused when another kind of blocker stands.
 */
anyway?: string, };

export type DeliveryPlan = { sessionId: string, target: DeliveryTarget, availableTargets: Array<TargetOption>, modules: Array<PlannedModule>, 
/**
 * The gates that run first, e.g. `tests (@shop/cart)`.
 */
gates: Array<string>, 
/**
 * The steps in order, as the run will show them.
 */
steps: Array<string>, 
/**
 * Whether the running application must restart to pick the change up.
 */
restartNeeded: boolean, 
/**
 * Empty when it can go ahead.
 */
blockers: Array<Blocker>, 
/**
 * For git-pr: the branch it pushes.
 */
branch: string | null, 
/**
 * A digest of the plan: `deliver` refuses a confirmation of another plan.
 */
planId: string, };

export type DeliveryRun = { id: string, sessionId: string, target: DeliveryTarget, state: DeliveryState, steps: Array<DeliveryStep>, startedAt: string, endedAt: string | null, pullRequest: PullRequestView | null, 
/**
 * What landed (workspace-relative paths), once delivered.
 */
landed: Array<string>, error: ApiError | null, };

export type DeliverySettingsView = { 
/**
 * `owner/name` on the provider.
 */
repository: string | null, reviewers: Array<string>, 
/**
 * `auto`, `direct` or `fork`.
 */
pushMode: string, remote: string, base: string, branchPrefix: string, 
/**
 * The provider's API root (default `https://api.github.com`).
 */
apiUrl: string, 
/**
 * The provider token's fingerprint, when one is stored for `api_url`.
 */
tokenFingerprint: string | null, };

export type DeliveryState = "running" | "delivered" | "failed";

export type DeliveryStep = { id: string, title: string, moduleId: string | null, state: StepState, output: string, startedAt: string | null, endedAt: string | null, };

export type DeliveryTarget = "workspace" | "git-pr";

export type DetectedCommand = { command: string, source: string, };

export type DetectedGate = { 
/**
 * `dependencies`, `typecheck`, `tests`, `format` or `lint`.
 */
gate: string, 
/**
 * `None`: not configured (never a blocker).
 */
command: string | null, 
/**
 * Where the command came from, or why there is none.
 */
source: string, 
/**
 * For a gate with no command: what would give it one.
 */
hint: string | null, };

export type DetectedModule = { id: string, directory: string, toolchain: Toolchain, gates: Array<DetectedGate>, };

export type DetectionView = { root: string, 
/**
 * The workspace's `kiln.toml`, when it has one.
 */
configPath: string | null, workflow: Workflow, modules: Array<DetectedModule>, toolchains: Array<ToolchainCheck>, 
/**
 * The install step run after a session's working copy is made.
 */
setup: DetectedCommand | null, 
/**
 * The same, as the `kiln.toml` that "Save as kiln.toml" writes.
 */
toml: string, 
/**
 * What the commands Kiln runs (setup, gates, the preview, terminals) get of the
 * user's environment, by name, in order.
 */
environment: Array<PassedVariable>, 
/**
 * The user's tool configuration files (under the home) the commands read from a copy.
 */
configFiles: Array<string>, };

export type DiffGroup = "module" | "other-module" | "outside";

export type DiffLine = { kind: LineKind, oldLine: number | null, newLine: number | null, text: string, };

export type DiffView = { modules: Array<ModuleDiff>, };

export type DiskUsageView = { 
/**
 * `.kiln/store.git`: every session's base snapshots and checkpoints.
 */
storeBytes: number, 
/**
 * `.kiln/sessions` as a whole (a directory no session record names included).
 */
sessionsBytes: number, 
/**
 * One per session directory in `.kiln/sessions`.
 */
sessions: Array<SessionDiskUsage>, measuredAt: string, };

export type DriverStatus = { id: string, 
/**
 * The name the pickers show where the id is not one ("Gemini CLI (ACP)"); `None`
 * shows the id.
 */
name?: string | null, available: boolean, 
/**
 * The binary found, the endpoint set, or what to do to make it available.
 */
detail: string, 
/**
 * What the binary's `--version` says (its first line), for a local CLI that
 * answered; `None` when not installed or it would not say.
 */
version: string | null, 
/**
 * Whether it is signed in, where that can be told without the network: an API key in
 * the environment Kiln gives the CLI or the credentials file its login writes; for
 * the OpenAI-compatible driver, whether a key is stored. `None` when not installed or
 * when it cannot be told (the macOS keychain).
 */
signedIn: boolean | null, };

export type EmptyArgs = Record<symbol, never>;

export type EntryKind = "user" | "agent" | "system" | "tool" | "gate" | "handoff";

export type ErrorCode = "INVALID_INPUT" | "INVALID_SESSION_ID" | "WORKSPACE_NOT_FOUND" | "WORKSPACE_NOT_OPEN" | "CONFIG_INVALID" | "MODULE_NOT_FOUND" | "MODULE_REQUIRED" | "MODULE_ALREADY_IN_SESSION" | "SESSION_NOT_FOUND" | "SESSION_DELETED" | "SESSION_RUNNING" | "SESSION_ARCHIVED" | "SESSION_DELIVERED" | "SESSION_NOT_ARCHIVED" | "UNKNOWN_COMMAND" | "ATTACHMENT_LIMIT" | "ATTACHMENT_TOO_LARGE" | "ATTACHMENT_TYPE" | "ATTACHMENT_EMPTY" | "ATTACHMENT_MISMATCH" | "DRIVER_NOT_FOUND" | "DRIVER_FAILED" | "SPEC_MISSING" | "ATTACHMENT_NOT_FOUND" | "CHECKPOINT_NOT_FOUND" | "CONFLICT_NOT_FOUND" | "NOT_ALLOWED_IN_MODE" | "PATH_NOT_ALLOWED" | "SECRET_UNREADABLE" | "PREVIEW_NOT_CONFIGURED" | "DELIVERY_BLOCKED" | "DELIVERY_CONFLICT" | "PLAN_STALE" | "TARGET_UNAVAILABLE" | "BRANCH_MOVED" | "CONFIG_EXISTS" | "TOOLCHAIN_MISSING" | "WORKSPACE_IN_USE" | "MODULE_UNKNOWN" | "MODEL_UNKNOWN" | "NOT_BLOCKED" | "TERMINAL_NOT_FOUND" | "TERMINAL_LIMIT" | "TERMINAL_EXITED" | "PERMISSION_NOT_FOUND" | "CAPTURE_UNAVAILABLE" | "CAPTURE_FAILED" | "SCREENSHOT_NOT_FOUND" | "COMMENT_NOT_FOUND" | "NOTHING_TO_SEND" | "NOTHING_TO_UPDATE" | "CONFLICTS_UNRESOLVED" | "GROUP_NOT_FOUND" | "ISSUE_NOT_FOUND" | "MCP_SERVER_NOT_FOUND" | "DATABASE_UNAVAILABLE" | "OBJECTS_UNAVAILABLE" | "HOST_UNAVAILABLE" | "INTERNAL";

export type EventBody = { "type": "session", session: SessionView, } | { "type": "transcript", entry: TranscriptEntry, } | { "type": "sessionRemoved", sessionId: string, } | { "type": "workspace", workspace: WorkspaceView, } | { "type": "preview", preview: PreviewView, } | { "type": "delivery", run: DeliveryRun, } | { "type": "resync" } | { "type": "live", live: LiveView, } | { "type": "terminal", terminal: TerminalView, } | { "type": "gates", sessionId: string, gates: Array<GateResultView>, } | { "type": "checkpoint", sessionId: string, sequence: number, restored: boolean, };

export type FileDiff = { path: string, oldPath: string | null, status: FileStatus, binary: boolean, tooLarge: boolean, additions: number, deletions: number, hunks: Array<Hunk>, };

export type FileStatus = "added" | "modified" | "deleted" | "renamed";

export type GateResultView = { id: number, module: string | null, gate: string, command: string, status: GateStatus, 
/**
 * Where the command came from: `kiln.toml`, or what Kiln detected it from
 * (`package.json scripts.test`, `vitest.config.ts at the root`, …).
 */
source: string, exitCode: number | null, durationMs: number, outputHead: string, 
/**
 * Empty when the whole output fit in the head.
 */
outputTail: string, at: string, 
/**
 * The verdict in words beyond the status: "1 new failure: `name`", "3 failures, all
 * there before this session", "not run: setup failed: …"; empty when there is none.
 */
note: string, 
/**
 * Whether it judged the working copy's files as they are now: `false` after a
 * restore or an edit it did not see; absent when that is unknown (the session's
 * setup, results kept before Kiln recorded it).
 */
current?: boolean, };

export type GateStatus = "passed" | "failed" | "failing-before" | "skipped" | "not-configured";

export type GetDiffArgs = { sessionId: string, 
/**
 * Only this module's files; every module of the session when absent.
 */
moduleId?: string, };

export type GetIssueArgs = { 
/**
 * An issue's address, or a number of the delivery repository (as `createSession.issue`).
 */
issue: string, };

export type GetTranscriptArgs = { sessionId: string, 
/**
 * Only the entries after this one (a resync asks for what it missed).
 */
after?: number, 
/**
 * Only the entries before this one (the older part of a transcript opened at its end).
 */
before?: number, 
/**
 * Only the newest this many of the entries asked for: a long transcript opens with its end
 * drawn while the rest loads.
 */
last?: number, };

export type GroupIdArgs = { groupId: string, };

export type GroupSummary = { id: string, title: string, createdAt: string, pickedSessionId: string | null, 
/**
 * Its candidates' sessions, in their order.
 */
sessionIds: Array<string>, };

export type GroupView = { id: string, title: string, brief: string, createdAt: string, 
/**
 * The candidate picked for delivery, once one is.
 */
pickedSessionId: string | null, pickedAt: string | null, candidates: Array<CandidateView>, };

export type Hunk = { oldStart: number, oldLines: number, newStart: number, newLines: number, header: string, lines: Array<DiffLine>, };

export type IssueLink = { 
/**
 * The issue's web address (`https://github.com/acme/shop/issues/12`).
 */
url: string, number: number, 
/**
 * `owner/name` of the repository the issue is in.
 */
repo: string, };

export type IssueSummary = { number: number, title: string, 
/**
 * The author's login.
 */
author: string, labels: Array<string>, updatedAt: string, url: string, };

export type KilnEvent = { id: number, at: string, body: EventBody, };

export type LineKind = "context" | "add" | "delete";

export type ListModelsArgs = { driver?: string, };

export type ListSessionsArgs = { includeArchived?: boolean, };

export type LivePhase = "planning" | "setup" | "turn";

export type LiveStatus = { kind: LiveStatusKind, 
/**
 * Words for people, e.g. "The provider is overloaded (529)".
 */
message: string, attempt: number | null, maxAttempts: number | null, 
/**
 * A stable short reason: `auth`, `rate-limit`, `overloaded`, `network` or `other`.
 */
reason: string, 
/**
 * The HTTP status, when known.
 */
httpStatus: number | null, };

export type LiveStatusKind = "retrying" | "failed";

export type LiveView = { sessionId: string, phase: LivePhase, role: string | null, module: string | null, 
/**
 * The agent's prose of the current stretch so far, not yet written to the
 * transcript; `None` once it is written (or nothing is streaming).
 */
text: string | null, 
/**
 * One updating status line for the phase, or `None` when the phase ended or cleared.
 */
status: LiveStatus | null, 
/**
 * The end of what the running command has printed so far (at most
 * `live::OUTPUT_TAIL` bytes), where the agent reports it as it runs; `None` when no
 * command runs or its output is not heard until it ends.
 */
output?: string, };

export type McpServerCheck = { name: string, source: McpSource, 
/**
 * It answered `initialize`.
 */
started: boolean, 
/**
 * The name and version it gave, as "name version".
 */
server: string | null, 
/**
 * The tools it offers, by name; agents see them as `mcp__<server>__<tool>`.
 */
tools: Array<string>, 
/**
 * Why it did not start or answer, with the end of what it wrote to stderr.
 */
error: string | null, 
/**
 * How long the check took, in milliseconds.
 */
millis: number, };

export type McpServerNameArgs = { name: string, };

export type McpServerView = { name: string, source: McpSource, 
/**
 * The command agents start (stdio), with its arguments; null for an HTTP server.
 */
command: string | null, args: Array<string>, 
/**
 * The address agents reach (HTTP); null for a command.
 */
url: string | null, envNames: Array<string>, headerNames: Array<string>, 
/**
 * A Settings server of the same name is used instead of this `kiln.toml` one.
 */
overridden: boolean, };

export type McpSource = "repository" | "settings";

export type ModelListView = { driver: string, 
/**
 * The model a turn runs with when none is chosen (Settings' model for the
 * OpenAI-compatible endpoint), when Kiln knows it.
 */
defaultModel: string | null, models: Array<string>, 
/**
 * Where the list comes from, in words: "the endpoint's /models", "Claude Code's model
 * aliases", or why there is none.
 */
source: string, 
/**
 * The list is all the agent accepts (an endpoint's own list): another model is
 * refused before a turn starts (`MODEL_UNKNOWN`). Otherwise any model id may be typed.
 */
complete: boolean, };

export type ModuleArgs = { sessionId: string, moduleId: string, };

export type ModuleChange = "new" | "edit";

export type ModuleDiff = { 
/**
 * The module's id; `(repository)` (`OUTSIDE_MODULES_ID`) for the files outside every module.
 */
moduleId: string, 
/**
 * The module's directory; empty for the files outside every module.
 */
directory: string, group: DiffGroup, baseSequence: number, files: Array<FileDiff>, };

export type ModuleInfo = { id: string, 
/**
 * Workspace-relative, `/`-separated; `.` for a whole-repository module.
 */
directory: string, toolchain: Toolchain, 
/**
 * The `status:` line of the module's specification front matter, when it has one.
 */
specStatus: string | null, };

export type ModuleUrl = { moduleId: string, 
/**
 * A path on the preview's origin, e.g. `/?module=cart`.
 */
path: string, };

export type NamedValue = { name: string, value: string, };

export type OpenTerminalArgs = { sessionId: string, kind: TerminalKind, 
/**
 * 80 when absent; 2 to 1000.
 */
cols?: number | null, 
/**
 * 24 when absent; 1 to 500.
 */
rows?: number | null, };

export type OpenWorkspaceArgs = { path: string, };

export type PassedVariable = { name: string, 
/**
 * Null for a value kept from view: a secret-looking name the user passed on purpose.
 */
value: string | null, 
/**
 * `your environment`, `kiln.toml [environment] pass` or `kiln.toml [environment] set`.
 */
source: string, };

export type PermissionCard = { 
/**
 * Kiln's id for the request (unique within the session).
 */
id: string, 
/**
 * The agent's title for the call, one line ("Fetch https://example.com").
 */
title: string, 
/**
 * The tool kind, as the transcript's tool rows say it (`read`, `edit`, `execute`, `fetch`…).
 */
kind: string, 
/**
 * Files the call touches, relative to the working copy where they are inside it.
 */
locations: Array<string>, 
/**
 * Why Kiln's policy did not answer it by itself, in words.
 */
why: string, options: Array<PermissionChoice>, askedAt: string, };

export type PermissionChoice = { id: string, name: string, kind: PermissionChoiceKind, };

export type PermissionChoiceKind = "allow_once" | "allow_always" | "reject_once" | "reject_always";

export type PickCandidateArgs = { groupId: string, sessionId: string, };

export type PlanDeliveryArgs = { sessionId: string, 
/**
 * Default: `[delivery] default`, else the first available target.
 */
target?: DeliveryTarget, };

export type PlannedModule = { 
/**
 * The module's id; `(repository)` (`OUTSIDE_MODULES_ID`) for the files outside every module.
 */
moduleId: string, 
/**
 * Empty for the files outside every module.
 */
directory: string, 
/**
 * A module of the session, a changed module not in it, or the files outside every
 * module (direct workflow), as the diff groups them.
 */
group: DiffGroup, kind: ModuleChange, 
/**
 * Files the session added (workspace-relative).
 */
added: Array<string>, 
/**
 * Files that exist in the target and will be overwritten.
 */
overwritten: Array<string>, 
/**
 * Files the session deleted.
 */
deleted: Array<string>, 
/**
 * Packages its manifests add that the workspace lacks.
 */
newPackages: Array<string>, 
/**
 * A new module that must be enabled (`[delivery] enable`).
 */
enable: boolean, };

export type PointedChip = { screenshotId: number, kind: ScreenshotKind, pagePath: string, selector: string | null, };

export type PointedContext = { screenshotId: number, 
/**
 * The page's path on the preview's origin.
 */
pagePath: string, selector?: string, 
/**
 * The element's outer HTML, trimmed by the picking script.
 */
html?: string, 
/**
 * Computed styles of the element, by property name.
 */
styles?: { [key in string]: string }, };

export type PreviewKind = "command" | "static" | "none";

export type PreviewState = "stopped" | "starting" | "ready" | "restarting" | "crashed";

export type PreviewView = { sessionId: string, kind: PreviewKind, state: PreviewState, 
/**
 * The gateway's origin, e.g. `http://127.0.0.1:41234`, while it runs.
 */
origin: string | null, 
/**
 * The first URL to load in the frame: it carries the preview's secret, which the
 * gateway turns into an HttpOnly cookie and strips with a redirect.
 */
enterUrl: string | null, 
/**
 * The port the application listens on (`$PORT`), for the command kind.
 */
port: number | null, 
/**
 * Why it stopped or crashed, in words.
 */
message: string | null, 
/**
 * The last lines of the process's output (stdout and stderr).
 */
log: Array<string>, 
/**
 * Times it was started again after exiting.
 */
restarts: number, 
/**
 * `fixtures` or `bridge`.
 */
data: string, bridge: BridgeActivity | null, 
/**
 * Each session module's first screen.
 */
moduleUrls: Array<ModuleUrl>, };

export type PullRequestView = { 
/**
 * The pull request's page, or a compare link when none could be created.
 */
url: string, number: number | null, branch: string, 
/**
 * `api`, `gh` or `compare`.
 */
via: string, 
/**
 * False when a second delivery updated an open pull request.
 */
created: boolean, };

export type RemoveAttachmentArgs = { sessionId: string, attachmentId: string, };

export type ResizeTerminalArgs = { terminalId: string, cols: number, rows: number, };

export type ResolveConflictArgs = { sessionId: string, path: string, 
/**
 * The conflict's id from `get_conflicts`.
 */
conflictId: string, keep: ConflictKeep, };

export type ResolveReviewCommentArgs = { sessionId: string, commentId: string, 
/**
 * `false` takes a resolved (or addressed) comment back to open.
 */
resolved: boolean, };

export type RestoreCheckpointArgs = { sessionId: string, sequence: number, };

export type ReviewCommentArgs = { sessionId: string, commentId: string, };

export type ReviewCommentState = "open" | "sent" | "addressed" | "resolved";

export type ReviewCommentView = { id: string, 
/**
 * Workspace-relative, as the diff names the file.
 */
path: string, 
/**
 * Lines of the working copy (the diff's new side), 1-based, inclusive. After a turn
 * that changed lines above them, they are moved to where the same lines are now.
 */
startLine: number, endLine: number, 
/**
 * What those lines held when the comment was made, read by Kiln from the working copy.
 */
quote: string, body: string, state: ReviewCommentState, 
/**
 * The turn it was sent with, once that turn ended.
 */
turnId: number | null, 
/**
 * Why it is open again after it was sent (its lines did not change, the turn was cut short).
 */
note: string | null, createdAt: string, updatedAt: string, };

export type ReviewView = { moduleId: string, passed: boolean, 
/**
 * The module's files changed since the review: it no longer counts.
 */
stale: boolean, 
/**
 * The verdict line's reason.
 */
summary: string, 
/**
 * The whole report (correctness, security, compatibility, lifecycle, tests, UI).
 */
report: string, createdAt: string, };

export type RoleSummary = { id: string, name: string, };

export type RoleUsage = { role: string, usage: UsageTotals, };

export type SaveConfigArgs = { workflow: Workflow, 
/**
 * The install step; empty for none.
 */
setup: string | null, modules: Array<SaveModuleGates>, 
/**
 * Replace an existing `kiln.toml` (otherwise `CONFIG_EXISTS`).
 */
replace: boolean, };

export type SaveMcpServerArgs = { name: string, command?: string, args?: Array<string>, url?: string, env?: Array<NamedValue>, headers?: Array<NamedValue>, };

export type SaveModuleGates = { id: string, 
/**
 * Gate name to command; an empty command is written as off (not configured).
 */
gates: { [key in string]: string }, };

export type SaveSpecArgs = { sessionId: string, moduleId: string, text: string, };

export type ScreenshotArgs = { sessionId: string, screenshotId: number, };

export type ScreenshotImage = { screenshot: ScreenshotView, pngBase64: string, };

export type ScreenshotKind = "turn" | "page" | "element" | "region";

export type ScreenshotView = { id: number, kind: ScreenshotKind, 
/**
 * The checkpoint the working copy was at when it was taken (0: the session's start).
 */
checkpoint: number | null, moduleId: string | null, 
/**
 * The page's path on the preview's origin.
 */
pagePath: string, width: number, height: number, takenAt: string, };

export type SendMessageArgs = { sessionId: string, text: string, 
/**
 * The composer's role picker: this turn only.
 */
role?: string, 
/**
 * The composer's module picker: this turn only.
 */
module?: string, driver?: string, model?: string, 
/**
 * What the operator pointed at in the preview, for this turn's prompt (at most 8).
 */
context?: Array<PointedContext>, };

export type SendReviewArgs = { sessionId: string, 
/**
 * The operator's words before the comments, if any.
 */
message?: string, };

export type ServeMode = "loopback" | "self-hosted";

export type SessionDiskUsage = { sessionId: string, 
/**
 * `sessions/<id>/workspace`; null when the session has no working copy (removed by
 * clean-up, or lost).
 */
workingCopyBytes: number | null, 
/**
 * `sessions/<id>/attachments`: the stored attachments.
 */
attachmentsBytes: number, 
/**
 * The rest of the session's directory: the stat cache (`index`) and the directory itself.
 */
otherBytes: number, };

export type SessionIdArgs = { sessionId: string, };

export type SessionKind = "new-module" | "edit-module";

export type SessionModule = { id: string, directory: string, kind: ModuleChange, joinedAt: string, baseSequence: number, };

export type SessionState = "planning" | "awaiting-approval" | "editing" | "running" | "review" | "blocked" | "delivered";

export type SessionView = { id: string, kind: SessionKind, modules: Array<SessionModule>, title: string, brief: string, role: string | null, driver: string | null, model: string | null, resumeIds: { [key in string]: string }, autoContinue: boolean, chainDepth: number, state: SessionState, 
/**
 * Whether a process of this session (a turn, its setup) is running now.
 */
running: boolean, setup: SetupState, createdAt: string, updatedAt: string, deliveredAt: string | null, archivedAt: string | null, rejectedAt: string | null, deletedAt: string | null, attachments: Array<AttachmentView>, checkpoints: Array<CheckpointView>, 
/**
 * The role the next message goes to when none is picked (an asker, a paused chain).
 */
pendingRole: string | null, usage: UsageView, 
/**
 * Each module's auto-review report, checked against its files as they are now.
 */
reviews: Array<ReviewView>, 
/**
 * Whether the working copy's checkpoint (the current one) differs from the session's
 * start: `false` means its turns changed nothing (so there is nothing to deliver).
 */
changed: boolean, 
/**
 * The agent's permission requests waiting for the operator (cards in the chat), oldest
 * first; absent when none waits, which is most of the time.
 */
permissions?: Array<PermissionCard>, 
/**
 * Screenshots of the session's preview, oldest first: after turns (the filmstrip) and
 * captured by the operator. Absent when there are none.
 */
screenshots?: Array<ScreenshotView>, 
/**
 * The operator's comments on lines of the diff, oldest first; absent when there are none.
 */
reviewComments?: Array<ReviewCommentView>, 
/**
 * The group of candidates this session is one of (best-of-N), when it is.
 */
groupId?: string, 
/**
 * Its place in the group, from 0.
 */
candidate?: number, 
/**
 * Its turn waits for a free slot (`[session] max_parallel_turns`); absent otherwise.
 */
waiting?: boolean, 
/**
 * The GitHub issue the session started from; its pull request closes it.
 */
issue: IssueLink | null, 
/**
 * The checkpoint the session's change is measured from (its diff, delivery): 0, the
 * start, until the session took in what changed in the workspace
 * (`update_from_workspace`); absent when 0.
 */
baseSequence?: number, 
/**
 * Files that update left with conflict markers (`<<<<<<<`) and that still hold them:
 * nothing is delivered until they are resolved. Absent when none.
 */
conflicts?: Array<string>, };

export type SettingsView = { defaultDriver: string, 
/**
 * Which commands agents may run.
 */
commandPolicy: CommandPolicy, 
/**
 * Whether this server lets agents run commands at all: a self-hosted server started
 * without `--allow-agent-commands` does not, whatever the policy says.
 */
commandsAllowed: boolean, 
/**
 * How their commands are confined on this machine.
 */
confinement: ConfinementView, claudePath: string | null, codexPath: string | null, openaiBaseUrl: string | null, openaiModel: string | null, openaiKeyFingerprint: string | null, 
/**
 * Whether the planner agent amends the rules' classification of a new session.
 */
plannerAgent: boolean, 
/**
 * The drivers this server offers (in self-hosted mode, bring-your-own-key only).
 */
drivers: Array<DriverStatus>, 
/**
 * The connected application (`[preview] bridge`): the address set here, else kiln.toml's.
 */
bridgeUrl: string | null, 
/**
 * Its access token's fingerprint, when a token is stored for `bridge_url`.
 */
bridgeTokenFingerprint: string | null, delivery: DeliverySettingsView, 
/**
 * The ACP agents (README: "ACP agents"): the presets and the custom command line; their
 * status (found, version) is their entry in `drivers`. Empty on a self-hosted server.
 */
acpAgents: Array<AcpAgentView>, 
/**
 * The names of the custom ACP command's environment variables; the values are stored
 * sealed and never sent back.
 */
acpCustomEnvNames: Array<string>, 
/**
 * The MCP servers every agent is given: `kiln.toml`'s, then this user's.
 */
mcpServers: Array<McpServerView>, };

export type SetupState = "none" | "running" | "passed" | "failed";

export type SkippedSession = { sessionId: string, title: string, reason: string, };

export type SpecView = { moduleId: string, 
/**
 * Workspace-relative path of the specification file.
 */
path: string, 
/**
 * `None` when the module has no specification yet.
 */
text: string | null, 
/**
 * The `status:` line of its front matter.
 */
status: string | null, 
/**
 * Approved as it stands: an approval recorded for this exact text, or unchanged
 * since the session's base where it was already approved.
 */
approved: boolean, };

export type StepState = "pending" | "running" | "passed" | "failed" | "skipped";

export type StopArgs = { sessionId: string, stop?: boolean, };

export type TargetOption = { target: DeliveryTarget, available: boolean, reason: string | null, };

export type TerminalArgs = { terminalId: string, };

export type TerminalChunk = { "type": "output", data: string, } | { "type": "exit", exitCode: number | null, };

export type TerminalInputArgs = { terminalId: string, 
/**
 * Text as the terminal view types it (keys, pastes, escape sequences); at most 64 KiB.
 */
data: string, };

export type TerminalKind = "shell" | "claude" | "codex";

export type TerminalState = "running" | "exited";

export type TerminalView = { id: string, sessionId: string, kind: TerminalKind, 
/**
 * What runs, for a tab: `bash`, `claude --resume`, `codex resume`.
 */
title: string, cols: number, rows: number, state: TerminalState, 
/**
 * The program's exit code once it exited; null while it runs or when a signal ended it.
 */
exitCode: number | null, startedAt: string, endedAt: string | null, };

export type TestCounts = { passed: number, failed: number, };

export type Toolchain = "node" | "rust" | "python" | "go" | "generic";

export type ToolchainCheck = { 
/**
 * The command: `node`, `pnpm`, `cargo`, `python3`, `uv`, `go`, `make`…
 */
name: string, 
/**
 * The version this machine has, `None` when it is missing.
 */
found: string | null, 
/**
 * The version the repository asks for (`go 1.23` in go.mod, `engines.node`…).
 */
required: string | null, ok: boolean, 
/**
 * What to install, when not ok.
 */
message: string | null, };

export type TranscriptEntry = { id: number, sessionId: string, kind: EntryKind, module: string | null, role: string | null, text: string, createdAt: string, 
/**
 * An operator message's chips: what was pointed at in the preview with it.
 */
context?: Array<PointedChip>, };

export type Transport = "desktop" | "serve";

export type UpdateReviewCommentArgs = { sessionId: string, commentId: string, body: string, };

export type UpdateSessionArgs = { sessionId: string, autoContinue?: boolean, title?: string, };

export type UpdateSettingsArgs = { defaultDriver?: string, plannerAgent?: boolean, 
/**
 * `workdir` (commands in the working copy) or `none` (no commands).
 */
commandPolicy?: string, claudePath?: string, codexPath?: string, openaiBaseUrl?: string, openaiModel?: string, 
/**
 * Stored sealed; required again whenever the endpoint changes, so a stored key is
 * never sent to a host it was not given for.
 */
openaiKey?: string, 
/**
 * The connected application's address; changing it requires `bridge_token` in the
 * same request, so a stored token is never sent to another host.
 */
bridgeUrl?: string, 
/**
 * Stored sealed, bound to `bridge_url`.
 */
bridgeToken?: string, 
/**
 * `owner/name` on the provider.
 */
deliveryRepository?: string, 
/**
 * Logins asked to review each pull request.
 */
deliveryReviewers?: Array<string>, 
/**
 * `auto`, `direct` or `fork`.
 */
deliveryPushMode?: string, deliveryRemote?: string, deliveryBase?: string, deliveryBranchPrefix?: string, 
/**
 * Changing it requires `delivery_token` in the same request.
 */
deliveryApiUrl?: string, 
/**
 * Stored sealed, bound to `delivery_api_url`; saving never pushes anything.
 */
deliveryToken?: string, 
/**
 * The custom ACP agent's command line, split into words as a shell would (quotes,
 * backslashes) but never run by one; "" clears it.
 */
acpCustomCommand?: string, 
/**
 * Its environment, `KEY=VALUE` lines, replacing the stored ones whole; stored sealed.
 * "" clears them.
 */
acpCustomEnv?: string, 
/**
 * Binary paths for ACP presets not on PATH: preset id → absolute path; "" clears one.
 * Presets not named keep theirs.
 */
acpPaths?: { [key in string]: string }, };

export type UsageTotals = { turns: number, inputTokens: number, outputTokens: number, cacheReadTokens: number, cacheWriteTokens: number, costUsd: number | null, unknownCostTurns: number, };

export type UsageView = { total: UsageTotals, byRole: Array<RoleUsage>, };

export type Workflow = "direct" | "specs";

export type WorkspaceView = { root: string, name: string, isGit: boolean, configPath: string | null, 
/**
 * `direct` unless the workspace's `kiln.toml` chooses `specs`.
 */
workflow: Workflow, 
/**
 * The roles the composer's picker offers: `engineer` and the workspace's own in
 * the direct workflow, the specialists in specs.
 */
roles: Array<RoleSummary>, idPattern: string | null, modules: Array<ModuleInfo>, };

/** Every operation of the API, from its table (src-tauri/types/src/operations.rs): its arguments and its result. */
export interface CommandMap {
  /** The app's version, transport and mode, the open workspace and the recent ones. */
  get_state: { args: EmptyArgs; result: AppState };
  /**
   * WORKSPACE_IN_USE (409), naming the holder and its pid, when another Kiln process has the
   * workspace open: one process works on a workspace at a time.
   */
  open_workspace: { args: OpenWorkspaceArgs; result: WorkspaceView };
  /**
   * Archived and rejected sessions are hidden unless `includeArchived`; deleted tombstones are
   * listed only with it.
   */
  list_sessions: { args: ListSessionsArgs; result: Array<SessionView> };
  get_session: { args: SessionIdArgs; result: SessionView };
  /**
   * MODULE_UNKNOWN (404) when the brief names `module <x>` or a new-module id that is no module
   * of the workspace: the message starts with the unknown id(s) in backticks and lists the
   * modules; sending the id(s) in createModules creates them as new modules (INVALID_INPUT when
   * one cannot be: no id pattern, no free directory). `module <x>` takes a module id as well as
   * a directory. With `issue` (a GitHub issue's address on the delivery provider's host, or a
   * number of the delivery repository) the brief is the typed text, then the issue's title, body
   * and comments; the session links to it: INVALID_INPUT for another address or a pull request,
   * ISSUE_NOT_FOUND, TARGET_UNAVAILABLE with no token or repository.
   */
  create_session: { args: CreateSessionArgs; result: SessionView };
  /** The entries after `after` (an entry id), or all. */
  get_transcript: { args: GetTranscriptArgs; result: Array<TranscriptEntry> };
  add_module: { args: AddModuleArgs; result: SessionView };
  archive_session: { args: StopArgs; result: SessionView };
  /** Un-archives or un-rejects. */
  restore_session: { args: SessionIdArgs; result: SessionView };
  reject_session: { args: StopArgs; result: SessionView };
  /** Null when the record was removed (no transcript kept). */
  delete_session: { args: DeleteSessionArgs; result: SessionView | null };
  /** Starts a turn (a running one is stopped first). */
  send_message: { args: SendMessageArgs; result: SessionView };
  /**
   * Stops the turn; else the planner agent, the setup (or gates) and a message waiting for them,
   * with one system entry "Stopped by the operator during planning/setup.". INVALID_INPUT when
   * nothing runs.
   */
  stop_turn: { args: SessionIdArgs; result: SessionView };
  /**
   * Runs again the turn that blocked the session: same module, role, driver, model and prompt.
   * NOT_BLOCKED (409) unless the session is blocked, SESSION_RUNNING.
   */
  retry_turn: { args: SessionIdArgs; result: SessionView };
  /**
   * Runs the session's setup (its dependencies' install) again after it failed; the gates that
   * did not run for it run with the next turn or "Run gates". SESSION_RUNNING while a turn or
   * the setup runs; INVALID_INPUT when the setup did not fail.
   */
  retry_setup: { args: SessionIdArgs; result: SessionView };
  /** SPEC_MISSING when the module has no SPEC.md yet. */
  approve_spec: { args: ApproveSpecArgs; result: SessionView };
  /** Each module's changes against its base, or one module's with moduleId. */
  get_diff: { args: GetDiffArgs; result: DiffView };
  /**
   * Puts the session's working copy back to a checkpoint (0 is the starting point); later
   * checkpoints are kept. CHECKPOINT_NOT_FOUND, INVALID_INPUT, SESSION_RUNNING, SESSION_ARCHIVED,
   * SESSION_DELIVERED.
   */
  restore_checkpoint: { args: RestoreCheckpointArgs; result: SessionView };
  /**
   * Takes in what changed in the workspace since the session's base: a three-way merge into the
   * working copy, recorded as checkpoints (the workspace taken in, the session's new base; then the
   * merged copy). Conflicting files keep both sides between markers and are listed in
   * `conflicts` until resolved. NOTHING_TO_UPDATE, CONFLICTS_UNRESOLVED, SESSION_RUNNING,
   * SESSION_ARCHIVED, SESSION_DELIVERED.
   */
  update_from_workspace: { args: SessionIdArgs; result: SessionView };
  /**
   * The conflicts the last update from the workspace left, per file still holding markers, each
   * with the session's side and the workspace's.
   */
  get_conflicts: { args: SessionIdArgs; result: ConflictsView };
  /**
   * Replaces one conflict in the working copy by the side kept (the session's, the workspace's,
   * or both); a file left with no marker is resolved, recorded as a checkpoint. CONFLICT_NOT_FOUND
   * when the file holds no conflict with that id (it changed since it was read), SESSION_RUNNING,
   * SESSION_ARCHIVED, SESSION_DELIVERED, PATH_NOT_ALLOWED.
   */
  resolve_conflict: { args: ResolveConflictArgs; result: ConflictsView };
  /**
   * The latest result of each gate, per module and gate: spec-schema and module-schema (module
   * null: the whole working copy), then dependencies, typecheck, tests, format and lint per
   * module. Status passed | failed | skipped | not-configured (no command: the hint is in
   * outputHead; never a blocker); source: where the command came from; outputTail is empty when
   * the output fit in the head.
   */
  get_gates: { args: SessionIdArgs; result: Array<GateResultView> };
  /**
   * Runs every gate of every module of the session now; answers as get_gates does.
   * SESSION_RUNNING while the session runs.
   */
  check_modules: { args: SessionIdArgs; result: Array<GateResultView> };
  /**
   * A module's specification in the session's working copy (text null when it has none);
   * MODULE_NOT_FOUND.
   */
  get_spec: { args: ModuleArgs; result: SpecView };
  /**
   * Writes the operator's edit of a module's specification; any edit makes an approval stale.
   * SESSION_RUNNING while a turn runs, MODULE_NOT_FOUND.
   */
  save_spec: { args: SaveSpecArgs; result: SpecView };
  get_settings: { args: EmptyArgs; result: SettingsView };
  /**
   * An absent field stays as it is, "" clears it; the key and the bridge token are write-only
   * (the view has only their fingerprints). A changed openaiBaseUrl or bridgeUrl while a key or
   * token is stored needs the key or token in the same request, else INVALID_INPUT. Self-hosted
   * lists only openai-compatible in drivers and refuses claudePath, codexPath and defaultDriver
   * claude or codex with NOT_ALLOWED_IN_MODE.
   */
  update_settings: { args: UpdateSettingsArgs; result: SettingsView };
  /**
   * Adds or replaces this user's MCP server `name` (SPEC §23); the values of its variables
   * and headers are stored sealed and never shown again. A server is a command or an address:
   * INVALID_INPUT naming what is wrong. NOT_ALLOWED_IN_MODE on a self-hosted server, where a
   * command would run on the host.
   */
  save_mcp_server: { args: SaveMcpServerArgs; result: SettingsView };
  /**
   * Removes this user's MCP server `name`; MCP_SERVER_NOT_FOUND when there is none (a `kiln.toml` server is
   * removed by editing the file).
   */
  remove_mcp_server: { args: McpServerNameArgs; result: SettingsView };
  /**
   * Starts (or reaches) every MCP server agents are given and asks for its tools, as an agent
   * would, each within 15 seconds; says for each whether it answered and what it offers.
   */
  check_mcp_servers: { args: EmptyArgs; result: Array<McpServerCheck> };
  /**
   * The models an agent offers for the composer's picker: the OpenAI-compatible endpoint's own
   * list (GET /models; `complete`: send_message refuses another with MODEL_UNKNOWN), Claude
   * Code's aliases, none known for Codex and ACP agents (any id may be typed).
   * DRIVER_NOT_FOUND for an unknown driver.
   */
  list_models: { args: ListModelsArgs; result: ModelListView };
  /**
   * Stores a file for the session's agents (at most 10, 5 MB each, png jpg jpeg gif webp md txt
   * json csv pdf svg, content matching the extension): ATTACHMENT_LIMIT, ATTACHMENT_TOO_LARGE,
   * ATTACHMENT_TYPE, ATTACHMENT_EMPTY, ATTACHMENT_MISMATCH, INVALID_INPUT (bad name or base64).
   * Its body carries 5 MB base64-encoded, a third larger.
   */
  add_attachment: { args: AddAttachmentArgs; result: AttachmentView };
  /** ATTACHMENT_NOT_FOUND when the session has no such attachment. */
  remove_attachment: { args: RemoveAttachmentArgs; result: SessionView };
  /** An absent field stays as it is. */
  update_session: { args: UpdateSessionArgs; result: SessionView };
  /** Every turn of the workspace: the total and per role. */
  workspace_usage: { args: EmptyArgs; result: UsageView };
  /** The session's preview as it stands (stopped when none runs). */
  get_preview: { args: SessionIdArgs; result: PreviewView };
  /**
   * Starts the session's preview and its gateway (answers the running one when it runs).
   * PREVIEW_NOT_CONFIGURED when kiln.toml has no `[preview] command` or `root`;
   * NOT_ALLOWED_IN_MODE in self-hosted mode; refused for a closed or deleted session.
   */
  start_preview: { args: SessionIdArgs; result: PreviewView };
  /** Stops the process and the gateway; answers the stopped preview. */
  stop_preview: { args: SessionIdArgs; result: PreviewView };
  /** Stops, then starts it again (a new gateway: a new origin and secret). */
  restart_preview: { args: SessionIdArgs; result: PreviewView };
  /** Starts a read-only review turn of one module (its report lands in SessionView.reviews). */
  review_module: { args: ModuleArgs; result: SessionView };
  /**
   * What delivering to a target would do (per module files, gates, steps, restart), with its
   * blockers and the planId a confirmation must carry.
   */
  plan_delivery: { args: PlanDeliveryArgs; result: DeliveryPlan };
  /**
   * Starts delivering the confirmed plan; answers at once, steps follow as `delivery` events.
   * PLAN_STALE, DELIVERY_BLOCKED, DELIVERY_CONFLICT, TARGET_UNAVAILABLE, BRANCH_MOVED.
   */
  deliver: { args: DeliverArgs; result: DeliveryRun };
  /** The session's latest delivery run, or null when it never ran. */
  get_delivery: { args: SessionIdArgs; result: DeliveryRun | null };
  /**
   * What Kiln detected in the open workspace's own tooling: its modules with every gate's command
   * and where it came from (null: not configured, with a hint), the toolchains this machine has,
   * the setup command, and the kiln.toml that "Save as kiln.toml" would write (configPath when
   * the workspace has one).
   */
  detect_workspace: { args: EmptyArgs; result: DetectionView };
  /**
   * Writes kiln.toml at the workspace root from the edited set-up (an empty command turns a gate
   * off), reopens the workspace with it and answers the new detection. CONFIG_EXISTS (409) when
   * the workspace has a kiln.toml and `replace` is false, CONFIG_INVALID, SESSION_RUNNING while a
   * turn or a setup runs.
   */
  save_config: { args: SaveConfigArgs; result: DetectionView };
  /**
   * What `.kiln/` takes on disk: the store (store.git), the sessions' directories in all, and
   * each session's working copy (null when it has none), attachments and the rest; allocated
   * bytes, links not followed.
   */
  disk_usage: { args: EmptyArgs; result: DiskUsageView };
  /**
   * The working copies of archived and rejected sessions that still have one: what would be
   * removed (a dry run, unless `apply`), or removed, each after a checkpoint ("Before clean-up")
   * when it changed since its newest one. Checkpoints, attachments and records stay; the copy is
   * rebuilt from the checkpoint when the session is used again. A running session is skipped.
   */
  clean_up: { args: CleanUpArgs; result: CleanUpView };
  /**
   * Opens a terminal in the session's working copy (80x24 unless cols/rows say otherwise: 2 to
   * 1000 columns, 1 to 500 rows). TERMINAL_LIMIT (409) past 8 running in the session or 32 in
   * all; NOT_ALLOWED_IN_MODE in self-hosted mode without --allow-terminals, and for claude and
   * codex in self-hosted mode always; refused for a closed or deleted session; DRIVER_NOT_FOUND
   * when the agent's CLI is missing. Its output streams from `attach_terminal`.
   */
  open_terminal: { args: OpenTerminalArgs; result: TerminalView };
  /** The session's terminals, running and exited in the last ten minutes, oldest first. */
  list_terminals: { args: SessionIdArgs; result: Array<TerminalView> };
  /** Types into the terminal (at most 64 KiB). TERMINAL_NOT_FOUND (404), TERMINAL_EXITED (409). */
  write_terminal: { args: TerminalInputArgs; result: TerminalView };
  /** Sets the terminal's size; the last resize wins. TERMINAL_NOT_FOUND. */
  resize_terminal: { args: ResizeTerminalArgs; result: TerminalView };
  /** Kills the terminal's program and everything it started; answers the exited view. */
  stop_terminal: { args: TerminalArgs; result: TerminalView };
  /**
   * Answers a permission request waiting in the chat (a card of SessionView.permissions) with one
   * of the agent's options; the turn goes on. PERMISSION_NOT_FOUND (404) when no such request
   * waits (answered, or its turn ended), INVALID_INPUT for an option the agent did not offer.
   */
  answer_permission: { args: AnswerPermissionArgs; result: SessionView };
  /**
   * Captures the session's preview (starting it when it is not running): the page, one element
   * (`selector`) or a rectangle (`region`), and keeps the screenshot with the session (its view's
   * `screenshots`). CAPTURE_UNAVAILABLE without Chromium, CAPTURE_FAILED when the page does not
   * load or no element matches, PREVIEW_NOT_CONFIGURED, NOT_ALLOWED_IN_MODE in self-hosted mode,
   * INVALID_INPUT, MODULE_NOT_FOUND; refused for a closed or deleted session.
   */
  capture_preview: { args: CapturePreviewArgs; result: ScreenshotView };
  /** A screenshot of the session with its PNG (base64). SCREENSHOT_NOT_FOUND. */
  get_screenshot: { args: ScreenshotArgs; result: ScreenshotImage };
  /**
   * Comments lines `startLine` to `endLine` (1-based, inclusive, of the working copy: the diff's
   * new side) of `path`; Kiln quotes the lines from the working copy. PATH_NOT_ALLOWED for a path
   * out of the working copy; INVALID_INPUT for one that is no text file, lines it does not have
   * (or more than 500), an empty body; refused for a closed or deleted session.
   */
  add_review_comment: { args: AddReviewCommentArgs; result: SessionView };
  /**
   * Rewrites a comment's words. COMMENT_NOT_FOUND, INVALID_INPUT (empty), SESSION_RUNNING while
   * the comment is with the running turn.
   */
  update_review_comment: { args: UpdateReviewCommentArgs; result: SessionView };
  /** COMMENT_NOT_FOUND, SESSION_RUNNING while the comment is with the running turn. */
  delete_review_comment: { args: ReviewCommentArgs; result: SessionView };
  /**
   * Resolves a comment, or with `resolved: false` opens it again. COMMENT_NOT_FOUND,
   * SESSION_RUNNING while the comment is with the running turn.
   */
  resolve_review_comment: { args: ResolveReviewCommentArgs; result: SessionView };
  /**
   * Starts a turn (as send_message does) whose prompt carries every open comment with its file,
   * lines and quoted code, after `message`; they become `sent`. When the turn ends, each is
   * `addressed` when its lines changed in it, else `open` again with a note. NOTHING_TO_SEND,
   * SESSION_RUNNING, refused for a closed or deleted session.
   */
  send_review: { args: SendReviewArgs; result: SessionView };
  /**
   * Makes 2 to 5 candidate sessions of one brief, each made as create_session makes one and
   * sent the brief as its first message with its own driver and model. INVALID_INPUT for fewer
   * or more candidates or an unknown driver, DRIVER_NOT_FOUND when an agent's CLI is missing,
   * and create_session's refusals; nothing is made when refused.
   */
  create_session_group: { args: CreateSessionGroupArgs; result: GroupView };
  /** Every group of the workspace, newest first. */
  list_groups: { args: EmptyArgs; result: Array<GroupSummary> };
  /**
   * Each candidate side by side: state (waiting included), files and lines changed, gates
   * with test counts, review verdicts, tokens and cost, elapsed time, newest screenshot.
   * GROUP_NOT_FOUND (404).
   */
  get_group: { args: GroupIdArgs; result: GroupView };
  /**
   * One candidate's working copy (right) against another's (left), grouped by module.
   * GROUP_NOT_FOUND, INVALID_INPUT when a session is no candidate of the group.
   */
  compare_candidates: { args: CompareCandidatesArgs; result: DiffView };
  /**
   * Marks the winner (delivered by the normal delivery) and archives every other candidate,
   * stopping what it runs; their checkpoints stay. GROUP_NOT_FOUND, INVALID_INPUT when the
   * session is no candidate, SESSION_ARCHIVED when it was archived.
   */
  pick_candidate: { args: PickCandidateArgs; result: GroupView };
  /**
   * The delivery repository's open issues, newest first (at most 300; pull requests left out),
   * read with the git-pr target's settings and token. TARGET_UNAVAILABLE with no token or no
   * repository (owner/name) set or readable from the remote, or when GitHub refuses.
   */
  list_issues: { args: EmptyArgs; result: Array<IssueSummary> };
  /**
   * One issue, as create_session with `issue` would read it (to show its title before creating):
   * the same refusals (INVALID_INPUT, ISSUE_NOT_FOUND, TARGET_UNAVAILABLE).
   */
  get_issue: { args: GetIssueArgs; result: IssueSummary };
}
