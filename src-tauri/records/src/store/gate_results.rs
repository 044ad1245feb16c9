//! The `gate_results` table: the result of each setup or gate run, output redacted.

use super::{on, Db};

use super::parse_enum;
use kiln_types::error::Result;
use kiln_types::GateResultView;

pub struct GateRecord<'a> {
    pub session: &'a str,
    pub module: Option<&'a str>,
    pub gate: &'a str,
    pub command: &'a str,
    /// Where the command came from; empty for Kiln's own checks and the setup step.
    pub source: &'a str,
    pub status: &'a str,
    pub exit_code: Option<i32>,
    pub duration_ms: i64,
    pub head: &'a str,
    pub tail: &'a str,
    pub at: &'a str,
    /// The verdict in words beyond the status ("1 new failure: `name`"); empty for none.
    pub note: &'a str,
    /// Which files it judged: the working copy's tree id as a checkpoint would keep it;
    /// empty when unknown (the session's setup, a copy that could not be read).
    pub digest: &'a str,
}

/// Stores a gate's result, its output redacted: a command may print a key or token.
pub async fn insert(pool: &Db, g: GateRecord<'_>) -> Result<()> {
    let (head, tail) = (kiln_runtime::redact::redact(g.head), kiln_runtime::redact::redact(g.tail));
    on!(pool => sqlx::query(
        "INSERT INTO gate_results (session_id, module_id, gate, command, source, status, exit_code, duration_ms, output_head, output_tail, created_at, note, digest) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    )
    .bind(g.session)
    .bind(g.module)
    .bind(g.gate)
    .bind(g.command)
    .bind(g.source)
    .bind(g.status)
    .bind(g.exit_code)
    .bind(g.duration_ms)
    .bind(head.as_ref())
    .bind(tail.as_ref())
    .bind(g.at)
    .bind(g.note)
    .bind(g.digest)
    .execute(pool)
    .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// The latest result of every gate of a session, by module and gate: the workspace's own gates
/// (no module) first, which both engines agree on only when asked (PostgreSQL sorts NULL last).
/// With `digest` (the working copy's files now), a gate's latest result on exactly those
/// files wins over a later one on other files (after a restore, the results as of the
/// restored checkpoint), and each result says whether it judged them (`current`).
pub async fn latest(pool: &Db, session: &str, digest: Option<&str>) -> Result<Vec<GateResultView>> {
    #[allow(clippy::type_complexity)]
    let rows: Vec<(
        i64,
        Option<String>,
        String,
        String,
        String,
        String,
        Option<i64>,
        i64,
        String,
        String,
        String,
        String,
        String,
    )> = on!(pool => sqlx::query_as(
        "SELECT id, module_id, gate, command, source, status, exit_code, duration_ms, output_head, output_tail, created_at, note, digest FROM gate_results g WHERE session_id = $1 AND id = COALESCE((SELECT MAX(id) FROM gate_results h WHERE h.session_id = $1 AND h.gate = g.gate AND h.module_id IS NOT DISTINCT FROM g.module_id AND h.digest = $2 AND h.digest <> ''), (SELECT MAX(id) FROM gate_results h WHERE h.session_id = $1 AND h.gate = g.gate AND h.module_id IS NOT DISTINCT FROM g.module_id)) ORDER BY module_id IS NOT NULL, module_id, gate",
    )
    .bind(session)
    .bind(digest.unwrap_or(""))
    .fetch_all(pool)
    .await)?;
    rows.into_iter()
        .map(|(id, module, gate, command, source, status, exit_code, duration_ms, head, tail, at, note, judged)| {
            let current = match digest {
                Some(now) if !now.is_empty() && !judged.is_empty() => Some(judged == now),
                _ => None,
            };
            Ok(GateResultView {
                id,
                module,
                gate,
                command,
                source,
                status: parse_enum(&status)?,
                exit_code,
                duration_ms,
                output_head: head,
                output_tail: tail,
                at,
                note,
                current,
            })
        })
        .collect()
}

/// A gate's command as it ran on a base tree (`gate_baselines`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Baseline {
    pub passed: bool,
    /// The tests or files it named failing (JSON list), `None` when its output named none.
    pub failing: Option<String>,
    pub head: String,
}

/// The base tree's result of `command` for the gate, when it ran before.
pub async fn baseline(pool: &Db, tree: &str, module: &str, gate: &str, command: &str) -> Result<Option<Baseline>> {
    let row: Option<(bool, Option<String>, String)> = on!(pool => sqlx::query_as(
        "SELECT passed, failing, output_head FROM gate_baselines WHERE base_tree = $1 AND module_id = $2 AND gate = $3 AND command = $4",
    )
    .bind(tree)
    .bind(module)
    .bind(gate)
    .bind(command)
    .fetch_optional(pool)
    .await)?;
    Ok(row.map(|(passed, failing, head)| Baseline { passed, failing, head }))
}

/// Keeps a base tree's result of `command` (the first one kept stays: both ran on the same tree).
pub async fn keep_baseline(
    pool: &Db,
    tree: &str,
    module: &str,
    gate: &str,
    command: &str,
    b: &Baseline,
    at: &str,
) -> Result<()> {
    let head = kiln_runtime::redact::redact(&b.head);
    on!(pool => sqlx::query(
        "INSERT INTO gate_baselines (base_tree, module_id, gate, command, passed, failing, output_head, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
    )
    .bind(tree)
    .bind(module)
    .bind(gate)
    .bind(command)
    .bind(b.passed)
    .bind(b.failing.as_deref())
    .bind(head.as_ref())
    .bind(at)
    .execute(pool)
    .await.map(|done| done.rows_affected()))?;
    Ok(())
}
