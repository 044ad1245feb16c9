//! What `kiln serve --check` finds of a team's records: whether the PostgreSQL server answers,
//! its version, and how its migrations compare with this Kiln's. Read only: nothing is applied
//! (serving applies what is pending, under sqlx's advisory lock).

use std::collections::BTreeMap;

use sqlx::{Connection, PgConnection};

use super::postgres::PG_MIGRATOR;

/// One line of the check: what was looked at, and whether it is fit to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub ok: bool,
    pub line: String,
}

impl Finding {
    pub fn ok(line: impl Into<String>) -> Finding {
        Finding { ok: true, line: line.into() }
    }

    pub fn failed(line: impl Into<String>) -> Finding {
        Finding { ok: false, line: line.into() }
    }
}

/// The records on the PostgreSQL database at `url`.
pub async fn database(url: &str) -> Vec<Finding> {
    let shown = crate::backing::shown(url);
    let mut conn = match PgConnection::connect(url).await {
        Ok(conn) => conn,
        Err(e) => {
            let e = super::postgres::unavailable(url, e);
            return vec![Finding::failed(format!("records: {} [{}]", e.message, e.code.as_str()))];
        }
    };
    let mut found = Vec::new();
    match sqlx::query_scalar::<_, String>("SHOW server_version").fetch_one(&mut conn).await {
        Ok(version) => found.push(Finding::ok(format!("records: PostgreSQL {version} at {shown}"))),
        Err(e) => found.push(Finding::failed(format!("records: {shown} answers but not as PostgreSQL: {e}"))),
    }
    found.push(migrations(&mut conn).await);
    let _ = conn.close().await;
    found
}

/// How the database's applied migrations compare with the ones this Kiln carries.
async fn migrations(conn: &mut PgConnection) -> Finding {
    let table: Option<String> =
        match sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations')::text").fetch_one(&mut *conn).await {
            Ok(table) => table,
            Err(e) => return Finding::failed(format!("migrations: cannot read them: {e}")),
        };
    let known: BTreeMap<i64, &[u8]> = PG_MIGRATOR.iter().map(|m| (m.version, m.checksum.as_ref())).collect();
    if table.is_none() {
        return Finding::ok(format!(
            "migrations: an empty database; serving applies all {} of this Kiln's",
            known.len()
        ));
    }
    let applied: Vec<(i64, Vec<u8>, bool)> =
        match sqlx::query_as("SELECT version, checksum, success FROM _sqlx_migrations ORDER BY version")
            .fetch_all(&mut *conn)
            .await
        {
            Ok(rows) => rows,
            Err(e) => return Finding::failed(format!("migrations: cannot read them: {e}")),
        };
    let failed: Vec<i64> = applied.iter().filter(|(_, _, ok)| !ok).map(|(v, _, _)| *v).collect();
    let unknown: Vec<i64> = applied.iter().filter(|(v, _, _)| !known.contains_key(v)).map(|(v, _, _)| *v).collect();
    let changed: Vec<i64> = applied
        .iter()
        .filter(|(v, sum, _)| known.get(v).is_some_and(|k| *k != sum.as_slice()))
        .map(|(v, _, _)| *v)
        .collect();
    let pending: Vec<i64> = known.keys().filter(|v| !applied.iter().any(|(a, _, _)| a == *v)).copied().collect();
    if !failed.is_empty() {
        return Finding::failed(format!("migrations: {} failed part-way; repair them before serving", list(&failed)));
    }
    if !unknown.is_empty() {
        return Finding::failed(format!(
            "migrations: {} were applied by a newer Kiln; run that version on every host",
            list(&unknown)
        ));
    }
    if !changed.is_empty() {
        return Finding::failed(format!(
            "migrations: {} differ from this Kiln's (edited after applying)",
            list(&changed)
        ));
    }
    if pending.is_empty() {
        Finding::ok(format!("migrations: all {} applied", applied.len()))
    } else {
        Finding::ok(format!(
            "migrations: {} applied, {} to apply when served ({})",
            applied.len(),
            pending.len(),
            list(&pending)
        ))
    }
}

fn list(versions: &[i64]) -> String {
    versions.iter().map(|v| format!("{v:04}")).collect::<Vec<_>>().join(", ")
}
