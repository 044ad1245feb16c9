//! The `turns` table: each turn an agent ran, with what it spent.

use super::{on, on_tx, Db, Tx};
use serde::{Deserialize, Serialize};

use kiln_types::error::Result;
use kiln_types::{RoleUsage, UsageTotals, UsageView};

/// Tokens for the turn. Input counts only prompt tokens not read from the cache, as
/// Claude reports them; Codex counts cache reads in its input, and its parser takes
/// them out, so the same field means the same thing whichever agent ran. Drivers report
/// it (`crate::drivers::events`); it is defined here, with the records that add it up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// What the provider says the turn cost. `None` means unknown, which is not free:
    /// never fill it with 0.
    pub cost_usd: Option<f64>,
}

pub struct NewTurn<'a> {
    pub session: &'a str,
    pub module: &'a str,
    pub role: &'a str,
    pub driver: &'a str,
    pub model: Option<&'a str>,
    pub chain_index: i64,
    pub at: &'a str,
    /// What the driver was asked, kept so a blocked turn can be retried as it ran.
    pub prompt: &'a str,
    pub review: bool,
}

/// The session's latest turn, as `retry_turn` runs it again.
#[derive(sqlx::FromRow)]
pub struct TurnRecord {
    pub module_id: String,
    pub role: String,
    pub driver: String,
    pub model: Option<String>,
    pub chain_index: i64,
    pub prompt: Option<String>,
    pub review: bool,
}

pub async fn latest(pool: &Db, session: &str) -> Result<Option<TurnRecord>> {
    Ok(
        on!(pool => sqlx::query_as("SELECT module_id, role, driver, model, chain_index, prompt, review FROM turns WHERE session_id = $1 ORDER BY id DESC LIMIT 1")
        .bind(session)
        .fetch_optional(pool)
        .await)?,
    )
}

pub async fn start(pool: &Db, t: NewTurn<'_>) -> Result<i64> {
    let mut tx = pool.begin().await?;
    let t2 = &mut tx;
    let id: i64 = on_tx!(t2 => sqlx::query_scalar(
        "INSERT INTO turns (session_id, module_id, role, driver, model, chain_index, status, started_at, prompt, review) VALUES ($1, $2, $3, $4, $5, $6, 'running', $7, $8, $9) RETURNING id",
    )
    .bind(t.session)
    .bind(t.module)
    .bind(t.role)
    .bind(t.driver)
    .bind(t.model)
    .bind(t.chain_index)
    .bind(t.at)
    .bind(t.prompt)
    .bind(t.review)
    .fetch_one(&mut **t2)
    .await)?;
    set_running(&mut tx, &t).await?;
    tx.commit().await?;
    Ok(id)
}

/// Adds a usage report to a turn. A turn's cost stays unknown (NULL) unless the
/// provider reported one; known amounts add up.
pub async fn add_usage(pool: &Db, turn: i64, u: &Usage) -> Result<()> {
    on!(pool => sqlx::query(
        "UPDATE turns SET input_tokens = input_tokens + $1, output_tokens = output_tokens + $2, cache_read_tokens = cache_read_tokens + $3, cache_write_tokens = cache_write_tokens + $4, cost_usd = CASE WHEN $5 IS NULL THEN cost_usd ELSE COALESCE(cost_usd, 0) + $6 END WHERE id = $7",
    )
    .bind(u.input_tokens as i64)
    .bind(u.output_tokens as i64)
    .bind(u.cache_read_tokens as i64)
    .bind(u.cache_write_tokens as i64)
    .bind(u.cost_usd)
    .bind(u.cost_usd)
    .bind(turn)
    .execute(pool)
    .await.map(|done| done.rows_affected()))?;
    Ok(())
}

