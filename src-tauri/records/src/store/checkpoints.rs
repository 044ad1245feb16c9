//! The `checkpoints` table: a session's restore points (commits in `store.git`), and
//! their names for people.

use git2::Oid;
use sqlx::FromRow;

use super::{on, on_tx, Db, Tx};

use kiln_types::error::{ApiError, Result};
use kiln_types::CheckpointView;

#[derive(FromRow)]
struct CheckpointRow {
    entry_id: Option<i64>,
    sequence: i64,
    label: String,
    role: Option<String>,
    module_id: Option<String>,
    created_at: String,
}

pub struct NewCheckpoint<'a> {
    pub session: &'a str,
    pub sequence: i64,
    pub commit: &'a str,
    pub label: &'a str,
    pub role: Option<&'a str>,
    pub module: Option<&'a str>,
    pub at: &'a str,
}

/// Writes checkpoint 0, the starting point (inside the caller's transaction).
pub async fn insert_start(tx: &mut Tx<'_>, session: &str, commit: &str, at: &str) -> Result<()> {
    on_tx!(tx => sqlx::query(
        "INSERT INTO checkpoints (session_id, sequence, commit_id, label, created_at) VALUES ($1, 0, $2, 'the starting point', $3)",
    )
    .bind(session)
    .bind(commit)
    .bind(at)
    .execute(&mut **tx)
    .await.map(|done| done.rows_affected()))?;
    Ok(())
}

