//! Workspace delivery (ARCHITECTURE.md: Delivery) of an `examples/shop` session, without an agent: the
//! session's working copy is edited directly, gates run through `check_modules` and a
//! passing review is stored through `review::store`. Files land, deletions apply, the
//! hooks run in order and the session is delivered; a conflict with the workspace, a
//! missing or stale review, a failed or skipped gate and a changed plan each refuse;
//! a failing `after` hook stops the run with its (redacted) output; shutting down waits for
//! a run to end.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use kiln_engine::testing::ids::SessionId;
use kiln_engine::types::*;
use kiln_engine::{Engine, ErrorCode};

pub(crate) struct World {
    _tmp: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) engine: Arc<Engine>,
}

impl World {
    fn log(&self) -> String {
        std::fs::read_to_string(self.root.join(".kiln/hooks.log")).unwrap_or_default()
    }
}

/// The shop without its setup; gates that pass quickly (cart's `format` turned off, so
/// it is not configured); delivery hooks appending to `.kiln/hooks.log` (hooks may
/// write only inside the workspace), `after` as given.
pub(crate) async fn shop(after: &[&str]) -> World {
    let tmp = tempfile::tempdir().unwrap();
    let root = shop_copy(tmp.path());
    let log = root.join(".kiln/hooks.log").display().to_string();
    let toml = root.join("kiln.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let text = text[..text.find("[delivery]").unwrap()]
        .replace("setup = \"npm ci --offline --no-audit --no-fund\"", "setup = \"\"")
        .replace(
            "[gates.node]\ntests = \"npm test\"\ntypecheck = \"node ../../scripts/check.mjs syntax\"\nformat = \"node ../../scripts/check.mjs format\"",
            "[gates.node]\ndependencies = \"true\"\ntypecheck = \"true\"\ntests = \"test ! -e FAIL\"\nformat = \"true\"\n\n[modules.overrides.\"@shop/cart\".gates]\nformat = \"\"",
        );
    let after: Vec<String> = after.iter().map(|a| toml::Value::String(a.replace("LOG", &log)).to_string()).collect();
    let delivery = format!(
        "[delivery]\ndefault = \"workspace\"\ntargets = [\"workspace\", \"git-pr\"]\ninstall = \"echo install >> {log}\"\nenable = \"echo enable {{id}} >> {log}\"\nafter = [{}]\ntypecheck = \"echo typecheck >> {log}\"\n",
        after.join(", ")
    );
    std::fs::write(&toml, format!("{text}\n{delivery}")).unwrap();
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &root).await;
    engine.update_settings(UpdateSettingsArgs { planner_agent: Some(false), ..Default::default() }).await.unwrap();
    World { _tmp: tmp, root, engine }
}

fn workdir(w: &World, id: &str) -> PathBuf {
    w.root.join(".kiln/sessions").join(id).join("workspace")
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

async fn session(w: &World, id: &str) -> SessionView {
    w.engine.get_session(SessionIdArgs { session_id: id.into() }).await.unwrap()
}

/// Runs every gate and stores a passing review of every module as its files are now.
pub(crate) async fn check_and_review(w: &World, id: &str) -> Vec<GateResultView> {
    let gates = w.engine.check_modules(SessionIdArgs { session_id: id.into() }).await.unwrap();
    let ws = w.engine.workspace().unwrap();
    let sid = SessionId::parse(id).unwrap();
    for m in session(w, id).await.modules {
        kiln_engine::testing::review::store(&ws, &sid, &m, true, "ready", "REVIEW: pass - ready").await.unwrap();
    }
    gates
}

async fn plan(w: &World, id: &str) -> DeliveryPlan {
    w.engine.plan_delivery(PlanDeliveryArgs { session_id: id.into(), target: None }).await.unwrap()
}

async fn deliver(w: &World, plan: &DeliveryPlan) -> kiln_engine::Result<DeliveryRun> {
    w.engine
        .deliver(DeliverArgs {
            session_id: plan.session_id.clone(),
            target: plan.target,
            plan_id: plan.plan_id.clone(),
            anyway: None,
        })
        .await
}

/// Polls until the session's latest run has ended.
async fn finished(w: &World, id: &str) -> DeliveryRun {
    delivery_finished(&w.engine, id, Duration::from_secs(60)).await
}

fn step<'a>(run: &'a DeliveryRun, id: &str) -> &'a DeliveryStep {
    run.steps.iter().find(|s| s.id == id).unwrap_or_else(|| panic!("no step {id} in {:#?}", run.steps))
}

