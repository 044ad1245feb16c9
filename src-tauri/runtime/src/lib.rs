//! How Kiln touches the machine on someone else's behalf, beneath the engine: everything
//! here is about processes, files and sockets, and nothing about sessions or turns.
//!
//! - `process`: the one process runner (environment, process group, reaper, bounded
//!   output, timeout, the kill of a whole tree) and a session's terminals.
//! - `sandbox`: the scope a session's commands run in (a cleared environment, a session
//!   home, Landlock) and what of the user's environment passes into it.
//! - `paths`: paths made and opened beneath a directory handle, never checked then opened.
//! - `redact`: secrets masked in everything shown or stored.
//! - `secrets`: the sealed file of keys and tokens.
//! - `listening`: the limits every HTTP listener shares.
//! - `clock`: timestamps as the API and the records carry them.
//!
//! The engine above names these as `kiln_runtime::process` and so on; rustc keeps this
//! crate from reaching back up into it.

pub mod clock;
pub mod listening;
pub mod paths;
pub mod process;
pub mod redact;
pub mod sandbox;
pub mod secrets;
