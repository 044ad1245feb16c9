//! kiln-engine: Kiln's engine. Workspaces and their modules, sessions on SQLite and a
//! git object store, the planner's rules, and the one API (`api::Engine`) that the
//! desktop app and `kiln serve` expose. It knows nothing of Tauri or HTTP.
//!
//! Its public surface is `api` (`Engine`, `EngineOptions`, `OPERATIONS`), the vocabulary it
//! speaks (`types`, the errors and `for_each_operation!`, all from `kiln-types`), and the few items the app and
//! `kiln serve` use at run time (below). Every other module is the engine's own
//! (`pub(crate)`); tests and benches reach what they need through `testing`, which only
//! the `test-support` feature compiles. The crate is held to `unreachable_pub`, so an item
//! neither of these reaches says `pub(crate)`; without `test-support` the items only
//! `testing` re-exports would look unreachable, so the lint is held where `testing` is
//! compiled (every test build, and `cargo clippy --all-targets`).
#![cfg_attr(not(feature = "test-support"), allow(unreachable_pub))]

pub mod api;
pub(crate) mod approval;
pub(crate) mod attachment_rules;
pub(crate) mod attachments;
pub(crate) mod background;
pub(crate) mod busy;
pub(crate) mod chain;
pub(crate) mod checkpoint;
pub(crate) mod config;
pub(crate) mod delivery;
pub(crate) mod detect;
pub(crate) mod diff;
pub(crate) mod disk;
pub(crate) mod drivers;
pub(crate) mod events;
pub(crate) mod gates;
pub(crate) mod groups;
pub(crate) mod handoff;
pub(crate) mod hosts;
pub(crate) mod ids;
#[cfg(test)]
mod layering;
pub(crate) mod live;
pub(crate) mod mcp;
pub(crate) mod mcp_config;
pub(crate) mod modules;
pub(crate) mod operator;
pub(crate) mod pause;
pub(crate) mod permissions;
pub(crate) mod planner;
pub(crate) mod planner_agent;
pub(crate) mod preview;
pub(crate) mod recover;
pub(crate) mod registry;
pub(crate) mod review;
pub(crate) mod review_comments;
pub(crate) mod roles;
pub(crate) mod routing;
pub(crate) mod session;
pub(crate) mod settings;
pub(crate) mod slots;
pub(crate) mod terminal;
pub(crate) mod turn;
pub(crate) mod update;
pub(crate) mod watch;
pub(crate) mod working_copy;
pub(crate) mod workspace;

#[cfg(feature = "test-support")]
#[doc(hidden)]
pub mod testing;

/// The vocabulary (`kiln-types`): the API's types, its errors and the operation table, the
/// bottom every layer of the engine speaks.
pub use kiln_types as types;
pub use kiln_types::error::{ApiError, ErrorCode, Result};
pub use kiln_types::for_each_operation;

pub use api::{check_backing, Activity, Engine, EngineOptions, Finding, RecentWorkspaces, OPERATIONS};
pub use terminal::TerminalAttachment;

// What the app and `kiln serve` use at run time besides the API.
/// The workspace detection `kiln detect` prints.
pub use detect::detect_path;
/// A size as people read it ("1.2 GB"), as `kiln session clean-up` prints it.
pub use disk::human_bytes;
/// The agent CLI binary `kiln health` reports, or how to install it.
pub use drivers::discover::find as find_agent_cli;
/// What `Engine::subscribe` returns: the event stream.
pub use events::Subscription;
/// Where records and objects live (`EngineOptions::backing`), and how its addresses are shown.
pub use kiln_records::backing;
/// What a process names itself in a workspace's lock (`Engine::held_by`).
pub use kiln_records::workspace_lock::HolderKind;
/// The engine's clock: the RFC 3339 time events carry.
pub use kiln_runtime::clock::now;
/// The confinement `kiln health` reports.
pub use kiln_runtime::process::supervision as process_supervision;
/// Kiln's environment out of `/proc/<pid>/environ`, first thing in `main`.
pub use kiln_runtime::sandbox::own_environment;
pub use kiln_runtime::sandbox::support as sandbox_support;
