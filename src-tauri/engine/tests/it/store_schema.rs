//! The records' two schemas kept equal (SPEC §21), and the access store's two: the SQLite
//! migrations and the PostgreSQL ones (`migrations-postgres/`) give the same tables, columns in
//! the same order with mapped types, nullability, defaults, keys, foreign keys, CHECKs and
//! indexes; and migrating a PostgreSQL database again, or from several connections at once, is
//! safe.

use std::collections::{BTreeMap, BTreeSet};

use kiln_engine::testing::store::{MIGRATOR, PG_MIGRATOR};
use kiln_records::store::access;
use regex::Regex;
use sqlx::{PgPool, Row, SqlitePool};

use crate::common::postgres::fresh_database;

/// Columns the store binds and reads as `bool`: INTEGER on SQLite, BOOLEAN on PostgreSQL
/// (sqlx-postgres decodes a bool from nothing else). Every other INTEGER is a BIGINT.
const BOOLEAN_COLUMNS: &[&str] = &[
    "sessions.auto_continue",
    "turns.review",
    "reviews.passed",
    "session_leases.running",
    "host_events.kept",
    "gate_baselines.passed",
];

/// The columns PostgreSQL adds to stand for SQLite's implicit `rowid`, which the store
/// orders `deliveries` and `review_comments` by.
const ROWID: &str = "rowid";

#[derive(Debug, Clone, PartialEq)]
struct Column {
    name: String,
    /// The PostgreSQL type: read there, mapped from the declared type on SQLite.
    pg_type: String,
    /// What SQLite declares, to name it when a column differs.
    declared: String,
    not_null: bool,
    /// The default as SQL text, spelled alike on both (`'x'`, `0`, `1` for TRUE).
    default: Option<String>,
    /// `INTEGER PRIMARY KEY AUTOINCREMENT` on SQLite, an identity column on PostgreSQL.
    generated: bool,
}

#[derive(Debug, Clone, PartialEq, PartialOrd, Eq, Ord)]
struct ForeignKey {
    columns: Vec<String>,
    table: String,
    to: Vec<String>,
    on_delete: String,
}

#[derive(Debug, Default)]
struct Table {
    columns: Vec<Column>,
    primary_key: Vec<String>,
    foreign_keys: BTreeSet<ForeignKey>,
    unique: BTreeSet<Vec<String>>,
    /// Indexes made by CREATE INDEX (not those behind keys), by name: their columns.
    indexes: BTreeMap<String, Vec<String>>,
    /// Each `CHECK (column IN (…))`: the column and its allowed values, in order.
    checks: BTreeSet<(String, Vec<String>)>,
}

type Schema = BTreeMap<String, Table>;

/// A PostgreSQL constraint: kind, columns, referenced table and columns, ON DELETE, definition.
type ConstraintRow = (String, Vec<String>, Option<String>, Vec<String>, String, String);

#[tokio::test]
async fn postgres_migrations_give_sqlites_schema() {
    let sqlite_versions: Vec<_> = MIGRATOR.iter().map(|m| (m.version, m.description.to_string())).collect();
    let pg_versions: Vec<_> = PG_MIGRATOR.iter().map(|m| (m.version, m.description.to_string())).collect();
    let unmatched: Vec<String> = sqlite_versions
        .iter()
        .filter(|m| !pg_versions.contains(m))
        .map(|(v, d)| format!("SQLite's {v:04} `{d}` has no PostgreSQL twin"))
        .chain(
            pg_versions
                .iter()
                .filter(|m| !sqlite_versions.contains(m))
                .map(|(v, d)| format!("PostgreSQL's {v:04} `{d}` has no SQLite twin")),
        )
        .collect();
    assert!(
        unmatched.is_empty(),
        "migrations-postgres/ must list the SQLite migrations' versions and names:\n  {}",
        unmatched.join("\n  ")
    );

    let dir = tempfile::tempdir().unwrap();
    let sqlite = kiln_records::store::open_with(&dir.path().join("kiln.db"), &MIGRATOR).await.unwrap();
    let expected = sqlite_schema(&sqlite).await;
    let pg = PgPool::connect(&fresh_database()).await.unwrap();
    PG_MIGRATOR.run(&pg).await.unwrap();
    let actual = pg_schema(&pg).await;

    assert!(
        expected.len() >= 15 && expected["sessions"].columns.len() >= 20,
        "the SQLite schema was read: {expected:?}"
    );
    let differences = differences(&expected, &actual);
    assert!(differences.is_empty(), "the PostgreSQL schema differs from SQLite's:\n  {}", differences.join("\n  "));

    // SQLite's implicit rowid exists on PostgreSQL where the store's queries use it: an
    // identity column, always generated (no insert can set it), after the table's own.
    let rowid: Vec<(String, String, bool)> = sqlx::query_as(
        "SELECT c.table_name::text, c.identity_generation::text,
                c.ordinal_position = (SELECT MAX(ordinal_position) FROM information_schema.columns l
                                      WHERE l.table_schema = 'public' AND l.table_name = c.table_name)
         FROM information_schema.columns c
         WHERE c.table_schema = 'public' AND c.column_name = $1 ORDER BY 1",
    )
    .bind(ROWID)
    .fetch_all(&pg)
    .await
    .unwrap();
    let expected: Vec<_> = tables_ordered_by_rowid().into_iter().map(|t| (t, "ALWAYS".to_string(), true)).collect();
    assert!(!expected.is_empty(), "the store's queries were read");
    assert_eq!(
        rowid, expected,
        "PostgreSQL's rowid columns: (table, generated, last) against the store's use of rowid"
    );
    pg.close().await;
}

