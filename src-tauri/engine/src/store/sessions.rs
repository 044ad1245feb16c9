//! Session records: reading a session's whole view and writing its facts.

use std::collections::BTreeMap;

use sqlx::{FromRow, SqlitePool};

use crate::api::types::*;
use crate::error::{ApiError, ErrorCode, Result};

#[derive(FromRow)]
struct SessionRow {
    id: String,
    kind: String,
    title: String,
    brief: String,
    role: Option<String>,
    driver: Option<String>,
    model: Option<String>,
    auto_continue: bool,
    chain_depth: i64,
    state: String,
    setup: String,
    created_at: String,
    updated_at: String,
    delivered_at: Option<String>,
    archived_at: Option<String>,
    rejected_at: Option<String>,
    deleted_at: Option<String>,
    pending_role: Option<String>,
    current_checkpoint: Option<i64>,
}

#[derive(FromRow)]
struct ModuleRow {
    module_id: String,
    directory: String,
    kind: String,
    joined_at: String,
    base_sequence: i64,
}

#[derive(FromRow)]
struct CheckpointRow {
    entry_id: Option<i64>,
    sequence: i64,
    label: String,
    role: Option<String>,
    module_id: Option<String>,
    created_at: String,
}

/// Parses a kebab-case enum stored as text through its serde spelling.
pub(crate) fn parse_enum<T: serde::de::DeserializeOwned>(text: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(text.to_string()))
        .map_err(|e| ApiError::internal("stored value", format!("`{text}`: {e}")))
}

/// The serde spelling of a unit enum variant, as stored.
pub(crate) fn enum_text<T: serde::Serialize>(value: T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => unreachable!("unit enum variants serialize as strings"),
    }
}

/// The session's whole view, tombstones included; `SESSION_NOT_FOUND` when no record.
pub async fn load(pool: &SqlitePool, id: &str, running: bool) -> Result<SessionView> {
    let row: Option<SessionRow> =
        sqlx::query_as("SELECT * FROM sessions WHERE id = ?").bind(id).fetch_optional(pool).await?;
    let row =
        row.ok_or_else(|| ApiError::new(ErrorCode::SessionNotFound, format!("no session {id} in this workspace")))?;
    let modules: Vec<ModuleRow> = sqlx::query_as(
        "SELECT module_id, directory, kind, joined_at, base_sequence FROM session_modules WHERE session_id = ? ORDER BY position",
    )
    .bind(id)
    .fetch_all(pool)
    .await?;
    let checkpoints: Vec<CheckpointRow> = sqlx::query_as(
        "SELECT entry_id, sequence, label, role, module_id, created_at FROM checkpoints WHERE session_id = ? ORDER BY sequence",
    )
    .bind(id)
    .fetch_all(pool)
    .await?;
    let operator: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT id, text, created_at FROM transcript_entries WHERE session_id = ? AND kind = 'user' ORDER BY id",
    )
    .bind(id)
    .fetch_all(pool)
    .await?;
    let current = row.current_checkpoint.or(checkpoints.last().map(|c| c.sequence));
    let checkpoints = name_checkpoints(checkpoints, &operator, current);
    let resume: Vec<(String, String)> = sqlx::query_as("SELECT driver, resume_id FROM resume_ids WHERE session_id = ?")
        .bind(id)
        .fetch_all(pool)
        .await?;
    Ok(SessionView {
        id: row.id,
        kind: parse_enum(&row.kind)?,
        modules: modules
            .into_iter()
            .map(|m| {
                Ok(SessionModule {
                    id: m.module_id,
                    directory: m.directory,
                    kind: parse_enum(&m.kind)?,
                    joined_at: m.joined_at,
                    base_sequence: m.base_sequence,
                })
            })
            .collect::<Result<_>>()?,
        title: row.title,
        brief: row.brief,
        role: row.role,
        driver: row.driver,
        model: row.model,
        resume_ids: resume.into_iter().collect::<BTreeMap<_, _>>(),
        auto_continue: row.auto_continue,
        chain_depth: row.chain_depth,
        state: parse_enum(&row.state)?,
        running,
        setup: parse_enum(&row.setup)?,
        created_at: row.created_at,
        updated_at: row.updated_at,
        delivered_at: row.delivered_at,
        archived_at: row.archived_at,
        rejected_at: row.rejected_at,
        deleted_at: row.deleted_at,
        attachments: crate::attach::list_in(pool, id).await?,
        checkpoints,
        pending_role: row.pending_role,
        usage: crate::store::turns::usage(pool, Some(id)).await?,
        // Filled in by `session::view`, which can read the working copy to tell stale ones.
        reviews: Vec::new(),
        // Filled in by `session::view`, which reads the checkpoints' trees.
        changed: false,
    })
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

