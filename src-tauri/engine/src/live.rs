//! Live activity (issue 15): what a session's agent is doing right now — its prose as it
//! streams, and one updating line when the provider fails and the agent retries. Sent as
//! `Live` events only, never stored: the transcript gets the finished text once, and at
//! most one line when a phase finally fails.

use std::time::{Duration, Instant};

use crate::events::EventBus;
use crate::ids::SessionId;
use kiln_types::*;

/// At most one streamed-text update per this long (the end of a stretch always goes out).
pub(crate) const TEXT_EVERY: Duration = Duration::from_millis(50);

/// At most one running-command output update per this long.
pub(crate) const OUTPUT_EVERY: Duration = Duration::from_millis(200);

/// How much of a running command's output the live view carries: its end.
pub(crate) const OUTPUT_TAIL: usize = 4 * 1024;

/// A session's live line for one phase: keeps what was last sent, so each update says
/// the whole state and the end clears it.
pub(crate) struct Live {
    session: SessionId,
    phase: LivePhase,
    role: Option<String>,
    module: Option<String>,
    text: Option<String>,
    status: Option<LiveStatus>,
    last_text_at: Option<Instant>,
    output: Option<String>,
    last_output_at: Option<Instant>,
}

impl Live {
    pub(crate) fn new(session: &SessionId, phase: LivePhase, role: Option<&str>, module: Option<&str>) -> Live {
        Live {
            session: session.clone(),
            phase,
            role: role.map(String::from),
            module: module.map(String::from),
            text: None,
            status: None,
            last_text_at: None,
            output: None,
            last_output_at: None,
        }
    }

    fn emit(&self, events: &EventBus) {
        let live = LiveView {
            session_id: self.session.to_string(),
            phase: self.phase,
            role: self.role.clone(),
            module: self.module.clone(),
            text: self.text.clone(),
            status: self.status.clone(),
            output: self.output.clone(),
        };
        events.emit_ephemeral(EventBody::Live { live });
    }

    /// The prose so far; throttled to one update per `TEXT_EVERY` unless `now` (the end
    /// of a stretch, a whole message). Text arriving means the provider answers again:
    /// a retry line goes in the same update.
    pub(crate) fn text(&mut self, events: &EventBus, text: &str, now: bool) {
        let recovering = self.status.as_ref().is_some_and(|s| s.kind == LiveStatusKind::Retrying);
        if recovering {
            self.status = None;
        }
        let due = self.last_text_at.is_none_or(|at| at.elapsed() >= TEXT_EVERY);
        let text = Some(text.to_string()).filter(|t| !t.trim().is_empty());
        if !recovering && (text == self.text || !(now || due)) {
            return;
        }
        self.text = text;
        self.last_text_at = Some(Instant::now());
        self.emit(events);
    }

    /// The prose was written to the transcript: the live copy goes.
    pub(crate) fn written(&mut self, events: &EventBus) {
        if self.text.take().is_some() {
            self.emit(events);
        }
    }

    pub(crate) fn status(&mut self, events: &EventBus, status: LiveStatus) {
        if self.status.as_ref() != Some(&status) {
            self.status = Some(status);
            self.emit(events);
        }
    }

    /// A running command printed `piece`: its output so far (the end of it) goes out, at
    /// most once per `OUTPUT_EVERY`; what arrives between updates goes with the next.
    pub(crate) fn output(&mut self, events: &EventBus, piece: &str) {
        let mut output = self.output.take().unwrap_or_default();
        output.push_str(piece);
        if output.len() > OUTPUT_TAIL {
            let mut cut = output.len() - OUTPUT_TAIL;
            while !output.is_char_boundary(cut) {
                cut += 1;
            }
            output.drain(..cut);
        }
        self.output = Some(output);
        if self.last_output_at.is_none_or(|at| at.elapsed() >= OUTPUT_EVERY) {
            self.last_output_at = Some(Instant::now());
            self.emit(events);
        }
    }

    /// The command ended (its result is in the transcript): its live output goes.
    pub(crate) fn output_ended(&mut self, events: &EventBus) {
        self.last_output_at = None;
        if self.output.take().is_some() {
            self.emit(events);
        }
    }

