//! Turn orchestration (ARCHITECTURE.md: Workflows and the chain, Drivers and turns) end to end: the engine's own OpenAI-compatible
//! driver against the scripted model server on 127.0.0.1, in a copy of examples/shop.
//! Handoff chains and their limit, a handoff to no role, approval stopping and
//! resuming the chain, writes outside the module put back, supersede, turns that
//! outlive their subscribers, and a session's view sent once per change.

use crate::common;

use std::time::Duration;

use crate::common::*;
use kiln_engine::types::*;
use kiln_engine::Engine;
use kiln_model_server::{ModelServer, Step};
use serde_json::json;

struct World {
    _tmp: tempfile::TempDir,
    shop: std::path::PathBuf,
    engine: std::sync::Arc<Engine>,
    server: ModelServer,
}

async fn world(script: Vec<Step>) -> World {
    world_with(script, false, false).await
}

async fn world_with_planner(script: Vec<Step>, planner: bool) -> World {
    world_with(script, planner, false).await
}

async fn world_with(script: Vec<Step>, planner: bool, gates: bool) -> World {
    world_edit(script, planner, gates, |text| text).await
}

/// A world whose kiln.toml is edited first (`edit` gets and returns its text).
async fn world_edit(script: Vec<Step>, planner: bool, gates: bool, edit: impl Fn(String) -> String) -> World {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());
    let toml = shop.join("kiln.toml");
    let mut text = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("setup = \"npm ci --offline --no-audit --no-fund\"", "setup = \"\"");
    if !gates {
        // Module gates off (an empty command skips a gate): these tests are about turns.
        text = text.replace("tests = \"npm test\"", "dependencies = \"\"\ntests = \"\"");
    } else {
        text = text.replace("tests = \"npm test\"", "dependencies = \"\"\ntests = \"npm test\"");
    }
    std::fs::write(toml, edit(text)).unwrap();
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    let server = ModelServer::start(script).await;
    use_scripted_model(&engine, &server, planner).await;
    World { _tmp: tmp, shop, engine, server }
}

async fn send(w: &World, id: &str, text: &str) -> SessionView {
    send_text(&w.engine, id, text).await
}

/// Waits until no turn runs and the chain has settled.
async fn settled(w: &World, id: &str) -> SessionView {
    wait_settled(&w.engine, id, Duration::from_secs(30)).await
}

async fn transcript(w: &World, id: &str) -> Vec<TranscriptEntry> {
    w.engine
        .get_transcript(GetTranscriptArgs { session_id: id.into(), after: None, before: None, last: None })
        .await
        .unwrap()
}

/// A write of a small server file: a turn that changes nothing has nothing to review.
fn server_file(name: &str) -> Step {
    Step::tool(
        "write_file",
        json!({ "path": format!("modules/catalog/src/server/{name}.js"), "content": format!("export const {name} = [];\n") }),
    )
}

fn texts(entries: &[TranscriptEntry], kind: EntryKind) -> Vec<String> {
    entries.iter().filter(|e| e.kind == kind).map(|e| e.text.clone()).collect()
}

#[tokio::test]
async fn handoffs_chain_up_to_four_turns_then_offer_to_continue() {
    let w = world(vec![
        Step::text("Added the endpoint.\nHANDOFF: frontend-engineer - build the screen"),
        Step::text("Built the screen.\nHANDOFF: backend-engineer - needs a filter"),
        Step::text("Added the filter.\nHANDOFF: Frontend Engineer - show the filter."),
        Step::text("Shown.\nHANDOFF: backend-engineer - one more field"),
        Step::text("never reached"),
    ])
    .await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    let started = send(&w, &s.id, "Add a wishlist endpoint to the catalog").await;
    assert!(started.running);
    let s = settled(&w, &s.id).await;

    assert_eq!(w.server.requests().iter().filter(|r| r.path.ends_with("/chat/completions")).count(), 4);
    assert_eq!(s.state, SessionState::Editing);
    assert_eq!(s.pending_role.as_deref(), Some("backend-engineer"));
    assert_eq!(s.usage.total.turns, 4);
    assert!(s.usage.total.input_tokens > 0 && s.usage.total.output_tokens > 0);
    // The endpoint reported no cost: unknown, never 0.
    assert_eq!(s.usage.total.cost_usd, None);
    assert_eq!(s.usage.total.unknown_cost_turns, 4);
    let by_role: Vec<(&str, i64)> = s.usage.by_role.iter().map(|r| (r.role.as_str(), r.usage.turns)).collect();
    assert_eq!(by_role, [("backend-engineer", 2), ("frontend-engineer", 2)]);
    let workspace = w.engine.workspace_usage(EmptyArgs {}).await.unwrap();
    assert_eq!(workspace.total, s.usage.total);
    let entries = transcript(&w, &s.id).await;
    let handoffs = texts(&entries, EntryKind::Handoff);
    assert_eq!(
        handoffs,
        [
            "**backend-engineer → frontend-engineer**: build the screen",
            "**frontend-engineer → backend-engineer**: needs a filter",
            "**backend-engineer → frontend-engineer**: show the filter",
            "**frontend-engineer → backend-engineer**: one more field",
        ]
    );
    let systems = texts(&entries, EntryKind::System);
    assert!(systems.iter().any(|t| t.contains("the request mentions “endpoint”")), "{systems:#?}");
    assert!(systems.last().unwrap().contains("Continue with **Backend Engineer**"), "{systems:#?}");
    // The first request carried the role's instruction and the session context; the
    // chained ones carried the original brief.
    let bodies: Vec<serde_json::Value> = w.server.requests().into_iter().map(|r| r.body).collect();
    let system = bodies[0]["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("Backend Engineer")
            && system.contains("HANDOFF:")
            && system.contains("modules/catalog/src/server/**")
    );
    assert!(bodies[1].to_string().contains("Add a wishlist to @shop/catalog"));

    // "Continue with" goes to the pending role.
    let s2 = send(&w, &s.id, "Continue.").await;
    assert!(s2.running);
    let s2 = settled(&w, &s.id).await;
    assert_eq!(s2.role.as_deref(), Some("backend-engineer"));
}

