//! The direct workflow (ARCHITECTURE.md: Workflows and the chain) on a repository with no kiln.toml: an npm workspace
//! with two packages, written here. The engineer takes the turn without a specification
//! or an approval, may change files outside its module (a root changelog, the other
//! package) and keeps them; the changed modules join the session; the detected gates
//! run the package's own test script; not-configured gates never block delivery while a
//! failing detected gate does; a turn that changes nothing offers no review.
//! Driven by the engine's own OpenAI-compatible loop against the scripted model server.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::*;
use kiln_engine::types::*;
use kiln_engine::Engine;
use kiln_model_server::{ModelServer, Step};
use serde_json::json;

/// `sum` adds one too many; its test never notices.
fn npm_workspace(root: &Path) {
    write(&root.join("package.json"), r#"{"name": "numbers", "private": true, "workspaces": ["packages/*"]}"#);
    write(&root.join("CHANGELOG.md"), "# Changelog\n");
    write(&root.join(".gitignore"), "node_modules/\n");
    write(
        &root.join("packages/sum/package.json"),
        r#"{"name": "@numbers/sum", "version": "1.0.0", "scripts": {"test": "node --test"}}"#,
    );
    write(&root.join("packages/sum/index.js"), "exports.sum = (a, b) => a + b + (b > 100 ? 1 : 0);\n");
    write(&root.join("packages/sum/test/sum.test.js"), SUM_TEST);
    write(&root.join("packages/mean/package.json"), r#"{"name": "@numbers/mean", "version": "1.0.0"}"#);
    write(&root.join("packages/mean/index.js"), "exports.mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;\n");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "-qm", "feat: sum and mean"]);
}

const SUM_TEST: &str = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { sum } = require('..');\ntest('adds', () => assert.strictEqual(sum(1, 2), 3));\n";
const FIXED_TEST: &str = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { sum } = require('..');\ntest('adds', () => assert.strictEqual(sum(1, 2), 3));\ntest('adds big numbers', () => assert.strictEqual(sum(1, 200), 201));\n";

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git").args(args).current_dir(dir).status().unwrap();
    assert!(status.success(), "git {args:?}");
}

struct World {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    engine: std::sync::Arc<Engine>,
    server: ModelServer,
}

async fn world(script: Vec<Step>) -> World {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("numbers");
    npm_workspace(&repo);
    let engine = engine(&tmp.path().join("config"));
    let view = open(&engine, &repo).await;
    assert_eq!((view.workflow, view.config_path.clone()), (Workflow::Direct, None));
    let server = ModelServer::start(script).await;
    use_scripted_model(&engine, &server, false).await;
    World { _tmp: tmp, repo, engine, server }
}

async fn settled(w: &World, id: &str) -> SessionView {
    wait_settled(&w.engine, id, Duration::from_secs(60)).await
}

async fn entries(w: &World, id: &str, kind: EntryKind) -> Vec<String> {
    let all = w
        .engine
        .get_transcript(GetTranscriptArgs { session_id: id.into(), after: None, before: None, last: None })
        .await
        .unwrap();
    all.into_iter().filter(|e| e.kind == kind).map(|e| e.text).collect()
}

fn write_file(path: &str, content: &str) -> Step {
    Step::tool("write_file", json!({"path": path, "content": content}))
}

