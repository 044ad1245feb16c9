//! Settings that hold secrets and the server's mode: a key or token goes only to the
//! address it was given for, only fingerprints come back, and a self-hosted server
//! neither offers nor configures the local agent CLIs.

use std::sync::Arc;

use crate::common::*;
use kiln_engine::types::*;
use kiln_engine::{Engine, EngineOptions, ErrorCode};

fn engine_in(config: &std::path::Path, mode: ServeMode) -> Arc<Engine> {
    Arc::new(Engine::new(EngineOptions { mode, ..kiln_test_support::options(config, Transport::Serve) }))
}

fn settings(args: serde_json::Value) -> UpdateSettingsArgs {
    serde_json::from_value(args).unwrap()
}

#[tokio::test]
async fn a_bridge_token_is_bound_to_its_address() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(&tmp.path().join("ws"));
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;

    let saved = engine
        .update_settings(settings(
            serde_json::json!({ "bridgeUrl": "http://127.0.0.1:4310", "bridgeToken": "app-SECRET-1" }),
        ))
        .await
        .unwrap();
    assert_eq!(saved.bridge_url.as_deref(), Some("http://127.0.0.1:4310"));
    assert_eq!(
        saved.bridge_token_fingerprint.as_deref(),
        Some(kiln_engine::testing::secrets::fingerprint("app-SECRET-1").as_str())
    );
    assert!(!serde_json::to_string(&saved).unwrap().contains("app-SECRET-1"));

    // A new address without the token is refused, and nothing changes.
    let refused =
        engine.update_settings(settings(serde_json::json!({ "bridgeUrl": "https://evil.example" }))).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::InvalidInput);
    assert!(refused.message.contains("never sent to another host"), "{}", refused.message);
    let now = engine.get_settings(EmptyArgs {}).await.unwrap();
    assert_eq!(now, saved);

    // With its token the address changes, and the old token is gone.
    let moved = engine
        .update_settings(settings(
            serde_json::json!({ "bridgeUrl": "https://app.example", "bridgeToken": "app-SECRET-2" }),
        ))
        .await
        .unwrap();
    assert_eq!(
        moved.bridge_token_fingerprint.as_deref(),
        Some(kiln_engine::testing::secrets::fingerprint("app-SECRET-2").as_str())
    );

    // A token with no address to bind it to is refused.
    let empty = tempfile::tempdir().unwrap();
    let plain = empty.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::write(plain.join("package.json"), r#"{"name":"plain"}"#).unwrap();
    let other = engine_in(&empty.path().join("config"), ServeMode::Loopback);
    open(&other, &plain).await;
    let err = other.update_settings(settings(serde_json::json!({ "bridgeToken": "t" }))).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
}

#[tokio::test]
async fn a_key_given_for_one_endpoint_is_not_used_for_another() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(&tmp.path().join("ws"));
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    engine
        .update_settings(settings(serde_json::json!({
            "openaiBaseUrl": "http://127.0.0.1:9/v1", "openaiModel": "m", "openaiKey": "sk-SECRET"
        })))
        .await
        .unwrap();
    let err = engine
        .update_settings(settings(serde_json::json!({ "openaiBaseUrl": "http://127.0.0.1:10/v1" })))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    // The key on disk names its endpoint: moved under another one in the database, it opens to nothing.
    let ws = engine.workspace().unwrap();
    kiln_engine::testing::store::settings::set_setting(
        &ws.pool,
        "driver.openai.base_url",
        Some("http://127.0.0.1:10/v1"),
    )
    .await
    .unwrap();
    assert_eq!(kiln_engine::testing::settings::openai_key(&ws).await.unwrap(), None);
    assert_eq!(engine.get_settings(EmptyArgs {}).await.unwrap().openai_key_fingerprint, None);
}

#[tokio::test]
async fn a_tampered_secret_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(&tmp.path().join("ws"));
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    engine
        .update_settings(settings(
            serde_json::json!({ "bridgeUrl": "http://127.0.0.1:4310", "bridgeToken": "app-SECRET" }),
        ))
        .await
        .unwrap();
    let ws = engine.workspace().unwrap();
    let sealed = kiln_engine::testing::store::settings::get_setting(&ws.pool, "bridge.token").await.unwrap().unwrap();
    let mut tampered = sealed.clone().into_bytes();
    let last = tampered.len() - 2;
    tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
    kiln_engine::testing::store::settings::set_setting(
        &ws.pool,
        "bridge.token",
        Some(std::str::from_utf8(&tampered).unwrap()),
    )
    .await
    .unwrap();
    let err = engine.get_settings(EmptyArgs {}).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::SecretUnreadable);
    assert!(err.message.contains("altered"), "{}", err.message);
    // Giving the token again repairs it.
    let repaired = engine.update_settings(settings(serde_json::json!({ "bridgeToken": "app-SECRET" }))).await.unwrap();
    assert!(repaired.bridge_token_fingerprint.is_some());
}