#[tokio::test]
async fn a_sessions_view_is_sent_once_per_change() {
    let w = world(vec![
        server_file("wishlist"),
        Step::text("Added the endpoint.\nHANDOFF: frontend-engineer - build the screen"),
        Step::text("Built the screen."),
    ])
    .await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    let mut rx = w.engine.subscribe(None).receiver;
    send(&w, &s.id, "Add a wishlist endpoint to the catalog").await;
    settled(&w, &s.id).await;
    // A last event may still be on its way when the chain has settled: read until the stream
    // is quiet.
    let mut views = Vec::new();
    while let Ok(Ok(event)) = tokio::time::timeout(Duration::from_millis(500), rx.recv()).await {
        if let EventBody::Session { session } = event.body {
            if session.id == s.id {
                views.push(*session);
            }
        }
    }
    assert!(views.len() >= 4, "two turns send more views than {}", views.len());
    for pair in views.windows(2) {
        assert_ne!(pair[0], pair[1], "the same view was sent twice in a row");
    }
    // Nothing was lost for it: the last view sent is the session as it is.
    let now = w.engine.get_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert_eq!(views.last(), Some(&now));
}

#[tokio::test]
async fn a_handoff_to_no_known_role_falls_back_to_routing_with_a_reason() {
    let w = world(vec![
        server_file("featured"),
        Step::text("Done.\nHANDOFF: qa-engineer - please test it"),
        Step::text("Looks right.\nHANDOFF: none - the request is satisfied"),
        Step::text("Checked it.\nREVIEW: pass - ready"),
    ])
    .await;
    let s = create(&w.engine, "Polish @shop/catalog").await;
    send(&w, &s.id, "Add an endpoint for featured products").await;
    let s = settled(&w, &s.id).await;
    assert_eq!(s.state, SessionState::Review);
    let entries = transcript(&w, &s.id).await;
    let systems = texts(&entries, EntryKind::System).join("\n");
    assert!(systems.contains("`qa-engineer` is not a role, so routing chose"), "{systems}");
    assert!(systems.contains("ready for review"), "{systems}");
}

#[tokio::test]
async fn approval_stops_the_chain_until_the_operator_approves_the_exact_text() {
    let spec = "---\nstatus: approved\n---\n# Reviews\n\n## Purpose\nStar ratings for products.\n";
    let w = world(vec![
        Step::tool("write_file", json!({ "path": "modules/reviews/SPEC.md", "content": spec })),
        Step::text("The specification is written.\nHANDOFF: backend-engineer - build the routes"),
        Step::text("Routes built.\nHANDOFF: none - done"),
        Step::text("Checked it.\nREVIEW: pass - ready"),
    ])
    .await;
    let s = create_new(&w.engine, "Create @shop/reviews with star ratings", &["@shop/reviews"]).await;
    assert_eq!(s.kind, SessionKind::NewModule);
    send(&w, &s.id, "Start with the specification").await;
    let s = settled(&w, &s.id).await;
    // The agent wrote `status: approved` itself: that is no approval.
    assert_eq!(s.state, SessionState::AwaitingApproval, "{:#?}", transcript(&w, &s.id).await);
    assert_eq!(s.role.as_deref(), Some("business-manager"));
    assert_eq!(w.server.requests().len(), 2);

    // Approval records the digest of the exact text and resumes with the next role.
    let approved = w
        .engine
        .approve_spec(ApproveSpecArgs { session_id: s.id.clone(), module_id: "@shop/reviews".into() })
        .await
        .unwrap();
    assert!(approved.running);
    let s = settled(&w, &s.id).await;
    assert_eq!(s.state, SessionState::Review);
    assert_eq!(s.role.as_deref(), Some("backend-engineer"));
    let systems = texts(&transcript(&w, &s.id).await, EntryKind::System).join("\n");
    assert!(systems.contains("Approved the specification of `@shop/reviews`"), "{systems}");
    assert!(systems.contains("Routed to **Backend Engineer**: it was waiting for this approval"), "{systems}");
    assert_eq!(s.pending_role, None);

    // The operator reads the specification; an edit makes the approval stale.
    let module = || ModuleArgs { session_id: s.id.clone(), module_id: "@shop/reviews".into() };
    let spec_now = w.engine.get_spec(module()).await.unwrap();
    assert!(spec_now.approved && spec_now.status.as_deref() == Some("approved"));
    assert_eq!(spec_now.path, "modules/reviews/SPEC.md");
    let edited = spec_now.text.unwrap().replace("Star ratings", "Star ratings and comments");
    let saved = w
        .engine
        .save_spec(SaveSpecArgs { session_id: s.id.clone(), module_id: "@shop/reviews".into(), text: edited.clone() })
        .await
        .unwrap();
    assert!(!saved.approved, "an edited specification is no longer approved");
    assert_eq!(saved.text.as_deref(), Some(edited.as_str()));
    let systems = texts(&transcript(&w, &s.id).await, EntryKind::System).join("\n");
    assert!(systems.contains("Its approval is now stale"), "{systems}");

    // Approving a module without a specification is refused.
    let err = w
        .engine
        .approve_spec(ApproveSpecArgs { session_id: s.id.clone(), module_id: "@shop/nope".into() })
        .await
        .unwrap_err();
    assert_eq!(err.code, kiln_engine::ErrorCode::ModuleNotFound);
}