#[tokio::test]
async fn the_engineer_fixes_a_bug_anywhere_and_the_detected_gates_run() {
    let w = world(vec![
        write_file("packages/sum/index.js", "exports.sum = (a, b) => a + b;\n"),
        write_file("packages/sum/test/sum.test.js", FIXED_TEST),
        write_file("CHANGELOG.md", "# Changelog\n\n- sum no longer adds one to big numbers\n"),
        write_file(
            "packages/mean/index.js",
            "exports.mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);\n",
        ),
        Step::tool("run_command", json!({"command": "cd packages/sum && npm test"})),
        Step::text("Fixed sum and guarded mean against an empty list.\nHANDOFF: none - fixed"),
        Step::text("Checked it.\nREVIEW: pass - ready"),
    ])
    .await;
    let s = create(&w.engine, "Fix the sum of big numbers in @numbers/sum").await;
    assert_eq!(s.modules.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["@numbers/sum"]);
    let setup = wait_setup(&w.engine, &s.id).await;
    assert_eq!(setup.setup, SetupState::Passed, "{:#?}", entries(&w, &s.id, EntryKind::Gate).await);
    send(&w, &s.id, "Fix it").await;
    let s = settled(&w, &s.id).await;

    let systems = entries(&w, &s.id, EntryKind::System).await;
    // The engineer takes every turn of the direct workflow: no routing line says so.
    assert!(!systems.iter().any(|t| t.contains("Routed to")), "{systems:#?}");
    assert!(
        !systems.iter().any(|t| t.contains("Put back") || t.contains("approv")),
        "nothing is put back or waits for approval: {systems:#?}"
    );
    assert!(
        systems.iter().any(|t| t.contains("Added module `@numbers/mean`")),
        "the other package joined: {systems:#?}"
    );
    assert_eq!(s.state, SessionState::Review, "{systems:#?}");
    assert!(systems.iter().any(|t| t.contains("The review passed")), "{systems:#?}");
    // One review covers the whole change: both modules hold a passing review.
    assert_eq!(s.reviews.iter().filter(|r| r.passed && !r.stale).count(), 2, "{:#?}", s.reviews);
    let review = w.server.requests()[6].body["messages"][0]["content"].as_str().unwrap().to_string();
    assert!(review.contains("`@numbers/sum`") && review.contains("`@numbers/mean`"), "{review}");

    // The agent's command ran the package's tests and saw them pass.
    let tools = entries(&w, &s.id, EntryKind::Tool).await;
    assert!(tools.iter().any(|t| t.contains("pass 2")), "{tools:#?}");

    // The files outside the module stay; the gates ran the repository's own runner.
    let workdir = w.repo.join(".kiln/sessions").join(&s.id).join("workspace");
    assert!(std::fs::read_to_string(workdir.join("CHANGELOG.md")).unwrap().contains("big numbers"));
    let gates = w.engine.get_gates(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    let find = |module: &str, gate: &str| {
        gates.iter().find(|g| g.module.as_deref() == Some(module) && g.gate == gate).cloned()
    };
    let tests = find("@numbers/sum", "tests").expect("the tests gate ran");
    assert_eq!((tests.status, tests.command.as_str()), (GateStatus::Passed, "npm test"), "{tests:#?}");
    assert_eq!(tests.source, "package.json scripts.test in `packages/sum`");
    assert!(tests.output_head.contains("pass 2"), "{}", tests.output_head);
    assert_eq!(find("@numbers/sum", "lint").unwrap().status, GateStatus::NotConfigured);
    assert_eq!(find("@numbers/sum", "typecheck").unwrap().status, GateStatus::NotConfigured);
    assert!(gates.iter().all(|g| g.gate != "spec-schema"), "no spec-schema gate in the direct workflow");
    // `mean` has no tests: not configured, which does not block.
    assert_eq!(find("@numbers/mean", "tests").unwrap().status, GateStatus::NotConfigured);

    // Not-configured gates never block; the review passed: nothing in the way.
    let plan = w
        .engine
        .plan_delivery(PlanDeliveryArgs { session_id: s.id.clone(), target: Some(DeliveryTarget::Workspace) })
        .await
        .unwrap();
    assert!(plan.blockers.is_empty(), "{:#?}", plan.blockers);

    // A detected gate that fails blocks.
    std::fs::write(workdir.join("packages/sum/index.js"), "exports.sum = (a, b) => a - b;\n").unwrap();
    let gates = w.engine.check_modules(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert!(gates.iter().any(|g| g.gate == "tests" && g.status == GateStatus::Failed), "{gates:#?}");
    let plan = w
        .engine
        .plan_delivery(PlanDeliveryArgs { session_id: s.id.clone(), target: Some(DeliveryTarget::Workspace) })
        .await
        .unwrap();
    assert!(
        plan.blockers.iter().any(|b| b.message.contains("`tests` gate") && b.message.contains("failed")),
        "{:#?}",
        plan.blockers
    );
    assert_eq!(w.server.requests().iter().filter(|r| r.path.ends_with("/chat/completions")).count(), 7);
}

#[tokio::test]
async fn a_turn_that_changes_nothing_offers_no_review() {
    let w = world(vec![
        Step::text("The sum looks right to me.\nHANDOFF: none - nothing to do"),
        Step::text("REVIEW: pass - never asked"),
    ])
    .await;
    let s = create(&w.engine, "Check the sum in @numbers/sum").await;
    wait_setup(&w.engine, &s.id).await;
    send(&w, &s.id, "Check it").await;
    let s = settled(&w, &s.id).await;
    let systems = entries(&w, &s.id, EntryKind::System).await;
    assert!(systems.last().unwrap().contains("changed no file"), "{systems:#?}");
    assert!(!systems.iter().any(|t| t.contains("(read-only)")), "no review turn was started: {systems:#?}");
    assert_eq!(s.state, SessionState::Editing);
    assert_eq!(
        w.server.requests().iter().filter(|r| r.path.ends_with("/chat/completions")).count(),
        1,
        "no review turn"
    );
}

#[tokio::test]
async fn a_transcript_is_read_newest_first_in_windows_that_join_up() {
    let w = world(vec![Step::text("The sum looks right to me.\nHANDOFF: none - nothing to do")]).await;
    let s = create(&w.engine, "Check the sum in @numbers/sum").await;
    wait_setup(&w.engine, &s.id).await;
    send(&w, &s.id, "Check it").await;
    settled(&w, &s.id).await;
    let window = |after: Option<i64>, before: Option<i64>, last: Option<u32>| {
        w.engine.get_transcript(GetTranscriptArgs { session_id: s.id.clone(), after, before, last })
    };
    let ids = |entries: Vec<TranscriptEntry>| entries.into_iter().map(|e| e.id).collect::<Vec<_>>();
    let all = ids(window(None, None, None).await.unwrap());
    assert!(all.len() >= 4, "a brief, a message, the agent's answer and what the turn said: {all:?}");

    // The newest two, in order; then everything before the first of them: together, the whole.
    let newest = ids(window(None, None, Some(2)).await.unwrap());
    assert_eq!(newest, all[all.len() - 2..]);
    let older = ids(window(None, Some(newest[0]), None).await.unwrap());
    assert_eq!([older, newest].concat(), all);
    // Between two entries, and the newest one of those.
    let between = ids(window(Some(all[0]), Some(all[3]), None).await.unwrap());
    assert_eq!(between, all[1..3]);
    assert_eq!(ids(window(Some(all[0]), Some(all[3]), Some(1)).await.unwrap()), all[2..3]);

    let err = window(None, None, Some(0)).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput, "{err:?}");
    assert_eq!(ids(window(None, None, None).await.unwrap()), all, "a refused read changes nothing");
}

async fn send(w: &World, id: &str, text: &str) {
    send_text(&w.engine, id, text).await;
}

#[tokio::test]
async fn a_brief_that_names_no_module_starts_on_the_repository_and_modules_join() {
    let w = world(vec![
        write_file("packages/sum/index.js", "exports.sum = (a, b) => a + b;\n"),
        write_file("packages/sum/test/sum.test.js", FIXED_TEST),
        Step::text("Fixed the sum.\nHANDOFF: none - fixed"),
        Step::text("Checked it.\nREVIEW: pass - ready"),
    ])
    .await;
    // No module named, in a workspace of two: no MODULE_REQUIRED, no module yet.
    let s = create(&w.engine, "Big sums come out one too high").await;
    assert!(s.modules.is_empty(), "{:#?}", s.modules);
    let systems = entries(&w, &s.id, EntryKind::System).await;
    assert!(systems.iter().any(|t| t.contains("the brief names no module")), "{systems:#?}");
    wait_setup(&w.engine, &s.id).await;
    send(&w, &s.id, "Fix it").await;
    let s = settled(&w, &s.id).await;
    // The module the turn changed joined; its gates ran; the review covered it.
    assert_eq!(s.modules.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["@numbers/sum"]);
    assert_eq!(s.state, SessionState::Review, "{:#?}", entries(&w, &s.id, EntryKind::System).await);
    let gates = w.engine.get_gates(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert!(gates
        .iter()
        .any(|g| g.module.as_deref() == Some("@numbers/sum") && g.gate == "tests" && g.status == GateStatus::Passed));
    let plan = w
        .engine
        .plan_delivery(PlanDeliveryArgs { session_id: s.id.clone(), target: Some(DeliveryTarget::Workspace) })
        .await
        .unwrap();
    assert!(plan.blockers.is_empty(), "{:#?}", plan.blockers);
}

#[tokio::test]
async fn a_change_outside_every_module_is_reviewed_as_the_repository() {
    let w = world(vec![
        write_file("CHANGELOG.md", "# Changelog\n\n- big sums are right\n"),
        Step::text("Noted it.\nHANDOFF: none - noted"),
        Step::text("Checked it.\nREVIEW: pass - ready"),
    ])
    .await;
    let s = create(&w.engine, "Note the sum fix in the changelog").await;
    assert!(s.modules.is_empty());
    wait_setup(&w.engine, &s.id).await;
    send(&w, &s.id, "Go").await;
    let s = settled(&w, &s.id).await;
    assert!(s.modules.is_empty(), "no module changed: none joined");
    assert_eq!(s.state, SessionState::Review, "{:#?}", entries(&w, &s.id, EntryKind::System).await);
    let review: Vec<_> = s.reviews.iter().map(|r| (r.module_id.as_str(), r.passed, r.stale)).collect();
    assert_eq!(review, [("(repository)", true, false)]);
    let plan = w
        .engine
        .plan_delivery(PlanDeliveryArgs { session_id: s.id.clone(), target: Some(DeliveryTarget::Workspace) })
        .await
        .unwrap();
    assert!(plan.blockers.is_empty(), "{:#?}", plan.blockers);
    // An edit after the review makes it stale, and the plan says the repository needs one.
    let workdir = w.repo.join(".kiln/sessions").join(&s.id).join("workspace");
    std::fs::write(workdir.join("CHANGELOG.md"), "# Changelog\n\n- edited after the review\n").unwrap();
    let plan = w
        .engine
        .plan_delivery(PlanDeliveryArgs { session_id: s.id.clone(), target: Some(DeliveryTarget::Workspace) })
        .await
        .unwrap();
    assert!(
        plan.blockers.iter().any(|b| b.message.contains("`(repository)`") && !b.overridable),
        "{:#?}",
        plan.blockers
    );
}
