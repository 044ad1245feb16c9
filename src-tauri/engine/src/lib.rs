//! kiln-engine: Kiln's engine. Workspaces and their modules, sessions on SQLite and a
//! git object store, the planner's rules, and the one API (`api::Engine`) that the
//! desktop app and `kiln serve` expose. It knows nothing of Tauri or HTTP.

pub mod api;
pub mod approval;
pub mod attach;
pub mod attachments;
pub mod chain;
pub mod checkpoint;
pub mod clock;
pub mod config;
pub mod confine;
pub mod delivery;
pub mod detect;
pub mod diff;
pub mod drivers;
pub mod error;
pub mod events;
pub mod gates;
pub mod handoff;
pub mod ids;
#[cfg(test)]
mod layering;
pub mod listening;
pub mod live;
pub mod modules;
pub mod paths;
pub mod planner;
pub mod planner_agent;
pub mod preview;
pub mod process;
pub mod redact;
pub mod registry;
pub mod review;
pub mod roles;
pub mod routing;
pub mod sandbox;
pub mod secrets;
pub mod session;
pub mod settings;
pub mod snapshot;
pub mod store;
pub mod turn;
pub mod workspace;
pub mod workspace_lock;

pub use api::types;
pub use api::{Engine, EngineOptions, RecentWorkspaces, OPERATIONS};
pub use error::{ApiError, ErrorCode, Result};
