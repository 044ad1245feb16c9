//! The desktop's IPC is granted to the main window only: every app command needs a permission
//! (declared by src-tauri/build.rs from the engine's operation table), the one capability grants
//! exactly those (through the generated `api` set), the folder picker, http(s) links, menu events
//! and the updater to the window labelled `main`, and no remote origin gets any IPC.
//! Checked on the files and through Tauri's mock runtime with the real context and capabilities.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use kiln_app::commands::COMMANDS;
use kiln_engine::types::Transport;
use kiln_engine::Engine;
use serde_json::{json, Value};
use tauri::ipc::Origin;
use tauri::test::{get_ipc_response, mock_builder, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::{Manager, WebviewWindow};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The app's context, generated once: it embeds the UI, and every test reads the same ACL.
fn context() -> tauri::Context<MockRuntime> {
    tauri::generate_context!("tauri.conf.json")
}

fn capability_files() -> Vec<(String, Value)> {
    let dir = Path::new(ROOT).join("src-tauri/capabilities");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            // tauri-build also accepts TOML; Kiln keeps its capabilities in JSON, so anything else is a surprise.
            let value: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
            (path.file_name().unwrap().to_string_lossy().into_owned(), value)
        })
        .collect()
}

/// The permission tauri-build generates to allow a command.
fn allow(command: &str) -> String {
    format!("allow-{}", command.replace('_', "-"))
}

/// The set build.rs generates: read as tauri-build reads it, it allows every command the handler
/// serves, and nothing else.
#[test]
fn the_api_permission_set_allows_exactly_the_handlers_commands() {
    let text = std::fs::read_to_string(Path::new(ROOT).join("permissions/api.toml")).unwrap();
    let file: toml::Value = toml::from_str(&text).unwrap();
    let sets = file["set"].as_array().unwrap();
    assert_eq!(sets.len(), 1, "one permission set");
    assert_eq!(sets[0]["identifier"].as_str(), Some("api"));
    let listed: Vec<String> =
        sets[0]["permissions"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_string()).collect();
    let unique: BTreeSet<&str> = listed.iter().map(String::as_str).collect();
    assert_eq!(unique.len(), listed.len(), "the api set names a permission twice");
    let served: BTreeSet<String> = COMMANDS.iter().map(|c| allow(c)).collect();
    assert_eq!(unique, served.iter().map(String::as_str).collect::<BTreeSet<_>>());
}

/// The plugin permissions main.json grants besides the app's commands, and why.
const PLUGIN_PERMISSIONS: &[&str] = &[
    "dialog:allow-open",                  // the folder picker (Open Workspace…)
    "shell:allow-open",                   // links in the system browser, http(s) only (plugins.shell.open)
    "core:event:allow-listen",            // the menu's `menu` events
    "core:event:allow-unlisten",          // ... and letting go of them
    "updater:allow-check",                // Check for Updates…
    "updater:allow-download-and-install", // the verified download and its install
    "process:allow-restart",              // relaunching into the installed update
];

/// The IPC commands those permissions allow.
const PLUGIN_COMMANDS: &[&str] = &[
    "plugin:dialog|open",
    "plugin:shell|open",
    "plugin:event|listen",
    "plugin:event|unlisten",
    "plugin:updater|check",
    "plugin:updater|download_and_install",
    "plugin:process|restart",
];

#[test]
fn the_main_capability_grants_the_commands_and_the_folder_picker_to_the_main_window_only() {
    let files = capability_files();
    assert_eq!(files.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>(), ["main.json"], "one capability file");
    let main = &files[0].1;
    assert_eq!(main["windows"], json!(["main"]));
    assert!(main.get("webviews").is_none(), "webview labels would widen the grant: {main}");
    assert_eq!(main["local"], json!(true));
    let granted: BTreeSet<String> = main["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().expect("plain permission names, no scopes").to_string())
        .collect();
    let mut expected: BTreeSet<String> = BTreeSet::from(["api".to_string()]);
    expected.extend(PLUGIN_PERMISSIONS.iter().map(|p| p.to_string()));
    assert_eq!(granted, expected);
}

#[test]
fn no_capability_admits_a_remote_origin() {
    for (name, capability) in capability_files() {
        assert!(capability.get("remote").is_none(), "{name} declares a remote section");
        assert_ne!(capability.get("local"), Some(&json!(false)), "{name} is not for local pages");
    }
    // Capabilities can also be written inline in the config: there are none.
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(Path::new(ROOT).join("tauri.conf.json")).unwrap()).unwrap();
    let inline = &config["app"]["security"]["capabilities"];
    assert!(inline.is_null() || inline == &json!([]), "inline capabilities in tauri.conf.json: {inline}");
}

