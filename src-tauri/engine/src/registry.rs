//! The registry of the preview running per session, and of what is kept while it stays
//! valid (the last diff, an in-process driver's conversations). The opened workspace holds
//! them; the preview layer registers its handles as trait objects, so the session layer can
//! stop a session's preview without knowing what a preview is (see ARCHITECTURE.md,
//! "Layers"). A session's turn and planner are in `busy`, with its command.

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
