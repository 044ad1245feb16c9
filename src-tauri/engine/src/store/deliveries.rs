//! The `deliveries` table: one row per attempt to deliver a session, its steps and what
//! landed stored as JSON, redacted (`crate::redact`) as its steps hold command output.

use sqlx::SqlitePool;

use super::{enum_text, parse_enum};
use crate::api::types::DeliveryRun;
use crate::error::{ApiError, Result};

pub async fn insert(pool: &SqlitePool, run: &DeliveryRun, plan_id: &str) -> Result<()> {
    sqlx::query("INSERT INTO deliveries (id, session_id, target, state, plan_id, steps, landed, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        .bind(&run.id)
        .bind(&run.session_id)
        .bind(enum_text(run.target))
        .bind(enum_text(run.state))
        .bind(plan_id)
        .bind(json(&run.steps))
        .bind(json(&run.landed))
        .bind(&run.started_at)
        .execute(pool)
        .await?;
    Ok(())
}

pub async fn update(pool: &SqlitePool, run: &DeliveryRun) -> Result<()> {
    sqlx::query("UPDATE deliveries SET state = ?, steps = ?, landed = ?, pull_request = ?, error = ?, ended_at = ? WHERE id = ?")
        .bind(enum_text(run.state))
        .bind(json(&run.steps))
        .bind(json(&run.landed))
        .bind(run.pull_request.as_ref().map(json))
        .bind(run.error.as_ref().map(json))
        .bind(&run.ended_at)
        .bind(&run.id)
        .execute(pool)
        .await?;
    Ok(())
}

/// A run's part as stored: redacted, as its steps hold command output.
fn json<T: serde::Serialize>(value: &T) -> String {
    let mut value = serde_json::to_value(value).expect("API types serialize");
    crate::redact::redact_json(&mut value);
    value.to_string()
}

/// The session's latest run, if it was ever delivered or tried.
pub async fn latest(pool: &SqlitePool, session: &str) -> Result<Option<DeliveryRun>> {
    #[allow(clippy::type_complexity)]
    let row: Option<(String, String, String, String, String, Option<String>, Option<String>, String, Option<String>)> = sqlx::query_as(
        "SELECT id, target, state, steps, landed, pull_request, error, started_at, ended_at FROM deliveries WHERE session_id = ? ORDER BY started_at DESC, rowid DESC LIMIT 1",
    )
    .bind(session)
    .fetch_optional(pool)
    .await?;
    let Some((run_id, target, state, steps, landed, pull_request, error, started_at, ended_at)) = row else {
        return Ok(None);
    };
    Ok(Some(DeliveryRun {
        id: run_id,
        session_id: session.to_string(),
        target: parse_enum(&target)?,
        state: parse_enum(&state)?,
        steps: parse(&steps)?,
        started_at,
        ended_at,
        pull_request: pull_request.as_deref().map(parse).transpose()?,
        landed: parse(&landed)?,
        error: error.as_deref().map(parse).transpose()?,
    }))
}

fn parse<T: serde::de::DeserializeOwned>(text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| ApiError::internal("stored delivery", e))
}

/// Marks the session's runs still stored as running failed with `error`.
pub async fn fail_running(pool: &SqlitePool, session: &str, error: &ApiError, at: &str) -> Result<()> {
    sqlx::query(
        "UPDATE deliveries SET state = 'failed', error = ?, ended_at = ? WHERE session_id = ? AND state = 'running'",
    )
    .bind(json(error))
    .bind(at)
    .bind(session)
    .execute(pool)
    .await?;
    Ok(())
}