    /// The provider answers again: the retry line goes.
    pub(crate) fn recovered(&mut self, events: &EventBus) {
        if self.status.as_ref().is_some_and(|s| s.kind == LiveStatusKind::Retrying) {
            self.status = None;
            self.emit(events);
        }
    }

    /// The phase is over: text and status both cleared.
    pub(crate) fn end(&mut self, events: &EventBus) {
        self.text = None;
        self.status = None;
        self.output = None;
        self.emit(events);
    }
}

/// The stable short reason for a provider failure: `auth`, `rate-limit`, `overloaded`,
/// `network` or `other`, from its HTTP status or, without one, its words.
pub(crate) fn reason(http_status: Option<u16>, message: &str) -> &'static str {
    match http_status {
        Some(401 | 403) => return "auth",
        Some(429) => return "rate-limit",
        Some(529 | 503) => return "overloaded",
        _ => {}
    }
    let m = message.to_ascii_lowercase();
    let any = |words: &[&str]| words.iter().any(|w| m.contains(w));
    if any(&[
        "401",
        "403",
        "authentication",
        "invalid api key",
        "invalid x-api-key",
        "failed to authenticate",
        "unauthorized",
        "permission_error",
        "/login",
    ]) {
        "auth"
    } else if any(&["429", "rate limit", "rate_limit", "too many requests"]) {
        "rate-limit"
    } else if any(&["529", "503", "overloaded"]) {
        "overloaded"
    } else if any(&[
        "econnrefused",
        "econnreset",
        "enotfound",
        "could not reach",
        "connection",
        "network",
        "timed out",
        "timeout",
        "fetch failed",
        "stream disconnected",
    ]) {
        "network"
    } else {
        "other"
    }
}

/// The first HTTP status-like number (4xx/5xx) in a message, when the driver gave none.
pub(crate) fn status_in(message: &str) -> Option<u16> {
    let re = regex::Regex::new(r"\b([45]\d\d)\b").ok()?;
    re.captures(message).and_then(|c| c[1].parse().ok())
}

/// Words for people about a provider failure.
pub(crate) fn words(reason: &str, http_status: Option<u16>) -> String {
    let code = http_status.map(|s| format!(" ({s})")).unwrap_or_default();
    match reason {
        "auth" => format!("The model provider refused the credentials{code}"),
        "rate-limit" => format!("The model provider is rate-limiting requests{code}"),
        "overloaded" => format!("The model provider is overloaded{code}"),
        "network" => "The model provider cannot be reached".to_string(),
        _ => format!("The model provider failed{code}"),
    }
}

/// The status line for a retry the agent reported.
pub(crate) fn retrying(attempt: u32, max_attempts: Option<u32>, http_status: Option<u16>, message: &str) -> LiveStatus {
    let http_status = http_status.or_else(|| status_in(message));
    let reason = reason(http_status, message);
    LiveStatus {
        kind: LiveStatusKind::Retrying,
        message: words(reason, http_status),
        attempt: Some(attempt),
        max_attempts,
        reason: reason.to_string(),
        http_status,
    }
}

/// The status line for a failure that ends the phase.
pub(crate) fn failed(message: &str) -> LiveStatus {
    let http_status = status_in(message);
    let reason = reason(http_status, message);
    LiveStatus {
        kind: LiveStatusKind::Failed,
        message: words(reason, http_status),
        attempt: None,
        max_attempts: None,
        reason: reason.to_string(),
        http_status,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_come_from_the_status_then_the_words() {
        assert_eq!(reason(Some(401), ""), "auth");
        assert_eq!(reason(Some(529), ""), "overloaded");
        assert_eq!(reason(Some(429), ""), "rate-limit");
        assert_eq!(reason(None, "Failed to authenticate. API Error: 401 {\"type\":\"error\"}"), "auth");
        assert_eq!(reason(None, "Invalid API key · Please run /login"), "auth");
        assert_eq!(reason(None, "Overloaded"), "overloaded");
        assert_eq!(reason(None, "Connection error."), "network");
        assert_eq!(reason(None, "something odd"), "other");
        assert_eq!(status_in("API Error: 529 overloaded"), Some(529));
        assert_eq!(status_in("took 1200 ms"), None);
    }
}
