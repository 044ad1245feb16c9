//! A permission the command policy cannot decide (an ACP agent asking to fetch a URL, to
//! edit outside its allowed paths, to switch mode): shown in the chat as a card with the
//! agent's own options, and answered by the operator with `answer_permission`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What choosing an option means, as ACP names it (`allow_once`, `allow_always`,
/// `reject_once`, `reject_always`), so the page can colour it without reading its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum PermissionChoiceKind {
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
}

/// One of the agent's options: `id` goes back to the agent, `name` is its label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PermissionChoice {
    pub id: String,
    pub name: String,
    pub kind: PermissionChoiceKind,
}

/// A request waiting for the operator, as the session view carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PermissionCard {
    /// Kiln's id for the request (unique within the session).
    pub id: String,
    /// The agent's title for the call, one line ("Fetch https://example.com").
    pub title: String,
    /// The tool kind, as the transcript's tool rows say it (`read`, `edit`, `execute`, `fetch`…).
    pub kind: String,
    /// Files the call touches, relative to the working copy where they are inside it.
    pub locations: Vec<String>,
    /// Why Kiln's policy did not answer it by itself, in words.
    pub why: String,
    pub options: Vec<PermissionChoice>,
    pub asked_at: String,
}

/// `answer_permission`: the operator's choice for a waiting request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnswerPermissionArgs {
    pub session_id: String,
    /// The card's `id`.
    pub request_id: String,
    /// One of the card's options' `id`.
    pub option_id: String,
}