/// Which checkpoint the working copy is now: `None` for the latest.
pub async fn set_current_checkpoint(pool: &SqlitePool, session: &str, sequence: Option<i64>) -> Result<()> {
    sqlx::query("UPDATE sessions SET current_checkpoint = ? WHERE id = ?")
        .bind(sequence)
        .bind(session)
        .execute(pool)
        .await?;
    Ok(())
}

/// The commits of checkpoint 0 and of the current checkpoint, to tell whether anything changed.
pub async fn base_and_current_commits(pool: &SqlitePool, session: &str) -> Result<Option<(String, String)>> {
    let current: Option<Option<i64>> = sqlx::query_scalar("SELECT current_checkpoint FROM sessions WHERE id = ?")
        .bind(session)
        .fetch_optional(pool)
        .await?;
    let Some(current) = current else { return Ok(None) };
    let base: Option<String> =
        sqlx::query_scalar("SELECT commit_id FROM checkpoints WHERE session_id = ? AND sequence = 0")
            .bind(session)
            .fetch_optional(pool)
            .await?;
    let now: Option<String> = match current {
        Some(sequence) => {
            sqlx::query_scalar("SELECT commit_id FROM checkpoints WHERE session_id = ? AND sequence = ?")
                .bind(session)
                .bind(sequence)
                .fetch_optional(pool)
                .await?
        }
        None => {
            sqlx::query_scalar("SELECT commit_id FROM checkpoints WHERE session_id = ? ORDER BY sequence DESC LIMIT 1")
                .bind(session)
                .fetch_optional(pool)
                .await?
        }
    };
    Ok(base.zip(now))
}

/// Ids of sessions, newest first. Archived, rejected and deleted ones only when asked.
pub async fn list_ids(pool: &SqlitePool, include_archived: bool) -> Result<Vec<String>> {
    let sql = if include_archived {
        "SELECT id FROM sessions ORDER BY created_at DESC, id"
    } else {
        "SELECT id FROM sessions WHERE archived_at IS NULL AND rejected_at IS NULL AND deleted_at IS NULL ORDER BY created_at DESC, id"
    };
    Ok(sqlx::query_scalar(sql).fetch_all(pool).await?)
}

pub struct NewSession<'a> {
    pub id: &'a str,
    pub kind: SessionKind,
    pub title: &'a str,
    pub brief: &'a str,
    pub modules: &'a [SessionModule],
    pub at: &'a str,
    pub base_commit: &'a str,
}

