//! The `resume_ids` table: the conversation id each driver gave a session, to resume it.

use std::collections::BTreeMap;

use super::{on, Db};

use kiln_types::error::Result;

/// A session's resume id per driver.
pub async fn list(pool: &Db, session: &str) -> Result<BTreeMap<String, String>> {
    let rows: Vec<(String, String)> = on!(pool => sqlx::query_as("SELECT driver, resume_id FROM resume_ids WHERE session_id = $1")
        .bind(session)
        .fetch_all(pool)
        .await)?;
    Ok(rows.into_iter().collect())
}

pub async fn set(pool: &Db, session: &str, driver: &str, resume_id: &str) -> Result<()> {
    on!(pool => sqlx::query("INSERT INTO resume_ids (session_id, driver, resume_id) VALUES ($1, $2, $3) ON CONFLICT (session_id, driver) DO UPDATE SET resume_id = excluded.resume_id")
        .bind(session)
        .bind(driver)
        .bind(resume_id)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}
