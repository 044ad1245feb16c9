//! A team's access store on PostgreSQL (`kiln serve --database`, `kiln token --database`): a
//! token made through one host admits a browser on another, and its cookie holds on both, in a
//! schema of its own beside the records. The PostgreSQL server is the engine tests' throwaway
//! cluster, its helper included by path.

#[allow(dead_code)]
#[path = "../../engine/tests/it/common/postgres.rs"]
mod postgres;

use kiln_engine::types::ServeMode;
use kiln_serve::access::{Access, Proof};
use sqlx::{Connection, PgConnection};

#[tokio::test]
async fn a_token_made_on_one_host_admits_a_browser_on_another_until_it_is_revoked() {
    let url = postgres::fresh_database();
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // Two hosts: each its own config directory, both on the team's database.
    let (a, b) = tokio::join!(Access::open(dir_a.path(), Some(&url)), Access::open(dir_b.path(), Some(&url)));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert!(!dir_a.path().join("access.db").exists(), "nothing kept on the host");

    let (info, token) = a.create_token("alice", None).await.unwrap();
    assert_eq!(b.list_tokens().await.unwrap().iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["alice"]);
    let browser = b.connect(ServeMode::SelfHosted, Proof::AccessToken(&token)).await.unwrap();
    a.check(ServeMode::SelfHosted, &browser.secret).await.unwrap();
    let other = a.connect(ServeMode::SelfHosted, Proof::AccessToken(&token)).await.unwrap();
    let live = b
        .live_among(ServeMode::SelfHosted, &[browser.secret.clone(), "not-a-session".into(), other.secret.clone()])
        .await
        .unwrap();
    assert_eq!(live.len(), 2, "{live:?}");
    assert!(live.contains(&browser.secret) && live.contains(&other.secret));
    assert!(b.connect(ServeMode::SelfHosted, Proof::AccessToken("kiln_wrong")).await.is_err());

    // Revoked on B: A turns the browser away too.
    b.revoke_token(&info.id).await.unwrap();
    assert!(a.check(ServeMode::SelfHosted, &browser.secret).await.is_err());
    assert!(a.connect(ServeMode::SelfHosted, Proof::AccessToken(&token)).await.is_err());

    // In their own schema: the records' namespace has no access tables.
    let mut conn = PgConnection::connect(&url).await.unwrap();
    let (public, own): (Option<String>, Option<String>) = sqlx::query_as(
        "SELECT to_regclass('public.access_tokens')::text, to_regclass('kiln_access.access_tokens')::text",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(public, None);
    assert_eq!(own.as_deref(), Some("kiln_access.access_tokens"));
}
