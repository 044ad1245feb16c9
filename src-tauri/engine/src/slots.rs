//! The engine's turn slots (`[session] max_parallel_turns`): at most that many agent turns
//! run at once, whatever started them (an operator message, a chained or fix turn, a review,
//! a candidate of a group). A turn over the limit waits its turn in arrival order; the
//! sessions waiting are known here so their views can say "waiting for a free slot".
//! Stopping a waiting turn drops its ticket, which takes it off the queue.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

/// The slots of one engine, shared by every workspace it opens.
#[derive(Default)]
pub struct Slots {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// 0 until a workspace sets it: unlimited.
    limit: usize,
    busy: usize,
    next_ticket: u64,
    /// Waiting turns, oldest first: (ticket, session, the sender that wakes it).
    queue: VecDeque<(u64, String, oneshot::Sender<()>)>,
}

/// A held slot; dropping it frees the slot for the oldest waiting turn.
pub struct Slot {
    slots: Arc<Slots>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut inner = self.slots.inner.lock().unwrap();
        inner.busy = inner.busy.saturating_sub(1);
        inner.wake();
    }
}

impl Inner {
    fn free(&self) -> bool {
        self.limit == 0 || self.busy < self.limit
    }

    /// Hands free slots to the oldest waiters still there (a waiter stopped meanwhile has
    /// dropped its receiver, and is skipped).
    fn wake(&mut self) {
        while self.free() {
            let Some((_, _, tx)) = self.queue.pop_front() else { break };
            if tx.send(()).is_ok() {
                self.busy += 1;
            }
        }
    }
}

/// A turn's place in the queue: waits for its slot. Dropped before that (the turn was
/// stopped), it leaves the queue.
pub struct Ticket {
    slots: Arc<Slots>,
    id: u64,
    rx: Option<oneshot::Receiver<()>>,
}

impl Ticket {
    /// Whether the turn has to wait (it had no slot at once).
    pub fn waits(&self) -> bool {
        self.rx.is_some()
    }

    /// The slot, once it is this turn's turn.
    /// Cancelled (its future dropped), the ticket goes with it and leaves the queue.
    pub async fn slot(mut self) -> Slot {
        if let Some(rx) = self.rx.as_mut() {
            // The sender is dropped only after sending (wake) or with the whole Slots,
            // which this ticket keeps alive: an error cannot happen, and would mean go.
            let _ = rx.await;
            self.rx = None;
        }
        Slot { slots: self.slots.clone() }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if self.rx.is_some() {
            let mut inner = self.slots.inner.lock().unwrap();
            inner.queue.retain(|(id, _, _)| *id != self.id);
            // Woken just before it was dropped: the slot it was given goes on.
            if let Some(mut rx) = self.rx.take() {
                if rx.try_recv().is_ok() {
                    inner.busy = inner.busy.saturating_sub(1);
                    inner.wake();
                }
            }
        }
    }
}

impl Slots {
    /// Sets the limit (0: none); a raised limit lets waiting turns go at once.
    pub fn set_limit(&self, limit: usize) {
        let mut inner = self.inner.lock().unwrap();
        inner.limit = limit;
        inner.wake();
    }

    /// A ticket for `session`'s turn: a slot at once when one is free and nobody waits,
    /// else a place at the end of the queue.
    pub fn ticket(self: &Arc<Self>, session: &str) -> Ticket {
        let mut inner = self.inner.lock().unwrap();
        inner.next_ticket += 1;
        let id = inner.next_ticket;
        if inner.free() && inner.queue.is_empty() {
            inner.busy += 1;
            return Ticket { slots: self.clone(), id, rx: None };
        }
        let (tx, rx) = oneshot::channel();
        inner.queue.push_back((id, session.to_string(), tx));
        Ticket { slots: self.clone(), id, rx: Some(rx) }
    }

    /// The limit now (0: none).
    pub fn limit(&self) -> usize {
        self.inner.lock().unwrap().limit
    }

    /// Whether a turn of `session` waits for a slot now.
    pub fn is_waiting(&self, session: &str) -> bool {
        self.inner.lock().unwrap().queue.iter().any(|(_, s, _)| s == session)
    }

    /// The sessions waiting, oldest first.
    pub fn waiting(&self) -> Vec<String> {
        self.inner.lock().unwrap().queue.iter().map(|(_, s, _)| s.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_limit_follows_the_cores() {
        use crate::config::default_parallel_turns;
        assert_eq!(default_parallel_turns(1), 2);
        assert_eq!(default_parallel_turns(2), 3);
        assert_eq!(default_parallel_turns(4), 5);
        assert_eq!(default_parallel_turns(64), 8);
    }

    #[tokio::test]
    async fn turns_over_the_limit_wait_in_order_and_a_dropped_ticket_leaves_the_queue() {
        let slots = Arc::new(Slots::default());
        slots.set_limit(1);
        let first = slots.ticket("a");
        assert!(!first.waits());
        let held = first.slot().await;
        let second = slots.ticket("b");
        let third = slots.ticket("c");
        let fourth = slots.ticket("d");
        assert_eq!(slots.waiting(), ["b", "c", "d"]);
        drop(third);
        assert_eq!(slots.waiting(), ["b", "d"]);
        drop(held);
        let held = second.slot().await;
        assert_eq!(slots.waiting(), ["d"]);
        drop(held);
        let _held = fourth.slot().await;
        assert!(slots.waiting().is_empty());
        // The limit is held: a fifth waits behind the fourth.
        assert!(slots.ticket("e").waits());
    }
}
