//! The engine's integration tests, one module per area, linked as one test binary (one
//! link instead of one per file). All share one process: what a test needs in the
//! process environment is set once, before any test starts, in `common::environment`.

mod common;

mod acp_protocol;
mod acp_settings;
mod attachments;
mod baseline;
mod checkout;
mod checkpoints;
mod contract_acp;
mod contract_cli;
mod crash;
mod delivery;
mod delivery_direct;
mod delivery_evidence;
mod delivery_git;
mod delivery_git_pr;
mod delivery_links;
mod delivery_pr;
mod detect;
mod diff;
mod direct;
mod disk;
mod driver_health;
mod driver_parsers;
mod gates;
mod gateway;
mod groups;
mod issues;
mod lifecycle;
mod links;
mod live;
mod materialize;
mod objects;
mod openai_driver;
mod paths;
mod permissions;
mod planner;
mod preview;
mod recovery;
mod redaction;
mod review_comments;
mod roles;
mod sandbox;
mod scope;
mod screenshots;
mod settings;
mod snapshot;
mod store_schema;
mod team_records;
mod terminal;
mod turns;
mod update;
mod watch;
mod workspace_lock;
