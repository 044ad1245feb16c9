//! `.kiln/store.git` as a cache of the bucket (SPEC §21): a session's checkpoints the
//! store lacks (it was deleted, or this host never had the session) are fetched from the
//! bucket's packs and their refs set, before the refs and records are reconciled and the
//! working copy checked, so recovery rebuilds the copy from them as from any checkpoint.

use crate::ids::SessionId;
use crate::workspace::Workspace;
use kiln_records::objects::packs::{self, Fetched};
use kiln_types::error::Result;

/// Makes the session's checkpoints in the bucket present in this host's store; what was
/// fetched (nothing without a bucket, or when the store had it all). This is what a host
/// taking over a session calls before it works on it.
pub async fn present(ws: &Workspace, id: &SessionId) -> Result<Fetched> {
    let Some(bucket) = &ws.objects else { return Ok(Fetched::default()) };
    {
        // Made again (with its alternate) if it was deleted.
        let _guard = ws.store_lock.lock().await;
        ws.open_store()?;
    }
    let fetched = packs::fetch(bucket, &ws.store_path(), &ws.store_lock, id.as_str()).await?;
    if fetched.packs > 0 || fetched.refs > 0 {
        tracing::info!("session {id}: {} pack(s) and {} ref(s) fetched from the bucket", fetched.packs, fetched.refs);
    }
    Ok(fetched)
}
