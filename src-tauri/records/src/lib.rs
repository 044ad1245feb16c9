//! What a workspace keeps, beneath the engine: records and objects, not what sessions do
//! with them.
//!
//! - `store/`: all SQL, one file per table, each query written once for SQLite and
//!   PostgreSQL; `Db` is either pool. `store::access` is kiln-serve's access store
//!   (tokens and browser sessions), the one that is the user's rather than a workspace's.
//! - `snapshot`: the git object store `store.git`, snapshots and checkpoint commits.
//! - `materialize`, `prime`, `checkout`: a working copy written from a commit, its stat
//!   cache primed, its own `.git`.
//! - `markers`: the conflicts an update left, read from their markers.
//! - `workspace_lock`: one process per workspace.
//! - `backing`, `objects/`: where records and objects live, and a team's bucket.
//!
//! The engine names these as `kiln_records::store` and so on; rustc keeps this crate from
//! reaching back up into it.

pub mod backing;
pub mod checkout;
pub mod markers;
pub mod materialize;
pub mod objects;
pub mod prime;
pub mod snapshot;
pub mod store;
pub mod workspace_lock;
