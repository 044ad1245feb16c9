//! The errors `kiln serve` answers with: the engine's `ApiError`s, and the few only the HTTP
//! layer produces (a refused Host or site, no browser session, a bad token, too many connects,
//! a body over the limit), with the HTTP status of every code. On the wire both are the same
//! `{"error": {code, message}}`; the code strings are part of the API and never change.

use kiln_engine::{ApiError, ErrorCode};
use serde::Serialize;

/// The codes only the HTTP transport produces; the engine never sees these requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TransportCode {
    /// A Host header that is not this server's (DNS rebinding).
    HostNotAllowed,
    /// A change that did not come from Kiln's own page (Origin, `Sec-Fetch-Site`, `x-kiln`).
    CrossSiteRefused,
    /// `kiln serve` needs a browser connection (`POST /api/connect`) for this.
    NotConnected,
    /// An access token that is unknown, expired or revoked.
    TokenInvalid,
    /// Too many failed connects; try again later.
    RateLimited,
    /// A request body over the size limit.
    BodyTooLarge,
}

impl TransportCode {
    pub fn as_str(self) -> &'static str {
        use TransportCode::*;
        match self {
            HostNotAllowed => "HOST_NOT_ALLOWED",
            CrossSiteRefused => "CROSS_SITE_REFUSED",
            NotConnected => "NOT_CONNECTED",
            TokenInvalid => "TOKEN_INVALID",
            RateLimited => "RATE_LIMITED",
            BodyTooLarge => "BODY_TOO_LARGE",
        }
    }

    fn http_status(self) -> u16 {
        use TransportCode::*;
        match self {
            HostNotAllowed | CrossSiteRefused => 403,
            NotConnected | TokenInvalid => 401,
            RateLimited => 429,
            BodyTooLarge => 413,
        }
    }
}

/// The HTTP status `kiln serve` answers with for an engine error code.
pub fn http_status(code: ErrorCode) -> u16 {
    use ErrorCode::*;
    match code {
        InvalidInput | InvalidSessionId | ConfigInvalid | ModuleRequired => 400,
        WorkspaceNotFound | ModuleNotFound | SessionNotFound | UnknownCommand => 404,
        WorkspaceNotOpen
        | ModuleAlreadyInSession
        | SessionRunning
        | SessionArchived
        | SessionDelivered
        | SessionNotArchived => 409,
        SessionDeleted => 410,
        AttachmentLimit => 409,
        AttachmentTooLarge => 413,
        AttachmentType | AttachmentMismatch => 415,
        DriverNotFound => 424,
        DriverFailed => 502,
        SpecMissing => 409,
        AttachmentNotFound => 404,
        CheckpointNotFound => 400,
        ConflictNotFound => 404,
        AttachmentEmpty => 400,
        NotAllowedInMode => 403,
        PathNotAllowed => 400,
        SecretUnreadable => 500,
        PreviewNotConfigured => 409,
        DeliveryBlocked | DeliveryConflict | PlanStale | TargetUnavailable | BranchMoved => 409,
        ConfigExists => 409,
        ToolchainMissing => 424,
        WorkspaceInUse => 409,
        ModuleUnknown => 404,
        ModelUnknown => 400,
        NotBlocked => 409,
        TerminalNotFound => 404,
        TerminalLimit | TerminalExited => 409,
        // Like the other `*_NOT_FOUND`s: the request it names is not there (answered,
        // withdrawn with its turn, or never asked); nothing about it is left to conflict with.
        PermissionNotFound => 404,
        CaptureUnavailable => 409,
        CaptureFailed => 502,
        ScreenshotNotFound => 404,
        CommentNotFound => 404,
        // Like NOT_BLOCKED: the session is not in the state the operation needs (an open comment).
        NothingToSend => 409,
        NothingToUpdate | ConflictsUnresolved => 409,
        GroupNotFound => 404,
        IssueNotFound => 404,
        McpServerNotFound => 404,
        // The server is up but its records are not: a gateway's "the service behind me failed".
        DatabaseUnavailable => 503,
        // The bucket behind the server does not answer: a gateway's failure, not the request's.
        ObjectsUnavailable => 503,
        // The session's host did not answer: another server behind us failed.
        HostUnavailable => 503,
        Internal => 500,
    }
}

/// An engine code or a transport one, spelled on the wire as either spells itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Code {
    Engine(ErrorCode),
    Transport(TransportCode),
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Engine(code) => code.as_str(),
            Code::Transport(code) => code.as_str(),
        }
    }

    pub fn http_status(self) -> u16 {
        match self {
            Code::Engine(code) => http_status(code),
            Code::Transport(code) => code.http_status(),
        }
    }
}

impl PartialEq<TransportCode> for Code {
    fn eq(&self, other: &TransportCode) -> bool {
        *self == Code::Transport(*other)
    }
}

impl PartialEq<ErrorCode> for Code {
    fn eq(&self, other: &ErrorCode) -> bool {
        *self == Code::Engine(*other)
    }
}

/// A failure as `kiln serve` answers it: `{code, message}`, like `ApiError`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HttpError {
    pub code: Code,
    pub message: String,
}

impl HttpError {
    pub fn new(code: TransportCode, message: impl Into<String>) -> Self {
        HttpError { code: Code::Transport(code), message: message.into() }
    }
}

impl From<ApiError> for HttpError {
    fn from(error: ApiError) -> Self {
        HttpError { code: Code::Engine(error.code), message: error.message }
    }
}

impl From<std::io::Error> for HttpError {
    fn from(error: std::io::Error) -> Self {
        ApiError::from(error).into()
    }
}

pub type Result<T, E = HttpError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_codes_spell_the_same_on_the_wire() {
        use TransportCode::*;
        for code in [HostNotAllowed, CrossSiteRefused, NotConnected, TokenInvalid, RateLimited, BodyTooLarge] {
            assert_eq!(serde_json::to_value(code).unwrap(), serde_json::Value::String(code.as_str().into()));
            assert_eq!(serde_json::to_value(Code::Transport(code)).unwrap(), serde_json::to_value(code).unwrap());
        }
        let engine = Code::Engine(ErrorCode::WorkspaceInUse);
        assert_eq!(serde_json::to_value(engine).unwrap(), serde_json::json!("WORKSPACE_IN_USE"));
    }

    /// The statuses the engine's tests asserted while the table lived there.
    #[test]
    fn engine_codes_answer_their_statuses() {
        use ErrorCode::*;
        for (code, status) in [
            (AttachmentLimit, 409),
            (AttachmentTooLarge, 413),
            (AttachmentType, 415),
            (AttachmentEmpty, 400),
            (AttachmentMismatch, 415),
            (WorkspaceInUse, 409),
            (PathNotAllowed, 400),
        ] {
            assert_eq!(http_status(code), status, "{code:?}");
        }
        assert_eq!(Code::Transport(TransportCode::NotConnected).http_status(), 401);
        assert_eq!(Code::Transport(TransportCode::RateLimited).http_status(), 429);
    }
}