/// What the compiled ACL answers, without running anything: the main window on a local page
/// may call every app command and the folder picker; another window, or a remote page in the
/// main window, nothing; and nothing from core is granted to anyone.
#[test]
fn the_resolved_acl_allows_the_commands_for_the_main_window_on_local_pages_only() {
    let mut ctx = context();
    let authority = ctx.runtime_authority_mut();
    let remote = Origin::Remote { url: "https://evil.example/".parse().unwrap() };
    // Where a later preview iframe will live: not the app's own origin, so no IPC either.
    let preview = Origin::Remote { url: "http://127.0.0.1:5173/".parse().unwrap() };
    let granted: Vec<String> =
        COMMANDS.iter().map(|c| c.to_string()).chain(PLUGIN_COMMANDS.iter().map(|c| c.to_string())).collect();
    for command in &granted {
        assert!(
            authority.resolve_access(command, "main", "main", &Origin::Local).is_some(),
            "main may not call {command}"
        );
        assert!(
            authority.resolve_access(command, "other", "other", &Origin::Local).is_none(),
            "another window may call {command}"
        );
        assert!(
            authority.resolve_access(command, "main", "other", &Origin::Local).is_some(),
            "the grant follows the window label"
        );
        assert!(
            authority.resolve_access(command, "main", "main", &remote).is_none(),
            "a remote page may call {command}"
        );
        assert!(
            authority.resolve_access(command, "main", "main", &preview).is_none(),
            "a loopback preview may call {command}"
        );
    }
    for command in [
        "plugin:app|version",
        "plugin:event|emit",
        "plugin:event|emit_to",
        "plugin:shell|execute",
        "plugin:shell|spawn",
        "plugin:shell|kill",
        "plugin:process|exit",
        "plugin:updater|download",
        "plugin:updater|install",
        "plugin:window|close",
        "plugin:webview|create_webview_window",
        "plugin:path|resolve_directory",
        "plugin:dialog|save",
        "plugin:dialog|message",
        // The app sends its notifications from Rust (background.rs): the page gets none of them.
        "plugin:notification|notify",
        "plugin:notification|request_permission",
        "plugin:notification|is_permission_granted",
        "no_such_command",
    ] {
        assert!(authority.resolve_access(command, "main", "main", &Origin::Local).is_none(), "main may call {command}");
    }
}

fn engine(config: &Path) -> Arc<Engine> {
    kiln_test_support::engine(config, Transport::Desktop)
}

