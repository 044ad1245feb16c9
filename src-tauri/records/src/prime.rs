//! Priming a session's stat cache (`sessions/<id>/index`, a git index with stat data)
//! from a working copy just materialized: the entries `materialize` kept of the files it
//! wrote, so the first snapshot after it reads only the files changed since, as later
//! ones do, instead of every file once.

use std::path::Path;

use git2::Repository;

use crate::materialize::Materialized;
use kiln_types::error::{ApiError, Result};

/// Writes the stat cache at `cache` (replacing any) from `made`, with its cache of trees.
/// The entries' tree must be the one materialized, or nothing is written (a full scan
/// will then read the files once, which is slower but right).
pub fn stat_cache(store: &Repository, made: &Materialized, cache: &Path) -> Result<()> {
    match std::fs::remove_file(cache) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
        _ => {}
    }
    let mut index = git2::Index::open(cache)?;
    for entry in &made.entries {
        index.add(entry)?;
    }
    // Also fills the index's cache of trees, which the incremental snapshot starts from.
    let tree = index.write_tree_to(store)?;
    if tree != made.tree {
        return Err(ApiError::internal(
            "priming the stat cache",
            format!("its entries make tree {tree}, not the materialized {}", made.tree),
        ));
    }
    index.write()?;
    Ok(())
}
