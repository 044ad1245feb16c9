//! The script: what the scripted model answers, one step per model request, in order.
//! The same steps drive all three protocols, so a test can swap the CLI under test
//! without rewriting what the model "says".

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One model turn. In JSON: `{"tool": NAME, "arguments": {...}}`, `{"text": "..."}`
/// or `{"error": {"status": 429, "message": "..."}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawStep", into = "RawStep")]
pub enum Step {
    /// Call the tool `name` with `arguments` (a JSON object).
    Tool { name: String, arguments: Value },
    /// A final answer.
    Text(String),
    /// Fail the request with the provider's own error body.
    Error(ScriptedError),
}

/// A failure in the provider's error format. `kind` and `code` override the
/// provider's usual `type`/`code` for `status`, for clients that branch on them
/// (e.g. Codex on `insufficient_quota`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScriptedError {
    pub status: u16,
    pub message: String,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Sent as `retry-after` (seconds); `0` makes retrying clients retry at once,
    /// which keeps failure tests fast.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
}

impl Step {
    pub fn tool(name: impl Into<String>, arguments: Value) -> Self {
        Step::Tool { name: name.into(), arguments }
    }

    pub fn text(text: impl Into<String>) -> Self {
        Step::Text(text.into())
    }

    pub fn error(status: u16, message: impl Into<String>) -> Self {
        Step::Error(ScriptedError { status, message: message.into(), kind: None, code: None, retry_after: None })
    }
}

/// The answer once every step has been used; a text, so a client that asks once
/// too often ends its turn instead of hanging or failing confusingly.
pub const EXHAUSTED: &str = "(script exhausted)";

/// A script from its JSON text: an array of steps.
pub fn parse_script(json: &str) -> Result<Vec<Step>, serde_json::Error> {
    serde_json::from_str(json)
}

/// A script from a JSON file holding an array of steps.
pub fn load_script(path: &Path) -> Result<Vec<Step>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_script(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The JSON shape, checked to hold exactly one kind of step: a typo such as
/// `{"tool": "x", "text": "y"}` should fail loudly, not pick one silently.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    arguments: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<ScriptedError>,
}

impl TryFrom<RawStep> for Step {
    type Error = String;

    fn try_from(raw: RawStep) -> Result<Self, String> {
        match raw {
            RawStep { tool: Some(name), arguments, text: None, error: None } => {
                let arguments = arguments.unwrap_or_else(|| Value::Object(Default::default()));
                if !arguments.is_object() {
                    return Err(format!("step `{name}`: arguments must be a JSON object"));
                }
                Ok(Step::Tool { name, arguments })
            }
            RawStep { tool: None, arguments: None, text: Some(text), error: None } => Ok(Step::Text(text)),
            RawStep { tool: None, arguments: None, text: None, error: Some(error) } => Ok(Step::Error(error)),
            _ => Err("a step is exactly one of {\"tool\", \"arguments\"}, {\"text\"} or {\"error\"}".into()),
        }
    }
}

impl From<Step> for RawStep {
    fn from(step: Step) -> Self {
        let mut raw = RawStep { tool: None, arguments: None, text: None, error: None };
        match step {
            Step::Tool { name, arguments } => {
                raw.tool = Some(name);
                raw.arguments = Some(arguments);
            }
            Step::Text(text) => raw.text = Some(text),
            Step::Error(error) => raw.error = Some(error),
        }
        raw
    }
}
