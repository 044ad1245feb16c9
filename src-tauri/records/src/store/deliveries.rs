//! The `deliveries` table: one row per attempt to deliver a session, its steps and what
//! landed stored as JSON, redacted (`kiln_runtime::redact`) as its steps hold command output.

use super::{on, Db};

use super::{enum_text, parse_enum};
use kiln_types::error::{ApiError, Result};
use kiln_types::DeliveryRun;

pub async fn insert(pool: &Db, run: &DeliveryRun, plan_id: &str) -> Result<()> {
    on!(pool => sqlx::query("INSERT INTO deliveries (id, session_id, target, state, plan_id, steps, landed, started_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)")
        .bind(&run.id)
        .bind(&run.session_id)
        .bind(enum_text(run.target))
        .bind(enum_text(run.state))
        .bind(plan_id)
        .bind(json(&run.steps))
        .bind(json(&run.landed))
        .bind(&run.started_at)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

pub async fn update(pool: &Db, run: &DeliveryRun) -> Result<()> {
    on!(pool => sqlx::query("UPDATE deliveries SET state = $1, steps = $2, landed = $3, pull_request = $4, error = $5, ended_at = $6 WHERE id = $7")
        .bind(enum_text(run.state))
        .bind(json(&run.steps))
        .bind(json(&run.landed))
        .bind(run.pull_request.as_ref().map(json))
        .bind(run.error.as_ref().map(json))
        .bind(&run.ended_at)
        .bind(&run.id)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// A run's part as stored: redacted, as its steps hold command output.
fn json<T: serde::Serialize>(value: &T) -> String {
    let mut value = serde_json::to_value(value).expect("API types serialize");
    kiln_runtime::redact::redact_json(&mut value);
    value.to_string()
}

/// The session's latest run, if it was ever delivered or tried.
pub async fn latest(pool: &Db, session: &str) -> Result<Option<DeliveryRun>> {
    #[allow(clippy::type_complexity)]
    let row: Option<(
        String,
        String,
        String,
        String,
        String,
        Option<String>,
        Option<String>,
        String,
        Option<String>,
    )> = on!(pool => sqlx::query_as(
        "SELECT id, target, state, steps, landed, pull_request, error, started_at, ended_at FROM deliveries WHERE session_id = $1 ORDER BY started_at DESC, rowid DESC LIMIT 1",
    )
    .bind(session)
    .fetch_optional(pool)
    .await)?;
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
pub async fn fail_running(pool: &Db, session: &str, error: &ApiError, at: &str) -> Result<()> {
    on!(pool => sqlx::query(
        "UPDATE deliveries SET state = 'failed', error = $1, ended_at = $2 WHERE session_id = $3 AND state = 'running'",
    )
    .bind(json(error))
    .bind(at)
    .bind(session)
    .execute(pool)
    .await.map(|done| done.rows_affected()))?;
    Ok(())
}