#[tokio::test]
async fn self_hosted_offers_bring_your_own_key_drivers_only() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(&tmp.path().join("ws"));
    let engine = engine_in(&tmp.path().join("config"), ServeMode::SelfHosted);
    open(&engine, &shop).await;
    assert_eq!(engine.get_state(EmptyArgs {}).await.unwrap().mode, ServeMode::SelfHosted);

    let view = engine.get_settings(EmptyArgs {}).await.unwrap();
    assert_eq!(view.drivers.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(), ["openai-compatible"]);
    assert_eq!(view.default_driver, "openai-compatible");
    for args in [
        serde_json::json!({ "defaultDriver": "claude" }),
        serde_json::json!({ "defaultDriver": "codex" }),
        serde_json::json!({ "claudePath": "/usr/bin/claude" }),
        serde_json::json!({ "codexPath": "" }),
    ] {
        let err = engine.update_settings(settings(args.clone())).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::NotAllowedInMode, "{args}");
    }
    assert_eq!(engine.get_settings(EmptyArgs {}).await.unwrap(), view);

    // A turn on a local driver is refused before anything is recorded.
    let session = create(&engine, "In @shop/cart add a discount field").await;
    let before = engine
        .get_transcript(GetTranscriptArgs { session_id: session.id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    let sent: SendMessageArgs =
        serde_json::from_value(serde_json::json!({ "sessionId": session.id, "text": "go", "driver": "claude" }))
            .unwrap();
    let err = engine.send_message(sent).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotAllowedInMode);
    assert_eq!(
        engine
            .get_transcript(GetTranscriptArgs { session_id: session.id.clone(), after: None, before: None, last: None })
            .await
            .unwrap(),
        before
    );

    // It serves only the workspace it was started with, and creates nothing elsewhere.
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let err = engine.open_workspace(OpenWorkspaceArgs { path: elsewhere.display().to_string() }).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotAllowedInMode);
    assert!(!elsewhere.join(".kiln").exists());
    engine.open_workspace(OpenWorkspaceArgs { path: shop.display().to_string() }).await.unwrap();
    assert!(engine.get_state(EmptyArgs {}).await.unwrap().recent_workspaces.is_empty());
}

/// The command policy: "commands in the working copy" unless set to "no commands", a bad
/// value refused, and the view saying how commands are confined here.
#[tokio::test]
async fn the_command_policy_is_set_checked_and_reaches_the_drivers() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(&tmp.path().join("ws"));
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;

    let view = engine.get_settings(EmptyArgs {}).await.unwrap();
    assert_eq!(view.command_policy, CommandPolicy::Workdir);
    let support = kiln_engine::testing::sandbox::support();
    assert_eq!(view.confinement.available, support.available);
    assert_eq!(view.confinement.detail, support.detail);
    assert_eq!(view.confinement.mechanism, if support.available { "landlock" } else { "none" });
    let json = serde_json::to_value(&view).unwrap();
    assert_eq!(json["commandPolicy"], "workdir");
    assert!(json["confinement"]["detail"].is_string());

    for bad in ["all", "WORKDIR", "none; rm -rf /", "1"] {
        let err = engine.update_settings(settings(serde_json::json!({ "commandPolicy": bad }))).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput, "{bad}");
        assert!(err.message.contains("`workdir`") && err.message.contains("`none`"), "{}", err.message);
    }
    assert_eq!(engine.get_settings(EmptyArgs {}).await.unwrap(), view, "a refused value changes nothing");

    let saved = engine.update_settings(settings(serde_json::json!({ "commandPolicy": "none" }))).await.unwrap();
    assert_eq!(saved.command_policy, CommandPolicy::None);
    assert_eq!(engine.get_settings(EmptyArgs {}).await.unwrap().command_policy, CommandPolicy::None);

    // The policy reaches the driver `registry::resolve` builds: a turn of Kiln's own tool
    // loop is offered no run_command, and one it calls anyway is refused in words.
    let server = kiln_model_server::ModelServer::start(vec![
        kiln_model_server::Step::tool("run_command", serde_json::json!({ "command": "echo ran > ran.txt" })),
        kiln_model_server::Step::text("done"),
    ])
    .await;
    engine
        .update_settings(settings(serde_json::json!({ "openaiBaseUrl": server.openai_base_url(), "openaiModel": "m" })))
        .await
        .unwrap();
    let ws = engine.workspace().unwrap();
    let driver = kiln_engine::testing::drivers::registry::resolve(&ws, Some("openai-compatible")).await.unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let request = kiln_engine::testing::drivers::TurnRequest {
        workdir: workdir.path().to_path_buf(),
        session_dir: workdir.path().with_extension("session"),
        prompt: "Run it.".into(),
        instructions: String::new(),
        resume_id: None,
        model: None,
        read_only: false,
        environment: Default::default(),
        mcp: Vec::new(),
    };
    let (events, mut received) = tokio::sync::mpsc::unbounded_channel();
    driver.run(request, kiln_engine::testing::drivers::TurnSink::new(events, Box::new(|_| {}))).await.unwrap();
    let mut outputs = Vec::new();
    while let Ok(event) = received.try_recv() {
        if let kiln_engine::testing::drivers::events::DriverEvent::ToolResult { output, .. } = event {
            outputs.push(output);
        }
    }
    assert_eq!(outputs, [kiln_engine::testing::drivers::tools::NO_COMMANDS]);
    assert!(!workdir.path().join("ran.txt").exists());
    let tools = server.requests()[0].body["tools"].to_string();
    assert!(tools.contains("write_file") && !tools.contains("run_command"), "{tools}");

    // Back to commands in the working copy: the same driver offers run_command again.
    engine.update_settings(settings(serde_json::json!({ "commandPolicy": "workdir" }))).await.unwrap();
    assert_eq!(engine.get_settings(EmptyArgs {}).await.unwrap().command_policy, CommandPolicy::Workdir);
}
