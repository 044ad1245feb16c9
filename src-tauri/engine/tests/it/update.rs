//! Update from the workspace (SPEC §4): two sessions change the same line; one is delivered
//! first, the other is blocked by the conflict, takes in the workspace with a three-way
//! merge, has its conflict resolved by the agent (Kiln's own loop against the scripted
//! model server), and is delivered too, the workspace ending with both changes. On a
//! repository written here, with no kiln.toml.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::common::*;
use kiln_engine::testing::ids::SessionId;
use kiln_engine::types::*;
use kiln_engine::Engine;
use kiln_model_server::{ModelServer, Step};
use serde_json::json;

const START: &str = "export const hello = \"hello\";\nexport const bye = \"bye\";\nexport const name = \"world\";\n";
/// Session A's change: the greeting.
const A: &str = "export const hello = \"hi\";\nexport const bye = \"bye\";\nexport const name = \"world\";\n";
/// Session B's change: the greeting too (a conflict with A), and the name.
const B: &str = "export const hello = \"hey\";\nexport const bye = \"bye\";\nexport const name = \"kiln\";\n";
/// What the agent makes of the conflict: A's greeting on B's file.
const RESOLVED: &str = "export const hello = \"hi\";\nexport const bye = \"bye\";\nexport const name = \"kiln\";\n";

