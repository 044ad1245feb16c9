//! Best-of-N with the real agent CLIs (issue 20): one brief fanned out to three candidates,
//! two real Claude Code and one real Codex, through the engine's API, against the scripted
//! model server. Claude's candidates fix `sum`; Codex's breaks it, so its tests gate fails.
//! The comparison is read through the API (gates with test counts, reviews, tokens, cost
//! known for Claude and unknown for Codex), one Claude candidate is picked and delivered to
//! the workspace, and the other two are archived.
//!
//! The engine runs each CLI from the path Settings give it: a small script that points the
//! CLI at the scripted server (and at a home of its own) and runs the real one.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kiln_engine::types::*;
use kiln_model_server::{Aside, ModelServer, Step};
use serde_json::json;
use tempfile::TempDir;

use crate::common::contract::sandboxed_cli_dir;
use crate::common::{delivery_finished, engine, open};

const CLAUDE_MODEL: &str = "claude-sonnet-4-5";
const CODEX_MODEL: &str = "gpt-5.5";
/// A whole group (three turns, their gates, reviews and Codex's fix turns) has ended by then.
const SETTLE: Duration = Duration::from_secs(600);

/// `bin/<name>`: exports `env`, then runs the real CLI with the engine's arguments.
fn wrapper(dir: &Path, name: &str, env: &[(&str, String)], real: &Path) -> PathBuf {
    let mut text = String::from("#!/bin/sh\n");
    for (key, value) in env {
        text.push_str(&format!("export {key}='{value}'\n"));
    }
    text.push_str(&format!("exec '{}' \"$@\"\n", real.display()));
    let path = dir.join("bin").join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A CODEX_HOME whose config.toml points Codex at the scripted server, everything that
/// would reach elsewhere off. Under the CLI directory: Codex refuses the temp dir.
fn codex_home(clis: &Path, server: &ModelServer) -> TempDir {
    let homes = clis.join("homes");
    std::fs::create_dir_all(&homes).unwrap();
    let home = tempfile::Builder::new().prefix("codex-group-").tempdir_in(homes).unwrap();
    let config = format!(
        "model = \"{CODEX_MODEL}\"\nmodel_provider = \"kiln\"\n\n[model_providers.kiln]\nname = \"kiln\"\nbase_url = \"{}\"\nwire_api = \"responses\"\nenv_key = \"SCRIPTED_MODEL_KEY\"\n\n[analytics]\nenabled = false\n\n[otel]\nmetrics_exporter = \"none\"\n\n[features]\nplugins = false\nremote_plugin = false\napps = false\n",
        server.openai_base_url()
    );
    std::fs::write(home.path().join("config.toml"), config).unwrap();
    home
}

async fn group(engine: &kiln_engine::Engine, id: &str) -> GroupView {
    engine.get_group(GroupIdArgs { group_id: id.into() }).await.unwrap()
}

async fn explain(engine: &kiln_engine::Engine, view: &GroupView) -> String {
    let mut out = String::new();
    for c in &view.candidates {
        let entries = engine
            .get_transcript(GetTranscriptArgs {
                session_id: c.session_id.clone(),
                after: None,
                before: None,
                last: None,
            })
            .await
            .unwrap_or_default();
        out.push_str(&format!("\n== {} ({:?} {:?}): {:?}\n", c.session_id, c.driver, c.model, c.state));
        for e in entries.iter().rev().take(25).rev() {
            out.push_str(&format!("  [{:?}] {}\n", e.kind, e.text.chars().take(400).collect::<String>()));
        }
    }
    out
}

#[tokio::test]
#[ignore = "runs the real agent CLIs in a loopback-only network namespace: scripts/test runs it"]
async fn three_real_agents_race_one_brief_and_the_picked_one_is_delivered() {
    let clis = sandboxed_cli_dir(&["claude", "codex"]);
    let tmp = TempDir::new().unwrap();
    let repo = tmp.path().join("numbers");
    crate::groups::numbers(&repo);
    let good = "printf 'exports.sum = (a, b) => a + b;\\n' > packages/sum/index.js && echo kiln-wrote-good";
    let bad = "printf 'exports.sum = (a, b) => a - b;\\n' > packages/sum/index.js && echo kiln-wrote-bad";
    // Answered by what a request carries, as the three race: a review, a turn after its
    // command (the command's marker is in the conversation), then each CLI's first request.
    let server = ModelServer::start_with_asides(
        Vec::new(),
        vec![
            // The review resumes the conversation: its own prompt tells it from the turn before.
            Aside::new("now, as your instructions say.", Step::text("Read the change.\nREVIEW: pass - ready")),
            Aside::new("kiln-wrote-", Step::text("Changed sum.\nHANDOFF: none - done")),
            Aside::new(
                format!("\"model\":\"{CLAUDE_MODEL}\""),
                Step::tool("Bash", json!({ "command": good, "description": "Fix sum" })),
            ),
            Aside::new(format!("\"model\":\"{CODEX_MODEL}\""), Step::tool("exec_command", json!({ "cmd": bad }))),
        ],
    )
    .await;
    let claude_home = TempDir::new().unwrap();
    let claude = wrapper(
        tmp.path(),
        "claude",
        &[
            ("HOME", claude_home.path().display().to_string()),
            ("ANTHROPIC_BASE_URL", server.base_url()),
            ("ANTHROPIC_API_KEY", "sk-ant-test".into()),
        ],
        &clis.join("node_modules/.bin/claude"),
    );
    let codex_home = codex_home(&clis, &server);
    let codex_dir = codex_home.path().display().to_string();
    let codex = wrapper(
        tmp.path(),
        "codex",
        &[("CODEX_HOME", codex_dir.clone()), ("HOME", codex_dir), ("SCRIPTED_MODEL_KEY", "test-key".into())],
        &clis.join("node_modules/.bin/codex"),
    );
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &repo).await;
    engine
        .update_settings(UpdateSettingsArgs {
            claude_path: Some(claude.display().to_string()),
            codex_path: Some(codex.display().to_string()),
            planner_agent: Some(false),
            ..Default::default()
        })
        .await
        .unwrap();

    let choice = |driver: &str, model: &str| CandidateChoice { driver: driver.into(), model: Some(model.into()) };
    let made = engine
        .create_session_group(CreateSessionGroupArgs {
            brief: "Fix the sum of big numbers in @numbers/sum".into(),
            title: None,
            create_modules: None,
            candidates: vec![
                choice("claude", CLAUDE_MODEL),
                choice("claude", CLAUDE_MODEL),
                choice("codex", CODEX_MODEL),
            ],
        })
        .await
        .unwrap();

    // Every candidate's turns have ended and its tests gate has run.
    let deadline = Instant::now() + SETTLE;
    let view = loop {
        let view = group(&engine, &made.id).await;
        let settled = view
            .candidates
            .iter()
            .all(|c| !c.running && c.state != SessionState::Running && c.gates.iter().any(|g| g.gate == "tests"));
        if settled {
            break view;
        }
        assert!(Instant::now() < deadline, "the group never settled: {view:#?}{}", explain(&engine, &view).await);
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let why = explain(&engine, &view).await;
    let tests = |c: &CandidateView| c.gates.iter().find(|g| g.gate == "tests").cloned().unwrap();
    for c in &view.candidates[..2] {
        assert_eq!((c.driver.as_deref(), c.model.as_deref()), (Some("claude"), Some(CLAUDE_MODEL)));
        assert_eq!(tests(c).status, GateStatus::Passed, "{c:#?}{why}");
        assert_eq!(tests(c).tests, Some(TestCounts { passed: 1, failed: 0 }), "{c:#?}");
        assert_eq!((c.files_changed, c.additions, c.deletions), (Some(1), Some(1), Some(1)), "{c:#?}{why}");
        assert!(c.reviews.iter().any(|r| r.passed && !r.stale), "{c:#?}{why}");
        assert!(
            c.usage.input_tokens > 0 && c.usage.cost_usd.is_some_and(|usd| usd > 0.0),
            "Claude prices its turns: {c:#?}"
        );
    }
    let codex = &view.candidates[2];
    assert_eq!((codex.driver.as_deref(), codex.model.as_deref()), (Some("codex"), Some(CODEX_MODEL)));
    assert_eq!(tests(codex).status, GateStatus::Failed, "{codex:#?}{why}");
    assert_eq!(tests(codex).tests, Some(TestCounts { passed: 0, failed: 1 }), "{codex:#?}");
    assert!(codex.usage.input_tokens > 0, "{codex:#?}");
    assert_eq!((codex.usage.cost_usd, codex.usage.unknown_cost_turns > 0), (None, true), "Codex's cost is unknown");
    for c in &view.candidates {
        assert!(c.elapsed_ms.is_some_and(|ms| ms > 0) && !c.waiting, "{c:#?}");
    }
    // Codex's tree against Claude's: the one line they wrote differently.
    let diff = engine
        .compare_candidates(CompareCandidatesArgs {
            group_id: made.id.clone(),
            left: view.candidates[0].session_id.clone(),
            right: codex.session_id.clone(),
        })
        .await
        .unwrap();
    let files: Vec<&str> = diff.modules.iter().flat_map(|m| m.files.iter().map(|f| f.path.as_str())).collect();
    assert_eq!(files, ["packages/sum/index.js"], "{diff:#?}");

    // Pick the first Claude candidate, deliver it to the workspace; the others are archived.
    let winner = view.candidates[0].session_id.clone();
    let picked = engine
        .pick_candidate(PickCandidateArgs { group_id: made.id.clone(), session_id: winner.clone() })
        .await
        .unwrap();
    assert_eq!(picked.picked_session_id.as_deref(), Some(winner.as_str()));
    let plan = engine
        .plan_delivery(PlanDeliveryArgs { session_id: winner.clone(), target: Some(DeliveryTarget::Workspace) })
        .await
        .unwrap();
    assert!(plan.blockers.is_empty(), "{:#?}", plan.blockers);
    engine
        .deliver(DeliverArgs {
            session_id: winner.clone(),
            target: plan.target,
            plan_id: plan.plan_id.clone(),
            anyway: None,
        })
        .await
        .unwrap();
    let run = delivery_finished(&engine, &winner, Duration::from_secs(120)).await;
    assert_eq!(run.state, DeliveryState::Delivered, "{run:#?}");
    assert_eq!(
        std::fs::read_to_string(repo.join("packages/sum/index.js")).unwrap(),
        "exports.sum = (a, b) => a + b;\n",
        "the winner's fix landed in the workspace"
    );
    for c in &view.candidates[1..] {
        let s = engine.get_session(SessionIdArgs { session_id: c.session_id.clone() }).await.unwrap();
        assert!(s.archived_at.is_some() && s.checkpoints.len() >= 2, "archived, checkpoints kept: {s:#?}");
    }
    let winner = engine.get_session(SessionIdArgs { session_id: winner }).await.unwrap();
    assert!(winner.archived_at.is_none() && winner.delivered_at.is_some(), "{winner:#?}");
}
