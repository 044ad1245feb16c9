//! The shapes that cross to the UI: views, operation arguments and events, one file per
//! concern, all reachable as `types::X`. The UI's `ui/src/api/types.ts` is generated from
//! these by ts-rs (`typescript.rs`), and a test fails when the committed file drifts from them.

mod args;
mod conflict;
mod delivery;
mod diff;
mod disk;
mod events;
mod group;
mod issue;
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
pub use permission::*;
pub use preview::*;
pub use review_comment::*;
pub use session::*;
pub use settings::*;
pub use terminal::*;
pub use typescript::{typescript, TYPES_HEADER};
pub use workspace::*;

pub use crate::config::Workflow;
pub use crate::error::{ApiError, ErrorCode};
pub use crate::modules::{ModuleInfo, Toolchain};
