//! The one event stream: every change is numbered, kept in a bounded ring so a view
//! can resume from the last id it saw, and broadcast to every subscriber.

use std::collections::VecDeque;
use std::sync::Mutex;

use tokio::sync::broadcast;

use kiln_types::{EventBody, KilnEvent};

const KEPT: usize = 4096;

pub struct EventBus {
    ring: Mutex<Ring>,
    sender: broadcast::Sender<KilnEvent>,
    /// Where a host on a team's database hands what it emits for the other hosts
    /// (`api::team`): the body and whether it is kept.
    outbox: std::sync::OnceLock<tokio::sync::mpsc::UnboundedSender<(EventBody, bool)>>,
}

struct Ring {
    next_id: u64,
    kept: VecDeque<KilnEvent>,
}

/// What a new subscriber gets: the events it missed, then the live receiver.
pub struct Subscription {
    pub backlog: Vec<KilnEvent>,
    pub receiver: broadcast::Receiver<KilnEvent>,
}

impl Default for EventBus {
    fn default() -> Self {
        EventBus {
            ring: Mutex::new(Ring { next_id: 1, kept: VecDeque::new() }),
            sender: broadcast::channel(1024).0,
            outbox: std::sync::OnceLock::new(),
        }
    }
}

impl EventBus {
    /// Numbers, keeps and broadcasts `body`, with every secret in it redacted: this is
    /// the one way out to every view.
    pub fn emit(&self, body: EventBody) -> KilnEvent {
        self.send(body, true)
    }

    /// `emit` for what is only true now (`Live`): numbered and broadcast, but not kept,
    /// so a view resuming later is not replayed stale activity, and a stream of text
    /// updates never pushes the changes that matter out of the ring.
    pub fn emit_ephemeral(&self, body: EventBody) -> KilnEvent {
        self.send(body, false)
    }

    /// Hands every later event about sessions to `outbox` as well (the first call wins).
    pub fn share_with(&self, outbox: tokio::sync::mpsc::UnboundedSender<(EventBody, bool)>) {
        let _ = self.outbox.set(outbox);
    }

    /// `emit` (or, unkept, `emit_ephemeral`) for an event another host emitted: to this
    /// host's views only, never back out.
    pub fn relay(&self, body: EventBody, keep: bool) -> KilnEvent {
        self.publish(kiln_runtime::redact::redact_serde(body), keep)
    }

    fn send(&self, body: EventBody, keep: bool) -> KilnEvent {
        let body = kiln_runtime::redact::redact_serde(body);
        if let Some(outbox) = self.outbox.get() {
            // A terminal and the workspace a host opened are that host's own.
            if !matches!(body, EventBody::Workspace { .. } | EventBody::Terminal { .. } | EventBody::Resync) {
                let _ = outbox.send((body.clone(), keep));
            }
        }
        self.publish(body, keep)
    }

    fn publish(&self, body: EventBody, keep: bool) -> KilnEvent {
        let mut ring = self.ring.lock().unwrap();
        let event = KilnEvent { id: ring.next_id, at: kiln_runtime::clock::now(), body };
        ring.next_id += 1;
        if keep {
            if ring.kept.len() == KEPT {
                ring.kept.pop_front();
            }
            ring.kept.push_back(event.clone());
        }
        // Sent under the lock so a subscriber never sees an event twice or misses one.
        let _ = self.sender.send(event.clone());
        event
    }

    /// Subscribes; with `since`, first replays every event after that id, or a single
    /// `resync` when those events are no longer kept.
    pub fn subscribe(&self, since: Option<u64>) -> Subscription {
        let ring = self.ring.lock().unwrap();
        let receiver = self.sender.subscribe();
        let backlog = match since {
            None => Vec::new(),
            Some(since) => {
                let oldest = ring.kept.front().map(|e| e.id).unwrap_or(ring.next_id);
                if since + 1 < oldest || since >= ring.next_id {
                    vec![KilnEvent { id: ring.next_id - 1, at: kiln_runtime::clock::now(), body: EventBody::Resync }]
                } else {
                    ring.kept.iter().filter(|e| e.id > since).cloned().collect()
                }
            }
        };
        Subscription { backlog, receiver }
    }

    pub fn last_id(&self) -> u64 {
        self.ring.lock().unwrap().next_id - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_types::{LivePhase, LiveView};

    #[test]
    fn resumes_after_the_last_seen_id() {
        let bus = EventBus::default();
        for _ in 0..3 {
            bus.emit(EventBody::Resync);
        }
        let sub = bus.subscribe(Some(1));
        assert_eq!(sub.backlog.iter().map(|e| e.id).collect::<Vec<_>>(), vec![2, 3]);
        assert!(bus.subscribe(None).backlog.is_empty());
        // An id from another process's numbering (ahead of ours) forces a resync.
        let sub = bus.subscribe(Some(99));
        assert!(matches!(sub.backlog[0].body, EventBody::Resync));
    }

    #[test]
    fn ephemeral_events_are_sent_but_never_replayed() {
        let bus = EventBus::default();
        let mut live = bus.subscribe(None).receiver;
        bus.emit(EventBody::Resync);
        let live_view = LiveView {
            session_id: "s".into(),
            phase: LivePhase::Turn,
            role: None,
            module: None,
            text: Some("Hel".into()),
            status: None,
            output: None,
        };
        bus.emit_ephemeral(EventBody::Live { live: live_view });
        bus.emit(EventBody::Resync);
        let ids: Vec<u64> = (0..3).map(|_| live.try_recv().unwrap().id).collect();
        assert_eq!(ids, vec![1, 2, 3], "numbered in order and sent live");
        let replayed: Vec<u64> = bus.subscribe(Some(0)).backlog.iter().map(|e| e.id).collect();
        assert_eq!(replayed, vec![1, 3], "a view resuming gets the kept events only, without a resync");
    }

    #[test]
    fn too_old_an_id_gets_a_resync() {
        let bus = EventBus::default();
        for _ in 0..(KEPT + 10) {
            bus.emit(EventBody::Resync);
        }
        let sub = bus.subscribe(Some(2));
        assert_eq!(sub.backlog.len(), 1);
        assert_eq!(sub.backlog[0].id, (KEPT + 10) as u64);
    }
}
