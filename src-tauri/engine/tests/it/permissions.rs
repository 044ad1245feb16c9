//! Permissions the command policy cannot decide (issue 18): a driver asks the turn's
//! operator, the request becomes a card in the session view and a line in the transcript,
//! and the turn waits until `answer_permission` sends the operator's option back to the
//! driver. Wrong ids are refused with their codes and change nothing; Stop, and the turn's
//! end, withdraw the cards and the driver hears no answer.
//!
//! The driver is a double that asks through the real `TurnSink::operator` the engine hands
//! it, as the ACP driver does for `session/request_permission`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::*;
use kiln_engine::testing::drivers::events::{DriverEvent, ToolKind};
use kiln_engine::testing::drivers::permission::{PermissionAsk, PermissionChoice};
use kiln_engine::testing::drivers::{Driver, TurnFuture, TurnRequest, TurnSink};
use kiln_engine::types::*;
use kiln_engine::{Engine, ErrorCode};
use tokio::sync::oneshot;

/// What the double heard back for each of its requests, in order.
type Heard = Arc<Mutex<Vec<Option<String>>>>;

/// How the double waits for its answer.
#[derive(Clone, Copy, PartialEq)]
enum Wait {
    /// Asks, waits for the answer, says it and ends its turn.
    Answer,
    /// Asks from a task of its own and, once told to (`Double::end`), ends its turn
    /// without waiting; the task reports what it heard on `Double::late`.
    Leave,
}

#[derive(Clone)]
struct Double {
    wait: Wait,
    heard: Heard,
    late: Arc<Mutex<Option<oneshot::Sender<Option<String>>>>>,
    end: Arc<Mutex<Option<oneshot::Receiver<()>>>>,
}

/// The test's side of a double: what its request heard when left behind, and the signal
/// that ends its turn.
struct Remote {
    late: oneshot::Receiver<Option<String>>,
    end: oneshot::Sender<()>,
}

impl Double {
    fn new(wait: Wait) -> (Double, Remote) {
        let (late_tx, late) = oneshot::channel();
        let (end, end_rx) = oneshot::channel();
        let double = Double {
            wait,
            heard: Heard::default(),
            late: Arc::new(Mutex::new(Some(late_tx))),
            end: Arc::new(Mutex::new(Some(end_rx))),
        };
        (double, Remote { late, end })
    }
}

fn fetch() -> PermissionAsk {
    let option = |id: &str, name: &str, kind| PermissionChoice { id: id.into(), name: name.into(), kind };
    PermissionAsk {
        tool_call_id: "call-1".into(),
        title: "Fetch https://example.com/docs".into(),
        kind: ToolKind::Fetch,
        locations: vec![],
        why: "The command policy does not decide fetches.".into(),
        options: vec![
            option("allow-once", "Allow once", PermissionChoiceKind::AllowOnce),
            option("allow-always", "Always allow", PermissionChoiceKind::AllowAlways),
            option("reject-once", "Reject", PermissionChoiceKind::RejectOnce),
        ],
        input: serde_json::json!({ "url": "https://example.com/docs" }),
    }
}

impl Driver for Double {
    fn id(&self) -> &'static str {
        "claude"
    }

    /// Ends politely after Stop, as the ACP driver does: the engine keeps polling the turn
    /// for a grace period, so what the double hears after Stop is seen.
    fn stops_politely(&self) -> bool {
        true
    }

    fn run(&self, _request: TurnRequest, sink: TurnSink) -> TurnFuture {
        let double = self.clone();
        Box::pin(async move {
            let operator = sink.operator.clone().expect("a turn hands its driver an operator");
            match double.wait {
                Wait::Answer => {
                    // Said before asking: the transcript has it before the request.
                    let _ = sink.events.send(DriverEvent::Text { text: "I need the docs first.".into() });
                    let answer = operator.ask(fetch()).await;
                    double.heard.lock().unwrap().push(answer.clone());
                    let text = format!("Heard {}.", answer.as_deref().unwrap_or("nothing"));
                    let _ = sink.events.send(DriverEvent::Text { text: text.clone() });
                }
                Wait::Leave => {
                    let asking = operator.ask(fetch());
                    let late = double.late.lock().unwrap().take().unwrap();
                    tokio::spawn(async move {
                        let _ = late.send(asking.await);
                    });
                    let end = double.end.lock().unwrap().take().unwrap();
                    let _ = end.await;
                }
            }
            let _ = sink.events.send(DriverEvent::TurnEnded {
                is_error: false,
                stop_reason: Some("end_turn".into()),
                final_text: None,
                error: None,
            });
            Ok(())
        })
    }
}