/// kiln-serve's access store keeps its own pair of schemas (`migrations-access/` and
/// `migrations-access-postgres/`): a team's hosts must read the same tables a single machine does.
#[tokio::test]
async fn the_access_stores_postgres_migrations_give_sqlites_schema() {
    let versions =
        |m: &sqlx::migrate::Migrator| m.iter().map(|m| (m.version, m.description.to_string())).collect::<Vec<_>>();
    assert_eq!(versions(&access::MIGRATOR), versions(&access::PG_MIGRATOR), "the access migrations pair up");
    let dir = tempfile::tempdir().unwrap();
    let sqlite = kiln_records::store::open_with(&dir.path().join(access::DB_FILE), &access::MIGRATOR).await.unwrap();
    let expected = sqlite_schema(&sqlite).await;
    assert_eq!(
        expected.keys().collect::<Vec<_>>(),
        ["access_tokens", "browser_sessions"],
        "the SQLite schema was read"
    );
    let pg = PgPool::connect(&fresh_database()).await.unwrap();
    access::PG_MIGRATOR.run(&pg).await.unwrap();
    let differences = differences(&expected, &pg_schema(&pg).await);
    assert!(
        differences.is_empty(),
        "the access store's PostgreSQL schema differs from SQLite's:\n  {}",
        differences.join("\n  ")
    );
    pg.close().await;
}

