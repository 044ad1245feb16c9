//! The registry of the preview running per session, and of what is kept while it stays
//! valid (the last diff, an in-process driver's conversations, the last session view sent).
//! The opened workspace holds them; the preview layer registers its handles as trait
//! objects, so the session layer can stop a session's preview without knowing what a preview
//! is (see ARCHITECTURE.md, "Layers"). A session's turn and planner are in `busy`, with its
//! command.

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;

use crate::events::EventBus;

/// Something running for a session that can be stopped.
pub trait Handle: Any + Send + Sync {
    /// Stops it and returns once it has stopped (and said so on `events`).
    fn stop<'a>(&'a self, events: &'a EventBus) -> BoxFuture<'a, ()>;
}

/// One running thing of a kind per session.
#[derive(Default)]
pub struct Registry {
    map: Mutex<HashMap<String, Arc<dyn Handle>>>,
}

impl Registry {
    /// Registers `handle` for the session, returning the one it replaces.
    pub fn insert<T: Handle>(&self, session: &str, handle: Arc<T>) -> Option<Arc<T>> {
        let previous = self.map.lock().unwrap().insert(session.to_string(), handle)?;
        downcast(previous)
    }

    /// The session's handle as the type that registered it.
    pub fn get<T: Handle>(&self, session: &str) -> Option<Arc<T>> {
        let handle = self.map.lock().unwrap().get(session).cloned()?;
        downcast(handle)
    }

    /// Takes the session's handle out, whatever it is.
    pub fn take(&self, session: &str) -> Option<Arc<dyn Handle>> {
        self.map.lock().unwrap().remove(session)
    }

    pub fn contains(&self, session: &str) -> bool {
        self.map.lock().unwrap().contains_key(session)
    }

    /// The sessions that have a handle.
    pub fn sessions(&self) -> Vec<String> {
        self.map.lock().unwrap().keys().cloned().collect()
    }
}

fn downcast<T: Handle>(handle: Arc<dyn Handle>) -> Option<Arc<T>> {
    let any: Arc<dyn Any + Send + Sync> = handle;
    let typed = any.downcast::<T>().ok();
    debug_assert!(typed.is_some(), "a registry holds one kind of handle");
    typed
}

/// The conversations a driver that runs in Kiln's own process keeps from one turn to the
/// next (the OpenAI-compatible loop): each a list of wire messages, as JSON, under the
/// resume id the driver gave it. In memory only; the clones of one driver share them.
pub(crate) type Conversations = Arc<Mutex<HashMap<String, Vec<serde_json::Value>>>>;

/// A value with the key it was computed from.
type Memoized<V> = (Box<dyn Any + Send + Sync>, V);

/// The last value computed per session with the key it was computed from: a session
/// has one working copy, so one entry each is enough, and an unchanged key is answered
/// without computing again. The key's type belongs to whoever computes.
pub struct Memo<V> {
    entries: Mutex<HashMap<String, Memoized<V>>>,
    computed: AtomicU64,
}

impl<V> Default for Memo<V> {
    fn default() -> Self {
        Memo { entries: Mutex::new(HashMap::new()), computed: AtomicU64::new(0) }
    }
}

impl<V: Clone> Memo<V> {
    /// The session's value when it was computed from `key`.
    pub fn get<K: Any + PartialEq>(&self, session: &str, key: &K) -> Option<V> {
        let entries = self.entries.lock().unwrap();
        let (k, v) = entries.get(session)?;
        (k.downcast_ref::<K>() == Some(key)).then(|| v.clone())
    }

    /// Keeps a freshly computed value for the session.
    pub fn put<K: Any + Send + Sync>(&self, session: &str, key: K, value: V) {
        self.computed.fetch_add(1, Ordering::Relaxed);
        self.entries.lock().unwrap().insert(session.to_string(), (Box::new(key), value));
    }

    /// Drops the session's value: what it was computed from is gone (a rebuilt working copy).
    pub fn forget(&self, session: &str) {
        self.entries.lock().unwrap().remove(session);
    }

    /// How many values were computed rather than answered from the memo.
    pub fn computed(&self) -> u64 {
        self.computed.load(Ordering::Relaxed)
    }
}

/// The last value sent per session, so a value is sent once per change: a session's view is
/// read again after every step that may change it, and about a third of those reads find it
/// as it was sent last.
pub struct Sent<V> {
    last: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Option<V>>>>>,
}

impl<V> Default for Sent<V> {
    fn default() -> Self {
        Sent { last: Mutex::new(HashMap::new()) }
    }
}

impl<V: PartialEq + Clone> Sent<V> {
    /// Reads the session's value and calls `send` with it unless it equals the last value
    /// sent. One caller at a time per session, from before the read to after the send: values
    /// go out in the order they were read, so the last one sent is never older than the last
    /// change a caller came to publish (two unordered readers could send an old one last).
    pub(crate) async fn send_changed<E>(
        &self,
        session: &str,
        read: impl std::future::Future<Output = Result<V, E>>,
        send: impl FnOnce(&V),
    ) -> Result<V, E> {
        let slot = self.last.lock().unwrap().entry(session.to_string()).or_default().clone();
        let mut last = slot.lock().await;
        let value = read.await?;
        if last.as_ref() != Some(&value) {
            send(&value);
            *last = Some(value.clone());
        }
        Ok(value)
    }

    /// Forgets a session that is gone (its record removed).
    pub(crate) fn forget(&self, session: &str) {
        self.last.lock().unwrap().remove(session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_value_is_sent_once_per_change_and_in_the_order_it_was_read() {
        let sent = Arc::new(Sent::<u32>::default());
        let out = Arc::new(Mutex::new(Vec::new()));
        let push = |out: &Arc<Mutex<Vec<u32>>>| {
            let out = out.clone();
            move |v: &u32| out.lock().unwrap().push(*v)
        };
        for v in [1, 1, 2, 2, 1] {
            sent.send_changed("s", async { Ok::<_, ()>(v) }, push(&out)).await.unwrap();
        }
        assert_eq!(*out.lock().unwrap(), vec![1, 2, 1]);

        // A slow reader of an old value and a fast reader of a new one: the second waits for
        // the first, so the new value is the last one sent.
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let slow = tokio::spawn({
            let (sent, out) = (sent.clone(), out.clone());
            async move {
                let read = async {
                    rx.await.unwrap();
                    Ok::<_, ()>(3)
                };
                sent.send_changed("s", read, push(&out)).await
            }
        });
        tokio::task::yield_now().await;
        let fast = tokio::spawn({
            let (sent, out) = (sent.clone(), out.clone());
            async move { sent.send_changed("s", async { Ok::<_, ()>(4) }, push(&out)).await }
        });
        tokio::task::yield_now().await;
        tx.send(()).unwrap();
        slow.await.unwrap().unwrap();
        fast.await.unwrap().unwrap();
        assert_eq!(*out.lock().unwrap(), vec![1, 2, 1, 3, 4]);

        // A failed read sends nothing; a forgotten session sends its next value again.
        assert!(sent.send_changed("s", async { Err::<u32, _>("gone") }, push(&out)).await.is_err());
        sent.forget("s");
        sent.send_changed("s", async { Ok::<_, ()>(4) }, push(&out)).await.unwrap();
        assert_eq!(*out.lock().unwrap(), vec![1, 2, 1, 3, 4, 4]);
    }
}