#[tokio::test]
async fn writes_outside_the_module_are_put_back_and_named() {
    let w = world(vec![
        Step::tool(
            "write_file",
            json!({ "path": "modules/catalog/src/server/wishlist.js", "content": "export const w = 1;\n" }),
        ),
        Step::tool("write_file", json!({ "path": "modules/cart/src/server/routes.js", "content": "// clobbered\n" })),
        Step::tool("write_file", json!({ "path": "shell/stray.txt", "content": "stray\n" })),
        Step::text("Done.\nHANDOFF: none - done"),
        Step::text("Checked it.\nREVIEW: pass - ready"),
    ])
    .await;
    let s = create(&w.engine, "Wishlist in @shop/catalog").await;
    let original = std::fs::read_to_string(w.shop.join("modules/cart/src/server/routes.js")).unwrap();
    send(&w, &s.id, "Add the wishlist endpoint").await;
    let s = settled(&w, &s.id).await;
    let work = w.shop.join(".kiln/sessions").join(&s.id).join("workspace");
    assert_eq!(
        std::fs::read_to_string(work.join("modules/catalog/src/server/wishlist.js")).unwrap(),
        "export const w = 1;\n"
    );
    assert_eq!(std::fs::read_to_string(work.join("modules/cart/src/server/routes.js")).unwrap(), original);
    assert!(!work.join("shell/stray.txt").exists());
    let systems = texts(&transcript(&w, &s.id).await, EntryKind::System).join("\n");
    assert!(systems.contains("Put back 2 change(s)"), "{systems}");
    assert!(
        systems.contains("`modules/cart/src/server/routes.js`") && systems.contains("`shell/stray.txt`"),
        "{systems}"
    );
}

#[tokio::test]
async fn a_new_message_supersedes_a_running_turn_after_its_process_is_gone() {
    let marker = "superseded-marker";
    let w = world(vec![
        Step::tool("run_command", json!({ "command": format!("sleep 30 && touch {marker}") })),
        // The stopped turn asks nothing more: the next request is the second turn's.
        server_file("second"),
        Step::text("Second turn.\nHANDOFF: none - done"),
        Step::text("Checked it.\nREVIEW: pass - ready"),
    ])
    .await;
    let s = create(&w.engine, "Slow work in @shop/catalog").await;
    send(&w, &s.id, "Run the slow command on the server").await;
    let work = w.shop.join(".kiln/sessions").join(&s.id).join("workspace");
    // Wait until the command is running.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while commands_naming(marker).is_empty() {
        assert!(std::time::Instant::now() < deadline, "the slow command never started");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let second = send(&w, &s.id, "Never mind, do this instead on the server").await;
    // The old command was stopped, not waited out (it never got to its marker), and it
    // was gone before the new turn was let in.
    assert!(!work.join(marker).exists(), "supersede waited for the command to finish");
    assert_eq!(commands_naming(marker), Vec::<i32>::new(), "the old turn's command outlived the stop");
    assert!(second.running);
    let s = settled(&w, &s.id).await;
    let systems = texts(&transcript(&w, &s.id).await, EntryKind::System).join("\n");
    assert_eq!(s.state, SessionState::Review, "{systems}");
    assert!(systems.contains("Stopped by the operator."), "{systems}");
}

#[tokio::test]
async fn a_turn_runs_to_its_end_when_every_view_has_gone() {
    let w = world(vec![
        server_file("quick"),
        Step::text("All done.\nHANDOFF: none - done"),
        Step::text("Checked it.\nREVIEW: pass - ready"),
    ])
    .await;
    let s = create(&w.engine, "Quick @shop/catalog change").await;
    let sub = w.engine.subscribe(None);
    send(&w, &s.id, "Tweak the server validation").await;
    drop(sub); // the window closed
    let s = settled(&w, &s.id).await;
    assert_eq!(s.state, SessionState::Review);
    let entries = transcript(&w, &s.id).await;
    assert!(texts(&entries, EntryKind::Agent).iter().any(|t| t.contains("All done.")));
    // A view that subscribes again and resumes gets what it missed.
    let replay = w.engine.subscribe(Some(1));
    assert!(replay
        .backlog
        .iter()
        .any(|e| matches!(&e.body, EventBody::Transcript { entry } if entry.text.contains("All done."))));
}

#[tokio::test]
async fn a_failed_turn_leaves_the_session_blocked_with_the_providers_message() {
    let w = world(vec![Step::error(401, "Incorrect API key provided: sk-test")]).await;
    let s = create(&w.engine, "Anything in @shop/catalog").await;
    send(&w, &s.id, "Fix the server").await;
    let s = settled(&w, &s.id).await;
    assert_eq!(s.state, SessionState::Blocked);
    let handoffs = texts(&transcript(&w, &s.id).await, EntryKind::Handoff).join("\n");
    assert!(handoffs.contains("**Blocked**") && handoffs.contains("Incorrect API key"), "{handoffs}");
    // The key went to the endpoint as a bearer token, and never back to the UI.
    let auth = w.server.requests()[0].header("authorization").map(str::to_string);
    assert_eq!(auth.as_deref(), Some("Bearer sk-test-key"));
    let settings = w.engine.get_settings(EmptyArgs {}).await.unwrap();
    assert_eq!(settings.openai_key_fingerprint.as_deref().map(str::len), Some(8));
    // The refusal names what signed in (the key's fingerprint, never the key), where the fix is.
    let fingerprint = settings.openai_key_fingerprint.clone().unwrap();
    let named =
        format!("Kiln sent the key set in Settings for {} (fingerprint `{fingerprint}`).", w.server.openai_base_url());
    assert!(handoffs.contains(&named), "{handoffs}");
    assert!(!handoffs.contains("sk-test-key"), "{handoffs}");
    assert!(!serde_json::to_string(&settings).unwrap().contains("sk-test-key"));
}

