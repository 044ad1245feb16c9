//! The ACP agents in Settings and the registry: every preset listed with its command line
//! and install hint, found or missing with its version, a path set for one, the custom
//! command line with its sealed environment, bad input refused with nothing changed, a
//! missing agent refused before a message is recorded, and none of it on a self-hosted
//! server.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::common::*;
use kiln_engine::testing::drivers::acp_presets;
use kiln_engine::types::*;
use kiln_engine::{Engine, EngineOptions, ErrorCode};

fn settings(args: serde_json::Value) -> UpdateSettingsArgs {
    serde_json::from_value(args).unwrap()
}

/// An executable that answers `--version` with `version`.
fn fake_agent(dir: &Path, name: &str, version: &str) -> PathBuf {
    let bin = dir.join(name);
    std::fs::write(&bin, format!("#!/bin/sh\n[ \"$1\" = --version ] && echo '{version}'\n")).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

fn status<'a>(view: &'a SettingsView, id: &str) -> &'a DriverStatus {
    view.drivers.iter().find(|d| d.id == id).unwrap_or_else(|| panic!("{id} in {:?}", view.drivers))
}

#[tokio::test]
async fn settings_list_every_acp_agent_found_or_missing_with_its_version_and_install_hint() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(&tmp.path().join("ws"));
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;

    let view = engine.get_settings(EmptyArgs {}).await.unwrap();
    let ids: Vec<&str> = view.acp_agents.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["acp:gemini", "acp:opencode", "acp:goose", "acp:claude", "acp:codex", "acp:custom"]);
    let gemini = &view.acp_agents[0];
    assert_eq!((gemini.name.as_str(), gemini.command.as_str()), ("Gemini CLI (ACP)", "gemini --acp"));
    assert_eq!(gemini.install_hint, "npm install -g @google/gemini-cli");
    assert_eq!(view.acp_agents[1].command, "opencode acp");
    assert_eq!(view.acp_agents[3].command, "claude-agent-acp");
    // Each is in the drivers list too, by its name, so the pickers can offer it.
    for agent in &view.acp_agents {
        assert_eq!(status(&view, &agent.id).name.as_deref(), Some(agent.name.as_str()));
    }
    let custom = status(&view, "acp:custom");
    assert!(!custom.available && custom.detail.contains("set it in Settings"), "{custom:?}");

    // A path set for a preset: found there, with what its `--version` says.
    let bins = tempfile::tempdir().unwrap();
    let gemini_bin = fake_agent(bins.path(), "gemini", "0.61.0");
    let not_executable = bins.path().join("goose");
    std::fs::write(&not_executable, "not a program").unwrap();
    let saved = engine
        .update_settings(settings(serde_json::json!({ "acpPaths": {
            "acp:gemini": gemini_bin.display().to_string(),
            "acp:goose": not_executable.display().to_string(),
        } })))
        .await
        .unwrap();
    let gemini = status(&saved, "acp:gemini");
    assert!(gemini.available, "{gemini:?}");
    assert_eq!(gemini.detail, gemini_bin.display().to_string());
    assert_eq!(gemini.version.as_deref(), Some("0.61.0"));
    assert_eq!(saved.acp_agents[0].path.as_deref(), Some(gemini_bin.to_str().unwrap()));
    let goose = status(&saved, "acp:goose");
    assert!(!goose.available && goose.detail.contains("not an executable file"), "{goose:?}");

    // The preset's command line as the registry builds it: the binary set, the preset's flags.
    let ws = engine.workspace().unwrap();
    let command = acp_presets::command(&ws, "acp:gemini").await.unwrap();
    assert_eq!((command.binary, command.args), (gemini_bin.clone(), vec!["--acp".to_string()]));
    let driver = kiln_engine::testing::drivers::registry::resolve(&ws, Some("acp:gemini")).await.unwrap();
    assert_eq!(driver.id(), "acp:gemini");

    // It can be the default; clearing its path (the only entry named) leaves the other's.
    engine.update_settings(settings(serde_json::json!({ "defaultDriver": "acp:gemini" }))).await.unwrap();
    let cleared =
        engine.update_settings(settings(serde_json::json!({ "acpPaths": { "acp:gemini": "" } }))).await.unwrap();
    assert_eq!(cleared.default_driver, "acp:gemini");
    assert_eq!(cleared.acp_agents[0].path, None);
    assert_eq!(cleared.acp_agents[2].path.as_deref(), Some(not_executable.to_str().unwrap()));
}

#[tokio::test]
async fn a_missing_acp_agent_is_refused_with_its_install_hint_before_anything_is_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(&tmp.path().join("ws"));
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    // A path that is not there stands for a preset that is not installed, whatever this
    // machine has on PATH.
    let missing = tmp.path().join("no-such-opencode");
    engine
        .update_settings(settings(serde_json::json!({ "acpPaths": { "acp:opencode": missing.display().to_string() } })))
        .await
        .unwrap();
    let ws = engine.workspace().unwrap();
    let err = kiln_engine::testing::drivers::registry::resolve(&ws, Some("acp:opencode")).await.err().unwrap();
    assert_eq!(err.code, ErrorCode::DriverNotFound);
    assert!(err.message.contains("opencode"), "{}", err.message);
    let err = kiln_engine::testing::drivers::registry::resolve(&ws, Some("acp:nothing")).await.err().unwrap();
    assert_eq!(err.code, ErrorCode::InvalidInput);

    // Not on PATH at all: the error says how to install it.
    let err = kiln_engine::testing::drivers::acp_presets::find_binary("codex-acp", None).unwrap_err();
    assert!(err.message.contains("npm install -g @agentclientprotocol/codex-acp"), "{}", err.message);

    let session = create(&engine, "In @shop/cart add a discount field").await;
    let transcript = || {
        engine.get_transcript(GetTranscriptArgs {
            session_id: session.id.clone(),
            after: None,
            before: None,
            last: None,
        })
    };
    let before = transcript().await.unwrap();
    let sent: SendMessageArgs =
        serde_json::from_value(serde_json::json!({ "sessionId": session.id, "text": "go", "driver": "acp:opencode" }))
            .unwrap();
    let err = engine.send_message(sent).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::DriverNotFound);
    assert_eq!(transcript().await.unwrap(), before, "nothing recorded");
}

