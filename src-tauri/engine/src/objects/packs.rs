//! A session's checkpoints in the bucket: each upload is one pack of the commits (and the
//! trees and blobs they reach) the bucket does not have yet, named by the SHA-256 of its
//! bytes (`packs/<sha256>.pack`, so the same pack is never stored twice), and the
//! session's manifest (`sessions/<id>/refs.json`: ref name → commit, and the packs that
//! hold them). Packs hold every object a checkpoint needs, those `store.git` reads from
//! the user's repository through its alternate too, so another host's clone (or this one
//! after losing `.kiln/store.git`) rebuilds it from the bucket alone.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

use super::{unavailable, Bucket};
use crate::error::{ApiError, Result};

/// The packs this store has uploaded or indexed, one name a line, kept in `store.git`
/// (so it goes with the objects it speaks of).
const KNOWN: &str = "kiln-bucket-packs";

/// A session's manifest in the bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// `refs/kiln/<id>/<sequence>` → commit id.
    pub refs: BTreeMap<String, String>,
    /// The packs (bucket names) that together hold every object the refs reach.
    pub packs: Vec<String>,
}

/// What an upload sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pushed {
    /// The pack uploaded (or found already there), when there were new objects.
    pub pack: Option<String>,
    /// Its size in bytes.
    pub bytes: usize,
}

/// What a fetch put in place.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fetched {
    /// The packs downloaded and indexed.
    pub packs: usize,
    /// The refs set (those the store lacked).
    pub refs: usize,
    /// The manifest's refs, as the bucket has them.
    pub manifest: Manifest,
}

fn manifest_name(session: &str) -> String {
    format!("sessions/{session}/refs.json")
}

/// The session's manifest, if the bucket has one.
pub async fn manifest(bucket: &Bucket, session: &str) -> Result<Option<Manifest>> {
    let Some(bytes) = bucket.get(&manifest_name(session)).await? else { return Ok(None) };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| unavailable(&bucket.url, format!("the manifest of {session} does not read: {e}")))
}

/// Uploads what the session's refs in the bare store at `store` reach and the bucket
/// lacks, then the manifest naming them. The manifest goes last, so it never names a
/// pack the bucket does not have. `writes` is the lock on writes to the store, held only
/// while the pack is built (never over the network).
pub async fn push(bucket: &Bucket, store: &Path, writes: &tokio::sync::Mutex<()>, session: &str) -> Result<Pushed> {
    let _one = bucket.uploads.lock().await;
    let mut manifest = manifest(bucket, session).await?.unwrap_or_default();
    let (refs, pack) = {
        let _guard = writes.lock().await;
        build(store, session, &manifest)?
    };
    let mut pushed = Pushed::default();
    if let Some(bytes) = pack {
        pushed.bytes = bytes.len();
        let name = bucket.put_addressed("packs", ".pack", bytes).await?;
        remember(store, &name)?;
        if !manifest.packs.contains(&name) {
            manifest.packs.push(name.clone());
        }
        pushed.pack = Some(name);
    } else if refs == manifest.refs {
        return Ok(pushed);
    }
    manifest.refs = refs;
    let text = serde_json::to_vec_pretty(&manifest).map_err(|e| ApiError::internal("manifest", e))?;
    bucket.put(&manifest_name(session), text).await?;
    Ok(pushed)
}

