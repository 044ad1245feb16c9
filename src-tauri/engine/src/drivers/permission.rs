//! Asking the operator: what a driver does with a permission request Kiln's command policy
//! cannot decide. The turn hands the driver an `Operator`; the driver's request waits on it
//! until the operator picks one of the agent's options in the chat, or the turn stops.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use super::events::ToolKind;
pub use kiln_types::PermissionChoice;

/// A request only the operator can answer.
#[derive(Debug, Clone)]
pub struct PermissionAsk {
    /// The agent's id for the tool call the request is about (read by the tests only, yet).
    #[cfg_attr(not(feature = "test-support"), allow(dead_code))]
    pub tool_call_id: String,
    pub title: String,
    pub kind: ToolKind,
    /// Paths the call touches, relative to the working copy where they are inside it.
    pub locations: Vec<String>,
    /// Why the policy did not decide, in words.
    pub why: String,
    pub options: Vec<PermissionChoice>,
    /// What the agent sent, whole (read by the tests only, yet).
    #[cfg_attr(not(feature = "test-support"), allow(dead_code))]
    pub input: Value,
}

/// The option the operator chose (one of `PermissionAsk::options`' ids), or `None` when
/// nobody will answer (the turn stopped).
pub type AskFuture = Pin<Box<dyn Future<Output = Option<String>> + Send>>;

/// Whoever answers for the operator during one turn: the session's chat (a card).
pub trait Operator: Send + Sync {
    fn ask(&self, ask: PermissionAsk) -> AskFuture;
}
