//! The one error type every operation returns: a stable `ErrorCode` plus a message
//! written for the person reading it. Both transports send it as `{code, message}`.
//! The codes only the HTTP layer produces, and every code's HTTP status, are kiln-serve's
//! (`src-tauri/serve/src/errors.rs`).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Stable error codes. The strings are part of the API: never rename one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    InvalidInput,
    InvalidSessionId,
    WorkspaceNotFound,
    WorkspaceNotOpen,
    ConfigInvalid,
    ModuleNotFound,
    ModuleRequired,
    ModuleAlreadyInSession,
    SessionNotFound,
    SessionDeleted,
    SessionRunning,
    SessionArchived,
    SessionDelivered,
    SessionNotArchived,
    UnknownCommand,
    AttachmentLimit,
    AttachmentTooLarge,
    AttachmentType,
    AttachmentEmpty,
    AttachmentMismatch,
    DriverNotFound,
    DriverFailed,
    SpecMissing,
    AttachmentNotFound,
    CheckpointNotFound,
    ConflictNotFound,
    /// Something the server's mode does not allow (a local driver in self-hosted mode).
    NotAllowedInMode,
    /// A path that would leave the session: `..`, absolute, `.git`, a link leading out.
    PathNotAllowed,
    /// A sealed secret that cannot be opened: altered, or sealed under another key.
    SecretUnreadable,
    /// The workspace sets neither `[preview] command` nor `[preview] root`.
    PreviewNotConfigured,
    /// Delivery is blocked: a missing or stale review, a failed or skipped gate.
    DeliveryBlocked,
    /// The workspace changed files the session also changed since the session's base.
    DeliveryConflict,
    /// The confirmation names another plan than the one that would run now.
    PlanStale,
    /// The target cannot be used here (no remote, no git repository…).
    TargetUnavailable,
    /// The remote branch moved: it is not this session's to overwrite.
    BranchMoved,
    /// "Save as kiln.toml" where the workspace already has one (and `replace` is not set).
    ConfigExists,
    /// A toolchain the repository needs is missing or older than it asks for.
    ToolchainMissing,
    /// Another Kiln process (the desktop app, `kiln serve`, a `kiln` command) has the
    /// workspace open; one process works on a workspace at a time.
    WorkspaceInUse,
    /// A brief names `module <x>` (or a new-module id) that is no module of the
    /// workspace, and the operator has not confirmed creating it (`createModules`).
    ModuleUnknown,
    /// A model the agent does not offer (the endpoint's own list says so), caught before the turn.
    ModelUnknown,
    /// `retry_turn` on a session that is not blocked.
    NotBlocked,
    /// No terminal with that id (it never was, or it ended long ago).
    TerminalNotFound,
    /// Too many terminals run: 8 per session, 32 in all.
    TerminalLimit,
    /// Input to a terminal whose process has exited.
    TerminalExited,
    /// No permission request with that id waits in the session: it was answered, or the
    /// turn that asked has ended.
    PermissionNotFound,
    /// No Chromium is installed to take a screenshot of the preview with.
    CaptureUnavailable,
    /// The screenshot could not be taken: the page did not load, the element is not there.
    CaptureFailed,
    /// No screenshot with that id in the session.
    ScreenshotNotFound,
    /// No review comment with that id in the session (it never was, or it was deleted).
    CommentNotFound,
    /// `send_review` with no open comment to send.
    NothingToSend,
    /// `update_from_workspace` when the workspace has not changed since the session's base.
    NothingToUpdate,
    /// Files still hold the conflict markers of the last update from the workspace.
    ConflictsUnresolved,
    /// No group of candidate sessions with that id in the workspace.
    GroupNotFound,
    /// No such issue in the repository (or the token may not see it).
    IssueNotFound,
    /// No MCP server of that name in Settings.
    McpServerNotFound,
    /// The records' database (`kiln serve --database`) cannot be reached or used.
    DatabaseUnavailable,
    /// The bucket `--objects` names cannot be used: a bad URL, an endpoint that does not
    /// answer, credentials it refuses.
    ObjectsUnavailable,
    /// The host that owns the session (several hosts on one team database) did not answer
    /// in time, and its lease has not expired yet: ask again in a few seconds.
    HostUnavailable,
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        use ErrorCode::*;
        match self {
            InvalidInput => "INVALID_INPUT",
            InvalidSessionId => "INVALID_SESSION_ID",
            WorkspaceNotFound => "WORKSPACE_NOT_FOUND",
            WorkspaceNotOpen => "WORKSPACE_NOT_OPEN",
            ConfigInvalid => "CONFIG_INVALID",
            ConfigExists => "CONFIG_EXISTS",
            ToolchainMissing => "TOOLCHAIN_MISSING",
            WorkspaceInUse => "WORKSPACE_IN_USE",
            ModuleNotFound => "MODULE_NOT_FOUND",
            ModuleRequired => "MODULE_REQUIRED",
            ModuleAlreadyInSession => "MODULE_ALREADY_IN_SESSION",
            SessionNotFound => "SESSION_NOT_FOUND",
            SessionDeleted => "SESSION_DELETED",
            SessionRunning => "SESSION_RUNNING",
            SessionArchived => "SESSION_ARCHIVED",
            SessionDelivered => "SESSION_DELIVERED",
            SessionNotArchived => "SESSION_NOT_ARCHIVED",
            UnknownCommand => "UNKNOWN_COMMAND",
            AttachmentLimit => "ATTACHMENT_LIMIT",
            AttachmentTooLarge => "ATTACHMENT_TOO_LARGE",
            AttachmentType => "ATTACHMENT_TYPE",
            AttachmentEmpty => "ATTACHMENT_EMPTY",
            AttachmentMismatch => "ATTACHMENT_MISMATCH",
            DriverNotFound => "DRIVER_NOT_FOUND",
            DriverFailed => "DRIVER_FAILED",
            SpecMissing => "SPEC_MISSING",
            AttachmentNotFound => "ATTACHMENT_NOT_FOUND",
            CheckpointNotFound => "CHECKPOINT_NOT_FOUND",
            ConflictNotFound => "CONFLICT_NOT_FOUND",
            NotAllowedInMode => "NOT_ALLOWED_IN_MODE",
            PathNotAllowed => "PATH_NOT_ALLOWED",
            SecretUnreadable => "SECRET_UNREADABLE",
            PreviewNotConfigured => "PREVIEW_NOT_CONFIGURED",
            DeliveryBlocked => "DELIVERY_BLOCKED",
            DeliveryConflict => "DELIVERY_CONFLICT",
            PlanStale => "PLAN_STALE",
            TargetUnavailable => "TARGET_UNAVAILABLE",
            BranchMoved => "BRANCH_MOVED",
            ModuleUnknown => "MODULE_UNKNOWN",
            ModelUnknown => "MODEL_UNKNOWN",
            NotBlocked => "NOT_BLOCKED",
            TerminalNotFound => "TERMINAL_NOT_FOUND",
            TerminalLimit => "TERMINAL_LIMIT",
            TerminalExited => "TERMINAL_EXITED",
            PermissionNotFound => "PERMISSION_NOT_FOUND",
            CaptureUnavailable => "CAPTURE_UNAVAILABLE",
            CaptureFailed => "CAPTURE_FAILED",
            ScreenshotNotFound => "SCREENSHOT_NOT_FOUND",
            CommentNotFound => "COMMENT_NOT_FOUND",
            NothingToSend => "NOTHING_TO_SEND",
            NothingToUpdate => "NOTHING_TO_UPDATE",
            ConflictsUnresolved => "CONFLICTS_UNRESOLVED",
            GroupNotFound => "GROUP_NOT_FOUND",
            IssueNotFound => "ISSUE_NOT_FOUND",
            McpServerNotFound => "MCP_SERVER_NOT_FOUND",
            DatabaseUnavailable => "DATABASE_UNAVAILABLE",
            ObjectsUnavailable => "OBJECTS_UNAVAILABLE",
            HostUnavailable => "HOST_UNAVAILABLE",
            Internal => "INTERNAL",
        }
    }
}

/// An operation's failure, as it crosses to the UI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, thiserror::Error)]
#[error("{code:?}: {message}")]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError { code, message: message.into() }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidInput, message)
    }

    pub fn internal(context: &str, err: impl std::fmt::Display) -> Self {
        tracing::error!("{context}: {err}");
        Self::new(ErrorCode::Internal, format!("{context}: {err}"))
    }
}

#[cfg(feature = "sqlx")]
impl From<sqlx::Error> for ApiError {
    fn from(err: sqlx::Error) -> Self {
        ApiError::internal("database", err)
    }
}

#[cfg(feature = "git2")]
impl From<git2::Error> for ApiError {
    fn from(err: git2::Error) -> Self {
        ApiError::internal("git", err)
    }
}

impl From<std::io::Error> for ApiError {
    fn from(err: std::io::Error) -> Self {
        ApiError::internal("file system", err)
    }
}

pub type Result<T, E = ApiError> = std::result::Result<T, E>;
