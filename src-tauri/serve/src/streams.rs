//! `GET /api/events`: the engine's events as server-sent events, for as long as the
//! browser session that opened the stream lives. The cookie is checked when the stream
//! opens (by `connection::require`) and again (`session_checks`) before every event, every few seconds
//! while it is quiet, and at once when this server ends a session. So a stream ends on
//! `kiln token revoke` (another process, which only writes access.db), on
//! `POST /api/disconnect` and on expiry; and every stream ends when the server stops.
//! A terminal's output stream (`terminal_stream`) ends the same way, through `Lifeline`.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::response::sse::Event;
use futures_util::stream::{self, Stream};
use kiln_engine::types::KilnEvent;
use kiln_engine::Subscription;
use tokio::sync::{broadcast, watch};

use crate::session_checks::SessionChecks;

/// How often a quiet stream asks whether its browser session still lives: a revocation
/// or expiry closes it within this long even when no event is due.
pub(crate) const SESSION_RECHECK: Duration = Duration::from_secs(2);

/// What ends the open streams of one server.
pub(crate) struct Streams {
    /// `true` once the server stops: every stream ends.
    stopping: watch::Sender<bool>,
    /// Bumped when this server ends a browser session: every stream rechecks its own.
    sessions_ended: watch::Sender<u64>,
}

impl Streams {
    pub(crate) fn new() -> Streams {
        Streams { stopping: watch::channel(false).0, sessions_ended: watch::channel(0).0 }
    }

    /// Ends every stream (the server is stopping).
    pub(crate) fn stop_all(&self) {
        self.stopping.send_replace(true);
    }

    /// A browser session ended here: streams recheck theirs now rather than on the timer.
    pub(crate) fn session_ended(&self) {
        self.sessions_ended.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// The events of `subscription` for the browser session whose cookie is `secret`.
    pub(crate) fn watch(
        &self,
        checks: Arc<SessionChecks>,
        secret: String,
        subscription: Subscription,
    ) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static {
        let watch = Watch {
            backlog: subscription.backlog.into_iter(),
            events: subscription.receiver,
            lifeline: self.lifeline(checks, secret),
        };
        stream::unfold(watch, Watch::next)
    }

    /// What a stream for the browser session whose cookie is `secret` ends with (the
    /// events here, a terminal's output in `terminal_stream`).
    pub(crate) fn lifeline(&self, checks: Arc<SessionChecks>, secret: String) -> Lifeline {
        let mut recheck = tokio::time::interval_at(tokio::time::Instant::now() + SESSION_RECHECK, SESSION_RECHECK);
        recheck.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        Lifeline {
            checks,
            secret,
            stopping: self.stopping.subscribe(),
            sessions_ended: self.sessions_ended.subscribe(),
            recheck,
        }
    }
}

impl Default for Streams {
    fn default() -> Self {
        Streams::new()
    }
}

/// One stream's hold on its browser session and its server: `ended` resolves when the
/// stream must end, and `live` is asked before each item it sends.
pub(crate) struct Lifeline {
    checks: Arc<SessionChecks>,
    secret: String,
    stopping: watch::Receiver<bool>,
    sessions_ended: watch::Receiver<u64>,
    recheck: tokio::time::Interval,
}

impl Lifeline {
    /// Resolves when the server stops or the browser session has ended (checked when this
    /// server ends one, and every `SESSION_RECHECK`). Safe to drop and call again.
    pub(crate) async fn ended(&mut self) {
        loop {
            tokio::select! {
                biased;
                // Also when the server is gone (the sender dropped).
                _ = raised(&mut self.stopping) => return,
                ended = self.sessions_ended.changed() => if ended.is_err() { return },
                _ = self.recheck.tick() => {}
            }
            if !self.live().await {
                return;
            }
        }
    }

    /// Whether the browser session still lives.
    pub(crate) async fn live(&self) -> bool {
        self.checks.live(&self.secret).await
    }
}

struct Watch {
    backlog: std::vec::IntoIter<KilnEvent>,
    events: broadcast::Receiver<KilnEvent>,
    lifeline: Lifeline,
}

impl Watch {
    async fn next(mut self) -> Option<(Result<Event, Infallible>, Watch)> {
        // The backlog was asked for by a request the connection check just let through.
        if let Some(event) = self.backlog.next() {
            return Some((Ok(to_sse(event)), self));
        }
        let event = tokio::select! {
            biased;
            _ = self.lifeline.ended() => return None,
            received = self.events.recv() => match received {
                Ok(event) => to_sse(event),
                // A subscriber too slow to keep up is told to refetch rather than miss events.
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    Event::default().data(r#"{"id":0,"at":"","body":{"type":"resync"}}"#)
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            },
        };
        // Checked before each event, so none reaches a session that has just ended.
        if !self.lifeline.live().await {
            return None;
        }
        Some((Ok(event), self))
    }
}

/// Resolves once the flag is raised, or its sender is gone.
pub(crate) async fn raised(flag: &mut watch::Receiver<bool>) {
    let _ = flag.wait_for(|raised| *raised).await;
}

fn to_sse(event: KilnEvent) -> Event {
    Event::default().id(event.id.to_string()).data(serde_json::to_string(&event).unwrap_or_default())
}
