//! The `spec_approvals` table: the digest of each module specification the operator approved.

use super::{on, Db};

use kiln_types::error::Result;

/// The digest of the module's approved specification, if any.
pub async fn get(pool: &Db, session: &str, module: &str) -> Result<Option<String>> {
    Ok(on!(pool => sqlx::query_scalar("SELECT digest FROM spec_approvals WHERE session_id = $1 AND module_id = $2")
        .bind(session)
        .bind(module)
        .fetch_optional(pool)
        .await)?)
}

pub async fn set(pool: &Db, session: &str, module: &str, digest: &str, at: &str) -> Result<()> {
    on!(pool => sqlx::query("INSERT INTO spec_approvals (session_id, module_id, digest, approved_at) VALUES ($1, $2, $3, $4) ON CONFLICT (session_id, module_id) DO UPDATE SET digest = excluded.digest, approved_at = excluded.approved_at")
        .bind(session)
        .bind(module)
        .bind(digest)
        .bind(at)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}
