//! Secrets stay out of what Kiln stores and shows: a provider answering 401 with a body
//! that echoes the key it was sent (as OpenAI does: "Incorrect API key provided: …")
//! fails the turn, and the key appears nowhere: not in the transcript, not in the events,
//! not in any byte under `.kiln` (kiln.db, its -wal and -shm, the store, the sessions).
//! A gate that prints the key is stored and shown redacted too.

use std::time::Duration;

use crate::common::*;
use kiln_engine::types::*;
use kiln_model_server::{ModelServer, Step};

/// Not shaped like any known credential (no `sk-`), so only holding the stored key can
/// hide its bare echo; the `Bearer` echo is hidden by shape as well.
const KEY: &str = "kiln-test-provider-key-7f3a9c2e41d84b0f93";

/// A copy of the shop with no setup, whose `tests` gate runs `tests` and no other gate runs.
fn shop(tmp: &std::path::Path, tests: &str) -> std::path::PathBuf {
    let shop = shop_copy(tmp);
    let toml = shop.join("kiln.toml");
    let text = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("setup = \"npm ci --offline --no-audit --no-fund\"", "setup = \"\"");
    let text = text
        .replace("tests = \"npm test\"", &format!("dependencies = \"\"\ntests = {tests:?}"))
        .replace("typecheck = \"node ../../scripts/check.mjs syntax\"", "typecheck = \"\"")
        .replace("format = \"node ../../scripts/check.mjs format\"", "format = \"\"");
    std::fs::write(&toml, text).unwrap();
    shop
}

/// Asserts no file under `shop/.kiln` holds `KEY`, the database and its WAL included.
fn nowhere_under_kiln(shop: &std::path::Path) {
    let stored = files(&shop.join(".kiln"), &[]);
    for name in ["kiln.db", "kiln.db-wal"] {
        assert!(stored.contains_key(name), "{name} is there to scan: {:?}", stored.keys().collect::<Vec<_>>());
    }
    for (name, bytes) in &stored {
        assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()), "the key is in .kiln/{name}");
    }
}

#[tokio::test]
async fn a_provider_echoing_the_key_leaves_it_nowhere() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop(tmp.path(), "");
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    let echo = format!("Incorrect API key provided: Bearer {KEY}. You can find your API key at https://platform.openai.com/account/api-keys (key {KEY}).");
    let server = ModelServer::start(vec![Step::error(401, echo)]).await;
    engine
        .update_settings(UpdateSettingsArgs {
            default_driver: Some("openai-compatible".into()),
            openai_base_url: Some(server.openai_base_url()),
            openai_model: Some("scripted".into()),
            openai_key: Some(KEY.into()),
            planner_agent: Some(false),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut events = engine.subscribe(None).receiver;

    let s = create(&engine, "Add a wishlist to @shop/catalog").await;
    engine
        .send_message(SendMessageArgs {
            session_id: s.id.clone(),
            text: "Add a wishlist endpoint".into(),
            role: None,
            module: None,
            driver: None,
            model: None,
            context: None,
        })
        .await
        .unwrap();
    let settled = wait_settled(&engine, &s.id, Duration::from_secs(30)).await;
    assert_eq!(settled.state, SessionState::Blocked, "the 401 fails the turn");
    // The provider was asked with the key, and answered with it.
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].header("authorization"), Some(format!("Bearer {KEY}").as_str()));

    // The transcript says why the turn failed, without the key.
    let transcript = engine
        .get_transcript(GetTranscriptArgs { session_id: s.id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    let failure = transcript
        .iter()
        .find(|e| e.text.contains("Incorrect API key provided"))
        .expect("the failure is in the transcript");
    assert!(
        failure.text.contains("Bearer [redacted]") && failure.text.contains("(key [redacted])"),
        "{}",
        failure.text
    );
    for entry in &transcript {
        assert!(!entry.text.contains(KEY), "the key is in a transcript entry: {}", entry.text);
    }

    // Every event any view received.
    let mut received = Vec::new();
    while let Ok(event) = events.try_recv() {
        received.push(serde_json::to_string(&event).unwrap());
    }
    assert!(received.iter().any(|e| e.contains("Incorrect API key provided")), "the failure reached the views");
    for event in &received {
        assert!(!event.contains(KEY), "the key is in an event: {event}");
    }

    // Every byte Kiln wrote under .kiln, the database's -wal and -shm included.
    nowhere_under_kiln(&shop);
}

#[tokio::test]
async fn a_gate_printing_the_key_is_stored_and_shown_redacted() {
    let tmp = tempfile::tempdir().unwrap();
    // The command prints the key without holding it: it is the output that must not leak.
    let (front, back) = KEY.split_at(12);
    let shop = shop(tmp.path(), &format!("printf 'leaked %s%s' '{front}' '{back}'"));
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    let settings = UpdateSettingsArgs {
        openai_base_url: Some("http://127.0.0.1:9/v1".into()),
        openai_model: Some("m".into()),
        openai_key: Some(KEY.into()),
        ..Default::default()
    };
    engine.update_settings(settings).await.unwrap();
    let mut events = engine.subscribe(None).receiver;

    let s = create(&engine, "Check @shop/catalog").await;
    let results = engine.check_modules(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    let tests = results.iter().find(|r| r.gate == "tests").expect("the tests gate ran");
    assert!(tests.output_head.contains("leaked [redacted]"), "{tests:?}");
    let shown =
        serde_json::to_string(&engine.get_gates(SessionIdArgs { session_id: s.id.clone() }).await.unwrap()).unwrap();
    assert!(!shown.contains(KEY), "{shown}");
    while let Ok(event) = events.try_recv() {
        let event = serde_json::to_string(&event).unwrap();
        assert!(!event.contains(KEY), "the key is in an event: {event}");
    }
    nowhere_under_kiln(&shop);
}