pub async fn finish(pool: &Db, turn: i64, status: &str, at: &str) -> Result<()> {
    on!(pool => sqlx::query("UPDATE turns SET status = $1, ended_at = $2 WHERE id = $3")
        .bind(status)
        .bind(at)
        .bind(turn)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// Turns a stop or a crash left marked running: when Kiln starts, none can be, and
/// their sessions settle (`settle_after_restart`).
/// With `only`, one session's (a host taking it over from one that stopped, `api::team`).
pub async fn close_orphans(pool: &Db, at: &str, only: Option<&str>) -> Result<u64> {
    let done = on!(pool => sqlx::query("UPDATE turns SET status = 'stopped', ended_at = $1 WHERE status = 'running' AND ($2 IS NULL OR session_id = $2)")
        .bind(at)
        .bind(only)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    settle_after_restart(pool, at, only).await?;
    Ok(done)
}

/// A turn starting: its session records who runs and is running (inside the turn's
/// transaction). The `sessions` table's row, written here as the turn's own effect.
async fn set_running(tx: &mut Tx<'_>, t: &NewTurn<'_>) -> Result<()> {
    on_tx!(tx => sqlx::query("UPDATE sessions SET role = $1, driver = $2, model = $3, chain_depth = $4, state = 'running', updated_at = $5 WHERE id = $6")
        .bind(t.role)
        .bind(t.driver)
        .bind(t.model)
        .bind(t.chain_index)
        .bind(t.at)
        .bind(t.session)
        .execute(&mut **tx)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// When Kiln starts no turn runs: a running session is blocked, and a planner cut short
/// leaves the rules' classification, which stands on its own.
/// With `only`, that session's alone.
async fn settle_after_restart(pool: &Db, at: &str, only: Option<&str>) -> Result<()> {
    on!(pool => sqlx::query("UPDATE sessions SET state = 'blocked', updated_at = $1 WHERE state = 'running' AND ($2 IS NULL OR id = $2)")
        .bind(at)
        .bind(only)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    on!(pool => sqlx::query("UPDATE sessions SET state = 'editing', updated_at = $1 WHERE state = 'planning' AND ($2 IS NULL OR id = $2)")
        .bind(at)
        .bind(only)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// One role's row of `usage`: role, turns, input, output, cache read and cache write tokens,
/// cost, and the number of turns whose cost is unknown.
type RoleUsageRow = (String, i64, i64, i64, i64, i64, Option<f64>, i64);

/// Usage of a session's turns (or, with `None`, of every session's), in total and per role.
pub async fn usage(pool: &Db, session: Option<&str>) -> Result<UsageView> {
    let rows: Vec<RoleUsageRow> = on!(pool => sqlx::query_as(
        // PostgreSQL sums BIGINTs as NUMERIC: the casts keep both engines' sums integers.
        "SELECT role, COUNT(*), CAST(SUM(input_tokens) AS BIGINT), CAST(SUM(output_tokens) AS BIGINT), CAST(SUM(cache_read_tokens) AS BIGINT), CAST(SUM(cache_write_tokens) AS BIGINT), SUM(cost_usd), COUNT(*) - COUNT(cost_usd) FROM turns WHERE $1 IS NULL OR session_id = $1 GROUP BY role ORDER BY role",
    )
    .bind(session)
    .fetch_all(pool)
    .await)?;
    let mut view = UsageView::default();
    for (role, turns, input, output, cache_read, cache_write, cost, unknown) in rows {
        let usage = UsageTotals {
            turns,
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: cache_read,
            cache_write_tokens: cache_write,
            cost_usd: cost,
            unknown_cost_turns: unknown,
        };
        let t = &mut view.total;
        t.turns += usage.turns;
        t.input_tokens += usage.input_tokens;
        t.output_tokens += usage.output_tokens;
        t.cache_read_tokens += usage.cache_read_tokens;
        t.cache_write_tokens += usage.cache_write_tokens;
        t.unknown_cost_turns += usage.unknown_cost_turns;
        t.cost_usd = match (t.cost_usd, usage.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        view.by_role.push(RoleUsage { role, usage });
    }
    Ok(view)
}

/// The role that last worked on a module, if any did.
pub async fn last_role(pool: &Db, session: &str, module: &str) -> Result<Option<String>> {
    Ok(
        on!(pool => sqlx::query_scalar("SELECT role FROM turns WHERE session_id = $1 AND module_id = $2 ORDER BY id DESC LIMIT 1")
        .bind(session)
        .bind(module)
        .fetch_optional(pool)
        .await)?,
    )
}

/// A turn still marked running: (session, role, module). Read before `close_orphans`, so
/// the next start can say which turn Kiln stopping cut short.
pub async fn running(pool: &Db) -> Result<Vec<(String, String, String)>> {
    Ok(on!(pool => sqlx::query_as("SELECT session_id, role, module_id FROM turns WHERE status = 'running' ORDER BY id")
        .fetch_all(pool)
        .await)?)
}

/// When the session's turns ran: the first start and the last end (`None` while one runs
/// or before any).
pub async fn turn_span(pool: &Db, session: &str) -> Result<(Option<String>, Option<String>, bool)> {
    let (first, last, running): (Option<String>, Option<String>, i64) = on!(pool => sqlx::query_as(
        "SELECT MIN(started_at), MAX(ended_at), COUNT(CASE WHEN status = 'running' THEN 1 END) FROM turns WHERE session_id = $1",
    )
    .bind(session)
    .fetch_one(pool)
    .await)?;
    Ok((first, last, running > 0))
}