/// A new `@shop/reviews` (with a dependency the workspace lacks) and an edit of
/// `@shop/catalog`: one file changed, one deleted.
pub(crate) async fn reviews_session(w: &World) -> String {
    let s = create_new(&w.engine, "Add @shop/reviews and link it from @shop/catalog", &["@shop/reviews"]).await;
    let wd = workdir(w, &s.id);
    write(
        &wd.join("modules/reviews/package.json"),
        r#"{"name":"@shop/reviews","version":"0.1.0","dependencies":{"left-pad":"1.3.0","@shop/catalog":"*"}}"#,
    );
    write(&wd.join("modules/reviews/SPEC.md"), "---\nstatus: draft\n---\n# Reviews\n");
    write(&wd.join("modules/reviews/src/server/routes.js"), "export const routes = [];\n");
    write(&wd.join("modules/catalog/src/client/screen.js"), "export const screen = 'with reviews';\n");
    std::fs::remove_file(wd.join("modules/catalog/test/routes.test.js")).unwrap();
    s.id
}

#[tokio::test]
async fn a_workspace_delivery_lands_files_runs_the_hooks_in_order_and_delivers_the_session() {
    let w = shop(&["echo after {id} {directory} >> LOG"]).await;
    let id = reviews_session(&w).await;
    let gates = check_and_review(&w, &id).await;
    // `lint` has no command in the shop: not configured, which never blocks.
    assert!(gates.iter().all(|g| matches!(g.status, GateStatus::Passed | GateStatus::NotConfigured)), "{gates:#?}");
    assert!(gates.iter().any(|g| g.status == GateStatus::NotConfigured), "{gates:#?}");
    let original_screen = std::fs::read_to_string(w.root.join("modules/catalog/src/client/screen.js")).unwrap();

    let p = plan(&w, &id).await;
    assert!(p.blockers.is_empty(), "{:#?}", p.blockers);
    assert_eq!(p.target, DeliveryTarget::Workspace);
    let reviews = p.modules.iter().find(|m| m.module_id == "@shop/reviews").unwrap();
    assert_eq!(
        reviews.added,
        ["modules/reviews/SPEC.md", "modules/reviews/package.json", "modules/reviews/src/server/routes.js"]
    );
    assert!(reviews.enable && reviews.kind == ModuleChange::New);
    assert_eq!(reviews.new_packages, ["left-pad"], "a sibling module is not a new package");
    let catalog = p.modules.iter().find(|m| m.module_id == "@shop/catalog").unwrap();
    assert_eq!(catalog.overwritten, ["modules/catalog/src/client/screen.js"]);
    assert_eq!(catalog.deleted, ["modules/catalog/test/routes.test.js"]);
    assert!(!catalog.enable);
    assert!(p.restart_needed);
    assert!(
        p.gates.contains(&"tests (@shop/reviews)".to_string()) && p.gates.contains(&"spec-schema".to_string()),
        "{:?}",
        p.gates
    );
    // git-pr is reported unavailable with its reason: the copy is no git repository.
    let pr = p.available_targets.iter().find(|t| t.target == DeliveryTarget::GitPr).unwrap();
    assert!(!pr.available && pr.reason.as_deref().unwrap().contains("not in a git repository"), "{pr:?}");
    assert_eq!(p.steps.first().map(String::as_str), Some("Run every gate"));
    assert_eq!(p.steps.last().map(String::as_str), Some("Restart note"));

    let started = deliver(&w, &p).await.unwrap();
    assert_eq!(started.state, DeliveryState::Running);
    assert!(started.steps.iter().all(|s| s.state == StepState::Pending), "{:#?}", started.steps);
    let run = finished(&w, &id).await;
    assert_eq!(run.state, DeliveryState::Delivered, "{run:#?}");
    let ids: Vec<&str> = run.steps.iter().map(|s| s.id.as_str()).collect();
    let modules: Vec<String> = session(&w, &id).await.modules.iter().map(|m| m.id.clone()).collect();
    let mut expected = vec!["gates".to_string(), "copy".into(), "install".into(), "enable:@shop/reviews".into()];
    expected.extend(modules.iter().map(|m| format!("after:{m}:0")));
    expected.extend(["typecheck".into(), "build".into(), "restart".into()]);
    assert_eq!(ids, expected);
    assert_eq!(step(&run, "build").state, StepState::Skipped);
    assert!(run.steps.iter().filter(|s| s.id != "build").all(|s| s.state == StepState::Passed), "{:#?}", run.steps);

    // The hooks ran in order, with {id} and {directory} substituted.
    let mut log = vec!["install".to_string(), "enable @shop/reviews".into()];
    for m in &modules {
        log.push(format!("after {m} modules/{}", m.trim_start_matches("@shop/")));
    }
    log.push("typecheck".into());
    assert_eq!(w.log().lines().collect::<Vec<_>>(), log);

    // The files landed and the deletion applied; the overwritten file was backed up.
    let wd = workdir(&w, &id);
    for f in
        ["modules/reviews/package.json", "modules/reviews/src/server/routes.js", "modules/catalog/src/client/screen.js"]
    {
        assert_eq!(std::fs::read(w.root.join(f)).unwrap(), std::fs::read(wd.join(f)).unwrap(), "{f}");
    }
    assert!(!w.root.join("modules/catalog/test/routes.test.js").exists());
    let backup = w.root.join(".kiln/deliveries").join(&run.id).join("backup/modules/catalog/src/client/screen.js");
    assert_eq!(std::fs::read_to_string(backup).unwrap(), original_screen);
    assert_eq!(run.landed.len(), 5);
    assert!(run.landed.contains(&"modules/catalog/test/routes.test.js".to_string()));

    let s = session(&w, &id).await;
    assert_eq!(s.state, SessionState::Delivered);
    assert!(s.delivered_at.is_some());
    let entries = w
        .engine
        .get_transcript(GetTranscriptArgs { session_id: id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    let note = entries
        .iter()
        .find(|e| e.kind == EntryKind::System && e.text.starts_with("Delivered into the workspace: 5 files"))
        .expect("the delivery note");
    assert!(note.text.contains("modules/reviews/package.json"));
    // A delivered session is not delivered into the workspace twice.
    let again = deliver(&w, &p).await.unwrap_err();
    assert_eq!(again.code, ErrorCode::SessionDelivered);
}

#[tokio::test]
async fn shutdown_waits_for_a_delivery_to_finish_and_record_its_end() {
    // Each module's `after` hook takes a second: the run is still going when shutdown starts.
    let w = shop(&["sleep 1; echo after {id} >> LOG"]).await;
    let id = reviews_session(&w).await;
    check_and_review(&w, &id).await;
    let p = plan(&w, &id).await;
    assert!(p.blockers.is_empty(), "{:#?}", p.blockers);
    assert_eq!(deliver(&w, &p).await.unwrap().state, DeliveryState::Running);
    w.engine.shutdown().await;
    // Nothing is left to write after the engine is gone: the run's end and the landing
    // are recorded by the time shutdown returns.
    let run = w.engine.get_delivery(SessionIdArgs { session_id: id.clone() }).await.unwrap().expect("a run");
    assert_eq!(run.state, DeliveryState::Delivered, "{run:#?}");
    assert_eq!(session(&w, &id).await.state, SessionState::Delivered);
    let modules = session(&w, &id).await.modules.len();
    assert_eq!(w.log().lines().filter(|l| l.starts_with("after ")).count(), modules, "{}", w.log());
}

#[tokio::test]
async fn a_file_the_workspace_changed_too_refuses_with_its_path_and_changes_nothing() {
    let w = shop(&["echo after >> LOG"]).await;
    let id = reviews_session(&w).await;
    check_and_review(&w, &id).await;
    let clean = plan(&w, &id).await;
    assert!(clean.blockers.is_empty(), "{:#?}", clean.blockers);
    // The user edits the same file in the workspace after the plan was shown.
    write(&w.root.join("modules/catalog/src/client/screen.js"), "export const screen = 'mine';\n");
    let before = files(&w.root, &[".kiln"]);

    let p = plan(&w, &id).await;
    assert_eq!(p.blockers.len(), 1, "{:#?}", p.blockers);
    assert_eq!(p.blockers[0].code, ErrorCode::DeliveryConflict);
    assert_eq!(p.blockers[0].paths, ["modules/catalog/src/client/screen.js"]);
    for attempt in [&clean, &p] {
        let err = deliver(&w, attempt).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::DeliveryConflict);
        assert!(err.message.contains("modules/catalog/src/client/screen.js"), "{}", err.message);
    }
    assert_eq!(files(&w.root, &[".kiln"]), before, "nothing in the workspace changed");
    assert!(w.engine.get_delivery(SessionIdArgs { session_id: id.clone() }).await.unwrap().is_none());
    assert!(w.log().is_empty());
    assert!(session(&w, &id).await.delivered_at.is_none());
}

fn blocked_by(p: &DeliveryPlan, text: &str) -> bool {
    p.blockers.iter().any(|b| b.code == ErrorCode::DeliveryBlocked && b.message.contains(text))
}

#[tokio::test]
async fn a_missing_or_stale_review_and_a_failed_or_skipped_gate_block_delivery() {
    let w = shop(&[]).await;
    let s = create(&w.engine, "Tidy @shop/catalog").await;
    let wd = workdir(&w, &s.id);
    write(&wd.join("modules/catalog/src/client/screen.js"), "export const screen = 1;\n");
    w.engine.check_modules(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();

    // No review.
    let p = plan(&w, &s.id).await;
    assert!(blocked_by(&p, "`@shop/catalog` needs a review"), "{:#?}", p.blockers);
    assert_eq!(deliver(&w, &p).await.unwrap_err().code, ErrorCode::DeliveryBlocked);

    // A review, then an edit: stale.
    check_and_review(&w, &s.id).await;
    assert!(plan(&w, &s.id).await.blockers.is_empty());
    write(&wd.join("modules/catalog/src/client/screen.js"), "export const screen = 2;\n");
    let p = plan(&w, &s.id).await;
    assert!(blocked_by(&p, "review is stale"), "{:#?}", p.blockers);
    assert_eq!(deliver(&w, &p).await.unwrap_err().code, ErrorCode::DeliveryBlocked);

    // A failing gate, reviewed as it is: only the gate blocks.
    write(&wd.join("modules/catalog/FAIL"), "x\n");
    check_and_review(&w, &s.id).await;
    let p = plan(&w, &s.id).await;
    assert_eq!(p.blockers.len(), 1, "{:#?}", p.blockers);
    assert!(blocked_by(&p, "the `tests` gate in `@shop/catalog` failed"), "{:#?}", p.blockers);
    let err = deliver(&w, &p).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::DeliveryBlocked);
    assert!(err.message.contains("tests"), "{}", err.message);

    // Cart's `format` is turned off: not configured, which never blocks, and the plan says so.
    let cart = create(&w.engine, "Tidy @shop/cart").await;
    write(&workdir(&w, &cart.id).join("modules/cart/src/client/screen.js"), "export const screen = 3;\n");
    let gates = check_and_review(&w, &cart.id).await;
    let format = gates.iter().find(|g| g.gate == "format" && g.module.as_deref() == Some("@shop/cart")).unwrap();
    assert_eq!(format.status, GateStatus::NotConfigured, "{format:#?}");
    let p = plan(&w, &cart.id).await;
    assert!(p.blockers.is_empty(), "{:#?}", p.blockers);
    assert!(p.gates.contains(&"format (@shop/cart): not configured".to_string()), "{:?}", p.gates);
    assert!(p.gates.contains(&"tests (@shop/cart)".to_string()), "{:?}", p.gates);

    // A skipped gate blocks: skipped is not success. Runs no longer skip a gate that has a
    // command, but a result stored as skipped (by an older Kiln) still blocks.
    let ws = w.engine.workspace().unwrap();
    ws.pool
        .execute_text(
            "UPDATE gate_results SET status = 'skipped' WHERE session_id = $1 AND module_id = '@shop/cart' AND gate = 'tests'",
            &[&cart.id],
        )
        .await
        .unwrap();
    let p = plan(&w, &cart.id).await;
    assert_eq!(p.blockers.len(), 1, "{:#?}", p.blockers);
    assert!(blocked_by(&p, "the `tests` gate in `@shop/cart` was skipped"), "{:#?}", p.blockers);
    assert_eq!(deliver(&w, &p).await.unwrap_err().code, ErrorCode::DeliveryBlocked);
    assert!(w.engine.get_delivery(SessionIdArgs { session_id: cart.id.clone() }).await.unwrap().is_none());
}

#[tokio::test]
async fn a_plan_that_changed_since_it_was_shown_is_stale() {
    let w = shop(&[]).await;
    let s = create(&w.engine, "Tidy @shop/catalog").await;
    let wd = workdir(&w, &s.id);
    write(&wd.join("modules/catalog/src/client/screen.js"), "export const screen = 1;\n");
    check_and_review(&w, &s.id).await;
    let shown = plan(&w, &s.id).await;
    assert!(shown.blockers.is_empty(), "{:#?}", shown.blockers);
    assert_eq!(plan(&w, &s.id).await.plan_id, shown.plan_id, "the same plan has the same id");

    // Another file, reviewed and checked again: no blocker, but another plan.
    write(&wd.join("modules/catalog/src/client/extra.js"), "export const extra = 1;\n");
    check_and_review(&w, &s.id).await;
    let now = plan(&w, &s.id).await;
    assert!(now.blockers.is_empty());
    assert_ne!(now.plan_id, shown.plan_id);
    let err = deliver(&w, &shown).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::PlanStale);
    assert!(!w.root.join("modules/catalog/src/client/extra.js").exists());
    assert!(w.engine.get_delivery(SessionIdArgs { session_id: s.id.clone() }).await.unwrap().is_none());
}