#[tokio::test]
async fn attachments_reach_the_working_copy_and_the_turns_instruction() {
    use base64::Engine as _;
    let w = world(vec![Step::text("Read it.\nHANDOFF: none - done"), Step::text("Checked it.\nREVIEW: pass - ready")])
        .await;
    let s = create(&w.engine, "Reviews look in @shop/catalog").await;
    let png = [&b"\x89PNG\r\n\x1a\n"[..], &[0u8; 32]].concat();
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let add =
        |name: &str, data: String| AddAttachmentArgs { session_id: s.id.clone(), name: name.into(), data_base64: data };
    let shot = w.engine.add_attachment(add("My Screen (1).png", b64(&png))).await.unwrap();
    assert_eq!((shot.name.as_str(), shot.kind.as_str(), shot.size), ("My-Screen-1.png", "image", png.len() as i64));
    let work = w.shop.join(".kiln/sessions").join(&s.id);
    assert_eq!(std::fs::read(work.join("workspace/reference/attachments/My-Screen-1.png")).unwrap(), png);
    assert!(work.join("attachments").join(format!("{}-My-Screen-1.png", shot.id)).is_file());

    // Refusals change nothing.
    for (name, data, code) in [
        ("shot.pdf", b64(&png), kiln_engine::ErrorCode::AttachmentMismatch),
        ("tool.exe", b64(b"MZ"), kiln_engine::ErrorCode::AttachmentType),
        ("empty.txt", String::new(), kiln_engine::ErrorCode::AttachmentEmpty),
        ("big.txt", b64(&vec![b'a'; 5 * 1024 * 1024 + 1]), kiln_engine::ErrorCode::AttachmentTooLarge),
    ] {
        assert_eq!(w.engine.add_attachment(add(name, data)).await.unwrap_err().code, code, "{name}");
    }
    let session = w.engine.get_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert_eq!(session.attachments.len(), 1);

    send(&w, &s.id, "Match the screenshot").await;
    settled(&w, &s.id).await;
    let body = w.server.requests()[0].body.to_string();
    assert!(body.contains("reference/attachments/My-Screen-1.png"), "{body}");

    let after = w
        .engine
        .remove_attachment(RemoveAttachmentArgs { session_id: s.id.clone(), attachment_id: shot.id.clone() })
        .await
        .unwrap();
    assert!(after.attachments.is_empty());
    assert!(!work.join("workspace/reference/attachments/My-Screen-1.png").exists());
    let again = w
        .engine
        .remove_attachment(RemoveAttachmentArgs { session_id: s.id.clone(), attachment_id: shot.id })
        .await
        .unwrap_err();
    assert_eq!(again.code, kiln_engine::ErrorCode::AttachmentNotFound);
}

#[tokio::test]
async fn with_auto_continue_off_a_handoff_waits_for_the_operator() {
    let w =
        world(vec![Step::text("Endpoint added.\nHANDOFF: frontend-engineer - show it"), Step::text("never reached")])
            .await;
    let s = create(&w.engine, "Wishlist in @shop/catalog").await;
    let off = w
        .engine
        .update_session(UpdateSessionArgs { session_id: s.id.clone(), auto_continue: Some(false), title: None })
        .await
        .unwrap();
    assert!(!off.auto_continue);
    send(&w, &s.id, "Add the endpoint").await;
    let s = settled(&w, &s.id).await;
    assert_eq!(w.server.requests().len(), 1);
    assert_eq!(s.pending_role.as_deref(), Some("frontend-engineer"));
    let systems = texts(&transcript(&w, &s.id).await, EntryKind::System).join("\n");
    assert!(
        systems.contains("auto-continue is off") && systems.contains("Continue with **Frontend Engineer**"),
        "{systems}"
    );
}

#[tokio::test]
async fn the_planner_agent_adds_modules_a_title_and_the_first_role_but_never_drops_one() {
    let answer = r#"Plan: {"modules": ["@shop/cart", "@shop/catalog", "billing.core"], "title": "Wishlist everywhere", "role": "UX Designer", "reason": "The cart shows the wishlist too."}"#;
    let design =
        Step::tool("write_file", json!({ "path": "modules/catalog/docs/wishlist.md", "content": "# Wishlist\n" }));
    let w = world_with_planner(
        vec![
            Step::text(answer),
            design,
            Step::text("Designed.\nHANDOFF: none - done"),
            Step::text("Checked it.\nREVIEW: pass - ready"),
        ],
        true,
    )
    .await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    assert_eq!(s.state, SessionState::Planning);
    // The first message waits for the planner, then goes to the role it suggested.
    send(&w, &s.id, "Start").await;
    let s = settled(&w, &s.id).await;
    assert_eq!(
        s.modules.iter().map(|m| (m.id.as_str(), m.kind)).collect::<Vec<_>>(),
        [("@shop/catalog", ModuleChange::Edit), ("@shop/cart", ModuleChange::Edit)]
    );
    assert_eq!(s.title, "Wishlist everywhere");
    assert_eq!(s.role.as_deref(), Some("ux-designer"));
    let systems = texts(&transcript(&w, &s.id).await, EntryKind::System).join("\n");
    assert!(systems.contains("**Planner agent** — added module `@shop/cart`; ignored `billing.core`"), "{systems}");
    // The planner's turn was read-only: it was offered no tool that writes.
    let tools = w.server.requests()[0].body["tools"].to_string();
    assert!(tools.contains("read_file") && !tools.contains("write_file") && !tools.contains("run_command"), "{tools}");
    assert_eq!(s.usage.total.turns, 2, "the design and its review; the planner's own turn is not a session turn");
}

#[tokio::test]
async fn without_a_usable_planner_answer_the_rules_decide_alone() {
    let w = world_with_planner(vec![Step::text("I think you should edit the catalog.")], true).await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    let s = settled(&w, &s.id).await;
    assert_eq!(s.state, SessionState::Editing);
    assert_eq!(s.modules.len(), 1);
    let systems = texts(&transcript(&w, &s.id).await, EntryKind::System).join("\n");
    assert!(systems.contains("answer could not be used (its answer held no JSON object)"), "{systems}");
}

