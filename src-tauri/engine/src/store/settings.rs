//! The `settings` table: the workspace's key-value settings (keys stored sealed, never plain).

use sqlx::SqlitePool;

use crate::error::Result;

pub async fn get_setting(pool: &SqlitePool, key: &str) -> Result<Option<String>> {
    Ok(sqlx::query_scalar("SELECT value FROM settings WHERE key = ?").bind(key).fetch_optional(pool).await?)
}

/// Sets a value, or with `None` removes it.
pub async fn set_setting(pool: &SqlitePool, key: &str, value: Option<&str>) -> Result<()> {
    match value {
        Some(v) => sqlx::query(
            "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(key)
        .bind(v)
        .execute(pool)
        .await?,
        None => sqlx::query("DELETE FROM settings WHERE key = ?").bind(key).execute(pool).await?,
    };
    Ok(())
}
