//! A session's checkpoints in the bucket: each upload is one pack of the commits (and the
//! trees and blobs they reach) the bucket does not have yet, named by the SHA-256 of its
//! bytes (`packs/<sha256>.pack`, so the same pack is never stored twice), and the
//! session's manifest (`sessions/<id>/refs.json`: ref name → commit, and the packs that
//! hold them). Packs hold every object a checkpoint needs, those `store.git` reads from
//! the user's repository through its alternate too, so another host's clone (or this one
//! after losing `.kiln/store.git`) rebuilds it from the bucket alone.
//!
//! A session's start is mostly the repository as it is checked out, the same for every
//! session started from it: its tree goes up once, as the pack of a *base* commit made
//! only of that tree (no time in it, so every host makes the same one), named in
//! `bases/<tree>.json`; each session's own packs leave it out.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

use super::{unavailable, Bucket};
use kiln_types::error::{ApiError, Result};

/// The packs this store has uploaded or indexed, one name a line, kept in `store.git`
/// (so it goes with the objects it speaks of).
const KNOWN: &str = "kiln-bucket-packs";

/// Ref name → commit id.
type Refs = BTreeMap<String, String>;

/// A session's manifest in the bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// `refs/kiln/<id>/<sequence>` → commit id.
    pub refs: Refs,
    /// The packs (bucket names) that together hold every object the refs reach.
    pub packs: Vec<String>,
    /// The base commits (see above) whose packs are among `packs`.
    #[serde(default)]
    pub bases: Vec<String>,
}

/// `bases/<tree>.json`: the base commit of a tree and the pack that holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Base {
    commit: String,
    pack: String,
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
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| unavailable(&bucket.url, format!("the manifest of {session} does not read: {e}")))
}

/// Uploads what the session's refs in the bare store at `store` reach and the bucket
/// lacks, then the manifest naming them. The manifest goes last, so it never names a
/// pack the bucket does not have. `writes` is the lock on writes to the store, held only
/// while the pack is built (never over the network).
pub async fn push(bucket: &Bucket, store: &Path, writes: &tokio::sync::Mutex<()>, session: &str) -> Result<Pushed> {
    let _one = bucket.uploads.lock().await;
    let mut manifest = manifest(bucket, session).await?.unwrap_or_default();
    if manifest.refs.is_empty() && manifest.bases.is_empty() {
        if let Some(base) = base(bucket, store, writes, session).await? {
            if !manifest.packs.contains(&base.pack) {
                manifest.packs.push(base.pack);
            }
            manifest.bases.push(base.commit);
        }
    }
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
fn build(store: &Path, session: &str, manifest: &Manifest) -> Result<(Refs, Option<Vec<u8>>)> {
    let repo = Repository::open_bare(store)?;
    let mut refs = BTreeMap::new();
    for reference in repo.references_glob(&format!("refs/kiln/{session}/*"))?.flatten() {
        if let (Some(name), Some(target)) = (reference.name(), reference.target()) {
            refs.insert(name.to_string(), target.to_string());
        }
    }
    let uploaded: Vec<&String> = manifest.refs.values().chain(&manifest.bases).collect();
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

/// The base of the session's start (`refs/kiln/<id>/0`), in the bucket: found there when
/// another session started from the same tree, else packed and sent now.
async fn base(bucket: &Bucket, store: &Path, writes: &tokio::sync::Mutex<()>, session: &str) -> Result<Option<Base>> {
    let (tree, commit) = {
        let _guard = writes.lock().await;
        let repo = Repository::open_bare(store)?;
        let Ok(start) = repo.find_reference(&format!("refs/kiln/{session}/0")) else { return Ok(None) };
        let tree = start.peel_to_tree()?.id();
        (tree, base_commit(&repo, tree)?)
    };
    let name = format!("bases/{tree}.json");
    if let Some(bytes) = bucket.get(&name).await? {
        let known: Base = serde_json::from_slice(&bytes)
            .map_err(|e| unavailable(&bucket.url, format!("{name} does not read: {e}")))?;
        if known.commit == commit.to_string() && bucket.exists(&known.pack).await? {
            remember(store, &known.pack)?;
            return Ok(Some(known));
        }
    }
    let pack = {
        let _guard = writes.lock().await;
        let repo = Repository::open_bare(store)?;
        let mut builder = repo.packbuilder()?;
        builder.set_threads(1);
        builder.insert_commit(commit)?;
        let mut buf = git2::Buf::new();
        builder.write_buf(&mut buf)?;
        buf.to_vec()
    };
    let pack = bucket.put_addressed("packs", ".pack", pack).await?;
    remember(store, &pack)?;
    let base = Base { commit: commit.to_string(), pack };
    let text = serde_json::to_vec_pretty(&base).map_err(|e| ApiError::internal("base", e))?;
    bucket.put(&name, text).await?;
    Ok(Some(base))
}

/// The base commit of `tree`: the same bytes on every host (a fixed name and time), kept
/// under `refs/kiln-bases/<tree>` so collecting the store never removes it.
fn base_commit(repo: &Repository, tree: Oid) -> Result<Oid> {
    let sig = git2::Signature::new("Kiln", "kiln@localhost", &git2::Time::new(0, 0))?;
    let tree_object = repo.find_tree(tree)?;
    let commit = repo.commit(None, &sig, &sig, "the base of sessions started from this tree", &tree_object, &[])?;
    repo.reference(&format!("refs/kiln-bases/{tree}"), commit, true, "a base")?;
    Ok(commit)
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
        let bytes = bucket.get(&name).await?.ok_or_else(|| {
            unavailable(&bucket.url, format!("the manifest of {session} names {name}, which the bucket lacks"))
        })?;
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