/// The session's refs, and a pack of what they reach beyond the manifest's commits
/// (`None` when there is nothing new). The store's handle is not `Send`: all git here.
fn build(store: &Path, session: &str, manifest: &Manifest) -> Result<(BTreeMap<String, String>, Option<Vec<u8>>)> {
    let repo = Repository::open_bare(store)?;
    let mut refs = BTreeMap::new();
    for reference in repo.references_glob(&format!("refs/kiln/{session}/*"))?.flatten() {
        if let (Some(name), Some(target)) = (reference.name(), reference.target()) {
            refs.insert(name.to_string(), target.to_string());
        }
    }
    let uploaded: Vec<&String> = manifest.refs.values().collect();
    let mut walk = repo.revwalk()?;
    let mut new = false;
    for commit in refs.values().filter(|c| !uploaded.contains(c)) {
        walk.push(parse(commit)?)?;
        new = true;
    }
    if !new {
        return Ok((refs, None));
    }
    // What the bucket has already is left out; a commit pruning has since collected is
    // no longer here to hide (its objects may go up again: the cost of a rewrite).
    for commit in uploaded {
        if let Ok(oid) = parse(commit) {
            if repo.find_commit(oid).is_ok() {
                walk.hide(oid)?;
            }
        }
    }
    let mut builder = repo.packbuilder()?;
    // One thread: the same objects give the same bytes, so the same name.
    builder.set_threads(1);
    builder.insert_walk(&mut walk)?;
    if builder.object_count() == 0 {
        return Ok((refs, None));
    }
    let mut buf = git2::Buf::new();
    builder.write_buf(&mut buf)?;
    Ok((refs, Some(buf.to_vec())))
}

/// Makes the session's checkpoints in the bucket present in the bare store at `store`:
/// the packs it lacks are downloaded and indexed, the refs it lacks set. A ref the store
/// has is kept (it may be newer than the bucket's, after an upload that failed).
/// `writes` is the lock on writes to the store, held while it is written.
pub async fn fetch(bucket: &Bucket, store: &Path, writes: &tokio::sync::Mutex<()>, session: &str) -> Result<Fetched> {
    let Some(manifest) = manifest(bucket, session).await? else { return Ok(Fetched::default()) };
    let mut fetched = Fetched::default();
    let wanted = missing_packs(store, &manifest)?;
    for name in wanted {
        let bytes = bucket.get(&name).await?.ok_or_else(|| unavailable(&bucket.url, format!("the manifest of {session} names {name}, which the bucket lacks")))?;
        let _guard = writes.lock().await;
        index(store, &bytes)?;
        remember(store, &name)?;
        fetched.packs += 1;
    }
    let _guard = writes.lock().await;
    let repo = Repository::open_bare(store)?;
    for (name, commit) in &manifest.refs {
        let oid = parse(commit)?;
        if repo.find_commit(oid).is_err() {
            return Err(unavailable(&bucket.url, format!("the bucket's packs lack commit {commit} of {name}")));
        }
        if repo.find_reference(name).is_err() {
            repo.reference(name, oid, false, "fetched from the bucket")?;
            fetched.refs += 1;
        }
    }
    fetched.manifest = manifest;
    Ok(fetched)
}

/// The manifest's packs to download: none when the store has every commit it names,
/// else those the store has not indexed or uploaded itself.
fn missing_packs(store: &Path, manifest: &Manifest) -> Result<Vec<String>> {
    let repo = Repository::open_bare(store)?;
    let all_there = manifest.refs.values().all(|c| parse(c).is_ok_and(|oid| repo.find_commit(oid).is_ok()));
    if all_there {
        return Ok(Vec::new());
    }
    let known = std::fs::read_to_string(store.join(KNOWN)).unwrap_or_default();
    Ok(manifest.packs.iter().filter(|p| !known.lines().any(|l| l == p.as_str())).cloned().collect())
}

/// Indexes a pack into the store's object database.
fn index(store: &Path, pack: &[u8]) -> Result<()> {
    let repo = Repository::open_bare(store)?;
    let odb = repo.odb()?;
    let mut writer = odb.packwriter()?;
    writer.write_all(pack)?;
    writer.commit()?;
    Ok(())
}

fn remember(store: &Path, name: &str) -> Result<()> {
    let path = store.join(KNOWN);
    let known = std::fs::read_to_string(&path).unwrap_or_default();
    if !known.lines().any(|l| l == name) {
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path)?;
        writeln!(file, "{name}")?;
    }
    Ok(())
}

fn parse(commit: &str) -> Result<Oid> {
    Oid::from_str(commit).map_err(|e| ApiError::internal("checkpoint id", e))
}