#[tokio::test]
async fn the_custom_acp_command_is_split_without_a_shell_and_its_environment_sealed() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(&tmp.path().join("ws"));
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    let bins = tempfile::tempdir().unwrap();
    let agent = fake_agent(bins.path(), "my agent", "my-agent 1.2.3");
    let line = format!("'{}' acp --name \"two words\" ';' '$HOME'", agent.display());
    let secret = "sk-custom-agent-SECRET-0123456789";

    let saved = engine
        .update_settings(settings(serde_json::json!({
            "acpCustomCommand": line,
            "acpCustomEnv": format!("# the provider\nMY_API_KEY={secret}\nMY_MODE=fast\n"),
        })))
        .await
        .unwrap();
    let custom = saved.acp_agents.iter().find(|a| a.id == "acp:custom").unwrap();
    assert_eq!(custom.command, line);
    assert_eq!(saved.acp_custom_env_names, ["MY_API_KEY", "MY_MODE"]);
    assert!(!serde_json::to_string(&saved).unwrap().contains(secret), "the values never come back");
    let found = status(&saved, "acp:custom");
    assert!(found.available, "{found:?}");
    assert_eq!(found.version.as_deref(), Some("my-agent 1.2.3"));

    let ws = engine.workspace().unwrap();
    let command = acp_presets::command(&ws, "acp:custom").await.unwrap();
    assert_eq!(command.binary, agent);
    assert_eq!(command.args, ["acp", "--name", "two words", ";", "$HOME"]);
    assert_eq!(
        command.env,
        [("MY_API_KEY".to_string(), secret.to_string()), ("MY_MODE".to_string(), "fast".to_string())]
    );
    // Stored sealed: the database holds no value in the clear.
    let db = std::fs::read(shop.join(".kiln/kiln.db")).unwrap();
    assert!(!String::from_utf8_lossy(&db).contains(secret));

    // Bad input is refused in words, and nothing changes.
    for (args, words) in [
        (serde_json::json!({ "acpCustomCommand": "agent 'unclosed" }), "unclosed quote"),
        (serde_json::json!({ "acpCustomCommand": "./agent acp" }), "absolute path"),
        (serde_json::json!({ "acpCustomCommand": "agent\nrm -rf /" }), "one line"),
        (serde_json::json!({ "acpCustomEnv": "GOOD=1\nnot a line" }), "line 2"),
        (serde_json::json!({ "acpCustomEnv": "BAD-NAME=1" }), "not a variable name"),
        (serde_json::json!({ "acpPaths": { "acp:gemini": "gemini" } }), "absolute path"),
        (serde_json::json!({ "acpPaths": { "claude": "/usr/bin/claude" } }), "no ACP preset"),
        (serde_json::json!({ "defaultDriver": "acp:nothing" }), "no driver"),
        // Checked before the valid part of the same request is written.
        (serde_json::json!({ "acpCustomCommand": "", "acpCustomEnv": "=x" }), "line 1"),
    ] {
        let err = engine.update_settings(settings(args.clone())).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput, "{args}");
        assert!(err.message.contains(words), "{args}: {}", err.message);
    }
    assert_eq!(engine.get_settings(EmptyArgs {}).await.unwrap(), saved, "a refused request changes nothing");

    // "" clears both.
    let cleared = engine
        .update_settings(settings(serde_json::json!({ "acpCustomCommand": "", "acpCustomEnv": "" })))
        .await
        .unwrap();
    assert!(cleared.acp_custom_env_names.is_empty());
    assert!(!status(&cleared, "acp:custom").available);
    let err = acp_presets::command(&ws, "acp:custom").await.expect_err("no command line");
    assert_eq!(err.code, ErrorCode::DriverNotFound);
}

#[tokio::test]
async fn a_self_hosted_server_neither_offers_nor_configures_acp_agents() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(&tmp.path().join("ws"));
    let engine = Arc::new(Engine::new(EngineOptions {
        mode: ServeMode::SelfHosted,
        ..kiln_test_support::options(&tmp.path().join("config"), Transport::Serve)
    }));
    open(&engine, &shop).await;
    let view = engine.get_settings(EmptyArgs {}).await.unwrap();
    assert!(view.acp_agents.is_empty() && view.acp_custom_env_names.is_empty());
    assert!(view.drivers.iter().all(|d| !d.id.starts_with("acp:")), "{:?}", view.drivers);
    for args in [
        serde_json::json!({ "defaultDriver": "acp:gemini" }),
        serde_json::json!({ "acpCustomCommand": "agent acp" }),
        serde_json::json!({ "acpCustomEnv": "A=1" }),
        serde_json::json!({ "acpPaths": { "acp:gemini": "/usr/bin/gemini" } }),
    ] {
        let err = engine.update_settings(settings(args.clone())).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::NotAllowedInMode, "{args}");
    }
    let ws = engine.workspace().unwrap();
    let err = kiln_engine::testing::drivers::registry::resolve(&ws, Some("acp:claude")).await.err().unwrap();
    assert_eq!(err.code, ErrorCode::NotAllowedInMode);
    assert_eq!(engine.get_settings(EmptyArgs {}).await.unwrap(), view);
}