/// Kiln's own loop keeps its conversations in memory, in the workspace: a session's next
/// turn on the same endpoint, model and key continues the conversation itself.
#[tokio::test]
async fn the_next_turn_on_the_same_endpoint_continues_the_conversation() {
    let w = world(vec![
        server_file("validation"),
        Step::text("First answer.\nHANDOFF: none - done"),
        Step::text("Checked it.\nREVIEW: pass - ready"),
        Step::text("Second answer.\nHANDOFF: none - done"),
    ])
    .await;
    let s = create(&w.engine, "Two steps in @shop/catalog").await;
    send(&w, &s.id, "Tighten the server validation").await;
    let first = settled(&w, &s.id).await;
    send(&w, &s.id, "Now the second server step").await;
    let s = settled(&w, &s.id).await;
    assert_eq!(s.state, SessionState::Review);
    assert_eq!(s.resume_ids["openai-compatible"], first.resume_ids["openai-compatible"]);
    let requests = w.server.requests();
    assert_eq!(requests.len(), 4);
    let messages = requests[3].body["messages"].as_array().cloned().unwrap_or_default();
    let said =
        |role: &str, text: &str| messages.iter().any(|m| m["role"] == role && m["content"].to_string().contains(text));
    assert!(said("user", "Tighten the server validation") && said("assistant", "First answer."), "{messages:#?}");
    assert!(!requests[3].body["messages"].to_string().contains("This continues an earlier conversation"));
}

#[tokio::test]
async fn a_lost_conversation_continues_fresh_with_the_transcript_replayed() {
    let w = world(vec![
        server_file("validation"),
        Step::text("First answer.\nHANDOFF: none - done"),
        Step::text("Checked it.\nREVIEW: pass - ready"),
        Step::text("Second answer.\nHANDOFF: none - done"),
    ])
    .await;
    let s = create(&w.engine, "Two steps in @shop/catalog").await;
    send(&w, &s.id, "Tighten the server validation").await;
    let first = settled(&w, &s.id).await;
    assert!(first.resume_ids.contains_key("openai-compatible"));
    // A new model means a new driver instance, which holds none of the old conversations.
    w.engine
        .update_settings(UpdateSettingsArgs { openai_model: Some("scripted-2".into()), ..Default::default() })
        .await
        .unwrap();
    send(&w, &s.id, "Now the second server step").await;
    let s = settled(&w, &s.id).await;
    assert_eq!(s.state, SessionState::Review);
    let systems = texts(&transcript(&w, &s.id).await, EntryKind::System).join("\n");
    assert!(systems.contains("no longer holds this session's conversation"), "{systems}");
    let requests = w.server.requests();
    // The first turn (a write, then its answer) and its review; the second turn changed no
    // file, so the review holds.
    assert_eq!(requests.len(), 4);
    let replayed = requests[3].body["messages"].to_string();
    assert!(replayed.contains("This continues an earlier conversation"), "{replayed}");
    assert!(
        replayed.contains("Operator: Tighten the server validation") && replayed.contains("First answer."),
        "{replayed}"
    );
    assert!(replayed.contains("Now the second server step"));
    assert_ne!(s.resume_ids["openai-compatible"], first.resume_ids["openai-compatible"]);
}

#[tokio::test]
async fn reopening_the_workspace_keeps_its_turns_and_a_new_process_closes_orphans() {
    let w = world(vec![
        Step::tool("run_command", json!({ "command": "sleep 1" })),
        server_file("slow"),
        Step::text("Done.\nHANDOFF: none - done"),
        Step::text("Checked it.\nREVIEW: pass - ready"),
    ])
    .await;
    let s = create(&w.engine, "Slow @shop/catalog change").await;
    send(&w, &s.id, "Run it on the server").await;
    // The UI's "Switch workspace" back to the same one must not cut the turn short.
    open(&w.engine, &w.shop).await;
    let s = settled(&w, &s.id).await;
    assert_eq!(s.state, SessionState::Review);

    // Another process (Kiln restarted) finds a turn marked running: it was cut short.
    // One process at a time works on a workspace, so each one here starts when the one
    // before has gone.
    drop(w.engine);
    let running = common::engine(&w.shop.join("../config2"));
    open_when_released(&running, &w.shop, Duration::from_secs(30)).await;
    let s2 = create(&running, "Another @shop/catalog change").await;
    sqlx::query("UPDATE sessions SET state = 'running' WHERE id = ?")
        .bind(&s2.id)
        .execute(&sqlite(&w.shop).await)
        .await
        .unwrap();
    drop(running);
    let restarted = common::engine(&w.shop.join("../config3"));
    open_when_released(&restarted, &w.shop, Duration::from_secs(30)).await;
    let after = restarted.get_session(SessionIdArgs { session_id: s2.id.clone() }).await.unwrap();
    assert_eq!(after.state, SessionState::Blocked);
}

async fn sqlite(shop: &std::path::Path) -> sqlx::SqlitePool {
    sqlx::SqlitePool::connect(&format!("sqlite://{}", shop.join(".kiln/kiln.db").display())).await.unwrap()
}

