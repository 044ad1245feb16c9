//! The operation table: every operation of the API, one line each, with its documentation:
//! its arguments, its result, its policy and the function that does it. Everything that lists
//! operations is generated from it: the `Engine`'s methods, `Engine::dispatch` and `OPERATIONS`
//! (`api/mod.rs`), which host of a team runs each (`api/team.rs`), the desktop's Tauri commands
//! (`src-tauri/src/commands.rs`), the commands and the one permission set `src-tauri/build.rs`
//! declares to tauri-build, the HTTP body limits of `kiln serve`, and the UI's `CommandMap` in
//! `ui/src/api/types.ts`.
//!
//! Adding an operation: its types (this crate), one line here, its function.
//!
//! This file depends on nothing (the build script includes it as a module), so the types and
//! functions are only names here: whoever expands the table brings them into scope.

/// Calls `$callback!` with every operation of the API, each as
/// `/// docs  name(Args) -> Result [{ policy }] [=> function];`.
///
/// The policy, each part optional:
/// - `ready`: the session named by `sessionId` has its working copy checked whole (and rebuilt
///   when it is not) before the operation runs;
/// - `any_host`: on a team's database, any host answers it from the shared records; without
///   it, an operation naming a session runs on the host that owns the session;
/// - `body_limit: bytes`: the largest HTTP request body it takes (`kiln serve`'s `MAX_BODY`,
///   1 MiB, otherwise).
///
/// The function is a path in the engine taking the open workspace's `Context` and the
/// arguments. An operation with none works on the engine's own state (its open workspace, its
/// terminals, its options): its function is the one of that name in the engine's `api/own.rs`.
#[macro_export]
macro_rules! for_each_operation {
    ($callback:ident) => {
        $callback! {
            /// The app's version, transport and mode, the open workspace and the recent ones.
            get_state(EmptyArgs) -> AppState;
            /// WORKSPACE_IN_USE (409), naming the holder and its pid, when another Kiln process has the
            /// workspace open: one process works on a workspace at a time.
            open_workspace(OpenWorkspaceArgs) -> WorkspaceView;
            /// Archived and rejected sessions are hidden unless `includeArchived`; deleted tombstones are
            /// listed only with it.
            list_sessions(ListSessionsArgs) -> Vec<SessionView> => session::list;
            get_session(SessionIdArgs) -> SessionView { any_host } => session::get;
            /// MODULE_UNKNOWN (404) when the brief names `module <x>` or a new-module id that is no module
            /// of the workspace: the message starts with the unknown id(s) in backticks and lists the
            /// modules; sending the id(s) in createModules creates them as new modules (INVALID_INPUT when
            /// one cannot be: no id pattern, no free directory). `module <x>` takes a module id as well as
            /// a directory. With `issue` (a GitHub issue's address on the delivery provider's host, or a
            /// number of the delivery repository) the brief is the typed text, then the issue's title, body
            /// and comments; the session links to it: INVALID_INPUT for another address or a pull request,
            /// ISSUE_NOT_FOUND, TARGET_UNAVAILABLE with no token or repository.
            create_session(CreateSessionArgs) -> SessionView;
            /// The entries after `after` (an entry id), or all.
            get_transcript(GetTranscriptArgs) -> Vec<TranscriptEntry> { any_host } => session::get_transcript;
            add_module(AddModuleArgs) -> SessionView { ready } => session::add_module;
            archive_session(StopArgs) -> SessionView;
            /// Un-archives or un-rejects.
            restore_session(SessionIdArgs) -> SessionView;
            reject_session(StopArgs) -> SessionView;
            /// Null when the record was removed (no transcript kept).
            delete_session(DeleteSessionArgs) -> Option<SessionView>;
            /// Starts a turn (a running one is stopped first).
            send_message(SendMessageArgs) -> SessionView { ready } => chain::send_message;
            /// Stops the turn; else the planner agent, the setup (or gates) and a message waiting for them,
            /// with one system entry "Stopped by the operator during planning/setup.". INVALID_INPUT when
            /// nothing runs.
            stop_turn(SessionIdArgs) -> SessionView => chain::stop_turn;
            /// Runs again the turn that blocked the session: same module, role, driver, model and prompt.
            /// NOT_BLOCKED (409) unless the session is blocked, SESSION_RUNNING.
            retry_turn(SessionIdArgs) -> SessionView { ready } => chain::retry_turn;
            /// Runs the session's setup (its dependencies' install) again after it failed; the gates that
            /// did not run for it run with the next turn or "Run gates". SESSION_RUNNING while a turn or
            /// the setup runs; INVALID_INPUT when the setup did not fail.
            retry_setup(SessionIdArgs) -> SessionView { ready } => chain::start::retry_setup;
            /// SPEC_MISSING when the module has no SPEC.md yet.
            approve_spec(ApproveSpecArgs) -> SessionView { ready } => chain::approve_spec;
            /// Each module's changes against its base, or one module's with moduleId.
            get_diff(GetDiffArgs) -> DiffView { ready } => diff::get;
            /// Puts the session's working copy back to a checkpoint (0 is the starting point); later
            /// checkpoints are kept. CHECKPOINT_NOT_FOUND, INVALID_INPUT, SESSION_RUNNING, SESSION_ARCHIVED,
            /// SESSION_DELIVERED.
            restore_checkpoint(RestoreCheckpointArgs) -> SessionView { ready } => checkpoint::restore;
            /// Takes in what changed in the workspace since the session's base: a three-way merge into the
            /// working copy, recorded as checkpoints (the workspace taken in, the session's new base; then the
            /// merged copy). Conflicting files keep both sides between markers and are listed in
            /// `conflicts` until resolved. NOTHING_TO_UPDATE, CONFLICTS_UNRESOLVED, SESSION_RUNNING,
            /// SESSION_ARCHIVED, SESSION_DELIVERED.
            update_from_workspace(SessionIdArgs) -> SessionView { ready } => update::update_from_workspace;
            /// The conflicts the last update from the workspace left, per file still holding markers, each
            /// with the session's side and the workspace's.
            get_conflicts(SessionIdArgs) -> ConflictsView => update::resolve::get;
            /// Replaces one conflict in the working copy by the side kept (the session's, the workspace's,
            /// or both); a file left with no marker is resolved, recorded as a checkpoint. CONFLICT_NOT_FOUND
            /// when the file holds no conflict with that id (it changed since it was read), SESSION_RUNNING,
            /// SESSION_ARCHIVED, SESSION_DELIVERED, PATH_NOT_ALLOWED.
            resolve_conflict(ResolveConflictArgs) -> ConflictsView { ready } => update::resolve::resolve;
            /// The latest result of each gate, per module and gate: spec-schema and module-schema (module
            /// null: the whole working copy), then dependencies, typecheck, tests, format and lint per
            /// module. Status passed | failed | skipped | not-configured (no command: the hint is in
            /// outputHead; never a blocker); source: where the command came from; outputTail is empty when
            /// the output fit in the head.
            get_gates(SessionIdArgs) -> Vec<GateResultView> => gates::get;
            /// Runs every gate of every module of the session now; answers as get_gates does.
            /// SESSION_RUNNING while the session runs.
            check_modules(SessionIdArgs) -> Vec<GateResultView> { ready } => gates::check_modules;
            /// A module's specification in the session's working copy (text null when it has none);
            /// MODULE_NOT_FOUND.
            get_spec(ModuleArgs) -> SpecView => chain::get_spec;
            /// Writes the operator's edit of a module's specification; any edit makes an approval stale.
            /// SESSION_RUNNING while a turn runs, MODULE_NOT_FOUND.
            save_spec(SaveSpecArgs) -> SpecView => chain::save_spec;
            get_settings(EmptyArgs) -> SettingsView => api::settings::view;
            /// An absent field stays as it is, "" clears it; the key and the bridge token are write-only
            /// (the view has only their fingerprints). A changed openaiBaseUrl or bridgeUrl while a key or
            /// token is stored needs the key or token in the same request, else INVALID_INPUT. Self-hosted
            /// lists only openai-compatible in drivers and refuses claudePath, codexPath and defaultDriver
            /// claude or codex with NOT_ALLOWED_IN_MODE.
            update_settings(UpdateSettingsArgs) -> SettingsView => api::settings::update;
            /// Adds or replaces this user's MCP server `name` (SPEC §23); the values of its variables
            /// and headers are stored sealed and never shown again. A server is a command or an address:
            /// INVALID_INPUT naming what is wrong. NOT_ALLOWED_IN_MODE on a self-hosted server, where a
            /// command would run on the host.
            save_mcp_server(SaveMcpServerArgs) -> SettingsView => api::mcp::save;
            /// Removes this user's MCP server `name`; MCP_SERVER_NOT_FOUND when there is none (a `kiln.toml` server is
            /// removed by editing the file).
            remove_mcp_server(McpServerNameArgs) -> SettingsView => api::mcp::remove;
            /// Starts (or reaches) every MCP server agents are given and asks for its tools, as an agent
            /// would, each within 15 seconds; says for each whether it answered and what it offers.
            check_mcp_servers(EmptyArgs) -> Vec<McpServerCheck> => drivers::mcp::check_all;
            /// The models an agent offers for the composer's picker: the OpenAI-compatible endpoint's own
            /// list (GET /models; `complete`: send_message refuses another with MODEL_UNKNOWN), Claude
            /// Code's aliases, none known for Codex and ACP agents (any id may be typed).
            /// DRIVER_NOT_FOUND for an unknown driver.
            list_models(ListModelsArgs) -> ModelListView => drivers::models::list;
            /// Stores a file for the session's agents (at most 10, 5 MB each, png jpg jpeg gif webp md txt
            /// json csv pdf svg, content matching the extension): ATTACHMENT_LIMIT, ATTACHMENT_TOO_LARGE,
            /// ATTACHMENT_TYPE, ATTACHMENT_EMPTY, ATTACHMENT_MISMATCH, INVALID_INPUT (bad name or base64).
            /// Its body carries 5 MB base64-encoded, a third larger.
            add_attachment(AddAttachmentArgs) -> AttachmentView
                { ready, body_limit: 7 * 1024 * 1024 + 64 * 1024 } => attachments::add;
            /// ATTACHMENT_NOT_FOUND when the session has no such attachment.
            remove_attachment(RemoveAttachmentArgs) -> SessionView => attachments::remove;
            /// An absent field stays as it is.
            update_session(UpdateSessionArgs) -> SessionView => session::update;
            /// Every turn of the workspace: the total and per role.
            workspace_usage(EmptyArgs) -> UsageView => session::usage;
            /// The session's preview as it stands (stopped when none runs).
            get_preview(SessionIdArgs) -> PreviewView => preview::get;
            /// Starts the session's preview and its gateway (answers the running one when it runs).
            /// PREVIEW_NOT_CONFIGURED when kiln.toml has no `[preview] command` or `root`;
            /// NOT_ALLOWED_IN_MODE in self-hosted mode; refused for a closed or deleted session.
            start_preview(SessionIdArgs) -> PreviewView { ready } => preview::start;
            /// Stops the process and the gateway; answers the stopped preview.
            stop_preview(SessionIdArgs) -> PreviewView => preview::stop;
            /// Stops, then starts it again (a new gateway: a new origin and secret).
            restart_preview(SessionIdArgs) -> PreviewView { ready } => preview::restart;
            /// Starts a read-only review turn of one module (its report lands in SessionView.reviews).
            review_module(ModuleArgs) -> SessionView { ready } => chain::review_module;
            /// What delivering to a target would do (per module files, gates, steps, restart), with its
            /// blockers and the planId a confirmation must carry.
            plan_delivery(PlanDeliveryArgs) -> DeliveryPlan { ready } => delivery::run::plan_delivery;
            /// Starts delivering the confirmed plan; answers at once, steps follow as `delivery` events.
            /// PLAN_STALE, DELIVERY_BLOCKED, DELIVERY_CONFLICT, TARGET_UNAVAILABLE, BRANCH_MOVED.
            deliver(DeliverArgs) -> DeliveryRun { ready } => delivery::run::deliver;
            /// The session's latest delivery run, or null when it never ran.
            get_delivery(SessionIdArgs) -> Option<DeliveryRun> => delivery::run::latest;
            /// What Kiln detected in the open workspace's own tooling: its modules with every gate's command
            /// and where it came from (null: not configured, with a hint), the toolchains this machine has,
            /// the setup command, and the kiln.toml that "Save as kiln.toml" would write (configPath when
            /// the workspace has one).
            detect_workspace(EmptyArgs) -> DetectionView => detect::detect_workspace;
            /// Writes kiln.toml at the workspace root from the edited set-up (an empty command turns a gate
            /// off), reopens the workspace with it and answers the new detection. CONFIG_EXISTS (409) when
            /// the workspace has a kiln.toml and `replace` is false, CONFIG_INVALID, SESSION_RUNNING while a
            /// turn or a setup runs.
            save_config(SaveConfigArgs) -> DetectionView;
            /// What `.kiln/` takes on disk: the store (store.git), the sessions' directories in all, and
            /// each session's working copy (null when it has none), attachments and the rest; allocated
            /// bytes, links not followed.
            disk_usage(EmptyArgs) -> DiskUsageView => disk::usage;
            /// The working copies of archived and rejected sessions that still have one: what would be
            /// removed (a dry run, unless `apply`), or removed, each after a checkpoint ("Before clean-up")
            /// when it changed since its newest one. Checkpoints, attachments and records stay; the copy is
            /// rebuilt from the checkpoint when the session is used again. A running session is skipped.
            clean_up(CleanUpArgs) -> CleanUpView => disk::clean_up;
            /// Opens a terminal in the session's working copy (80x24 unless cols/rows say otherwise: 2 to
            /// 1000 columns, 1 to 500 rows). TERMINAL_LIMIT (409) past 8 running in the session or 32 in
            /// all; NOT_ALLOWED_IN_MODE in self-hosted mode without --allow-terminals, and for claude and
            /// codex in self-hosted mode always; refused for a closed or deleted session; DRIVER_NOT_FOUND
            /// when the agent's CLI is missing. Its output streams from `attach_terminal`.
            open_terminal(OpenTerminalArgs) -> TerminalView;
            /// The session's terminals, running and exited in the last ten minutes, oldest first.
            list_terminals(SessionIdArgs) -> Vec<TerminalView>;
            /// Types into the terminal (at most 64 KiB). TERMINAL_NOT_FOUND (404), TERMINAL_EXITED (409).
            write_terminal(TerminalInputArgs) -> TerminalView;
            /// Sets the terminal's size; the last resize wins. TERMINAL_NOT_FOUND.
            resize_terminal(ResizeTerminalArgs) -> TerminalView;
            /// Kills the terminal's program and everything it started; answers the exited view.
            stop_terminal(TerminalArgs) -> TerminalView;
            /// Answers a permission request waiting in the chat (a card of SessionView.permissions) with one
            /// of the agent's options; the turn goes on. PERMISSION_NOT_FOUND (404) when no such request
            /// waits (answered, or its turn ended), INVALID_INPUT for an option the agent did not offer.
            answer_permission(AnswerPermissionArgs) -> SessionView => operator::answer;
            // issue 20: the preview as evidence and input
            /// Captures the session's preview (starting it when it is not running): the page, one element
            /// (`selector`) or a rectangle (`region`), and keeps the screenshot with the session (its view's
            /// `screenshots`). CAPTURE_UNAVAILABLE without Chromium, CAPTURE_FAILED when the page does not
            /// load or no element matches, PREVIEW_NOT_CONFIGURED, NOT_ALLOWED_IN_MODE in self-hosted mode,
            /// INVALID_INPUT, MODULE_NOT_FOUND; refused for a closed or deleted session.
            capture_preview(CapturePreviewArgs) -> ScreenshotView { ready } => preview::shots::capture_preview;
            /// A screenshot of the session with its PNG (base64). SCREENSHOT_NOT_FOUND.
            get_screenshot(ScreenshotArgs) -> ScreenshotImage => preview::shots::image;
            // issue 20: review comments sent to the agent
            /// Comments lines `startLine` to `endLine` (1-based, inclusive, of the working copy: the diff's
            /// new side) of `path`; Kiln quotes the lines from the working copy. PATH_NOT_ALLOWED for a path
            /// out of the working copy; INVALID_INPUT for one that is no text file, lines it does not have
            /// (or more than 500), an empty body; refused for a closed or deleted session.
            add_review_comment(AddReviewCommentArgs) -> SessionView { ready } => review_comments::add;
            /// Rewrites a comment's words. COMMENT_NOT_FOUND, INVALID_INPUT (empty), SESSION_RUNNING while
            /// the comment is with the running turn.
            update_review_comment(UpdateReviewCommentArgs) -> SessionView => review_comments::update;
            /// COMMENT_NOT_FOUND, SESSION_RUNNING while the comment is with the running turn.
            delete_review_comment(ReviewCommentArgs) -> SessionView => review_comments::delete;
            /// Resolves a comment, or with `resolved: false` opens it again. COMMENT_NOT_FOUND,
            /// SESSION_RUNNING while the comment is with the running turn.
            resolve_review_comment(ResolveReviewCommentArgs) -> SessionView => review_comments::resolve;
            /// Starts a turn (as send_message does) whose prompt carries every open comment with its file,
            /// lines and quoted code, after `message`; they become `sent`. When the turn ends, each is
            /// `addressed` when its lines changed in it, else `open` again with a note. NOTHING_TO_SEND,
            /// SESSION_RUNNING, refused for a closed or deleted session.
            send_review(SendReviewArgs) -> SessionView { ready } => chain::send_review;
            // issue 20: best-of-N candidate sessions
            /// Makes 2 to 5 candidate sessions of one brief, each made as create_session makes one and
            /// sent the brief as its first message with its own driver and model. INVALID_INPUT for fewer
            /// or more candidates or an unknown driver, DRIVER_NOT_FOUND when an agent's CLI is missing,
            /// and create_session's refusals; nothing is made when refused.
            create_session_group(CreateSessionGroupArgs) -> GroupView => groups::create;
            /// Every group of the workspace, newest first.
            list_groups(EmptyArgs) -> Vec<GroupSummary> => groups::list;
            /// Each candidate side by side: state (waiting included), files and lines changed, gates
            /// with test counts, review verdicts, tokens and cost, elapsed time, newest screenshot.
            /// GROUP_NOT_FOUND (404).
            get_group(GroupIdArgs) -> GroupView => groups::get;
            /// One candidate's working copy (right) against another's (left), grouped by module.
            /// GROUP_NOT_FOUND, INVALID_INPUT when a session is no candidate of the group.
            compare_candidates(CompareCandidatesArgs) -> DiffView;
            /// Marks the winner (delivered by the normal delivery) and archives every other candidate,
            /// stopping what it runs; their checkpoints stay. GROUP_NOT_FOUND, INVALID_INPUT when the
            /// session is no candidate, SESSION_ARCHIVED when it was archived.
            pick_candidate(PickCandidateArgs) -> GroupView;
            // issue 20: sessions from GitHub issues
            /// The delivery repository's open issues, newest first (at most 300; pull requests left out),
            /// read with the git-pr target's settings and token. TARGET_UNAVAILABLE with no token or no
            /// repository (owner/name) set or readable from the remote, or when GitHub refuses.
            list_issues(EmptyArgs) -> Vec<IssueSummary> => delivery::issues::list;
            /// One issue, as create_session with `issue` would read it (to show its title before creating):
            /// the same refusals (INVALID_INPUT, ISSUE_NOT_FOUND, TARGET_UNAVAILABLE).
            get_issue(GetIssueArgs) -> IssueSummary => delivery::issues::get;
        }
    };
}
