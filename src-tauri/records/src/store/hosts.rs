//! The records of several hosts serving one team's database (migration 0015): hosts and
//! their heartbeats, session leases, the event stream shared between hosts and the work
//! items one host asks of a session's owner. PostgreSQL only: a SQLite workspace has one
//! process, which owns everything. Every time that decides ownership is the database's
//! clock (`NOW_MS`), so hosts whose clocks disagree still agree on who owns what.

use sqlx::PgPool;

use kiln_types::error::Result;

/// The database's clock in milliseconds since the epoch, as SQL.
const NOW_MS: &str = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)";

/// Says this host serves the database, or again after a restart.
pub async fn register(pool: &PgPool, host: &str, name: &str, at: &str) -> Result<()> {
    sqlx::query(&format!(
        "INSERT INTO hosts (id, name, started_at, heartbeat_ms) VALUES ($1, $2, $3, {NOW_MS})
         ON CONFLICT (id) DO UPDATE SET name = $2, started_at = $3, heartbeat_ms = {NOW_MS}"
    ))
    .bind(host)
    .bind(name)
    .bind(at)
    .execute(pool)
    .await?;
    Ok(())
}

/// Whether `host` still has its row: a host that stopped on purpose dropped it (`release`);
/// one that died keeps it, with a heartbeat that stopped.
pub async fn registered(pool: &PgPool, host: &str) -> Result<bool> {
    let found: Option<i32> =
        sqlx::query_scalar("SELECT 1 FROM hosts WHERE id = $1").bind(host).fetch_optional(pool).await?;
    Ok(found.is_some())
}

/// The heartbeat: the host's row and every lease it holds are renewed for `ttl_ms`. What it
/// still holds, so a lease another host took meanwhile is noticed.
pub async fn heartbeat(pool: &PgPool, host: &str, ttl_ms: i64) -> Result<Vec<String>> {
    let mut tx = pool.begin().await?;
    sqlx::query(&format!("UPDATE hosts SET heartbeat_ms = {NOW_MS} WHERE id = $1"))
        .bind(host)
        .execute(&mut *tx)
        .await?;
    let held: Vec<String> = sqlx::query_scalar(&format!(
        "UPDATE session_leases SET expires_ms = {NOW_MS} + $2
         WHERE host_id = $1 AND EXISTS (SELECT 1 FROM hosts WHERE id = $1) RETURNING session_id"
    ))
    .bind(host)
    .bind(ttl_ms)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(held)
}

/// Every live lease of another host on which the owner said its session is at work.
pub async fn running_elsewhere(pool: &PgPool, host: &str) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar(&format!(
        "SELECT session_id FROM session_leases WHERE host_id <> $1 AND running AND expires_ms > {NOW_MS}"
    ))
    .bind(host)
    .fetch_all(pool)
    .await?)
}

/// What taking a lease found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taken {
    /// This host holds it now; `from` names the host whose expired lease it replaced.
    Yes { from: Option<String> },
    /// Another host holds a live lease.
    No { owner: String },
    /// There is no such session.
    NoSession,
}

/// Takes `session`'s lease for `host` for `ttl_ms`, unless another host holds a live one. Under
/// a lock of the session's own until commit (there may be no lease row yet to lock), so of two
/// hosts taking a lease at once exactly one gets it.
pub async fn take(pool: &PgPool, session: &str, host: &str, ttl_ms: i64, at: &str) -> Result<Taken> {
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('kiln-lease:' || $1))").bind(session).execute(&mut *tx).await?;
    let exists: Option<i32> =
        sqlx::query_scalar("SELECT 1 FROM sessions WHERE id = $1").bind(session).fetch_optional(&mut *tx).await?;
    if exists.is_none() {
        return Ok(Taken::NoSession);
    }
    let current: Option<(String, bool)> =
        sqlx::query_as(&format!("SELECT host_id, expires_ms > {NOW_MS} FROM session_leases WHERE session_id = $1"))
            .bind(session)
            .fetch_optional(&mut *tx)
            .await?;
    let from = match current {
        Some((owner, true)) if owner != host => return Ok(Taken::No { owner }),
        Some((owner, _)) if owner != host => Some(owner),
        _ => None,
    };
    sqlx::query(&format!(
        "INSERT INTO session_leases (session_id, host_id, expires_ms, running, taken_at)
         VALUES ($1, $2, {NOW_MS} + $3, FALSE, $4)
         ON CONFLICT (session_id) DO UPDATE SET host_id = $2, expires_ms = {NOW_MS} + $3, running = FALSE,
             taken_at = CASE WHEN session_leases.host_id = $2 THEN session_leases.taken_at ELSE $4 END"
    ))
    .bind(session)
    .bind(host)
    .bind(ttl_ms)
    .bind(at)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Taken::Yes { from })
}

