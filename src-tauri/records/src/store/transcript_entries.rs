//! Transcript entries: appended as things happen, read back in order.

use sqlx::FromRow;

use super::{on, Db};

use super::{enum_text, parse_enum};
use kiln_types::error::Result;
use kiln_types::{EntryKind, PointedChip, TranscriptEntry};

#[derive(FromRow)]
struct EntryRow {
    id: i64,
    session_id: String,
    kind: String,
    module_id: Option<String>,
    role: Option<String>,
    text: String,
    created_at: String,
    /// JSON of an operator message's `PointedChip`s.
    context: Option<String>,
}

impl EntryRow {
    fn into_entry(self) -> Result<TranscriptEntry> {
        Ok(TranscriptEntry {
            id: self.id,
            session_id: self.session_id,
            kind: parse_enum(&self.kind)?,
            module: self.module_id,
            role: self.role,
            text: self.text,
            created_at: self.created_at,
            // A list that no longer reads shows no chips rather than failing the transcript.
            context: self.context.and_then(|json| serde_json::from_str::<Vec<PointedChip>>(&json).ok()),
        })
    }
}

pub struct NewEntry<'a> {
    pub session: &'a str,
    pub kind: EntryKind,
    pub module: Option<&'a str>,
    pub role: Option<&'a str>,
    pub text: &'a str,
    pub at: &'a str,
    /// An operator message's chips.
    pub context: Option<&'a [PointedChip]>,
}

/// Appends an entry with every secret redacted: what an agent or a provider said may
/// echo a key, and the transcript is stored, shown and replayed to later turns.
pub async fn append(pool: &Db, e: NewEntry<'_>) -> Result<TranscriptEntry> {
    let text = kiln_runtime::redact::redact(e.text);
    let context = e.context.map(|chips| serde_json::to_string(chips).expect("chips are JSON"));
    let row: EntryRow = on!(pool => sqlx::query_as(
        "INSERT INTO transcript_entries (session_id, kind, module_id, role, text, created_at, context) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *",
    )
    .bind(e.session)
    .bind(enum_text(e.kind))
    .bind(e.module)
    .bind(e.role)
    .bind(text.as_ref())
    .bind(e.at)
    .bind(context)
    .fetch_one(pool)
    .await)?;
    row.into_entry()
}

/// Entries of a session in order, those after entry `after` when given.
pub async fn list(pool: &Db, session: &str, after: Option<i64>) -> Result<Vec<TranscriptEntry>> {
    list_window(pool, session, after, None, None).await
}

/// Entries of a session in order: those after `after` and before `before` when given, and
/// of those only the newest `last` when given.
pub async fn list_window(
    pool: &Db,
    session: &str,
    after: Option<i64>,
    before: Option<i64>,
    last: Option<u32>,
) -> Result<Vec<TranscriptEntry>> {
    // Newest first under the limit (none: the largest, as neither engine takes -1 alike),
    // then back in order.
    let rows: Vec<EntryRow> = on!(pool => sqlx::query_as(
        "SELECT * FROM (SELECT * FROM transcript_entries WHERE session_id = $1 AND id > $2 AND id < $3
           ORDER BY id DESC LIMIT $4) AS newest ORDER BY id",
    )
    .bind(session)
    .bind(after.unwrap_or(0))
    .bind(before.unwrap_or(i64::MAX))
    .bind(last.map_or(i64::MAX, i64::from))
    .fetch_all(pool)
    .await)?;
    rows.into_iter().map(EntryRow::into_entry).collect()
}

/// The operator's messages of a session (id, text, time), in order: checkpoints are named by them.
pub async fn operator_messages(pool: &Db, session: &str) -> Result<Vec<(i64, String, String)>> {
    Ok(on!(pool => sqlx::query_as(
        "SELECT id, text, created_at FROM transcript_entries WHERE session_id = $1 AND kind = 'user' ORDER BY id",
    )
    .bind(session)
    .fetch_all(pool)
    .await)?)
}
