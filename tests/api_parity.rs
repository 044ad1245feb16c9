//! One API, two transports: every engine operation called through the desktop's Tauri
//! IPC (Tauri's mock runtime with the real context and capabilities) and through
//! `kiln serve`'s HTTP router gives the same result and the same error codes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use kiln_engine::types::{ServeMode, Transport};
use kiln_engine::{Engine, OPERATIONS};
use serde_json::{json, Value};
use tauri::test::{get_ipc_response, mock_builder, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::Manager;
use tower::ServiceExt;

/// The shop, without its setup: setup runs in the background, so both runs see the same
/// transcript.
fn shop_copy(dest: &Path) -> PathBuf {
    let shop = kiln_test_support::shop_copy(dest);
    kiln_test_support::without_setup(&shop);
    shop
}

/// What each transport answers: `Ok(result)` or `Err({code, message})`.
type Answer = Result<Value, Value>;

trait Transport2 {
    async fn call(&self, command: &str, args: Value) -> Answer;
}

struct Ipc {
    webview: tauri::WebviewWindow<tauri::test::MockRuntime>,
}

impl Transport2 for Ipc {
    async fn call(&self, command: &str, args: Value) -> Answer {
        let response = get_ipc_response(
            &self.webview,
            InvokeRequest {
                cmd: command.into(),
                callback: tauri::ipc::CallbackFn(0),
                error: tauri::ipc::CallbackFn(1),
                url: "tauri://localhost".parse().unwrap(),
                body: tauri::ipc::InvokeBody::Json(json!({ "args": args })),
                headers: Default::default(),
                invoke_key: INVOKE_KEY.to_string(),
            },
        );
        response.map(|body| body.deserialize::<Value>().unwrap())
    }
}

struct Http {
    router: axum::Router,
    /// The connection cookie from `POST /api/connect`.
    cookie: String,
}

impl Http {
    /// A loopback `kiln serve` router on port 4320, connected.
    async fn connected(engine: Arc<Engine>, assets: Arc<kiln_serve::DirAssets>, config: &Path) -> Http {
        let access = Arc::new(kiln_serve::access::Access::open(config, None).await.unwrap());
        let token = Arc::new(kiln_serve::server_token::ServerToken::new());
        let body = serde_json::json!({ "token": token.secret() }).to_string();
        let serving = kiln_serve::Serving { port: 4320, mode: ServeMode::Loopback, access, token: Some(token) };
        let router = kiln_serve::router(engine, assets, serving);
        let request = Request::post("/api/connect")
            .header("host", "127.0.0.1:4320")
            .header("x-kiln", "1")
            .body(Body::from(body))
            .unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), 200);
        let set_cookie = response.headers()["set-cookie"].to_str().unwrap();
        for attribute in ["HttpOnly", "SameSite=Strict", "Secure", "Path=/"] {
            assert!(set_cookie.contains(attribute), "{set_cookie}");
        }
        Http { router, cookie: set_cookie.split(';').next().unwrap().to_string() }
    }
}

impl Transport2 for Http {
    async fn call(&self, command: &str, args: Value) -> Answer {
        let request = Request::post(format!("/api/{command}"))
            .header("host", "127.0.0.1:4320")
            .header("x-kiln", "1")
            .header("cookie", &self.cookie)
            .header("content-type", "application/json")
            .body(Body::from(args.to_string()))
            .unwrap();
        let response = self.router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let body: Value = serde_json::from_slice(&response.into_body().collect().await.unwrap().to_bytes()).unwrap();
        if status.is_success() {
            let mut body = body;
            if command == "get_state" {
                // The one field only `kiln serve` sets: this browser's connection.
                assert_eq!(body.as_object_mut().unwrap().remove("connected"), Some(Value::Bool(true)));
            }
            Ok(body)
        } else {
            let error = body["error"].clone();
            let code: kiln_engine::ErrorCode = serde_json::from_value(error["code"].clone()).unwrap();
            assert_eq!(status.as_u16(), kiln_serve::errors::http_status(code), "status of {command}");
            Err(error)
        }
    }
}

