//! kiln-double-support: the plumbing Kiln's loopback test doubles (`kiln-model-server`,
//! `kiln-github-double`) share, kept once so the two cannot drift apart: serving on
//! 127.0.0.1 from a thread of its own ([`LoopbackPort`]), recording requests
//! ([`RecordedRequest`]) and their binaries' command line ([`command_line`]).

pub mod command_line;
mod loopback;
mod record;

use std::sync::{Mutex, MutexGuard};

pub use loopback::{LoopbackPort, LoopbackServer};
pub use record::{header_value, RecordedRequest};

/// Locks `mutex` even when poisoned: a panicking handler must not hide later requests
/// (or the double's state) from the test.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