async fn session(engine: &Engine, id: &str) -> SessionView {
    engine.get_session(SessionIdArgs { session_id: id.into() }).await.unwrap()
}

async fn transcript(engine: &Engine, id: &str) -> Vec<TranscriptEntry> {
    engine
        .get_transcript(GetTranscriptArgs { session_id: id.into(), after: None, before: None, last: None })
        .await
        .unwrap()
}

/// A session of the set-up-free shop, planned by the rules alone and at rest.
async fn world() -> (tempfile::TempDir, Arc<Engine>, SessionView) {
    let tmp = tempfile::tempdir().unwrap();
    let (_, engine) = shop_without_setup(tmp.path()).await;
    engine.update_settings(UpdateSettingsArgs { planner_agent: Some(false), ..Default::default() }).await.unwrap();
    let s = create(&engine, "Read the docs for @shop/catalog").await;
    let s = wait_settled(&engine, &s.id, Duration::from_secs(10)).await;
    (tmp, engine, s)
}

/// Starts a turn of `driver` in the session's first module, outside the chain.
async fn turn_with(engine: &Engine, s: &SessionView, driver: Double) {
    let ws = engine.workspace().unwrap();
    let role = ws.roles().unwrap().into_iter().find(|r| r.id == "backend-engineer").unwrap();
    let plan = kiln_engine::testing::turn::TurnPlan {
        session: kiln_engine::testing::ids::SessionId::parse(&s.id).unwrap(),
        module: s.modules[0].clone(),
        role,
        driver: Arc::new(driver),
        model: None,
        prompt: "Read the docs".into(),
        instructions: String::new(),
        resume_id: None,
        chain_index: 0,
        review: false,
    };
    kiln_engine::testing::turn::start(ws, engine.events().clone(), plan).await.unwrap();
}