fn engine(config: &Path) -> Arc<Engine> {
    kiln_test_support::engine(config, Transport::Serve)
}

/// Replaces what legitimately differs between two runs: ids, times, temp paths.
fn normalize(value: &Value, root: &str, id: &str) -> Value {
    let text = value.to_string().replace(root, "<root>").replace(id, "<id>");
    let time = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z").unwrap();
    let text = time.replace_all(&text, "<time>");
    // Other ids (attachments) are random too.
    let uuid = regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}").unwrap();
    serde_json::from_str(&uuid.replace_all(&text, "<uuid>")).unwrap()
}

/// `value` with every size (a number under a key ending in `bytes` or `Bytes`) checked to
/// be a whole number and replaced by `"<bytes>"` (a working copy's null stays).
fn sizes_checked(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let v = if k.to_lowercase().ends_with("bytes") && !v.is_null() {
                        assert!(v.is_u64(), "{k}: {v}");
                        json!("<bytes>")
                    } else {
                        sizes_checked(v)
                    };
                    (k, v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(sizes_checked).collect()),
        other => other,
    }
}

/// The same sequence of calls on one transport; returns every normalized answer.
async fn script(t: &impl Transport2, shop: &Path) -> (Vec<(String, Answer)>, Vec<String>) {
    let root = shop.canonicalize().unwrap().display().to_string();
    let mut answers = Vec::new();
    let mut used = Vec::new();
    let mut id = String::from("-");
    let mut terminal = String::from("-");
    let steps: Vec<(&str, Value)> = vec![
        ("get_state", json!({})),
        ("list_sessions", json!({})),
        ("open_workspace", json!({ "path": format!("{root}/missing") })),
        ("open_workspace", json!({ "path": "" })),
        ("open_workspace", json!({ "path": root })),
        ("get_settings", json!({})),
        ("workspace_usage", json!({})),
        ("update_settings", json!({ "defaultDriver": "nope" })),
        ("update_settings", json!({ "openaiBaseUrl": "http://127.0.0.1:9/v1", "openaiModel": "m" })),
        ("save_mcp_server", json!({ "name": "has space", "command": "node" })),
        ("save_mcp_server", json!({ "name": "notes", "command": "node", "env": [{ "name": "T", "value": "v" }] })),
        ("remove_mcp_server", json!({ "name": "nope" })),
        ("remove_mcp_server", json!({ "name": "notes" })),
        // With no server left, the check's answer holds no timing to differ.
        ("check_mcp_servers", json!({})),
        ("list_models", json!({ "driver": "claude" })),
        ("list_models", json!({ "driver": "openai-compatible" })),
        ("list_models", json!({ "driver": "nope" })),
        ("create_session", json!({ "brief": "Make the cart faster" })),
        ("create_session", json!({ "brief": "Fix module modules/nope" })),
        ("create_session", json!({ "brief": 42 })),
        ("create_session", json!({ "brief": "Add a wishlist to @shop/catalog", "title": "Wishlist" })),
        ("get_session", json!({ "sessionId": "$id" })),
        ("get_session", json!({ "sessionId": "../../etc" })),
        ("get_session", json!({ "sessionId": "5b0f8c1e-2f4c-4d8e-9a3b-1c2d3e4f5a6b" })),
        ("get_transcript", json!({ "sessionId": "$id" })),
        ("get_transcript", json!({ "sessionId": "$id", "after": 1 })),
        ("add_module", json!({ "sessionId": "$id", "moduleId": "@shop/cart" })),
        ("add_module", json!({ "sessionId": "$id", "moduleId": "@shop/cart" })),
        ("add_module", json!({ "sessionId": "$id", "moduleId": "@shop/nope" })),
        ("add_attachment", json!({ "sessionId": "$id", "name": "notes.md", "dataBase64": "IyBOb3RlcwoKU3RhcnMu" })),
        ("add_attachment", json!({ "sessionId": "$id", "name": "shot.pdf", "dataBase64": "iVBORw0KGgoAAAANSUhEUg==" })),
        ("remove_attachment", json!({ "sessionId": "$id", "attachmentId": "5b0f8c1e-2f4c-4d8e-9a3b-1c2d3e4f5a6b" })),
        ("update_session", json!({ "sessionId": "$id", "autoContinue": false })),
        ("update_session", json!({ "sessionId": "$id", "title": " " })),
        ("send_message", json!({ "sessionId": "$id", "text": "Go", "driver": "nope" })),
        ("send_message", json!({ "sessionId": "$id", "text": "  " })),
        ("stop_turn", json!({ "sessionId": "$id" })),
        ("retry_turn", json!({ "sessionId": "$id" })),
        ("retry_setup", json!({ "sessionId": "$id" })),
        // No turn asks anything here: every request id is unknown.
        ("answer_permission", json!({ "sessionId": "$id", "requestId": "nope", "optionId": "allow-once" })),
        ("answer_permission", json!({ "sessionId": "../x", "requestId": "nope", "optionId": "allow-once" })),
        // Review comments: a path out of the working copy, unknown comments, nothing to send.
        (
            "add_review_comment",
            json!({ "sessionId": "$id", "path": "../x", "startLine": 1, "endLine": 1, "body": "x" }),
        ),
        ("update_review_comment", json!({ "sessionId": "$id", "commentId": "nope", "body": "x" })),
        ("delete_review_comment", json!({ "sessionId": "$id", "commentId": "nope" })),
        ("resolve_review_comment", json!({ "sessionId": "$id", "commentId": "nope", "resolved": true })),
        ("send_review", json!({ "sessionId": "$id" })),
        ("approve_spec", json!({ "sessionId": "$id", "moduleId": "@shop/orders" })),
        ("approve_spec", json!({ "sessionId": "$id", "moduleId": "@shop/catalog" })),
        ("get_spec", json!({ "sessionId": "$id", "moduleId": "@shop/catalog" })),
        ("get_gates", json!({ "sessionId": "$id" })),
        ("check_modules", json!({ "sessionId": "../x" })),
        ("restore_checkpoint", json!({ "sessionId": "$id", "sequence": "one" })),
        ("restore_checkpoint", json!({ "sessionId": "$id", "sequence": 5 })),
        ("restore_checkpoint", json!({ "sessionId": "$id", "sequence": 0 })),
        // The workspace has not changed since the session started: nothing to take in.
        ("update_from_workspace", json!({ "sessionId": "$id" })),
        ("update_from_workspace", json!({ "sessionId": "../x" })),
        ("get_conflicts", json!({ "sessionId": "$id" })),
        ("resolve_conflict", json!({ "sessionId": "$id", "path": "package.json", "conflictId": "0", "keep": "both" })),
        ("resolve_conflict", json!({ "sessionId": "$id", "path": "a.js", "conflictId": "0", "keep": "mine" })),
        ("get_diff", json!({ "sessionId": "$id" })),
        ("get_diff", json!({ "sessionId": "$id", "moduleId": "@shop/nope" })),
        ("get_diff", json!({ "sessionId": "nope" })),
        ("get_preview", json!({ "sessionId": "$id" })),
        ("stop_preview", json!({ "sessionId": "$id" })),
        ("start_preview", json!({ "sessionId": "../x" })),
        ("restart_preview", json!({ "sessionId": "00000000-0000-4000-8000-000000000000" })),
        (
            "capture_preview",
            json!({ "sessionId": "$id", "selector": "button", "region": { "x": 0, "y": 0, "width": 9, "height": 9 } }),
        ),
        ("capture_preview", json!({ "sessionId": "$id", "path": "https://example.com/" })),
        ("get_screenshot", json!({ "sessionId": "$id", "screenshotId": 5 })),
        // No git-pr repository or token here: issues cannot be read, and a bad address is refused first.
        ("list_issues", json!({})),
        ("get_issue", json!({ "issue": "https://example.com/acme/shop/pull/3" })),
        ("get_issue", json!({ "issue": "12" })),
        ("review_module", json!({ "sessionId": "$id", "moduleId": "@shop/nope" })),
        ("plan_delivery", json!({ "sessionId": "$id" })),
        ("deliver", json!({ "sessionId": "$id", "target": "workspace", "planId": "nope" })),
        ("plan_delivery", json!({ "sessionId": "$id", "target": "carrier-pigeon" })),
        ("get_delivery", json!({ "sessionId": "$id" })),
        ("save_spec", json!({ "sessionId": "$id", "moduleId": "@shop/nope", "text": "x" })),
        ("list_terminals", json!({ "sessionId": "$id" })),
        ("open_terminal", json!({ "sessionId": "$id", "kind": "shell", "cols": 1 })),
        ("open_terminal", json!({ "sessionId": "$id", "kind": "shell", "cols": 90, "rows": 20 })),
        ("resize_terminal", json!({ "terminalId": "$terminal", "cols": 100, "rows": 30 })),
        ("write_terminal", json!({ "terminalId": "$terminal", "data": "echo hi\r" })),
        ("write_terminal", json!({ "terminalId": "5b0f8c1e-2f4c-4d8e-9a3b-1c2d3e4f5a6b", "data": "x" })),
        // Killed, it exited by a signal: no exit code.
        ("stop_terminal", json!({ "terminalId": "$terminal" })),
        ("write_terminal", json!({ "terminalId": "$terminal", "data": "x" })),
        ("list_terminals", json!({ "sessionId": "$id" })),
        ("list_sessions", json!({})),
        ("archive_session", json!({ "sessionId": "$id" })),
        ("archive_session", json!({ "sessionId": "$id" })),
        // The archived session's working copy: measured, listed by a dry run, removed.
        ("disk_usage", json!({})),
        ("clean_up", json!({})),
        ("clean_up", json!({ "apply": "yes" })),
        ("clean_up", json!({ "apply": true })),
        ("disk_usage", json!({})),
        ("list_sessions", json!({})),
        ("list_sessions", json!({ "includeArchived": true })),
        ("restore_session", json!({ "sessionId": "$id" })),
        ("restore_session", json!({ "sessionId": "$id" })),
        ("reject_session", json!({ "sessionId": "$id" })),
        ("restore_session", json!({ "sessionId": "$id" })),
        ("delete_session", json!({ "sessionId": "$id" })),
        ("get_session", json!({ "sessionId": "$id" })),
        ("archive_session", json!({ "sessionId": "$id" })),
        ("delete_session", json!({ "sessionId": "$id", "keepTranscript": false })),
        ("get_session", json!({ "sessionId": "$id" })),
        ("get_session", json!({ "sessionId": "$id", "extra": 1 })),
        ("detect_workspace", json!({})),
        // The shop has a kiln.toml: saving over it must be asked for; a bad workflow changes nothing.
        ("save_config", json!({ "workflow": "direct", "modules": [] })),
        ("save_config", json!({ "workflow": "sideways", "modules": [] })),
        // Groups of candidates: none yet; refusals change nothing.
        ("list_groups", json!({})),
        ("create_session_group", json!({ "brief": "Make the cart faster", "candidates": [{ "driver": "claude" }] })),
        ("get_group", json!({ "groupId": "nope" })),
        ("compare_candidates", json!({ "groupId": "nope", "left": "$id", "right": "$id" })),
        ("pick_candidate", json!({ "groupId": "nope", "sessionId": "$id" })),
    ];
    for (command, args) in steps {
        let args = args.to_string().replace("$id", &id).replace("$terminal", &terminal);
        let answer = t.call(command, serde_json::from_str(&args).unwrap()).await;
        if let (Ok(made), "create_session" | "open_terminal") = (&answer, command) {
            let made = made["id"].as_str().unwrap().to_string();
            if command == "create_session" {
                id = made;
            } else {
                terminal = made;
            }
        }
        let answer = match answer {
            // A plan's id digests the module files, which hold each copy's own timestamps.
            Ok(mut v) if command == "plan_delivery" => {
                assert_eq!(v["planId"].as_str().map(str::len), Some(64), "{v}");
                v["planId"] = json!("<plan>");
                Ok(normalize(&v, &root, &id))
            }
            // Sizes on disk differ between the two copies (the store's compressed objects).
            Ok(v) if command == "disk_usage" || command == "clean_up" => Ok(normalize(&sizes_checked(v), &root, &id)),
            Ok(v) => Ok(normalize(&v, &root, &id)),
            Err(e) => Err(normalize(&e, &root, &id)),
        };
        used.push(command.to_string());
        answers.push((command.to_string(), answer));
    }
    (answers, used)
}