fn repository(root: &Path) {
    write(&root.join("package.json"), r#"{"name": "greet", "version": "1.0.0"}"#);
    write(&root.join("greet.js"), START);
    write(&root.join("README.md"), "# greet\n");
    sh_git(root, &["init", "-q", "-b", "main"]);
    sh_git(root, &["config", "user.name", "Dev Person"]);
    sh_git(root, &["config", "user.email", "dev@example.com"]);
    sh_git(root, &["add", "-A"]);
    sh_git(root, &["commit", "-qm", "greet"]);
}

fn workdir(repo: &Path, id: &str) -> PathBuf {
    repo.join(".kiln/sessions").join(id).join("workspace")
}

async fn session(engine: &Engine, id: &str) -> SessionView {
    engine.get_session(SessionIdArgs { session_id: id.into() }).await.unwrap()
}

/// Every gate run, and a passing review stored for what the session covers as it is now.
async fn reviewed(engine: &Engine, id: &str) {
    engine.check_modules(SessionIdArgs { session_id: id.into() }).await.unwrap();
    let ws = engine.workspace().unwrap();
    let sid = SessionId::parse(id).unwrap();
    for m in kiln_engine::testing::review::covered(&session(engine, id).await) {
        kiln_engine::testing::review::store(&ws, &sid, &m, true, "ready", "REVIEW: pass - ready").await.unwrap();
    }
}

async fn plan(engine: &Engine, id: &str) -> DeliveryPlan {
    let args = PlanDeliveryArgs { session_id: id.into(), target: Some(DeliveryTarget::Workspace) };
    engine.plan_delivery(args).await.unwrap()
}

async fn deliver(engine: &Engine, id: &str) -> DeliveryRun {
    let p = plan(engine, id).await;
    assert!(p.blockers.is_empty(), "{:#?}", p.blockers);
    let args = DeliverArgs { session_id: id.into(), target: p.target, plan_id: p.plan_id.clone(), anyway: None };
    engine.deliver(args).await.unwrap();
    delivery_finished(engine, id, Duration::from_secs(60)).await
}

/// A repository (greet.js as `start`, when given, committed on top), an engine with Kiln's
/// own loop against a model server scripted with `script`, and two sessions past their
/// setup, each with its change to greet.js written as an agent would.
struct Two {
    repo: PathBuf,
    engine: std::sync::Arc<Engine>,
    a: String,
    b: String,
    /// Kept for the test's length: dropping it stops the server.
    _server: ModelServer,
}

async fn two_sessions(root: &Path, start: Option<&str>, script: Vec<Step>, sessions: [(&str, &str); 2]) -> Two {
    let repo = root.join("greet");
    repository(&repo);
    if let Some(start) = start {
        write(&repo.join("greet.js"), start);
        sh_git(&repo, &["commit", "-qam", "a new start"]);
    }
    let server = ModelServer::start(script).await;
    let engine = engine(&root.join("config"));
    open(&engine, &repo).await;
    use_scripted_model(&engine, &server, false).await;
    let mut ids = Vec::new();
    for (brief, _) in sessions {
        ids.push(create(&engine, brief).await.id);
    }
    for (id, (_, change)) in ids.iter().zip(sessions) {
        wait_setup(&engine, id).await;
        wait_settled(&engine, id, Duration::from_secs(30)).await;
        write(&workdir(&repo, id).join("greet.js"), change);
    }
    let [a, b]: [String; 2] = ids.try_into().unwrap();
    Two { repo, engine, a, b, _server: server }
}

fn git_status(dir: &Path) -> String {
    let out = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[tokio::test]
async fn two_sessions_on_one_line_are_both_delivered_after_an_update_the_agent_resolves() {
    let tmp = tempfile::tempdir().unwrap();
    let script = vec![
        Step::tool("write_file", json!({"path": "greet.js", "content": RESOLVED})),
        Step::text("Kept your greeting and the workspace's name.\nHANDOFF: none - resolved"),
        Step::text("Looked at it.\nREVIEW: pass - both changes are in"),
    ];
    let Two { repo, engine, a, b, _server } =
        two_sessions(tmp.path(), None, script, [("Say hi", A), ("Say hey to kiln", B)]).await;

    // B lands first.
    reviewed(&engine, &b).await;
    assert_eq!(deliver(&engine, &b).await.state, DeliveryState::Delivered);
    assert_eq!(std::fs::read_to_string(repo.join("greet.js")).unwrap(), B);

    // A is blocked by the conflict, and told the way forward.
    reviewed(&engine, &a).await;
    let blocked = plan(&engine, &a).await;
    let conflict = blocked.blockers.iter().find(|b| b.code == ErrorCode::DeliveryConflict).expect("a conflict");
    assert_eq!(conflict.paths, ["greet.js"]);
    assert!(conflict.message.contains("update the session from the workspace"), "{}", conflict.message);

    // The update: the conflict is written with both sides, and listed.
    let updated = engine.update_from_workspace(SessionIdArgs { session_id: a.clone() }).await.unwrap();
    assert_eq!(updated.conflicts, ["greet.js"]);
    assert!(updated.base_sequence > 0);
    let marked = std::fs::read_to_string(workdir(&repo, &a).join("greet.js")).unwrap();
    assert!(marked.contains("<<<<<<< session\nexport const hello = \"hi\";"), "{marked}");
    assert!(marked.contains(">>>>>>> workspace"), "{marked}");
    assert!(marked.contains("export const name = \"kiln\";"), "the workspace's other change is in: {marked}");
    let entries = engine
        .get_transcript(GetTranscriptArgs { session_id: a.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    let said = entries.iter().rev().find(|e| e.kind == EntryKind::System).unwrap();
    assert!(
        said.text.starts_with("Updated from the workspace") && said.text.contains("**1 conflict**"),
        "{}",
        said.text
    );
    // The diff and git in the session show the session's own change on the new base.
    let diff = engine.get_diff(GetDiffArgs { session_id: a.clone(), module_id: None }).await.unwrap();
    let files: Vec<&str> = diff.modules.iter().flat_map(|m| m.files.iter().map(|f| f.path.as_str())).collect();
    assert_eq!(files, ["greet.js"]);
    assert_eq!(git_status(&workdir(&repo, &a)), "M greet.js");
    // Nothing is delivered, and no second update taken, while the markers stay.
    let held = plan(&engine, &a).await;
    assert!(
        held.blockers.iter().any(|b| b.code == ErrorCode::ConflictsUnresolved && b.paths == ["greet.js"]),
        "{:#?}",
        held.blockers
    );
    assert!(!held.blockers.iter().any(|b| b.code == ErrorCode::DeliveryConflict), "{:#?}", held.blockers);
    let again = engine.update_from_workspace(SessionIdArgs { session_id: a.clone() }).await.unwrap_err();
    assert_eq!(again.code, ErrorCode::ConflictsUnresolved);

    // The agent resolves it.
    send_text(&engine, &a, "Resolve the conflict in greet.js").await;
    let settled = wait_settled(&engine, &a, Duration::from_secs(60)).await;
    assert!(settled.conflicts.is_empty(), "{:?}", settled.conflicts);
    let nothing = engine.update_from_workspace(SessionIdArgs { session_id: a.clone() }).await.unwrap_err();
    assert_eq!(nothing.code, ErrorCode::NothingToUpdate, "{}", nothing.message);

    // And A lands on top of B: the workspace has both changes.
    reviewed(&engine, &a).await;
    assert_eq!(deliver(&engine, &a).await.state, DeliveryState::Delivered);
    assert_eq!(std::fs::read_to_string(repo.join("greet.js")).unwrap(), RESOLVED);
}

/// Two places of one file both sessions changed: two conflicts, each resolved by the user's
/// pick in turn (the session's side, then both), the file resolved once none is left.
#[tokio::test]
async fn the_user_resolves_each_conflict_by_the_side_kept() {
    // Seven lines apart: two conflicts, not one (git joins changes three lines apart).
    const START: &str = "const a = 1;\nconst b = 2;\nconst c = 3;\nconst d = 4;\nconst f = 6;\nconst g = 7;\nconst h = 8;\nconst i = 9;\nconst e = 5;\n";
    const A: &str = "const a = 10;\nconst b = 2;\nconst c = 3;\nconst d = 4;\nconst f = 6;\nconst g = 7;\nconst h = 8;\nconst i = 9;\nconst e = 50;\n";
    const B: &str = "const a = 100;\nconst b = 2;\nconst c = 3;\nconst d = 4;\nconst f = 6;\nconst g = 7;\nconst h = 8;\nconst i = 9;\nconst e = 500;\n";
    let tmp = tempfile::tempdir().unwrap();
    let Two { repo, engine, a, b, _server } =
        two_sessions(tmp.path(), Some(START), vec![], [("Tens", A), ("Hundreds", B)]).await;
    reviewed(&engine, &b).await;
    assert_eq!(deliver(&engine, &b).await.state, DeliveryState::Delivered);
    engine.update_from_workspace(SessionIdArgs { session_id: a.clone() }).await.unwrap();

    let file = workdir(&repo, &a).join("greet.js");
    let listed = engine.get_conflicts(SessionIdArgs { session_id: a.clone() }).await.unwrap();
    assert_eq!(listed.files.len(), 1);
    let conflicts = &listed.files[0].conflicts;
    assert_eq!(listed.files[0].path, "greet.js");
    assert_eq!(conflicts.len(), 2, "{conflicts:#?}");
    assert_eq!((conflicts[0].line, conflicts[0].session.as_str()), (1, "const a = 10;\n"));
    assert_eq!(conflicts[0].workspace, "const a = 100;\n");
    assert_eq!(
        (conflicts[1].session.as_str(), conflicts[1].workspace.as_str()),
        ("const e = 50;\n", "const e = 500;\n")
    );

    // Bad input changes nothing.
    let marked = std::fs::read_to_string(&file).unwrap();
    let pick = |path: &str, conflict_id: &str, keep| ResolveConflictArgs {
        session_id: a.clone(),
        path: path.into(),
        conflict_id: conflict_id.into(),
        keep,
    };
    let stale = engine.resolve_conflict(pick("greet.js", "0000", ConflictKeep::Session)).await.unwrap_err();
    assert_eq!(stale.code, ErrorCode::ConflictNotFound, "{}", stale.message);
    let other = engine.resolve_conflict(pick("README.md", &conflicts[0].id, ConflictKeep::Session)).await.unwrap_err();
    assert_eq!(other.code, ErrorCode::ConflictNotFound, "{}", other.message);
    let outside =
        engine.resolve_conflict(pick("../greet.js", &conflicts[0].id, ConflictKeep::Session)).await.unwrap_err();
    assert_eq!(outside.code, ErrorCode::PathNotAllowed, "{}", outside.message);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), marked);

    // The first keeps the session's side; the file is still in conflict.
    let after = engine.resolve_conflict(pick("greet.js", &conflicts[0].id, ConflictKeep::Session)).await.unwrap();
    assert_eq!(after.files[0].conflicts.len(), 1);
    let once = std::fs::read_to_string(&file).unwrap();
    assert!(once.starts_with("const a = 10;\nconst b = 2;\n"), "{once}");
    assert_eq!(session(&engine, &a).await.conflicts, ["greet.js"]);
    let again = engine.resolve_conflict(pick("greet.js", &conflicts[0].id, ConflictKeep::Workspace)).await.unwrap_err();
    assert_eq!(again.code, ErrorCode::ConflictNotFound, "a conflict resolved is gone");

    // The second keeps both; nothing is left, a checkpoint and the chat say so.
    let last = after.files[0].conflicts[0].id.clone();
    let done = engine.resolve_conflict(pick("greet.js", &last, ConflictKeep::Both)).await.unwrap();
    assert!(done.files.is_empty(), "{done:#?}");
    let both = "const a = 10;\nconst b = 2;\nconst c = 3;\nconst d = 4;\nconst f = 6;\nconst g = 7;\nconst h = 8;\nconst i = 9;\nconst e = 50;\nconst e = 500;\n";
    assert_eq!(std::fs::read_to_string(&file).unwrap(), both);
    assert!(session(&engine, &a).await.conflicts.is_empty());
    let entries = engine
        .get_transcript(GetTranscriptArgs { session_id: a.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    let said = entries.iter().rev().find(|e| e.kind == EntryKind::System).unwrap();
    assert_eq!(said.text, "Conflicts in `greet.js` resolved. No conflict is left.");
    let checkpoints = session(&engine, &a).await.checkpoints;
    let newest = checkpoints.last().unwrap();
    assert_eq!(newest.label, "Conflicts resolved in greet.js", "the resolution is a checkpoint of its own");

    reviewed(&engine, &a).await;
    assert_eq!(deliver(&engine, &a).await.state, DeliveryState::Delivered);
    assert_eq!(std::fs::read_to_string(repo.join("greet.js")).unwrap(), both);
}
