//! The records' schema on PostgreSQL (`kiln serve --database postgres://…`, SPEC §21): its
//! own migrations, one per SQLite migration with the same version and name, kept equal to
//! them by `tests/it/store_schema.rs`.

pub static PG_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations-postgres");