/// The sessions whose lease expired (their host stopped heartbeating), the deleted aside.
pub async fn expired(pool: &PgPool) -> Result<Vec<(String, String)>> {
    Ok(sqlx::query_as(&format!(
        "SELECT l.session_id, l.host_id FROM session_leases l JOIN sessions s ON s.id = l.session_id
         WHERE l.expires_ms <= {NOW_MS} AND s.deleted_at IS NULL ORDER BY l.session_id"
    ))
    .fetch_all(pool)
    .await?)
}

/// Every session `host` holds a lease on, live or not: what a host restarting on the same
/// clone finds it held before.
pub async fn held_by(pool: &PgPool, host: &str) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar("SELECT session_id FROM session_leases WHERE host_id = $1 ORDER BY session_id")
        .bind(host)
        .fetch_all(pool)
        .await?)
}

/// Every lease another host holds, live or expired: the sessions a host opening the
/// workspace leaves to their owner, or to the monitor that takes them over.
pub async fn leased_elsewhere(pool: &PgPool, host: &str) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar("SELECT session_id FROM session_leases WHERE host_id <> $1")
        .bind(host)
        .fetch_all(pool)
        .await?)
}

/// Records the owner's word on whether `session` is at work.
pub async fn set_running(pool: &PgPool, session: &str, host: &str, running: bool) -> Result<()> {
    sqlx::query("UPDATE session_leases SET running = $3 WHERE session_id = $1 AND host_id = $2")
        .bind(session)
        .bind(host)
        .bind(running)
        .execute(pool)
        .await?;
    Ok(())
}

/// Lets every lease of `host` expire now, and drops its row: a host stopping on purpose
/// hands its sessions on at once instead of after the leases run out (the taker still
/// closes and explains what the stop cut short).
/// The row goes first, in one transaction: a heartbeat of the host racing it renews nothing
/// once the row is gone (`heartbeat` renews only a registered host's leases).
pub async fn release(pool: &PgPool, host: &str) -> Result<()> {
    let mut tx = pool.begin().await?;
    sqlx::query("DELETE FROM hosts WHERE id = $1").bind(host).execute(&mut *tx).await?;
    sqlx::query("UPDATE session_leases SET expires_ms = 0 WHERE host_id = $1").bind(host).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(())
}

// ---- the event stream between hosts ----

/// Channel a host notifies after writing events, so the others read them at once.
pub const EVENTS_CHANNEL: &str = "kiln_events";
/// Channel a host notifies after queuing a work item, to wake the owners' workers.
pub const WORK_CHANNEL: &str = "kiln_work";

/// Writes `events` (JSON body, kept) as emitted by `host`, and wakes the other hosts.
pub async fn publish(pool: &PgPool, host: &str, events: &[(String, bool)]) -> Result<()> {
    let mut tx = pool.begin().await?;
    // One writer at a time, until commit: ids are then committed in the order they are handed
    // out, so a reader reading `id > last` never passes over one committed later.
    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(EVENTS_LOCK).execute(&mut *tx).await?;
    for (body, kept) in events {
        sqlx::query(&format!("INSERT INTO host_events (host_id, body, kept, at_ms) VALUES ($1, $2, $3, {NOW_MS})"))
            .bind(host)
            .bind(body)
            .bind(kept)
            .execute(&mut *tx)
            .await?;
    }
    sqlx::query("SELECT pg_notify($1, '')").bind(EVENTS_CHANNEL).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(())
}

/// The advisory lock `publish` holds (any 64-bit key of ours: "kilnevts").
const EVENTS_LOCK: i64 = 0x6b69_6c6e_6576_7473;

/// The newest event's id: where a host starting reads from.
pub async fn newest_event(pool: &PgPool) -> Result<i64> {
    Ok(sqlx::query_scalar::<_, Option<i64>>("SELECT MAX(id) FROM host_events").fetch_one(pool).await?.unwrap_or(0))
}

/// Events after `after` that other hosts emitted: (id, body, kept), oldest first.
pub async fn events_after(pool: &PgPool, host: &str, after: i64) -> Result<Vec<(i64, String, bool)>> {
    Ok(sqlx::query_as("SELECT id, body, kept FROM host_events WHERE id > $1 AND host_id <> $2 ORDER BY id LIMIT 1000")
        .bind(after)
        .bind(host)
        .fetch_all(pool)
        .await?)
}