#[tokio::test]
async fn every_turn_that_changes_files_leaves_a_checkpoint_to_restore() {
    let w = world(vec![
        Step::tool("write_file", json!({ "path": "modules/catalog/src/server/wishlist.js", "content": "v1\n" })),
        Step::text("First.\nHANDOFF: none - done"),
        Step::text("Checked it.\nREVIEW: pass - ready"),
        Step::tool("write_file", json!({ "path": "modules/catalog/src/server/wishlist.js", "content": "v2\n" })),
        Step::tool("write_file", json!({ "path": "modules/catalog/src/server/extra.js", "content": "extra\n" })),
        Step::tool("run_command", json!({ "command": "rm modules/catalog/src/server/routes.js && chmod +x modules/catalog/src/server/wishlist.js" })),
        Step::text("Second.\nHANDOFF: none - done"),
        Step::text("Checked it.\nREVIEW: pass - ready"),
        Step::text("A question only?\nHANDOFF: none - need an answer"),
    ])
    .await;
    let s = create(&w.engine, "Wishlist in @shop/catalog").await;
    let work = w.shop.join(".kiln/sessions").join(&s.id).join("workspace");
    let server = work.join("modules/catalog/src/server");
    let routes = std::fs::read_to_string(server.join("routes.js")).unwrap();
    std::fs::create_dir_all(work.join("node_modules/dep")).unwrap();
    std::fs::write(work.join("node_modules/dep/index.js"), "kept").unwrap();

    send(&w, &s.id, "Add the wishlist endpoint").await;
    let one = settled(&w, &s.id).await;
    send(&w, &s.id, "Refine the server side").await;
    let two = settled(&w, &s.id).await;
    assert_eq!(one.checkpoints.len(), 2);
    assert_eq!(two.checkpoints.iter().map(|c| c.sequence).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(two.checkpoints[2].label, "Refine the server side");
    // The restore point sits on the entry that closed its turn.
    let entries = transcript(&w, &s.id).await;
    let closing = entries.iter().find(|e| Some(e.id) == two.checkpoints[2].entry_id).expect("linked entry");
    assert_eq!(closing.kind, EntryKind::Handoff);
    // A turn that changed nothing takes no checkpoint.
    send(&w, &s.id, "Anything to ask?").await;
    assert_eq!(settled(&w, &s.id).await.checkpoints.len(), 3);
    assert!(
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(server.join("wishlist.js")).unwrap().permissions())
            & 0o111
            != 0
    );

    // A module that joins now keeps its files through a restore.
    w.engine.add_module(AddModuleArgs { session_id: s.id.clone(), module_id: "@shop/cart".into() }).await.unwrap();
    let cart = work.join("modules/cart/src/server/routes.js");
    std::fs::write(&cart, "// the cart's own change\n").unwrap();

    let restored =
        w.engine.restore_checkpoint(RestoreCheckpointArgs { session_id: s.id.clone(), sequence: 1 }).await.unwrap();
    assert_eq!(restored.state, SessionState::Editing);
    assert_eq!(std::fs::read_to_string(server.join("wishlist.js")).unwrap(), "v1\n");
    assert!(
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(server.join("wishlist.js")).unwrap().permissions())
            & 0o111
            == 0
    );
    assert!(!server.join("extra.js").exists());
    assert_eq!(std::fs::read_to_string(server.join("routes.js")).unwrap(), routes);
    assert_eq!(std::fs::read_to_string(work.join("node_modules/dep/index.js")).unwrap(), "kept");
    assert_eq!(std::fs::read_to_string(&cart).unwrap(), "// the cart's own change\n");
    let last = transcript(&w, &s.id).await.pop().unwrap();
    assert_eq!(
        last.text,
        "Restored the session's working copy to the state after Backend Engineer in @shop/catalog (turn 1)."
    );

    w.engine.restore_checkpoint(RestoreCheckpointArgs { session_id: s.id.clone(), sequence: 0 }).await.unwrap();
    assert!(!server.join("wishlist.js").exists());
    assert_eq!(std::fs::read_to_string(server.join("routes.js")).unwrap(), routes);

    // Refusals change nothing.
    let restore = |sequence| w.engine.restore_checkpoint(RestoreCheckpointArgs { session_id: s.id.clone(), sequence });
    assert_eq!(restore(99).await.unwrap_err().code, kiln_engine::ErrorCode::CheckpointNotFound);
    assert_eq!(restore(-1).await.unwrap_err().code, kiln_engine::ErrorCode::InvalidInput);
    w.engine.archive_session(StopArgs { session_id: s.id.clone(), stop: None }).await.unwrap();
    assert_eq!(restore(1).await.unwrap_err().code, kiln_engine::ErrorCode::SessionArchived);
    assert!(!server.join("wishlist.js").exists());
}

