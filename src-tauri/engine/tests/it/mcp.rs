//! MCP servers declared once (SPEC §23): `kiln.toml`'s and Settings' are listed by name with
//! no value shown, a user's server is saved sealed and replaces a shared one of its name, a
//! bad one is refused and changes nothing, and the check starts each server as an agent
//! would (the test server in `tests/fixtures/mcp`) and says what it offers or why it failed.

use crate::common::*;
use kiln_engine::types::*;
use kiln_engine::ErrorCode;

fn server(path: &std::path::Path) -> String {
    path.display().to_string()
}

fn save(args: serde_json::Value) -> SaveMcpServerArgs {
    serde_json::from_value(args).unwrap()
}

#[tokio::test]
async fn servers_are_declared_once_checked_and_their_values_never_shown() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(&tmp.path().join("ws"));
    let notes = repo_root().join("tests/fixtures/mcp/notes-server.mjs");
    let mut toml = std::fs::read_to_string(shop.join("kiln.toml")).unwrap();
    toml.push_str(&format!(
        "\n[mcp.notes]\ncommand = \"node\"\nargs = [\"{}\"]\nenv = {{ NOTES_TOKEN = \"shared-value\" }}\n\n[mcp.team]\ncommand = \"node\"\nargs = [\"{}\"]\n",
        server(&notes),
        server(&notes)
    ));
    std::fs::write(shop.join("kiln.toml"), toml).unwrap();
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;

    let shown = engine.get_settings(EmptyArgs {}).await.unwrap().mcp_servers;
    assert_eq!(
        shown.iter().map(|s| (s.name.as_str(), s.source)).collect::<Vec<_>>(),
        [("notes", McpSource::Repository), ("team", McpSource::Repository)]
    );
    assert_eq!(shown[0].env_names, ["NOTES_TOKEN"]);

    // A user's server of the same name replaces the shared one; its value is sealed, never shown.
    let saved = engine
        .save_mcp_server(save(serde_json::json!({
            "name": "team", "command": "node", "args": [server(&notes), "--fail"],
            "env": [{"name": "NOTES_TOKEN", "value": "user-SECRET-7"}],
        })))
        .await
        .unwrap();
    assert!(!serde_json::to_string(&saved).unwrap().contains("user-SECRET-7"));
    let team: Vec<_> = saved.mcp_servers.iter().filter(|s| s.name == "team").collect();
    assert_eq!(team.len(), 2);
    assert!(team[0].overridden && team[0].source == McpSource::Repository);
    assert_eq!((team[1].source, team[1].env_names.clone()), (McpSource::Settings, vec!["NOTES_TOKEN".to_string()]));

    // Bad servers are refused with words naming what is wrong, and nothing changes.
    for (bad, says) in [
        (serde_json::json!({"name": "x y", "command": "node"}), "1 to 40"),
        (serde_json::json!({"name": "both", "command": "node", "url": "http://127.0.0.1:9"}), "both"),
        (serde_json::json!({"name": "web", "url": "file:///etc/passwd"}), "http://"),
        (
            serde_json::json!({"name": "dup", "command": "node", "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]}),
            "twice",
        ),
    ] {
        let refused = engine.save_mcp_server(save(bad)).await.unwrap_err();
        assert_eq!(refused.code, ErrorCode::InvalidInput);
        assert!(refused.message.contains(says), "{}", refused.message);
    }
    assert_eq!(engine.get_settings(EmptyArgs {}).await.unwrap(), saved);

    // The check starts each one as an agent would: the shared one lists its tool, the user's
    // (asked to fail) says why, with what it wrote.
    let checks = engine.check_mcp_servers(EmptyArgs {}).await.unwrap();
    let by = |name: &str| checks.iter().find(|c| c.name == name).unwrap();
    let ok = by("notes");
    assert!(ok.started && ok.error.is_none(), "{ok:?}");
    assert_eq!(
        (ok.tools.clone(), ok.server.as_deref()),
        (vec!["note".to_string(), "hang".to_string()], Some("notes 1.0.0"))
    );
    let failed = by("team");
    assert_eq!(failed.source, McpSource::Settings);
    assert!(!failed.started && failed.tools.is_empty(), "{failed:?}");
    let why = failed.error.as_deref().unwrap_or_default();
    assert!(why.contains("exited") && why.contains("asked to fail"), "{why}");

    // A user's server is removed; a shared one is removed by editing kiln.toml.
    let removed = engine.remove_mcp_server(McpServerNameArgs { name: "team".into() }).await.unwrap();
    assert!(removed.mcp_servers.iter().all(|s| s.source == McpSource::Repository && !s.overridden));
    let shared = engine.remove_mcp_server(McpServerNameArgs { name: "notes".into() }).await.unwrap_err();
    assert_eq!(shared.code, ErrorCode::McpServerNotFound);
    assert!(shared.message.contains("kiln.toml"), "{}", shared.message);
}

#[tokio::test]
async fn a_bad_mcp_server_in_kiln_toml_is_named_when_the_workspace_opens() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(&tmp.path().join("ws"));
    let mut toml = std::fs::read_to_string(shop.join("kiln.toml")).unwrap();
    toml.push_str("\n[mcp.docs]\nurl = \"https://mcp.example.test\"\nenv = { A = \"1\" }\n");
    std::fs::write(shop.join("kiln.toml"), toml).unwrap();
    let engine = engine(&tmp.path().join("config"));
    let refused = engine.open_workspace(OpenWorkspaceArgs { path: shop.display().to_string() }).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::ConfigInvalid);
    assert!(refused.message.contains("mcp.docs"), "{}", refused.message);
}

