//! The `settings` table: the workspace's key-value settings (keys stored sealed, never plain).

use super::{on, Db};

use kiln_types::error::Result;

pub async fn get_setting(pool: &Db, key: &str) -> Result<Option<String>> {
    Ok(
        on!(pool => sqlx::query_scalar("SELECT value FROM settings WHERE key = $1").bind(key).fetch_optional(pool).await)?,
    )
}

/// Sets a value, or with `None` removes it.
pub async fn set_setting(pool: &Db, key: &str, value: Option<&str>) -> Result<()> {
    match value {
        Some(v) => on!(pool => sqlx::query(
            "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(key)
        .bind(v)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?,
        None => {
            on!(pool => sqlx::query("DELETE FROM settings WHERE key = $1").bind(key).execute(pool).await.map(|done| done.rows_affected()))?
        }
    };
    Ok(())
}