/// Drops events older than `keep_ms`: a host reads them within moments, and a view that
/// was away longer resyncs.
pub async fn prune_events(pool: &PgPool, keep_ms: i64) -> Result<u64> {
    let done = sqlx::query(&format!("DELETE FROM host_events WHERE at_ms < {NOW_MS} - $1"))
        .bind(keep_ms)
        .execute(pool)
        .await?;
    Ok(done.rows_affected())
}

// ---- work asked of a session's owner ----

/// A work item as its owner takes it.
#[derive(Debug, Clone)]
pub struct WorkItem {
    pub id: i64,
    pub session_id: String,
    pub operation: String,
    pub args: String,
}

/// Queues `operation` on `session` for its owner; the item's id.
pub async fn ask(pool: &PgPool, session: &str, operation: &str, args: &str, host: &str, at: &str) -> Result<i64> {
    let mut tx = pool.begin().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO work_items (session_id, operation, args, asked_by, state, created_at)
         VALUES ($1, $2, $3, $4, 'queued', $5) RETURNING id",
    )
    .bind(session)
    .bind(operation)
    .bind(args)
    .bind(host)
    .bind(at)
    .fetch_one(&mut *tx)
    .await?;
    sqlx::query("SELECT pg_notify($1, '')").bind(WORK_CHANNEL).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(id)
}

/// Takes up to `limit` queued items of sessions `host` holds a live lease on, oldest first.
/// SKIP LOCKED: two takers never wait on each other nor take one item twice.
pub async fn take_work(pool: &PgPool, host: &str, limit: i64) -> Result<Vec<WorkItem>> {
    if limit <= 0 {
        return Ok(Vec::new());
    }
    let rows: Vec<(i64, String, String, String)> = sqlx::query_as(&format!(
        "UPDATE work_items SET state = 'taken', taken_by = $1 WHERE id IN (
             SELECT w.id FROM work_items w JOIN session_leases l ON l.session_id = w.session_id
             WHERE w.state = 'queued' AND l.host_id = $1 AND l.expires_ms > {NOW_MS}
             ORDER BY w.id LIMIT $2 FOR UPDATE OF w SKIP LOCKED)
         RETURNING id, session_id, operation, args"
    ))
    .bind(host)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    let mut items: Vec<WorkItem> = rows
        .into_iter()
        .map(|(id, session_id, operation, args)| WorkItem { id, session_id, operation, args })
        .collect();
    items.sort_by_key(|w| w.id);
    Ok(items)
}

/// Stores an item's outcome (the operation's JSON result or error), which the asker polls
/// for (`outcome`). No notification: `WORK_CHANNEL` wakes the hosts' workers, and a finished
/// item gives them nothing to take.
pub async fn finish_work(pool: &PgPool, id: i64, outcome: &str, at: &str) -> Result<()> {
    sqlx::query("UPDATE work_items SET state = 'done', outcome = $2, finished_at = $3 WHERE id = $1")
        .bind(id)
        .bind(outcome)
        .bind(at)
        .execute(pool)
        .await?;
    Ok(())
}

/// An item's outcome once it is done.
pub async fn outcome(pool: &PgPool, id: i64) -> Result<Option<String>> {
    Ok(sqlx::query_scalar::<_, Option<String>>("SELECT outcome FROM work_items WHERE id = $1 AND state = 'done'")
        .bind(id)
        .fetch_optional(pool)
        .await?
        .flatten())
}

/// Withdraws an item nobody took yet (the asker gave up waiting): true when it was withdrawn.
pub async fn withdraw(pool: &PgPool, id: i64) -> Result<bool> {
    let done = sqlx::query("DELETE FROM work_items WHERE id = $1 AND state = 'queued'").bind(id).execute(pool).await?;
    Ok(done.rows_affected() == 1)
}

/// Items `dead` took and never finished (it stopped heartbeating): done, with `outcome`. Never
/// run again by another host: the operation may have half happened (a message stored, its
/// turn cut short), and the asker's caller decides whether to ask again.
pub async fn abandon_from(pool: &PgPool, dead: &str, outcome: &str, at: &str) -> Result<u64> {
    let done = sqlx::query(
        "UPDATE work_items SET state = 'done', outcome = $2, finished_at = $3 WHERE state = 'taken' AND taken_by = $1",
    )
    .bind(dead)
    .bind(outcome)
    .bind(at)
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}

/// Drops finished items older than a day.
pub async fn prune_work(pool: &PgPool, before: &str) -> Result<u64> {
    let done = sqlx::query("DELETE FROM work_items WHERE state = 'done' AND finished_at < $1")
        .bind(before)
        .execute(pool)
        .await?;
    Ok(done.rows_affected())
}
