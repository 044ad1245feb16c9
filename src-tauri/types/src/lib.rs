//! kiln-types: the vocabulary of Kiln's API, at the bottom of the engine. The shapes that cross
//! to the UI (views, operation arguments, events; one file per concern, all reachable as
//! `kiln_types::X`), the one error type with its stable codes (`error`), and the operation table
//! (`for_each_operation!`, `operations.rs`). It depends on no other Kiln crate, so every layer
//! of the engine, the app and `kiln serve` can speak it without reaching up.
//!
//! The UI's `ui/src/api/types.ts` is generated from these by ts-rs (`typescript.rs`), and a test
//! fails when the committed file drifts from them.

mod args;
mod conflict;
mod delivery;
mod diff;
mod disk;
pub mod error;
mod events;
mod group;
mod issue;
mod mcp;
mod module;
mod operations;
mod permission;
mod preview;
mod review_comment;
mod session;
mod settings;
mod terminal;
mod typescript;
mod workspace;

pub use args::*;
pub use conflict::*;
pub use delivery::*;
pub use diff::*;
pub use disk::*;
pub use events::*;
pub use group::*;
pub use issue::*;
pub use mcp::*;
pub use permission::*;
pub use preview::*;
pub use review_comment::*;
pub use session::*;
pub use settings::*;
pub use terminal::*;
pub use typescript::{typescript, TYPES_HEADER};
pub use workspace::*;

pub use error::{ApiError, ErrorCode};
pub use module::*;
