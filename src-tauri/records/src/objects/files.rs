//! Attachments and delivery artifacts (screenshots' PNGs) in the bucket: the bytes by their
//! content's hash (`attachments/<sha256>`, `artifacts/<sha256>.png`), so a file attached
//! or captured twice is stored once, and a per-session index (`sessions/<id>/<kind>.json`:
//! Kiln's id of the file → its bucket name) to find them again on a host that lacks them.

use std::collections::BTreeMap;

use super::{unavailable, Bucket};
use kiln_types::error::{ApiError, Result};

/// What kind of file: where its bytes and its index live.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Attachment,
    Screenshot,
}

impl Kind {
    fn dir(self) -> &'static str {
        match self {
            Kind::Attachment => "attachments",
            Kind::Screenshot => "artifacts",
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            Kind::Attachment => "",
            Kind::Screenshot => ".png",
        }
    }

    fn index(self, session: &str) -> String {
        match self {
            Kind::Attachment => format!("sessions/{session}/attachments.json"),
            Kind::Screenshot => format!("sessions/{session}/screenshots.json"),
        }
    }
}

async fn read_index(bucket: &Bucket, name: &str) -> Result<BTreeMap<String, String>> {
    match bucket.get(name).await? {
        Some(bytes) => {
            serde_json::from_slice(&bytes).map_err(|e| unavailable(&bucket.url, format!("{name} does not read: {e}")))
        }
        None => Ok(BTreeMap::new()),
    }
}

/// Stores the session's file `id` (content-addressed) and names it in the index; returns
/// its bucket name.
pub async fn keep(bucket: &Bucket, session: &str, kind: Kind, id: &str, bytes: Vec<u8>) -> Result<String> {
    let name = bucket.put_addressed(kind.dir(), kind.suffix(), bytes).await?;
    let _one = bucket.uploads.lock().await;
    let index_name = kind.index(session);
    let mut index = read_index(bucket, &index_name).await?;
    if index.get(id) != Some(&name) {
        index.insert(id.to_string(), name.clone());
        let text = serde_json::to_vec_pretty(&index).map_err(|e| ApiError::internal("index", e))?;
        bucket.put(&index_name, text).await?;
    }
    Ok(name)
}

/// The bytes of the session's file `id`, if the bucket has it.
pub async fn recall(bucket: &Bucket, session: &str, kind: Kind, id: &str) -> Result<Option<Vec<u8>>> {
    let index = read_index(bucket, &kind.index(session)).await?;
    match index.get(id) {
        Some(name) => bucket.get(name).await,
        None => Ok(None),
    }
}