#[tokio::test]
async fn every_operation_answers_the_same_over_ipc_and_http() {
    let tmp = tempfile::tempdir().unwrap();

    // Desktop side: the real app context, capabilities included, on the mock runtime.
    let ipc_shop = shop_copy(&tmp.path().join("ipc"));
    let app = mock_builder()
        .plugin(tauri_plugin_dialog::init())
        .manage(engine(&tmp.path().join("ipc-config")))
        .invoke_handler(kiln_app::commands::handler::<tauri::test::MockRuntime>())
        .build(tauri::generate_context!("tauri.conf.json"))
        .expect("the app builds on the mock runtime");
    let webview = match app.get_webview_window("main") {
        Some(w) => w,
        None => tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap(),
    };
    let ipc = Ipc { webview };

    // Server side: the router `kiln serve` runs.
    let http_shop = shop_copy(&tmp.path().join("http"));
    let assets = Arc::new(kiln_serve::DirAssets(tmp.path().to_path_buf()));
    let http_config = tmp.path().join("http-config");
    let http = Http::connected(engine(&http_config), assets, &http_config).await;

    let (ipc_answers, used) = script(&ipc, &ipc_shop).await;
    let (http_answers, _) = script(&http, &http_shop).await;
    for ((command, a), (_, b)) in ipc_answers.iter().zip(http_answers.iter()) {
        assert_eq!(a, b, "`{command}` differs between IPC and HTTP");
    }
    // The answers are what they should be, not merely equal.
    let codes: Vec<String> = ipc_answers
        .iter()
        .filter_map(|(_, a)| a.as_ref().err().map(|e| e["code"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        codes,
        [
            "WORKSPACE_NOT_OPEN",
            "WORKSPACE_NOT_FOUND",
            "INVALID_INPUT",
            "INVALID_INPUT",
            "INVALID_INPUT",
            "MCP_SERVER_NOT_FOUND",
            "DRIVER_NOT_FOUND",
            "MODULE_REQUIRED",
            "MODULE_UNKNOWN",
            "INVALID_INPUT",
            "INVALID_SESSION_ID",
            "SESSION_NOT_FOUND",
            "MODULE_ALREADY_IN_SESSION",
            "MODULE_NOT_FOUND",
            "ATTACHMENT_MISMATCH",
            "ATTACHMENT_NOT_FOUND",
            "INVALID_INPUT",
            "INVALID_INPUT",
            "INVALID_INPUT",
            "INVALID_INPUT",
            "NOT_BLOCKED",
            // retry_setup on a session whose setup did not fail
            "INVALID_INPUT",
            "PERMISSION_NOT_FOUND",
            "INVALID_SESSION_ID",
            "PATH_NOT_ALLOWED",
            "COMMENT_NOT_FOUND",
            "COMMENT_NOT_FOUND",
            "COMMENT_NOT_FOUND",
            "NOTHING_TO_SEND",
            "MODULE_NOT_FOUND",
            "INVALID_SESSION_ID",
            "INVALID_INPUT",
            "CHECKPOINT_NOT_FOUND",
            "NOTHING_TO_UPDATE",
            "INVALID_SESSION_ID",
            "CONFLICT_NOT_FOUND",
            "INVALID_INPUT",
            "MODULE_NOT_FOUND",
            "INVALID_SESSION_ID",
            "INVALID_SESSION_ID",
            "SESSION_NOT_FOUND",
            "INVALID_INPUT",
            "INVALID_INPUT",
            "SCREENSHOT_NOT_FOUND",
            "TARGET_UNAVAILABLE",
            "INVALID_INPUT",
            "TARGET_UNAVAILABLE",
            "MODULE_NOT_FOUND",
            "DELIVERY_BLOCKED",
            "INVALID_INPUT",
            "MODULE_NOT_FOUND",
            "INVALID_INPUT",
            "TERMINAL_NOT_FOUND",
            "TERMINAL_EXITED",
            "SESSION_ARCHIVED",
            "INVALID_INPUT",
            "SESSION_NOT_ARCHIVED",
            "SESSION_DELETED",
            "SESSION_NOT_FOUND",
            "INVALID_INPUT",
            "CONFIG_EXISTS",
            "INVALID_INPUT",
            "INVALID_INPUT",
            "GROUP_NOT_FOUND",
            "GROUP_NOT_FOUND",
            "GROUP_NOT_FOUND",
        ]
    );
    let created = ipc_answers.iter().find(|(c, a)| c == "create_session" && a.is_ok()).unwrap().1.as_ref().unwrap();
    assert_eq!(created["title"], "Wishlist");
    assert_eq!(created["modules"][0]["id"], "@shop/catalog");
    // Restored to its start, the session's modules show no changes.
    let diff = ipc_answers.iter().find(|(c, a)| c == "get_diff" && a.is_ok()).unwrap().1.as_ref().unwrap();
    assert_eq!(diff["modules"].as_array().unwrap().len(), 2);
    assert!(diff["modules"].as_array().unwrap().iter().all(|m| m["files"] == json!([])), "{diff}");
    // Without a review or gates the plan is blocked, and no run was ever made.
    let plan = ipc_answers.iter().find(|(c, a)| c == "plan_delivery" && a.is_ok()).unwrap().1.as_ref().unwrap();
    assert_eq!(plan["target"], "workspace");
    assert!(
        plan["blockers"].as_array().unwrap().iter().any(|b| b["message"].as_str().unwrap().contains("needs a review")),
        "{plan}"
    );
    assert_eq!(plan["availableTargets"][1]["available"], false);
    let run = ipc_answers.iter().find(|(c, _)| c == "get_delivery").unwrap();
    assert_eq!(run.1, Ok(Value::Null));
    let purged = ipc_answers.iter().rfind(|(c, _)| c == "delete_session").unwrap();
    assert_eq!(purged.1, Ok(Value::Null));
    // The archived session's working copy was measured, listed, removed; the rest stayed.
    let disk: Vec<&Value> =
        ipc_answers.iter().filter(|(c, _)| c == "disk_usage").map(|(_, a)| a.as_ref().unwrap()).collect();
    assert_eq!(disk[0]["storeBytes"], "<bytes>");
    assert_eq!(disk[0]["sessions"][0]["sessionId"], "<id>");
    assert_eq!(disk[0]["sessions"][0]["workingCopyBytes"], "<bytes>");
    assert_eq!(disk[1]["sessions"][0]["workingCopyBytes"], Value::Null);
    assert_eq!(disk[1]["sessions"][0]["attachmentsBytes"], "<bytes>");
    let cleaned: Vec<&Value> =
        ipc_answers.iter().filter(|(c, a)| c == "clean_up" && a.is_ok()).map(|(_, a)| a.as_ref().unwrap()).collect();
    for (answer, applied) in cleaned.iter().zip([false, true]) {
        assert_eq!(answer["applied"], applied, "{answer}");
        assert_eq!(answer["sessions"][0]["sessionId"], "<id>", "{answer}");
        assert_eq!(answer["sessions"][0]["title"], "Wishlist", "{answer}");
    }
    // The terminal opened at its size, took the last resize, and was stopped.
    let terminals = ipc_answers.iter().rfind(|(c, _)| c == "list_terminals").unwrap().1.as_ref().unwrap();
    let stopped = &terminals[0];
    assert_eq!((stopped["cols"].as_u64(), stopped["rows"].as_u64()), (Some(100), Some(30)), "{terminals}");
    assert_eq!((stopped["state"].as_str(), &stopped["exitCode"]), (Some("exited"), &Value::Null));
    // What Kiln detects in the shop: its kiln.toml chooses the specs workflow and its gates.
    let detected = ipc_answers.iter().find(|(c, _)| c == "detect_workspace").unwrap().1.as_ref().unwrap();
    assert_eq!(detected["workflow"], "specs");
    let catalog = detected["modules"].as_array().unwrap().iter().find(|m| m["id"] == "@shop/catalog").unwrap();
    let tests = catalog["gates"].as_array().unwrap().iter().find(|g| g["gate"] == "tests").unwrap();
    assert_eq!(
        (tests["command"].as_str(), tests["source"].as_str()),
        (Some("npm test"), Some("kiln.toml [gates.node]"))
    );

    // A command that does not exist is Tauri's own refusal on the desktop; HTTP names it.
    assert!(ipc.call("no_such_command", json!({})).await.is_err());
    let unknown = http.call("no_such_command", json!({})).await.unwrap_err();
    assert_eq!(unknown["code"], "UNKNOWN_COMMAND");

    // Every operation was exercised, and both transports expose exactly the list.
    for op in OPERATIONS {
        assert!(used.iter().any(|u| u == op), "the parity script never calls `{op}`");
    }
    let mut commands: Vec<&str> = kiln_app::commands::COMMANDS.to_vec();
    commands.retain(|c| *c != "subscribe" && *c != "attach_terminal");
    assert_eq!(commands, OPERATIONS);
}

#[tokio::test]
async fn http_refuses_foreign_hosts_and_cross_site_mutations() {
    let tmp = tempfile::tempdir().unwrap();
    let access = Arc::new(kiln_serve::access::Access::open(tmp.path(), None).await.unwrap());
    let serving = kiln_serve::Serving { port: 4320, mode: ServeMode::Loopback, access, token: None };
    let router = kiln_serve::router(engine(tmp.path()), Arc::new(kiln_serve::DirAssets(tmp.path().into())), serving);
    let send = |host: &str, headers: &[(&str, &str)]| {
        let mut req = Request::post("/api/get_state").header("host", host);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        router.clone().oneshot(req.body(Body::from("{}")).unwrap())
    };
    // Past the guard, the connection check answers: 401 until a browser connects.
    assert_eq!(send("127.0.0.1:4320", &[("x-kiln", "1")]).await.unwrap().status(), 401);
    assert_eq!(send("localhost:4320", &[("x-kiln", "1")]).await.unwrap().status(), 401);
    for (host, headers, code) in [
        ("evil.example:4320", vec![("x-kiln", "1")], "HOST_NOT_ALLOWED"),
        ("127.0.0.1:9999", vec![("x-kiln", "1")], "HOST_NOT_ALLOWED"),
        ("127.0.0.1:4320", vec![], "CROSS_SITE_REFUSED"),
        ("127.0.0.1:4320", vec![("x-kiln", "1"), ("origin", "http://127.0.0.1:5173")], "CROSS_SITE_REFUSED"),
        ("127.0.0.1:4320", vec![("x-kiln", "1"), ("sec-fetch-site", "cross-site")], "CROSS_SITE_REFUSED"),
    ] {
        let response = send(host, &headers).await.unwrap();
        assert_eq!(response.status(), 403, "{host} {headers:?}");
        let body: Value = serde_json::from_slice(&response.into_body().collect().await.unwrap().to_bytes()).unwrap();
        assert_eq!(body["error"]["code"], code, "{host} {headers:?}");
    }
}