/// The tables whose rows the store's queries (`src/store/*.rs`) put in `rowid` order.
fn tables_ordered_by_rowid() -> BTreeSet<String> {
    let query = Regex::new(r#"FROM (\w+)[^"]*?\browid\b"#).unwrap();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../records/src/store");
    let mut tables = BTreeSet::new();
    for file in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
        tables.extend(query.captures_iter(&text).map(|c| c[1].to_string()));
    }
    tables
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_migrations_run_again_or_at_once_safely() {
    // Again: a migrated database, reopened and migrated twice more, is left as it was.
    let url = fresh_database();
    migrate(url.clone()).await.unwrap();
    let applied_once = applied(&url).await;
    assert_eq!(applied_once.len(), PG_MIGRATOR.iter().count(), "{applied_once:?}");
    assert!(applied_once.iter().all(|m| m.3), "every migration succeeded: {applied_once:?}");
    migrate(url.clone()).await.unwrap();
    migrate(url.clone()).await.unwrap();
    assert_eq!(applied(&url).await, applied_once, "a second run applied or changed nothing");
    let pool = PgPool::connect(&url).await.unwrap();
    let reference = pg_schema(&pool).await;
    pool.close().await;

    // At once: four connections migrating one fresh database all succeed, each migration
    // is applied once, and the schema is the one a single run gives.
    let url = fresh_database();
    let runs: Vec<_> = (0..4).map(|_| tokio::spawn(migrate(url.clone()))).collect();
    for run in runs {
        run.await.unwrap().unwrap();
    }
    assert_eq!(
        applied(&url).await.iter().map(|m| m.0).collect::<Vec<_>>(),
        applied_once.iter().map(|m| m.0).collect::<Vec<_>>()
    );
    let pool = PgPool::connect(&url).await.unwrap();
    let differences = differences(&reference, &pg_schema(&pool).await);
    assert!(differences.is_empty(), "concurrent migrations gave another schema:\n  {}", differences.join("\n  "));
    pool.close().await;

    // They take turns because sqlx holds an advisory lock while it migrates: with sqlx's own
    // table locked by us, one migrator holds the advisory lock (waiting for our table) and
    // the other waits for the advisory lock; neither touches the schema until we let go.
    let url = fresh_database();
    let empty = tempfile::tempdir().unwrap();
    let bookkeeping = sqlx::migrate::Migrator::new(empty.path()).await.unwrap();
    let pool = PgPool::connect(&url).await.unwrap();
    bookkeeping.run(&pool).await.unwrap();
    let mut holder = pool.begin().await.unwrap();
    sqlx::query("LOCK TABLE _sqlx_migrations IN ACCESS EXCLUSIVE MODE").execute(&mut *holder).await.unwrap();
    let runs: Vec<_> = (0..2).map(|_| tokio::spawn(migrate(url.clone()))).collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let waits = loop {
        let waits = lock_waits(&pool).await;
        if waits.iter().filter(|w| w.0 == "advisory").count() == 2 && waits.contains(&("relation".into(), false)) {
            break waits;
        }
        assert!(std::time::Instant::now() < deadline, "the migrators never queued on an advisory lock: {waits:?}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    let mut advisory: Vec<bool> = waits.iter().filter(|w| w.0 == "advisory").map(|w| w.1).collect();
    advisory.sort();
    assert_eq!(advisory, [false, true], "one migrator holds the advisory lock and one waits: {waits:?}");
    assert!(runs.iter().all(|r| !r.is_finished()), "neither migrator got past our lock");
    let tables: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'")
            .fetch_one(&mut *holder)
            .await
            .unwrap();
    assert_eq!(tables, 1, "only sqlx's own table exists while the migrators wait");
    holder.rollback().await.unwrap();
    for run in runs {
        run.await.unwrap().unwrap();
    }
    assert_eq!(applied(&url).await.len(), applied_once.len());
    pool.close().await;
}

/// Opens its own pool (a new connection, as another process would) and migrates.
async fn migrate(url: String) -> Result<(), sqlx::migrate::MigrateError> {
    let pool = PgPool::connect(&url).await.unwrap();
    let result = PG_MIGRATOR.run(&pool).await;
    pool.close().await;
    result
}

/// sqlx's record of applied migrations: version, description, when, success, checksum.
async fn applied(url: &str) -> Vec<(i64, String, String, bool, Vec<u8>)> {
    let pool = PgPool::connect(url).await.unwrap();
    let rows = sqlx::query_as(
        "SELECT version, description, installed_on::text, success, checksum FROM _sqlx_migrations ORDER BY version",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    pool.close().await;
    rows
}

/// The locks other connections to this database hold or wait for: (type, granted).
async fn lock_waits(pool: &PgPool) -> Vec<(String, bool)> {
    sqlx::query_as(
        "SELECT locktype, granted FROM pg_locks
         WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND pid <> pg_backend_pid() AND pid NOT IN (SELECT pid FROM pg_locks WHERE locktype = 'relation' AND mode = 'AccessExclusiveLock' AND granted)
           AND locktype IN ('advisory', 'relation') AND (locktype = 'advisory' OR NOT granted)
         ORDER BY locktype, granted",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

async fn sqlite_schema(pool: &SqlitePool) -> Schema {
    let tables: Vec<(String, String)> = sqlx::query_as(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations'",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    let check = Regex::new(r"CHECK \((\w+) IN \(([^)]*)\)\)").unwrap();
    let mut schema = Schema::new();
    for (name, sql) in tables {
        let mut table = Table::default();
        let columns =
            sqlx::query(r#"SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid"#)
                .bind(&name)
                .fetch_all(pool)
                .await
                .unwrap();
        let mut primary_key = Vec::new();
        for c in columns {
            let column: String = c.get(0);
            let declared: String = c.get(1);
            let pk: i64 = c.get(4);
            let boolean = BOOLEAN_COLUMNS.contains(&format!("{name}.{column}").as_str());
            let pg_type = match declared.to_uppercase().as_str() {
                "INTEGER" if boolean => "boolean",
                "INTEGER" => "bigint",
                "TEXT" => "text",
                "REAL" => "double precision",
                "BLOB" => "bytea",
                other => panic!("{name}.{column}: no PostgreSQL type for SQLite's {other}"),
            };
            if pk > 0 {
                primary_key.push((pk, column.clone()));
            }
            table.columns.push(Column {
                generated: false, // set below, once the whole key is known
                name: column,
                pg_type: pg_type.into(),
                declared,
                // A key column is NOT NULL on PostgreSQL; SQLite lets a key that is not an
                // INTEGER hold NULL unless declared otherwise, which the store never relies on.
                not_null: c.get::<i64, _>(2) != 0 || pk > 0,
                default: c.get(3),
            });
        }
        primary_key.sort();
        table.primary_key = primary_key.into_iter().map(|(_, c)| c).collect();
        if let [key] = table.primary_key.as_slice() {
            let column = table.columns.iter_mut().find(|c| &c.name == key).unwrap();
            column.generated = column.declared.eq_ignore_ascii_case("INTEGER") && sql.contains("AUTOINCREMENT");
        }

        let keys: Vec<(i64, String, String, Option<String>, String)> = sqlx::query_as(
            r#"SELECT id, "table", "from", "to", on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq"#,
        )
        .bind(&name)
        .fetch_all(pool)
        .await
        .unwrap();
        let mut by_id: BTreeMap<i64, ForeignKey> = BTreeMap::new();
        for (id, to_table, from, to, on_delete) in keys {
            let key = by_id.entry(id).or_insert_with(|| ForeignKey {
                columns: Vec::new(),
                table: to_table,
                to: Vec::new(),
                on_delete,
            });
            key.columns.push(from);
            key.to.push(to.expect("foreign keys name the columns they reference"));
        }
        table.foreign_keys = by_id.into_values().collect();

        let indexes: Vec<(String, String)> =
            sqlx::query_as("SELECT name, origin FROM pragma_index_list(?)").bind(&name).fetch_all(pool).await.unwrap();
        for (index, origin) in indexes {
            let columns: Vec<String> = sqlx::query_scalar("SELECT name FROM pragma_index_info(?) ORDER BY seqno")
                .bind(&index)
                .fetch_all(pool)
                .await
                .unwrap();
            match origin.as_str() {
                "c" => {
                    table.indexes.insert(index, columns);
                }
                "u" => {
                    table.unique.insert(columns);
                }
                _ => {} // "pk": the primary key, compared above
            }
        }
        table.checks = check.captures_iter(&sql).map(|c| (c[1].to_string(), literals(&c[2]))).collect();
        schema.insert(name, table);
    }
    schema
}

async fn pg_schema(pool: &PgPool) -> Schema {
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables
         WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> '_sqlx_migrations'",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    let check_column = Regex::new(r"^CHECK \(+(\w+)").unwrap();
    let mut schema = Schema::new();
    for name in tables {
        let mut table = Table::default();
        let columns: Vec<(String, String, String, Option<String>, String)> = sqlx::query_as(
            "SELECT column_name::text, data_type::text, is_nullable::text, column_default::text, is_identity::text
             FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position",
        )
        .bind(&name)
        .fetch_all(pool)
        .await
        .unwrap();
        for (column, data_type, nullable, default, identity) in columns {
            if column == ROWID {
                continue;
            }
            let default = default.map(|d| match d.as_str() {
                "true" => "1".to_string(),
                "false" => "0".to_string(),
                _ => d.strip_suffix("::text").unwrap_or(&d).to_string(),
            });
            table.columns.push(Column {
                name: column,
                declared: data_type.clone(),
                pg_type: data_type,
                not_null: nullable == "NO",
                default,
                generated: identity == "YES",
            });
        }

        // Every constraint, its columns and those it references in key order.
        let constraints: Vec<ConstraintRow> = sqlx::query_as(
            "SELECT c.contype::text,
                    ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
                          JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i),
                    NULLIF(c.confrelid, 0)::regclass::text,
                    ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
                          JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i),
                    c.confdeltype::text,
                    pg_get_constraintdef(c.oid)
             FROM pg_constraint c WHERE c.conrelid = $1::regclass",
        )
        .bind(&name)
        .fetch_all(pool)
        .await
        .unwrap();
        for (kind, columns, to_table, to, on_delete, definition) in constraints {
            match kind.as_str() {
                "p" => table.primary_key = columns,
                "u" => {
                    table.unique.insert(columns);
                }
                "f" => {
                    table.foreign_keys.insert(ForeignKey {
                        columns,
                        table: to_table.unwrap_or_default(),
                        to,
                        on_delete: match on_delete.as_str() {
                            "c" => "CASCADE",
                            "n" => "SET NULL",
                            "d" => "SET DEFAULT",
                            "r" => "RESTRICT",
                            _ => "NO ACTION",
                        }
                        .into(),
                    });
                }
                "c" => {
                    let column =
                        check_column.captures(&definition).map(|c| c[1].to_string()).unwrap_or(definition.clone());
                    table.checks.insert((column, literals(&definition)));
                }
                other => panic!("{name}: a constraint of kind {other} the comparison does not know: {definition}"),
            }
        }

        // Indexes that no constraint owns: those made by CREATE INDEX.
        let indexes: Vec<(String, Vec<String>)> = sqlx::query_as(
            "SELECT i.relname::text,
                    ARRAY(SELECT a.attname::text FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(n, o)
                          JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.n ORDER BY k.o)
             FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
             WHERE x.indrelid = $1::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)",
        )
        .bind(&name)
        .fetch_all(pool)
        .await
        .unwrap();
        table.indexes = indexes.into_iter().collect();
        schema.insert(name, table);
    }
    schema
}

/// The quoted values of a CHECK's list, in order.
fn literals(sql: &str) -> Vec<String> {
    Regex::new(r"'([^']*)'").unwrap().captures_iter(sql).map(|c| c[1].to_string()).collect()
}

/// Each way `actual` (PostgreSQL) differs from `expected` (SQLite, mapped), named exactly.
fn differences(expected: &Schema, actual: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    for name in expected.keys().filter(|t| !actual.contains_key(*t)) {
        out.push(format!("table `{name}` is missing on PostgreSQL"));
    }
    for name in actual.keys().filter(|t| !expected.contains_key(*t)) {
        out.push(format!("table `{name}` is only on PostgreSQL"));
    }
    for (name, want) in expected {
        let Some(have) = actual.get(name) else { continue };
        let names = |t: &Table| t.columns.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        let (want_names, have_names) = (names(want), names(have));
        for column in want_names.iter().filter(|c| !have_names.contains(c)) {
            out.push(format!("{name}.{column} is missing on PostgreSQL"));
        }
        for column in have_names.iter().filter(|c| !want_names.contains(c)) {
            out.push(format!("{name}.{column} is only on PostgreSQL"));
        }
        let common = |a: &[String], b: &[String]| a.iter().filter(|c| b.contains(c)).cloned().collect::<Vec<_>>();
        if common(&want_names, &have_names) != common(&have_names, &want_names) {
            out.push(format!("{name}: columns in order SQLite {want_names:?}, PostgreSQL {have_names:?}"));
        }
        for w in &want.columns {
            let Some(h) = have.columns.iter().find(|h| h.name == w.name) else { continue };
            let column = format!("{name}.{}", w.name);
            if w.pg_type != h.pg_type {
                out.push(format!("{column}: SQLite {} wants {}, PostgreSQL has {}", w.declared, w.pg_type, h.pg_type));
            }
            if w.not_null != h.not_null {
                out.push(format!("{column}: NOT NULL on SQLite {}, on PostgreSQL {}", w.not_null, h.not_null));
            }
            if w.default != h.default {
                out.push(format!("{column}: default SQLite {:?}, PostgreSQL {:?}", w.default, h.default));
            }
            if w.generated != h.generated {
                out.push(format!(
                    "{column}: AUTOINCREMENT on SQLite {}, identity on PostgreSQL {}",
                    w.generated, h.generated
                ));
            }
        }
        if want.primary_key != have.primary_key {
            out.push(format!("{name}: primary key SQLite {:?}, PostgreSQL {:?}", want.primary_key, have.primary_key));
        }
        set_differences(&mut out, name, "foreign key", &want.foreign_keys, &have.foreign_keys);
        set_differences(&mut out, name, "unique", &want.unique, &have.unique);
        set_differences(&mut out, name, "check", &want.checks, &have.checks);
        let want_indexes: BTreeSet<_> = want.indexes.iter().collect();
        let have_indexes: BTreeSet<_> = have.indexes.iter().collect();
        set_differences(&mut out, name, "index", &want_indexes, &have_indexes);
    }
    out
}

fn set_differences<T: Ord + std::fmt::Debug>(
    out: &mut Vec<String>,
    table: &str,
    what: &str,
    want: &BTreeSet<T>,
    have: &BTreeSet<T>,
) {
    for missing in want.difference(have) {
        out.push(format!("{table}: {what} {missing:?} is missing on PostgreSQL"));
    }
    for extra in have.difference(want) {
        out.push(format!("{table}: {what} {extra:?} is only on PostgreSQL"));
    }
}
