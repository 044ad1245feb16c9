//! The `spec_approvals` table: the digest of each module specification the operator approved.

use sqlx::SqlitePool;

use crate::error::Result;

/// The digest of the module's approved specification, if any.
pub async fn get(pool: &SqlitePool, session: &str, module: &str) -> Result<Option<String>> {
    Ok(sqlx::query_scalar("SELECT digest FROM spec_approvals WHERE session_id = ? AND module_id = ?")
        .bind(session)
        .bind(module)
        .fetch_optional(pool)
        .await?)
}

pub async fn set(pool: &SqlitePool, session: &str, module: &str, digest: &str, at: &str) -> Result<()> {
    sqlx::query("INSERT INTO spec_approvals (session_id, module_id, digest, approved_at) VALUES (?, ?, ?, ?) ON CONFLICT (session_id, module_id) DO UPDATE SET digest = excluded.digest, approved_at = excluded.approved_at")
        .bind(session)
        .bind(module)
        .bind(digest)
        .bind(at)
        .execute(pool)
        .await?;
    Ok(())
}
