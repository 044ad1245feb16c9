//! The permission requests waiting for the operator, per session: each one a card the session
//! view carries (`SessionView::permissions`) and the channel its answer goes back on. A turn
//! adds them (`operator.rs`) and takes back its own when it stops or ends; the operator
//! answers with `answer_permission`. They live in memory only: a request never outlives the
//! process that asked, as the turn that waits on it does not either.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::oneshot;

use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::{PermissionCard, PermissionChoice};

/// One request waiting: its card, the turn that asked, and where the chosen option goes.
struct Waiting {
    card: PermissionCard,
    turn: i64,
    answer: oneshot::Sender<String>,
}

/// What answering took out of the registry: the card, the option chosen, and the channel
/// to send it on (sent once the answer is recorded, so the record comes before whatever the
/// agent does next).
pub struct Answered {
    pub card: PermissionCard,
    pub choice: PermissionChoice,
    pub answer: oneshot::Sender<String>,
}

/// The waiting requests of every session of a workspace, oldest first within a session.
#[derive(Default)]
pub struct Pending {
    map: Mutex<HashMap<String, Vec<Waiting>>>,
}

impl Pending {
    /// Adds a request of `turn` (the id `TurnLog` keeps) to the session; the receiver gets
    /// the chosen option's id, or an error when the request is withdrawn unanswered.
    pub fn add(&self, session: &str, turn: i64, card: PermissionCard) -> oneshot::Receiver<String> {
        let (answer, waiting) = oneshot::channel();
        self.map.lock().unwrap().entry(session.to_string()).or_default().push(Waiting { card, turn, answer });
        waiting
    }

    /// The session's waiting cards, oldest first.
    pub fn cards(&self, session: &str) -> Vec<PermissionCard> {
        let map = self.map.lock().unwrap();
        map.get(session).map(|list| list.iter().map(|w| w.card.clone()).collect()).unwrap_or_default()
    }

    /// Takes the request out with the operator's choice: `PERMISSION_NOT_FOUND` when the
    /// session has no such request waiting (never asked, answered, or withdrawn), and
    /// `INVALID_INPUT` for an option the agent did not offer; either way nothing changes.
    pub fn answer(&self, session: &str, request: &str, option: &str) -> Result<Answered> {
        let mut map = self.map.lock().unwrap();
        let list = map.get_mut(session);
        let at = list.as_ref().and_then(|list| list.iter().position(|w| w.card.id == request)).ok_or_else(|| {
            ApiError::new(
                ErrorCode::PermissionNotFound,
                format!("no permission request `{request}` waits in this session: it was answered, or the turn ended"),
            )
        })?;
        let list = list.expect("found in it");
        let choice = list[at].card.options.iter().find(|o| o.id == option).cloned().ok_or_else(|| {
            let offered: Vec<String> = list[at].card.options.iter().map(|o| format!("`{}`", o.id)).collect();
            ApiError::invalid(format!("the agent offered no option `{option}`; it offered {}", offered.join(", ")))
        })?;
        let waiting = list.remove(at);
        if list.is_empty() {
            map.remove(session);
        }
        Ok(Answered { card: waiting.card, choice, answer: waiting.answer })
    }

    /// Withdraws one request unanswered (the agent stopped waiting for it); its card, when
    /// it was still there.
    pub fn withdraw(&self, session: &str, request: &str) -> Option<PermissionCard> {
        self.retain(session, |w| w.card.id != request).pop()
    }

    /// Withdraws every request `turn` left waiting: it stopped or ended. The agent's side of
    /// each sees no answer. Returns the cards withdrawn.
    pub fn withdraw_turn(&self, session: &str, turn: i64) -> Vec<PermissionCard> {
        self.retain(session, |w| w.turn != turn)
    }

    /// Keeps the session's requests `keep` says to keep; returns the others' cards.
    fn retain(&self, session: &str, keep: impl Fn(&Waiting) -> bool) -> Vec<PermissionCard> {
        let mut map = self.map.lock().unwrap();
        let Some(list) = map.get_mut(session) else { return Vec::new() };
        let (kept, gone): (Vec<Waiting>, Vec<Waiting>) = std::mem::take(list).into_iter().partition(keep);
        if kept.is_empty() {
            map.remove(session);
        } else {
            *list = kept;
        }
        gone.into_iter().map(|w| w.card).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_types::PermissionChoiceKind;

    fn card(id: &str) -> PermissionCard {
        PermissionCard {
            id: id.into(),
            title: "Fetch https://example.com".into(),
            kind: "fetch".into(),
            locations: vec![],
            why: "the command policy does not decide fetches".into(),
            options: vec![
                PermissionChoice {
                    id: "allow".into(),
                    name: "Allow once".into(),
                    kind: PermissionChoiceKind::AllowOnce,
                },
                PermissionChoice { id: "reject".into(), name: "Reject".into(), kind: PermissionChoiceKind::RejectOnce },
            ],
            asked_at: String::new(),
        }
    }

    #[test]
    fn an_answer_takes_the_request_out_and_bad_ones_change_nothing() {
        let pending = Pending::default();
        let mut first = pending.add("s", 1, card("a"));
        pending.add("s", 1, card("b"));
        assert_eq!(pending.answer("s", "c", "allow").err().map(|e| e.code), Some(ErrorCode::PermissionNotFound));
        assert_eq!(pending.answer("t", "a", "allow").err().map(|e| e.code), Some(ErrorCode::PermissionNotFound));
        assert_eq!(pending.answer("s", "a", "maybe").err().map(|e| e.code), Some(ErrorCode::InvalidInput));
        assert_eq!(pending.cards("s").len(), 2);
        let answered = pending.answer("s", "a", "allow").unwrap();
        assert_eq!(answered.choice.kind, PermissionChoiceKind::AllowOnce);
        answered.answer.send(answered.choice.id).unwrap();
        assert_eq!(first.try_recv().unwrap(), "allow");
        assert_eq!(pending.cards("s").iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["b"]);
        assert_eq!(pending.answer("s", "a", "allow").err().map(|e| e.code), Some(ErrorCode::PermissionNotFound));
    }

    #[test]
    fn a_turn_takes_back_only_its_own_requests() {
        let pending = Pending::default();
        let mut mine = pending.add("s", 1, card("a"));
        pending.add("s", 2, card("b"));
        assert_eq!(pending.withdraw_turn("s", 1).len(), 1);
        assert!(mine.try_recv().is_err(), "withdrawn: no answer comes");
        assert_eq!(pending.cards("s").len(), 1);
        assert_eq!(pending.withdraw("s", "b").map(|c| c.id), Some("b".to_string()));
        assert!(pending.withdraw("s", "b").is_none());
        assert!(pending.cards("s").is_empty());
    }
}