/// The test server over HTTP, started in `dir` with `token`: its address and the process.
pub(crate) async fn http_notes_server(dir: &std::path::Path, token: &str) -> (String, tokio::process::Child) {
    use tokio::io::AsyncBufReadExt;
    let script = repo_root().join("tests/fixtures/mcp/notes-server.mjs");
    let mut child = tokio::process::Command::new("node")
        .arg(script)
        .arg("--http")
        .env("NOTES_TOKEN", token)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(std::time::Duration::from_secs(20), lines.next_line()).await.unwrap().unwrap();
    let port = line.unwrap_or_default().trim_start_matches("listening on ").to_string();
    (format!("http://127.0.0.1:{port}/mcp"), child)
}

#[tokio::test]
async fn an_address_server_is_reached_with_its_sealed_header() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(&tmp.path().join("ws"));
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    let (url, _server) = http_notes_server(tmp.path(), "http-TOKEN-3").await;

    for (name, token) in [("remote", "http-TOKEN-3"), ("wrong", "not-the-token")] {
        let saved = engine
            .save_mcp_server(save(serde_json::json!({
                "name": name, "url": url,
                "headers": [{"name": "Authorization", "value": format!("Bearer {token}")}],
            })))
            .await
            .unwrap();
        let shown = saved.mcp_servers.iter().find(|s| s.name == name).unwrap();
        assert_eq!(
            (shown.url.as_deref(), shown.header_names.clone()),
            (Some(url.as_str()), vec!["Authorization".to_string()])
        );
        assert!(!serde_json::to_string(&saved).unwrap().contains(token));
    }
    let checks = engine.check_mcp_servers(EmptyArgs {}).await.unwrap();
    let by = |name: &str| checks.iter().find(|c| c.name == name).unwrap();
    let remote = by("remote");
    assert!(remote.started && remote.error.is_none(), "{remote:?}");
    assert_eq!(
        (remote.tools.clone(), remote.server.as_deref()),
        (vec!["note".to_string(), "hang".to_string()], Some("notes 1.0.0"))
    );
    let wrong = by("wrong");
    assert!(!wrong.started, "{wrong:?}");
    assert!(wrong.error.as_deref().unwrap_or_default().contains("HTTP 401"), "{wrong:?}");
}