pub async fn insert(pool: &Db, c: NewCheckpoint<'_>) -> Result<()> {
    on!(pool => sqlx::query(
        "INSERT INTO checkpoints (session_id, sequence, commit_id, label, role, module_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(c.session)
    .bind(c.sequence)
    .bind(c.commit)
    .bind(c.label)
    .bind(c.role)
    .bind(c.module)
    .bind(c.at)
    .execute(pool)
    .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// The latest checkpoint's sequence and commit.
pub async fn latest(pool: &Db, session: &str) -> Result<(i64, String)> {
    let row: Option<(i64, String)> = on!(pool => sqlx::query_as(
        "SELECT sequence, commit_id FROM checkpoints WHERE session_id = $1 ORDER BY sequence DESC LIMIT 1",
    )
    .bind(session)
    .fetch_optional(pool)
    .await)?;
    row.ok_or_else(|| ApiError::internal("checkpoints", format!("session {session} has no checkpoint")))
}

/// Every checkpoint of a session (sequence, commit, label), in order.
pub async fn list(pool: &Db, session: &str) -> Result<Vec<(i64, String, String)>> {
    Ok(
        on!(pool => sqlx::query_as("SELECT sequence, commit_id, label FROM checkpoints WHERE session_id = $1 ORDER BY sequence")
        .bind(session)
        .fetch_all(pool)
        .await)?,
    )
}

/// The commit and label of checkpoint `sequence`, if the session has it.
pub async fn get(pool: &Db, session: &str, sequence: i64) -> Result<Option<(String, String)>> {
    Ok(on!(pool => sqlx::query_as("SELECT commit_id, label FROM checkpoints WHERE session_id = $1 AND sequence = $2")
        .bind(session)
        .bind(sequence)
        .fetch_optional(pool)
        .await)?)
}

/// The commit of checkpoint `sequence`, or with `None` of the latest one.
pub async fn commit(pool: &Db, session: &str, sequence: Option<i64>) -> Result<Option<String>> {
    Ok(match sequence {
        Some(sequence) => {
            on!(pool => sqlx::query_scalar("SELECT commit_id FROM checkpoints WHERE session_id = $1 AND sequence = $2")
                .bind(session)
                .bind(sequence)
                .fetch_optional(pool)
                .await)?
        }
        None => {
            on!(pool => sqlx::query_scalar("SELECT commit_id FROM checkpoints WHERE session_id = $1 ORDER BY sequence DESC LIMIT 1")
                .bind(session)
                .fetch_optional(pool)
                .await)?
        }
    })
}

/// The commit a module's diff (and delivery) starts from. The checkpoint cap never
/// prunes the start, but may prune a late module's join point; no turn wrote in the
/// module before it joined, so the nearest earlier checkpoint holds the same files.
pub async fn base_commit(pool: &Db, session: &str, sequence: i64) -> Result<Oid> {
    let commit: Option<String> = on!(pool => sqlx::query_scalar(
        "SELECT commit_id FROM checkpoints WHERE session_id = $1 AND sequence <= $2 ORDER BY sequence DESC LIMIT 1",
    )
    .bind(session)
    .bind(sequence)
    .fetch_optional(pool)
    .await)?;
    let commit = commit
        .ok_or_else(|| ApiError::internal("checkpoints", format!("session {session} has no checkpoint {sequence}")))?;
    Oid::from_str(&commit).map_err(|e| ApiError::internal("checkpoint id", e))
}

pub async fn remove(pool: &Db, session: &str, sequence: i64) -> Result<()> {
    on!(pool => sqlx::query("DELETE FROM checkpoints WHERE session_id = $1 AND sequence = $2")
        .bind(session)
        .bind(sequence)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// Forgets a deleted session's restore points (their commits are gone from the store).
pub async fn remove_all(pool: &Db, session: &str) -> Result<()> {
    on!(pool => sqlx::query("DELETE FROM checkpoints WHERE session_id = $1").bind(session).execute(pool).await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// Points checkpoint `sequence` at a rewritten commit (same tree, new parent).
pub async fn set_commit(pool: &Db, session: &str, sequence: i64, commit: &str) -> Result<()> {
    on!(pool => sqlx::query("UPDATE checkpoints SET commit_id = $1 WHERE session_id = $2 AND sequence = $3")
        .bind(commit)
        .bind(session)
        .bind(sequence)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// Ties a checkpoint to the transcript entry that closes its turn.
pub async fn link_entry(pool: &Db, session: &str, sequence: i64, entry: i64) -> Result<()> {
    on!(pool => sqlx::query("UPDATE checkpoints SET entry_id = $1 WHERE session_id = $2 AND sequence = $3")
        .bind(entry)
        .bind(session)
        .bind(sequence)
        .execute(pool)
        .await.map(|done| done.rows_affected()))?;
    Ok(())
}

/// A session's checkpoints as shown, `current` (else the latest) marked as the one the
/// working copy is now.
pub async fn views(pool: &Db, session: &str, current: Option<i64>) -> Result<Vec<CheckpointView>> {
    let rows: Vec<CheckpointRow> = on!(pool => sqlx::query_as(
        "SELECT entry_id, sequence, label, role, module_id, created_at FROM checkpoints WHERE session_id = $1 ORDER BY sequence",
    )
    .bind(session)
    .fetch_all(pool)
    .await)?;
    let operator = super::transcript_entries::operator_messages(pool, session).await?;
    let current = current.or(rows.last().map(|c| c.sequence));
    Ok(name_checkpoints(rows, &operator, current))
}

/// Longest checkpoint name taken from an operator message.
const NAME_CHARS: usize = 80;

/// Each checkpoint named for people: by the operator message that led to it (the last
/// one before it), else by what made it; a repeated name gets " (2)", " (3)"…. The
/// checkpoint `current` is the one the working copy is now.
fn name_checkpoints(
    rows: Vec<CheckpointRow>,
    operator: &[(i64, String, String)],
    current: Option<i64>,
) -> Vec<CheckpointView> {
    let at = |text: &str| time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    rows.into_iter()
        .map(|c| {
            let message = match c.entry_id {
                // The turn's closing entry: the operator's last message before it.
                Some(entry) => operator.iter().rev().find(|(id, _, _)| *id < entry),
                None => {
                    let taken = at(&c.created_at);
                    operator.iter().rev().find(|(_, _, when)| taken.is_some() && at(when) <= taken)
                }
            }
            .map(|(_, text, _)| first_line(text));
            let autosave = c.label.starts_with("autosave");
            let base = match (c.sequence, message, autosave) {
                (0, _, _) => "Start".to_string(),
                (_, Some(m), false) => m,
                (_, Some(m), true) => format!("Autosave: {m}"),
                (_, None, _) => upper_first(&c.label),
            };
            let n = seen.entry(base.clone()).or_insert(0);
            *n += 1;
            let label = if *n == 1 { base } else { format!("{base} ({n})") };
            CheckpointView {
                sequence: c.sequence,
                at: c.created_at,
                label,
                role: c.role,
                module: c.module_id,
                entry_id: c.entry_id,
                current: Some(c.sequence) == current,
            }
        })
        .collect()
}

/// The first non-empty line of a message, clipped to `NAME_CHARS` characters.
fn first_line(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    if line.chars().count() <= NAME_CHARS {
        return line.to_string();
    }
    let cut: String = line.chars().take(NAME_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