#[tokio::test]
async fn a_failed_gate_hands_the_fix_back_to_the_same_role_with_the_command_and_output() {
    let broken = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\ntest('wishlist totals', () => assert.equal(1 + 1, 3));\n";
    let fixed = broken.replace("3)", "2)");
    let w = world_with(
        vec![
            Step::tool("write_file", json!({ "path": "modules/catalog/test/wishlist.test.js", "content": broken })),
            Step::text("Added the wishlist test.\nHANDOFF: none - done"),
            Step::tool("write_file", json!({ "path": "modules/catalog/test/wishlist.test.js", "content": fixed })),
            Step::text("Fixed the test.\nHANDOFF: none - done"),
            Step::text("Checked it.\nREVIEW: pass - ready"),
        ],
        false,
        true,
    )
    .await;
    let s = create(&w.engine, "Wishlist in @shop/catalog").await;
    send(&w, &s.id, "Add the wishlist endpoint with a test").await;
    let s = settled(&w, &s.id).await;
    assert_eq!(s.state, SessionState::Review, "{:#?}", transcript(&w, &s.id).await);

    let entries = transcript(&w, &s.id).await;
    let gates = texts(&entries, EntryKind::Gate);
    let tests: Vec<&String> = gates.iter().filter(|t| t.starts_with("**tests**")).collect();
    assert_eq!(tests.len(), 2, "{gates:#?}");
    assert!(tests[0].starts_with("**tests** failed") && tests[0].contains("wishlist totals"), "{}", tests[0]);
    assert!(tests[1].starts_with("**tests** passed"), "{}", tests[1]);
    assert!(
        gates.iter().any(|t| t.starts_with("**dependencies** not configured")),
        "a gate with no command is not configured, not passed: {gates:#?}"
    );
    let handoffs = texts(&entries, EntryKind::Handoff);
    assert!(handoffs.iter().any(|t| t.starts_with("**gate `tests` → backend-engineer**")), "{handoffs:#?}");

    // The fix turn's prompt carried the command and the failing output.
    let fix = w.server.requests()[2].body["messages"].to_string();
    assert!(
        fix.contains("The `tests` gate failed") && fix.contains("npm test") && fix.contains("wishlist totals"),
        "{fix}"
    );
    let latest = w.engine.get_gates(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    let tests_gate = latest.iter().find(|g| g.gate == "tests").unwrap();
    assert_eq!(tests_gate.status, GateStatus::Passed);
    assert!(latest.iter().any(|g| g.gate == "spec-schema" && g.status == GateStatus::Passed));
}

#[tokio::test]
async fn check_modules_runs_every_gate_and_an_empty_rust_suite_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("crate");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"emptycrate\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(root.join("src/lib.rs"), "//! A crate with no test at all.\npub fn one() -> u32 { 1 }\n").unwrap();
    std::fs::write(root.join("kiln.toml"), "[gates.rust]\ndependencies = \"\"\nformat = \"\"\n").unwrap();
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &root).await;
    let s = create(&engine, "Anything").await;
    let results = engine.check_modules(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    let by_gate = |g: &str| results.iter().find(|r| r.gate == g).unwrap_or_else(|| panic!("no {g} in {results:#?}"));
    assert_eq!(by_gate("typecheck").status, GateStatus::Passed, "{:?}", by_gate("typecheck"));
    let tests = by_gate("tests");
    assert_eq!(tests.status, GateStatus::Failed, "an empty suite must fail: {tests:?}");
    assert_eq!(tests.exit_code, Some(0));
    assert_eq!(by_gate("format").status, GateStatus::NotConfigured, "turned off in kiln.toml");
    assert_eq!(by_gate("format").source, "kiln.toml [gates.rust]");
    assert_eq!(by_gate("tests").source, "Cargo.toml");
    let entries = engine
        .get_transcript(GetTranscriptArgs { session_id: s.id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    assert!(entries.iter().any(|e| e.kind == EntryKind::Gate && e.text.contains("ran no test")));
}

fn session_settings(extra: &'static str) -> impl Fn(String) -> String {
    // A `setup` given here replaces the empty one the world starts with.
    move |text: String| {
        let text = if extra.contains("setup =") { text.replace("setup = \"\"\n", "") } else { text };
        text.replace("[session]\n", &format!("[session]\n{extra}\n"))
    }
}

#[tokio::test]
async fn long_turns_autosave_and_old_checkpoints_are_pruned_but_never_the_start() {
    let script =
        "for i in 1 2 3 4; do echo \"export const tick = $i;\" > modules/catalog/src/server/tick.js; sleep 0.6; done";
    let w = world_edit(
        vec![
            Step::tool("run_command", json!({ "command": script })),
            Step::text("Ticked.\nHANDOFF: none - done"),
            Step::text("Checked it.\nREVIEW: pass - ready"),
            Step::tool("write_file", json!({ "path": "modules/catalog/src/server/b.js", "content": "b" })),
            Step::text("B.\nHANDOFF: none - done"),
            Step::text("Checked it.\nREVIEW: pass - ready"),
            Step::tool("write_file", json!({ "path": "modules/catalog/src/server/c.js", "content": "c" })),
            Step::text("C.\nHANDOFF: none - done"),
            Step::text("Checked it.\nREVIEW: pass - ready"),
        ],
        false,
        false,
        session_settings("autosave_seconds = 1\nmax_checkpoints = 3"),
    )
    .await;
    let s = create(&w.engine, "Ticks in @shop/catalog").await;
    send(&w, &s.id, "Tick on the server").await;
    let after_one = settled(&w, &s.id).await;
    let labels: Vec<&str> = after_one.checkpoints.iter().map(|c| c.label.as_str()).collect();
    // Named by the operator's message that led to them (issue 15).
    assert!(labels.contains(&"Autosave: Tick on the server"), "{labels:?}");
    assert_eq!(*labels.last().unwrap(), "Tick on the server");
    send(&w, &s.id, "Add b on the server").await;
    settled(&w, &s.id).await;
    send(&w, &s.id, "Add c on the server").await;
    let s = settled(&w, &s.id).await;
    let sequences: Vec<i64> = s.checkpoints.iter().map(|c| c.sequence).collect();
    assert_eq!(sequences.len(), 3, "{sequences:?}");
    assert_eq!(sequences[0], 0, "the start is never pruned");
    let store = git2::Repository::open_bare(w.shop.join(".kiln/store.git")).unwrap();
    assert_eq!(store.references_glob(&format!("refs/kiln/{}/*", s.id)).unwrap().count(), 3);
    // The oldest kept checkpoints still restore.
    w.engine
        .restore_checkpoint(RestoreCheckpointArgs { session_id: s.id.clone(), sequence: sequences[1] })
        .await
        .unwrap();
}

#[tokio::test]
async fn a_message_during_setup_waits_for_it_instead_of_cutting_it_short() {
    let w = world_edit(
        vec![
            server_file("tweak"),
            Step::text("Done.\nHANDOFF: none - done"),
            Step::text("Checked it.\nREVIEW: pass - ready"),
        ],
        false,
        false,
        session_settings("setup = \"sleep 5 && touch setup-done\""),
    )
    .await;
    let s = create(&w.engine, "Quick @shop/catalog change").await;
    assert_eq!(s.setup, SetupState::Running);
    send(&w, &s.id, "Tweak the server").await;
    let setup_done = w.shop.join(".kiln/sessions").join(&s.id).join("workspace/setup-done");
    assert!(!setup_done.exists(), "the send waited for setup instead of queueing");
    let s = settled(&w, &s.id).await;
    assert_eq!(s.setup, SetupState::Passed);
    assert_eq!(s.state, SessionState::Review);
    assert!(w.shop.join(".kiln/sessions").join(&s.id).join("workspace/setup-done").exists());
}

#[tokio::test]
async fn a_satisfied_request_is_reviewed_read_only_and_findings_go_back_to_implementation() {
    let file = "modules/catalog/src/server/wishlist.js";
    let w = world(vec![
        Step::tool("write_file", json!({ "path": file, "content": "export const limit = Infinity;\n" })),
        Step::text("Built.\nHANDOFF: none - done"),
        // The review is read-only: its write is put back.
        Step::tool("write_file", json!({ "path": file, "content": "// the reviewer was here\n" })),
        Step::text("Correctness: the wishlist has no size limit.\nREVIEW: changes - add a limit"),
        Step::tool("write_file", json!({ "path": file, "content": "export const limit = 100;\n" })),
        Step::text("Limited.\nHANDOFF: none - done"),
        Step::text("Correctness, security, compatibility, lifecycle, tests, UI: checked.\nREVIEW: pass - ready"),
        Step::text("Still fine.\nREVIEW: pass - ready again"),
    ])
    .await;
    let s = create(&w.engine, "Wishlist in @shop/catalog").await;
    send(&w, &s.id, "Add the wishlist endpoint").await;
    let s = settled(&w, &s.id).await;
    assert_eq!(s.state, SessionState::Review, "{:#?}", transcript(&w, &s.id).await);
    let work = w.shop.join(".kiln/sessions").join(&s.id).join("workspace");
    assert_eq!(std::fs::read_to_string(work.join(file)).unwrap(), "export const limit = 100;\n");
    let handoffs = texts(&transcript(&w, &s.id).await, EntryKind::Handoff).join("\n");
    assert!(
        handoffs.contains("**review → changes**: add a limit") && handoffs.contains("**review → pass**: ready"),
        "{handoffs}"
    );
    // The fix turn was told the findings.
    let told = w.server.requests().iter().any(|r| {
        let messages = r.body["messages"].to_string();
        messages.contains("found changes to make") && messages.contains("the wishlist has no size limit")
    });
    assert!(told, "no turn was given the review's findings");
    assert_eq!(s.reviews.len(), 1);
    let review = &s.reviews[0];
    assert!(review.passed && !review.stale && review.summary == "ready", "{review:?}");
    assert!(review.report.contains("Correctness, security"));

    // An edit after the review makes it stale; a review on demand makes it current again.
    std::fs::write(work.join(file), "export const limit = 50;\n").unwrap();
    let s = w.engine.get_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert!(s.reviews[0].stale);
    w.engine.review_module(ModuleArgs { session_id: s.id.clone(), module_id: "@shop/catalog".into() }).await.unwrap();
    let s = settled(&w, &s.id).await;
    assert!(!s.reviews[0].stale && s.reviews[0].summary == "ready again", "{:?}", s.reviews);
    let err = w
        .engine
        .review_module(ModuleArgs { session_id: s.id.clone(), module_id: "@shop/nope".into() })
        .await
        .unwrap_err();
    assert_eq!(err.code, kiln_engine::ErrorCode::ModuleNotFound);
}

#[tokio::test]
async fn the_engine_counts_the_turn_it_runs_and_is_idle_after() {
    let flag = "activity-release.flag";
    let w = world(vec![
        Step::tool("run_command", json!({ "command": format!("while [ ! -e {flag} ]; do sleep 0.1; done") })),
        Step::text("Waited.\nHANDOFF: none - done"),
    ])
    .await;
    let s = create(&w.engine, "Wait in @shop/catalog").await;
    assert!(w.engine.activity().is_idle(), "{:?}", w.engine.activity());
    send(&w, &s.id, "Wait for the flag on the server").await;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while w.engine.activity().turns == 0 {
        assert!(std::time::Instant::now() < deadline, "no turn counted: {:?}", w.engine.activity());
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let running = w.engine.activity();
    assert!(!running.is_idle());
    assert_eq!((running.turns, running.deliveries, running.terminals), (1, 0, 0), "{running:?}");
    assert!(running.summary().starts_with("1 turn"), "{}", running.summary());
    std::fs::write(w.shop.join(".kiln/sessions").join(&s.id).join("workspace").join(flag), "go").unwrap();
    settled(&w, &s.id).await;
    assert!(w.engine.activity().is_idle(), "{:?}", w.engine.activity());
    assert_eq!(w.engine.activity().summary(), "Nothing running");
}

/// The composer's model picker: the endpoint's own list, with its key; a model it does not
/// list is refused before anything happens (no message, no request), one it lists runs.
#[tokio::test]
async fn a_model_the_endpoint_does_not_offer_is_refused_before_the_turn() {
    let w = world(vec![Step::text("Done.\nHANDOFF: none - done")]).await;
    let list = w.engine.list_models(ListModelsArgs { driver: None }).await.unwrap();
    assert_eq!(list.driver, "openai-compatible");
    assert_eq!(list.models, kiln_model_server::MODELS.iter().map(|m| m.to_string()).collect::<Vec<_>>());
    assert!(list.complete, "{list:#?}");
    assert_eq!(list.default_model.as_deref(), Some("scripted"));
    let asked = w.server.requests();
    assert_eq!((asked[0].path.as_str(), asked[0].header("authorization")), ("/v1/models", Some("Bearer sk-test-key")));

    let s = create(&w.engine, "Anything in @shop/catalog").await;
    let before = transcript(&w, &s.id).await.len();
    let with_model = |model: &str| SendMessageArgs {
        session_id: s.id.clone(),
        text: "Fix it".into(),
        role: None,
        module: None,
        driver: None,
        model: Some(model.into()),
        context: None,
    };
    let refused = w.engine.send_message(with_model("gpt-nope")).await.unwrap_err();
    assert_eq!(refused.code, kiln_engine::ErrorCode::ModelUnknown, "{}", refused.message);
    assert!(
        refused.message.contains("`gpt-nope`") && refused.message.contains("`scripted-large`"),
        "{}",
        refused.message
    );
    assert_eq!(transcript(&w, &s.id).await.len(), before, "nothing was recorded");
    assert!(!w.server.requests().iter().any(|r| r.path.ends_with("/chat/completions")), "no turn ran");

    let sent = w.engine.send_message(with_model("scripted-large")).await;
    assert!(sent.is_ok(), "{sent:?}");
    settled(&w, &s.id).await;
    let chat = w.server.requests().into_iter().find(|r| r.path.ends_with("/chat/completions")).expect("the turn ran");
    assert_eq!(chat.body["model"], "scripted-large");

    // Claude Code's aliases; any id may still be typed for it.
    let claude = w.engine.list_models(ListModelsArgs { driver: Some("claude".into()) }).await.unwrap();
    assert_eq!((claude.models.len(), claude.complete), (3, false));
    let unknown = w.engine.list_models(ListModelsArgs { driver: Some("nope".into()) }).await.unwrap_err();
    assert_eq!(unknown.code, kiln_engine::ErrorCode::DriverNotFound);
}
