//! A team's records on PostgreSQL (SPEC §21), beyond the engine suite's second run on it:
//! `kiln serve --check` reading a database without changing it, and one workspace per team
//! database. Several hosts on one database: tests/team_hosts.rs, with real `kiln serve`s.

use kiln_engine::backing::Backing;
use kiln_engine::types::*;
use kiln_engine::{check_backing, Engine, ErrorCode};
use sqlx::{Connection, PgConnection};

use crate::common::postgres::fresh_database;
use crate::common::{shop_copy, without_setup};

fn engine_on(config_dir: &std::path::Path, database: &str) -> Engine {
    Engine::new(kiln_test_support::options(config_dir, Transport::Serve))
        .backed_by(Backing { database: Some(database.to_string()), objects: None })
}

fn lines(found: &[kiln_engine::Finding]) -> String {
    found.iter().map(|f| format!("{} {}\n", if f.ok { "ok" } else { "FAILED" }, f.line)).collect()
}

#[tokio::test]
async fn the_check_reads_a_database_and_its_migrations_without_changing_them() {
    let url = fresh_database();
    let backing = Backing { database: Some(url.clone()), objects: None };

    // Empty: fit to serve, which will migrate it; the check itself applies nothing.
    let found = check_backing(&backing).await;
    assert!(found.iter().all(|f| f.ok), "{}", lines(&found));
    assert!(found[0].line.starts_with("records: PostgreSQL 1"), "{}", lines(&found));
    assert!(found[1].line.contains("an empty database"), "{}", lines(&found));
    let mut conn = PgConnection::connect(&url).await.unwrap();
    let table: Option<String> =
        sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations')::text").fetch_one(&mut conn).await.unwrap();
    assert_eq!(table, None, "the check created the migrations table");

    // Served once: every migration applied.
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());
    without_setup(&shop);
    let engine = engine_on(&tmp.path().join("config"), &url);
    engine.open_workspace(OpenWorkspaceArgs { path: shop.display().to_string() }).await.unwrap();
    let found = check_backing(&backing).await;
    assert!(found.iter().all(|f| f.ok), "{}", lines(&found));
    let known = kiln_engine::testing::store::PG_MIGRATOR.iter().count();
    assert_eq!(found[1].line, format!("migrations: all {known} applied"), "{}", lines(&found));

    // A migration this Kiln does not know: a newer Kiln migrated the database.
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) VALUES (9999, 'later', TRUE, '\\x00', 0)",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    let found = check_backing(&backing).await;
    assert!(!found[1].ok, "{}", lines(&found));
    assert!(found[1].line.contains("9999 were applied by a newer Kiln"), "{}", lines(&found));
}

#[tokio::test]
async fn an_unreachable_database_is_refused_by_name_without_its_password() {
    // A loopback port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("postgres://kiln:hunter2secret@127.0.0.1:{port}/team");
    let found = check_backing(&Backing { database: Some(url.clone()), objects: None }).await;
    assert!(!found[0].ok, "{}", lines(&found));
    assert!(found[0].line.contains("DATABASE_UNAVAILABLE"), "{}", lines(&found));
    assert!(found[0].line.contains("postgres://kiln:***@127.0.0.1"), "{}", lines(&found));
    assert!(!lines(&found).contains("hunter2secret"), "{}", lines(&found));

    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());
    let engine = engine_on(&tmp.path().join("config"), &url);
    let err = engine.open_workspace(OpenWorkspaceArgs { path: shop.display().to_string() }).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::DatabaseUnavailable, "{err:?}");
    assert!(!err.message.contains("hunter2secret"), "{err:?}");
    assert!(!shop.join(".kiln/kiln.db").exists(), "no SQLite records instead");
}

#[tokio::test]
async fn a_team_database_holds_one_workspace_whose_sessions_every_host_lists() {
    let url = fresh_database();
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());
    without_setup(&shop);
    let engine = engine_on(&tmp.path().join("config"), &url);
    engine.open_workspace(OpenWorkspaceArgs { path: shop.display().to_string() }).await.unwrap();
    let s = engine
        .create_session(CreateSessionArgs {
            brief: "Speed up @shop/cart".into(),
            title: None,
            create_modules: None,
            issue: None,
        })
        .await
        .unwrap();
    assert_eq!(
        engine
            .list_sessions(ListSessionsArgs { include_archived: None })
            .await
            .unwrap()
            .iter()
            .filter(|v| v.id == s.id)
            .count(),
        1
    );

    // A second workspace on the same engine would mix its records into this database.
    let elsewhere = shop_copy(&tmp.path().join("b"));
    let err = engine.open_workspace(OpenWorkspaceArgs { path: elsewhere.display().to_string() }).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotAllowedInMode, "{err:?}");
}