/// Sends `command` from `webview` as a page at `url` would: `Ok(result)` or Tauri's refusal.
fn invoke(webview: &WebviewWindow<MockRuntime>, url: &str, command: &str, body: Value) -> Result<Value, Value> {
    get_ipc_response(
        webview,
        InvokeRequest {
            cmd: command.into(),
            callback: tauri::ipc::CallbackFn(0),
            error: tauri::ipc::CallbackFn(1),
            url: url.parse().unwrap(),
            body: tauri::ipc::InvokeBody::Json(body),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|body| body.deserialize::<Value>().unwrap())
}

/// Tauri's ACL refusal (a string naming the command), as opposed to an engine error object.
fn assert_refused(answer: Result<Value, Value>, what: &str) {
    let error = answer.expect_err(what);
    let message = error.as_str().unwrap_or_else(|| panic!("{what}: not an ACL refusal: {error}"));
    assert!(message.contains("not allowed"), "{what}: {message}");
}

/// The real app on the mock runtime: the main window may call app commands; a second
/// window and a remote page loaded in the main window are refused by Tauri before the engine
/// sees the call.
#[test]
fn only_the_main_window_on_its_own_pages_may_invoke_app_commands() {
    let tmp = tempfile::tempdir().unwrap();
    let app = mock_builder()
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_shell::init())
        .manage(engine(tmp.path()))
        .invoke_handler(kiln_app::commands::handler::<MockRuntime>())
        .build(context())
        .expect("the app builds on the mock runtime");
    let main = match app.get_webview_window("main") {
        Some(w) => w,
        None => tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap(),
    };
    let other = tauri::WebviewWindowBuilder::new(&app, "other", Default::default()).build().unwrap();
    let local = "tauri://localhost";

    let state = invoke(&main, local, "get_state", json!({ "args": {} })).expect("main calls get_state");
    assert!(state.is_object(), "{state}");
    // A granted command still reaches the engine, which answers with its own error object
    // (no workspace is open, which every operation on one says before reading its arguments).
    let error = invoke(&main, local, "get_session", json!({ "args": { "sessionId": "../x" } })).unwrap_err();
    assert_eq!(error["code"], "WORKSPACE_NOT_OPEN");

    assert_refused(invoke(&other, local, "get_state", json!({ "args": {} })), "another window calls get_state");
    assert_refused(
        invoke(&other, local, "delete_session", json!({ "args": { "sessionId": "x" } })),
        "another window calls delete_session",
    );
    assert_refused(
        invoke(&other, local, "plugin:dialog|open", json!({ "options": {} })),
        "another window opens the folder picker",
    );
    assert_refused(
        invoke(&main, "https://evil.example/", "get_state", json!({ "args": {} })),
        "a remote page calls get_state",
    );
    assert_refused(
        invoke(&main, "http://127.0.0.1:5173/", "get_state", json!({ "args": {} })),
        "a loopback page calls get_state",
    );
    assert_refused(invoke(&main, local, "plugin:app|version", json!({})), "main calls a core command it does not need");

    // Links: another window, or a remote page, may not open any; main may open only http(s)
    // URLs, so the shell plugin's scope refuses the rest before anything is launched. (An
    // allowed URL is not sent here: it would open a browser.)
    assert_refused(
        invoke(&other, local, "plugin:shell|open", json!({ "path": "https://example.com/" })),
        "another window opens a link",
    );
    assert_refused(
        invoke(&main, "https://evil.example/", "plugin:shell|open", json!({ "path": "https://example.com/" })),
        "a remote page opens a link",
    );
    for url in [
        "file:///nonexistent-kiln-test",
        "javascript:void(0)",
        "/etc/passwd",
        "-x",
        "mailto:someone",
        "http:/x",
        "https://a b",
    ] {
        let error = invoke(&main, local, "plugin:shell|open", json!({ "path": url })).expect_err(url);
        let message = error.as_str().map(str::to_string).unwrap_or_else(|| error.to_string());
        assert!(!message.contains("not allowed"), "the ACL, not the scope, refused {url}: {message}");
        assert!(message.contains("validation") || message.contains("regex"), "{url}: {message}");
    }
}

/// The shell plugin's open scope (plugins.shell.open, anchored with ^…$ by the plugin) admits
/// http(s) URLs and nothing else.
#[test]
fn the_shell_open_scope_admits_only_http_urls() {
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(Path::new(ROOT).join("tauri.conf.json")).unwrap()).unwrap();
    let pattern =
        config["plugins"]["shell"]["open"].as_str().expect("plugins.shell.open is a validation regex, not `true`");
    let scope = regex::Regex::new(&format!("^{pattern}$")).unwrap();
    for url in ["https://github.com/o/r/pull/1", "http://127.0.0.1:4321/?kiln=1#x", "https://example.com/a%20b"] {
        assert!(scope.is_match(url), "{url} is refused");
    }
    for url in [
        "file:///etc/passwd",
        "javascript:alert(1)",
        "mailto:a@b",
        "tel:1",
        "ftp://x",
        "-n",
        "https://a b",
        "https://a\nb",
        "https://a\u{7f}b",
        "https://é.example",
        "smb://host/share",
        "",
    ] {
        assert!(!scope.is_match(url), "{url} is admitted");
    }
}