#[tokio::test]
async fn a_failing_after_hook_stops_the_run_with_its_redacted_output() {
    let w = shop(&[
        "echo after {id} >> LOG",
        "echo about to fail with sk-sealed-test-key and Bearer hook0token0printed; exit 3",
    ])
    .await;
    w.engine
        .update_settings(UpdateSettingsArgs {
            openai_base_url: Some("http://127.0.0.1:9/v1".into()),
            openai_model: Some("m".into()),
            openai_key: Some("sk-sealed-test-key".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let s = create(&w.engine, "Tidy @shop/catalog").await;
    write(&workdir(&w, &s.id).join("modules/catalog/src/client/screen.js"), "export const screen = 'new';\n");
    check_and_review(&w, &s.id).await;
    let p = plan(&w, &s.id).await;
    assert!(p.blockers.is_empty(), "{:#?}", p.blockers);
    deliver(&w, &p).await.unwrap();
    let run = finished(&w, &s.id).await;

    assert_eq!(run.state, DeliveryState::Failed);
    assert_eq!(run.error.as_ref().unwrap().code, ErrorCode::DeliveryBlocked);
    let failed = step(&run, "after:@shop/catalog:1");
    assert_eq!(failed.state, StepState::Failed);
    assert!(failed.output.contains("about to fail with"), "{}", failed.output);
    assert!(failed.output.contains("exit code 3"), "{}", failed.output);
    assert!(!failed.output.contains("sk-sealed-test-key"), "the sealed key leaked: {}", failed.output);
    // A credential Kiln never held is redacted by its shape, in the stored run too.
    assert!(!failed.output.contains("hook0token0printed"), "a credential leaked: {}", failed.output);
    for db in ["kiln.db", "kiln.db-wal"] {
        let bytes = std::fs::read(w.root.join(".kiln").join(db)).unwrap_or_default();
        assert!(!bytes.windows(18).any(|b| b == b"hook0token0printed"), "{db} holds the credential");
    }
    assert_eq!(step(&run, "after:@shop/catalog:0").state, StepState::Passed);
    // Nothing after it ran.
    assert_eq!(step(&run, "typecheck").state, StepState::Pending);
    assert_eq!(step(&run, "restart").state, StepState::Pending);
    assert_eq!(w.log().lines().collect::<Vec<_>>(), ["install", "after @shop/catalog"]);
    // The copy is one step that passed: its files stay; the session is not delivered.
    assert_eq!(step(&run, "copy").state, StepState::Passed);
    assert_eq!(
        std::fs::read_to_string(w.root.join("modules/catalog/src/client/screen.js")).unwrap(),
        "export const screen = 'new';\n"
    );
    let session = session(&w, &s.id).await;
    assert!(session.delivered_at.is_none());
    assert_ne!(session.state, SessionState::Delivered);
    let entries = w
        .engine
        .get_transcript(GetTranscriptArgs { session_id: s.id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    assert!(entries.iter().any(|e| e.kind == EntryKind::System && e.text.starts_with("Delivery stopped")));
    assert!(entries.iter().all(|e| !e.text.contains("sk-sealed-test-key")));
}