/// Polls the session view until `ok` holds, for at most `limit`.
async fn until(engine: &Engine, id: &str, limit: Duration, ok: impl Fn(&SessionView) -> bool) -> SessionView {
    let deadline = Instant::now() + limit;
    loop {
        let s = session(engine, id).await;
        if ok(&s) {
            return s;
        }
        assert!(Instant::now() < deadline, "the session never got there: {s:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn answer(session: &str, request: &str, option: &str) -> AnswerPermissionArgs {
    AnswerPermissionArgs { session_id: session.into(), request_id: request.into(), option_id: option.into() }
}

const ASKED: &str = "The agent asks permission for **fetch** `Fetch https://example.com/docs`: answer in the card.";

#[tokio::test]
async fn a_request_waits_as_a_card_until_the_operator_answers_it() {
    let (_tmp, engine, s) = world().await;
    let mut rx = engine.subscribe(None).receiver;
    let (double, _) = Double::new(Wait::Answer);
    let heard = double.heard.clone();
    turn_with(&engine, &s, double).await;

    // The card is in the view, the turn runs on, and the transcript says what is asked.
    let waiting = until(&engine, &s.id, Duration::from_secs(10), |v| !v.permissions.is_empty()).await;
    let card = &waiting.permissions[0];
    assert_eq!(waiting.permissions.len(), 1);
    assert_eq!((card.title.as_str(), card.kind.as_str()), ("Fetch https://example.com/docs", "fetch"));
    assert_eq!(card.why, "The command policy does not decide fetches.");
    let options: Vec<(&str, PermissionChoiceKind)> = card.options.iter().map(|o| (o.id.as_str(), o.kind)).collect();
    assert_eq!(options[0], ("allow-once", PermissionChoiceKind::AllowOnce));
    assert_eq!(options.len(), 3);
    assert!(waiting.running && waiting.state == SessionState::Running, "{waiting:#?}");
    let entries = transcript(&engine, &s.id).await;
    let texts: Vec<(EntryKind, &str)> = entries.iter().rev().take(2).rev().map(|e| (e.kind, e.text.as_str())).collect();
    assert_eq!(texts, [(EntryKind::Agent, "I need the docs first."), (EntryKind::System, ASKED)]);
    assert!(heard.lock().unwrap().is_empty(), "the driver still waits");
    // The views heard of it through the event stream too.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let event = tokio::time::timeout(Duration::from_millis(200), rx.recv()).await;
        if let Ok(Ok(KilnEvent { body: EventBody::Session { session }, .. })) = event {
            if session.id == s.id && session.permissions.iter().any(|c| c.id == card.id) {
                break;
            }
        }
        assert!(Instant::now() < deadline, "no session event carried the card");
    }

    // Wrong ids: each refused with its code, nothing changes.
    let refusals = [
        (answer("../etc", &card.id, "allow-once"), ErrorCode::InvalidSessionId),
        (answer("5b0f8c1e-2f4c-4d8e-9a3b-1c2d3e4f5a6b", &card.id, "allow-once"), ErrorCode::SessionNotFound),
        (answer(&s.id, "5b0f8c1e-2f4c-4d8e-9a3b-1c2d3e4f5a6b", "allow-once"), ErrorCode::PermissionNotFound),
        (answer(&s.id, &card.id, "allow-sometimes"), ErrorCode::InvalidInput),
    ];
    for (args, code) in refusals {
        let err = engine.answer_permission(args.clone()).await.unwrap_err();
        assert_eq!(err.code, code, "{args:?}: {err:?}");
    }
    assert_eq!(session(&engine, &s.id).await.permissions, waiting.permissions);
    assert_eq!(transcript(&engine, &s.id).await.len(), entries.len());
    assert!(heard.lock().unwrap().is_empty());

    // The answer: recorded in words, gone from the view, heard by the driver.
    let answered = engine.answer_permission(answer(&s.id, &card.id, "allow-once")).await.unwrap();
    assert!(answered.permissions.is_empty(), "{answered:#?}");
    // Outside the chain nothing moves the session on: wait for the turn itself to go.
    let done = until(&engine, &s.id, Duration::from_secs(10), |v| !v.running).await;
    assert!(done.permissions.is_empty());
    assert_eq!(*heard.lock().unwrap(), vec![Some("allow-once".to_string())]);
    let texts: Vec<String> = transcript(&engine, &s.id).await.into_iter().map(|e| e.text).collect();
    let said = texts.iter().position(|t| t == "You allowed it once (**fetch** `Fetch https://example.com/docs`).");
    let heard_at = texts.iter().position(|t| t == "Heard allow-once.");
    assert!(said.is_some() && said < heard_at, "the answer is recorded before what the agent did next: {texts:#?}");
    // Answered once only.
    let again = engine.answer_permission(answer(&s.id, &card.id, "allow-once")).await.unwrap_err();
    assert_eq!(again.code, ErrorCode::PermissionNotFound);
}

#[tokio::test]
async fn stop_withdraws_the_card_and_the_driver_hears_no_answer() {
    let (_tmp, engine, s) = world().await;
    let (double, _) = Double::new(Wait::Answer);
    let heard = double.heard.clone();
    turn_with(&engine, &s, double).await;
    let waiting = until(&engine, &s.id, Duration::from_secs(10), |v| !v.permissions.is_empty()).await;
    let card = waiting.permissions[0].clone();

    let stopped = engine.stop_turn(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert!(stopped.permissions.is_empty(), "{stopped:#?}");
    assert!(!stopped.running);
    assert_eq!(*heard.lock().unwrap(), vec![None], "the driver heard no answer, and went on to end its turn");
    let texts: Vec<String> = transcript(&engine, &s.id).await.into_iter().map(|e| e.text).collect();
    assert!(
        texts.contains(
            &"The request for **fetch** `Fetch https://example.com/docs` went unanswered: the turn was stopped."
                .to_string()
        ),
        "{texts:#?}"
    );
    let late = engine.answer_permission(answer(&s.id, &card.id, "allow-once")).await.unwrap_err();
    assert_eq!(late.code, ErrorCode::PermissionNotFound);
}

#[tokio::test]
async fn a_turn_that_ends_takes_its_cards_with_it() {
    let (_tmp, engine, s) = world().await;
    let (double, remote) = Double::new(Wait::Leave);
    turn_with(&engine, &s, double).await;
    let waiting = until(&engine, &s.id, Duration::from_secs(10), |v| !v.permissions.is_empty()).await;
    let card = waiting.permissions[0].clone();
    // The double ends its turn with the request unanswered: the card goes, the asker hears nothing.
    remote.end.send(()).unwrap();
    let heard =
        tokio::time::timeout(Duration::from_secs(10), remote.late).await.expect("the request was never withdrawn");
    assert_eq!(heard.unwrap(), None);
    // Outside the chain nothing moves the session on: wait for the turn itself to go.
    let done = until(&engine, &s.id, Duration::from_secs(10), |v| !v.running).await;
    assert!(done.permissions.is_empty(), "{done:#?}");
    let texts: Vec<String> = transcript(&engine, &s.id).await.into_iter().map(|e| e.text).collect();
    assert!(texts.iter().any(|t| t.ends_with("went unanswered: the turn ended.")), "{texts:#?}");
    let gone = engine.answer_permission(answer(&s.id, &card.id, "reject-once")).await.unwrap_err();
    assert_eq!(gone.code, ErrorCode::PermissionNotFound);
}