/// Writes a new session with its modules and checkpoint 0 in one transaction.
pub async fn insert(pool: &SqlitePool, s: NewSession<'_>) -> Result<()> {
    let mut tx = pool.begin().await?;
    sqlx::query(
        "INSERT INTO sessions (id, kind, title, brief, state, setup, created_at, updated_at) VALUES (?, ?, ?, ?, 'planning', 'none', ?, ?)",
    )
    .bind(s.id)
    .bind(enum_text(s.kind))
    .bind(s.title)
    .bind(s.brief)
    .bind(s.at)
    .bind(s.at)
    .execute(&mut *tx)
    .await?;
    for (position, m) in s.modules.iter().enumerate() {
        insert_module(&mut tx, s.id, position as i64, m).await?;
    }
    sqlx::query(
        "INSERT INTO checkpoints (session_id, sequence, commit_id, label, created_at) VALUES (?, 0, ?, 'the starting point', ?)",
    )
    .bind(s.id)
    .bind(s.base_commit)
    .bind(s.at)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

async fn insert_module(tx: &mut sqlx::SqliteConnection, session: &str, position: i64, m: &SessionModule) -> Result<()> {
    sqlx::query(
        "INSERT INTO session_modules (session_id, position, module_id, directory, kind, joined_at, base_sequence) VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(session)
    .bind(position)
    .bind(&m.id)
    .bind(&m.directory)
    .bind(enum_text(m.kind))
    .bind(&m.joined_at)
    .bind(m.base_sequence)
    .execute(tx)
    .await?;
    Ok(())
}

/// Appends a module after the existing ones (`modules[0]` never changes).
pub async fn add_module(pool: &SqlitePool, session: &str, m: &SessionModule) -> Result<()> {
    let mut tx = pool.begin().await?;
    let position: i64 =
        sqlx::query_scalar("SELECT COALESCE(MAX(position), -1) + 1 FROM session_modules WHERE session_id = ?")
            .bind(session)
            .fetch_one(&mut *tx)
            .await?;
    insert_module(&mut tx, session, position, m).await?;
    sqlx::query("UPDATE sessions SET updated_at = ? WHERE id = ?")
        .bind(&m.joined_at)
        .bind(session)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// The latest checkpoint's sequence and commit.
pub async fn latest_checkpoint(pool: &SqlitePool, session: &str) -> Result<(i64, String)> {
    let row: Option<(i64, String)> = sqlx::query_as(
        "SELECT sequence, commit_id FROM checkpoints WHERE session_id = ? ORDER BY sequence DESC LIMIT 1",
    )
    .bind(session)
    .fetch_optional(pool)
    .await?;
    row.ok_or_else(|| ApiError::internal("checkpoints", format!("session {session} has no checkpoint")))
}

pub async fn set_state(pool: &SqlitePool, session: &str, state: SessionState, at: &str) -> Result<()> {
    sqlx::query("UPDATE sessions SET state = ?, updated_at = ? WHERE id = ?")
        .bind(enum_text(state))
        .bind(at)
        .bind(session)
        .execute(pool)
        .await?;
    Ok(())
}

pub async fn set_setup(pool: &SqlitePool, session: &str, setup: SetupState, at: &str) -> Result<()> {
    sqlx::query("UPDATE sessions SET setup = ?, updated_at = ? WHERE id = ?")
        .bind(enum_text(setup))
        .bind(at)
        .bind(session)
        .execute(pool)
        .await?;
    Ok(())
}

/// Which lifecycle flag a column holds.
#[derive(Clone, Copy)]
pub enum Flag {
    Archived,
    Rejected,
    Deleted,
}

impl Flag {
    fn column(self) -> &'static str {
        match self {
            Flag::Archived => "archived_at",
            Flag::Rejected => "rejected_at",
            Flag::Deleted => "deleted_at",
        }
    }
}

/// Sets (`Some(at)`) or clears (`None`) a lifecycle flag.
pub async fn set_flag(pool: &SqlitePool, session: &str, flag: Flag, value: Option<&str>, at: &str) -> Result<()> {
    let sql = format!("UPDATE sessions SET {} = ?, updated_at = ? WHERE id = ?", flag.column());
    sqlx::query(&sql).bind(value).bind(at).bind(session).execute(pool).await?;
    Ok(())
}

/// Removes the record and everything hanging off it (`keepTranscript: false`).
pub async fn remove(pool: &SqlitePool, session: &str) -> Result<()> {
    sqlx::query("DELETE FROM sessions WHERE id = ?").bind(session).execute(pool).await?;
    Ok(())
}

/// Forgets a deleted session's restore points (their commits are gone from the store).
pub async fn remove_checkpoints(pool: &SqlitePool, session: &str) -> Result<()> {
    sqlx::query("DELETE FROM checkpoints WHERE session_id = ?").bind(session).execute(pool).await?;
    Ok(())
}

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
}

/// Stores a gate's result, its output redacted: a command may print a key or token.
pub async fn insert_gate_result(pool: &SqlitePool, g: GateRecord<'_>) -> Result<()> {
    let (head, tail) = (crate::redact::redact(g.head), crate::redact::redact(g.tail));
    sqlx::query(
        "INSERT INTO gate_results (session_id, module_id, gate, command, source, status, exit_code, duration_ms, output_head, output_tail, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
    .execute(pool)
    .await?;
    Ok(())
}
