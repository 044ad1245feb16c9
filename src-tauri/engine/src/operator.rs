//! The operator's side of a turn: a permission request the command policy cannot decide
//! becomes a card in the chat (`SessionView::permissions`, held by `permissions.rs`), the
//! transcript says what the agent asks, and the driver waits until the operator picks one of
//! the agent's options (`answer_permission`), or the turn stops or ends and the request is
//! withdrawn (the driver then gets no answer, and refuses). The session stays running
//! meanwhile; the views say it needs the operator because a card waits.
//!
//! What the agent asks is written by the turn itself (`Said`), after the events the driver
//! sent before asking, so the transcript reads in the order things happened.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use crate::drivers::events::ToolKind;
use crate::drivers::permission::{AskFuture, Operator, PermissionAsk};
use crate::events::EventBus;
use crate::ids::SessionId;
use crate::session::{publish, record};
use crate::workspace::{Context, Workspace};
use kiln_runtime::clock::now;
use kiln_types::error::Result;
use kiln_types::*;

/// A system line for the turn to write in its transcript, in order with the driver's own
/// events; `written` says it is there.
pub(crate) struct Said {
    pub text: String,
    pub written: oneshot::Sender<()>,
}

/// The chat of one turn, answering for the operator.
#[derive(Clone)]
pub(crate) struct ChatOperator {
    ws: Arc<Workspace>,
    events: Arc<EventBus>,
    session: SessionId,
    /// The turn's record id: the requests it leaves are taken back by it.
    turn: i64,
    /// To the turn, which writes what is asked (see `Said`).
    said: mpsc::UnboundedSender<Said>,
}

impl ChatOperator {
    /// The operator of turn `turn`, and the lines it asks the turn to write.
    pub(crate) fn new(
        ws: Arc<Workspace>,
        events: Arc<EventBus>,
        session: SessionId,
        turn: i64,
    ) -> (ChatOperator, mpsc::UnboundedReceiver<Said>) {
        let (said, lines) = mpsc::unbounded_channel();
        (ChatOperator { ws, events, session, turn, said }, lines)
    }

    /// Has the turn write `text`; `false` when the turn is no longer there to write it.
    async fn say(&self, text: String) -> bool {
        let (written, done) = oneshot::channel();
        self.said.send(Said { text, written }).is_ok() && done.await.is_ok()
    }

    /// Takes back every request of this turn still waiting (it was stopped, or it ended):
    /// each is said in the transcript, and the views lose the cards.
    pub(crate) async fn withdraw_all(&self, why: &str) {
        let cards = self.ws.permissions.withdraw_turn(self.session.as_str(), self.turn);
        withdrawn(&self.ws, &self.events, &self.session, &cards, why).await;
    }
}

impl Operator for ChatOperator {
    fn ask(&self, ask: PermissionAsk) -> AskFuture {
        let me = self.clone();
        Box::pin(async move {
            let card = PermissionCard {
                id: uuid::Uuid::new_v4().to_string(),
                title: ask.title,
                kind: kind_word(ask.kind),
                locations: ask.locations,
                why: ask.why,
                options: ask.options,
                asked_at: now(),
            };
            // A request with nothing to choose cannot be answered: refused, and said so.
            if card.options.is_empty() {
                me.say(format!("The agent asked permission for {} with no option to choose: refused.", what(&card)))
                    .await;
                return None;
            }
            if !me.say(format!("The agent asks permission for {}: answer in the card.", what(&card))).await {
                return None; // the turn has ended: nobody will answer
            }
            let waiting = me.ws.permissions.add(me.session.as_str(), me.turn, card.clone());
            // Dropped with the driver's request (the agent stopped asking): the card goes.
            let _gone = Unanswered { operator: me.clone(), request: card.id.clone() };
            let _ = publish(&me.ws, &me.events, &me.session).await;
            waiting.await.ok()
        })
    }
}

/// Withdraws its request when the driver stops waiting for it before an answer came.
struct Unanswered {
    operator: ChatOperator,
    request: String,
}

impl Drop for Unanswered {
    fn drop(&mut self) {
        let op = &self.operator;
        // Answered, or withdrawn with the turn already: nothing is left to say.
        let Some(card) = op.ws.permissions.withdraw(op.session.as_str(), &self.request) else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let op = op.clone();
        runtime.spawn(async move {
            withdrawn(&op.ws, &op.events, &op.session, &[card], "the agent stopped waiting for it").await;
        });
    }
}

/// Says in the transcript that each of `cards` went unanswered, and tells the views.
async fn withdrawn(ws: &Workspace, events: &EventBus, session: &SessionId, cards: &[PermissionCard], why: &str) {
    if cards.is_empty() {
        return;
    }
    for card in cards {
        let text = format!("The request for {} went unanswered: {why}.", what(card));
        let _ = record(ws, events, session, EntryKind::System, None, &text).await;
    }
    let _ = publish(ws, events, session).await;
}

/// The operator's answer to a waiting request: recorded in words, then sent to the agent.
pub(crate) async fn answer(cx: &Context, args: AnswerPermissionArgs) -> Result<SessionView> {
    let Context { ws, events } = cx;
    let id = SessionId::parse(&args.session_id)?;
    crate::session::view(ws, &id).await?; // SESSION_NOT_FOUND before PERMISSION_NOT_FOUND
    let answered = ws.permissions.answer(id.as_str(), &args.request_id, &args.option_id)?;
    let verdict = match answered.choice.kind {
        PermissionChoiceKind::AllowOnce => "You allowed it once",
        PermissionChoiceKind::AllowAlways => "You allowed it always",
        PermissionChoiceKind::RejectOnce => "You refused it",
        PermissionChoiceKind::RejectAlways => "You refused it always",
    };
    let text = format!("{verdict} ({}).", what(&answered.card));
    let _ = record(ws, events, &id, EntryKind::System, None, &text).await;
    // The agent hears of it after the record, so the transcript reads in order.
    let _ = answered.answer.send(answered.choice.id);
    publish(ws, events, &id).await
}

/// A request as the transcript names it: "**fetch** `Fetch https://example.com`".
fn what(card: &PermissionCard) -> String {
    format!("**{}** `{}`", card.kind, card.title.replace('`', "'"))
}

/// The tool kind as the transcript's tool rows spell it.
fn kind_word(kind: ToolKind) -> String {
    serde_json::to_value(kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_else(|| "other".into())
}
