//! The `reviews` table: one auto-review report per session module, bound to the SHA-256
//! of the module's files when it was written.

use super::{on, Db};

use kiln_types::error::Result;

/// A stored review: module, files' digest, passed, summary, report, written at.
pub type ReviewRow = (String, String, bool, String, String, String);

pub struct NewReview<'a> {
    pub session: &'a str,
    pub module: &'a str,
    /// The SHA-256 of the module's files as reviewed.
    pub digest: &'a str,
    pub passed: bool,
    pub summary: &'a str,
    pub report: &'a str,
    pub at: &'a str,
}

/// Stores (or replaces) a module's review, the reviewer's words redacted as the
/// transcript that carries them is.
pub async fn upsert(pool: &Db, r: NewReview<'_>) -> Result<()> {
    on!(pool => sqlx::query(
        "INSERT INTO reviews (session_id, module_id, files_sha256, passed, summary, report, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (session_id, module_id) DO UPDATE SET files_sha256 = excluded.files_sha256, passed = excluded.passed,
           summary = excluded.summary, report = excluded.report, created_at = excluded.created_at",
    )
    .bind(r.session)
    .bind(r.module)
    .bind(r.digest)
    .bind(r.passed)
    .bind(kiln_runtime::redact::redact(r.summary).as_ref())
    .bind(kiln_runtime::redact::redact(r.report).as_ref())
    .bind(r.at)
    .execute(pool)
    .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// A session's reviews, by module.
pub async fn list(pool: &Db, session: &str) -> Result<Vec<ReviewRow>> {
    Ok(on!(pool => sqlx::query_as(
        "SELECT module_id, files_sha256, passed, summary, report, created_at FROM reviews WHERE session_id = $1 ORDER BY module_id",
    )
    .bind(session)
    .fetch_all(pool)
    .await)?)
}

/// The files' digest and verdict of a module's review, if it has one.
pub async fn verdict(pool: &Db, session: &str, module: &str) -> Result<Option<(String, bool)>> {
    Ok(on!(pool => sqlx::query_as("SELECT files_sha256, passed FROM reviews WHERE session_id = $1 AND module_id = $2")
        .bind(session)
        .bind(module)
        .fetch_optional(pool)
        .await)?)
}
