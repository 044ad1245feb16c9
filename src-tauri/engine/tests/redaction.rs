//! Secrets stay out of what Kiln stores and shows: a provider answering 401 with a body
//! that echoes the key it was sent (as OpenAI does: "Incorrect API key provided: …")
//! fails the turn, and the key appears nowhere: not in the transcript, not in the events,
//! not in any byte under `.kiln` (kiln.db, its -wal and -shm, the store, the sessions).

mod common;

use std::time::Duration;

use common::*;
use kiln_engine::types::*;
use kiln_model_server::{ModelServer, Step};

/// Not shaped like any known credential (no `sk-`), so only holding the stored key can
/// hide its bare echo; the `Bearer` echo is hidden by shape as well.
const KEY: &str = "kiln-test-provider-key-7f3a9c2e41d84b0f93";

#[tokio::test]
async fn a_provider_echoing_the_key_leaves_it_nowhere() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());
    let toml = shop.join("kiln.toml");
    let text = std::fs::read_to_string(&toml).unwrap().replace("setup = \"npm ci --offline --no-audit --no-fund\"", "setup = \"\"");
    std::fs::write(&toml, text.replace("tests = \"npm test\"", "dependencies = \"\"\ntests = \"\"")).unwrap();
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
        .send_message(SendMessageArgs { session_id: s.id.clone(), text: "Add a wishlist endpoint".into(), role: None, module: None, driver: None, model: None })
        .await
        .unwrap();
    let settled = wait_settled(&engine, &s.id, Duration::from_secs(30)).await;
    assert_eq!(settled.state, SessionState::Blocked, "the 401 fails the turn");
    // The provider was asked with the key, and answered with it.
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].header("authorization"), Some(format!("Bearer {KEY}").as_str()));

    // The transcript says why the turn failed, without the key.
    let transcript = engine.get_transcript(GetTranscriptArgs { session_id: s.id.clone(), after: None }).await.unwrap();
    let failure = transcript.iter().find(|e| e.text.contains("Incorrect API key provided")).expect("the failure is in the transcript");
    assert!(failure.text.contains("Bearer [redacted]") && failure.text.contains("(key [redacted])"), "{}", failure.text);
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
    let stored = files(&shop.join(".kiln"), &[]);
    for name in ["kiln.db", "kiln.db-wal"] {
        assert!(stored.contains_key(name), "{name} is there to scan: {:?}", stored.keys().collect::<Vec<_>>());
    }
    for (name, bytes) in &stored {
        assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()), "the key is in .kiln/{name}");
    }
}
