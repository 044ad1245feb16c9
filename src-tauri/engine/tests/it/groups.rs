//! Best-of-N (issue 20) end to end on an npm workspace written here, in the direct workflow,
//! driven by the engine's own OpenAI-compatible loop against the scripted model server: the
//! turn limit (`[session] max_parallel_turns`) queues turns in order and a stop takes a
//! waiting one off the queue; a group's candidates each run their own model, and the
//! comparison, the diff between two candidates and the pick are read through the API;
//! refusals make nothing.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::*;
use kiln_engine::types::*;
use kiln_engine::{Engine, ErrorCode};
use kiln_model_server::{Aside, ModelServer, Step};
use serde_json::json;

pub(crate) const SUM_TEST: &str = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { sum } = require('..');\ntest('adds', () => assert.strictEqual(sum(1, 2), 3));\n";

/// `sum` adds one too many for big numbers; a kiln.toml sets only the turn limit.
pub(crate) fn numbers(root: &Path) {
    write(&root.join("package.json"), r#"{"name": "numbers", "private": true, "workspaces": ["packages/*"]}"#);
    write(&root.join(".gitignore"), "node_modules/\n*.flag\n");
    write(&root.join("kiln.toml"), "[session]\nmax_parallel_turns = 3\n");
    write(
        &root.join("packages/sum/package.json"),
        r#"{"name": "@numbers/sum", "version": "1.0.0", "scripts": {"test": "node --test"}}"#,
    );
    write(&root.join("packages/sum/index.js"), "exports.sum = (a, b) => a + b + (b > 100 ? 1 : 0);\n");
    write(&root.join("packages/sum/test/sum.test.js"), SUM_TEST);
    for args in [&["init", "-q", "-b", "main"][..], &["add", "-A"], &["commit", "-qm", "sum"]] {
        sh_git(root, args);
    }
}

struct World {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    engine: std::sync::Arc<Engine>,
    _server: ModelServer,
}

async fn world(script: Vec<Step>, asides: Vec<Aside>) -> World {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("numbers");
    numbers(&repo);
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &repo).await;
    let server = ModelServer::start_with_asides(script, asides).await;
    // The endpoint serves the models the candidates race on.
    server.offer(&["m1", "m2", "m3"]);
    use_scripted_model(&engine, &server, false).await;
    World { _tmp: tmp, repo, engine, _server: server }
}

impl World {
    fn workdir(&self, id: &str) -> PathBuf {
        self.repo.join(".kiln/sessions").join(id).join("workspace")
    }

    async fn session(&self, id: &str) -> SessionView {
        self.engine.get_session(SessionIdArgs { session_id: id.into() }).await.unwrap()
    }

    async fn texts(&self, id: &str, kind: EntryKind) -> Vec<String> {
        let all = self
            .engine
            .get_transcript(GetTranscriptArgs { session_id: id.into(), after: None, before: None, last: None })
            .await
            .unwrap();
        all.into_iter().filter(|e| e.kind == kind).map(|e| e.text).collect()
    }

    async fn send(&self, id: &str) {
        let args = SendMessageArgs {
            session_id: id.into(),
            text: "Wait for the flag".into(),
            role: None,
            module: None,
            driver: None,
            model: None,
            context: None,
        };
        self.engine.send_message(args).await.unwrap();
    }

    /// Waits until `check` holds of the session, for at most 30 s.
    async fn until(&self, id: &str, what: &str, check: impl Fn(&SessionView, &[String]) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let s = self.session(id).await;
            let tools = self.texts(id, EntryKind::Tool).await;
            if check(&s, &tools) {
                return;
            }
            assert!(Instant::now() < deadline, "session {id} never {what}: {s:#?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until the session's turn runs its command (it has a slot).
    async fn runs(&self, id: &str) {
        self.until(id, "ran its command", |_, tools| tools.iter().any(|t| t.contains("release.flag"))).await;
    }

    fn release(&self, id: &str) {
        std::fs::write(self.workdir(id).join("release.flag"), "go").unwrap();
    }
}

/// Every first request runs a command that waits for `release.flag` in the working copy
/// (ignored, so the turn changes nothing); the request after it ends the turn.
async fn waiting_world() -> World {
    let wait = "while [ ! -e release.flag ]; do sleep 0.1; done; echo released-ok";
    let script = (0..8).map(|_| Step::tool("run_command", json!({ "command": wait }))).collect();
    let asides = vec![Aside::new("released-ok", Step::text("Released.\nHANDOFF: none - done"))];
    world(script, asides).await
}

#[tokio::test]
async fn turns_over_the_limit_wait_in_order_and_a_stopped_one_leaves_the_queue() {
    let w = waiting_world().await;
    let mut ids = Vec::new();
    for n in 0..6 {
        let s = create(&w.engine, &format!("Look at @numbers/sum ({n})")).await;
        wait_setup(&w.engine, &s.id).await;
        ids.push(s.id);
    }
    let [a, b, c, d, e, f] = [0, 1, 2, 3, 4, 5].map(|i| ids[i].as_str());
    for id in [a, b, c] {
        w.send(id).await;
        w.runs(id).await;
    }
    // The fourth and fifth wait, in the order they came, and say so.
    w.send(d).await;
    w.until(d, "waited", |s, _| s.waiting).await;
    w.send(e).await;
    w.until(e, "waited", |s, _| s.waiting).await;
    assert!(w.texts(d, EntryKind::System).await.iter().any(|t| t.starts_with("Waiting for a free slot: 3")));
    for id in [a, b, c] {
        assert!(!w.session(id).await.waiting, "{id} has its slot");
    }
    assert!(w.session(d).await.running, "a waiting turn is the session's running turn");

    // One ends: the oldest waiting turn takes its slot, the next goes on waiting.
    w.release(b);
    w.runs(d).await;
    assert!(!w.session(d).await.waiting);
    assert!(w.session(e).await.waiting, "the later one still waits");

    // A stop takes a waiting turn off the queue; it never ran and holds no slot.
    w.engine.stop_turn(SessionIdArgs { session_id: e.into() }).await.unwrap();
    let stopped = wait_settled(&w.engine, e, Duration::from_secs(30)).await;
    assert!(!stopped.waiting && !stopped.running, "{stopped:#?}");
    assert_eq!(stopped.state, SessionState::Editing);
    assert_eq!(w.texts(e, EntryKind::System).await.last().map(String::as_str), Some("Stopped by the operator."));
    assert!(!w.texts(e, EntryKind::Tool).await.iter().any(|t| t.contains("release.flag")), "it never ran");

    // A ends too: c and d run, so a new turn has a slot at once.
    w.release(a);
    wait_settled(&w.engine, a, Duration::from_secs(30)).await;
    w.send(f).await;
    w.runs(f).await;
    assert!(!w.texts(f, EntryKind::System).await.iter().any(|t| t.starts_with("Waiting for a free slot")));
    for id in [c, d, f] {
        w.release(id);
        wait_settled(&w.engine, id, Duration::from_secs(30)).await;
    }
}

/// A candidate writes `sum` its own way: m1 fixes it, m2 breaks it (its tests fail), m3
/// fixes it with a note. Reviews pass.
async fn racing_world() -> World {
    let writes = [
        ("m1", "exports.sum = (a, b) => a + b;\\n"),
        ("m2", "exports.sum = (a, b) => a - b;\\n"),
        ("m3", "// the big-number case was a bug\\nexports.sum = (a, b) => a + b;\\n"),
    ];
    let mut asides = vec![Aside::new("REVIEW: pass - <one sentence>", Step::text("Read it.\nREVIEW: pass - ready"))];
    for (model, _) in writes {
        asides.push(Aside::new(format!("done-{model}"), Step::text("Changed sum.\nHANDOFF: none - done")));
    }
    for (model, code) in writes {
        let command = format!("printf '{code}' > packages/sum/index.js && echo done-{model}");
        asides.push(Aside::new(
            format!("\"model\":\"{model}\""),
            Step::tool("run_command", json!({ "command": command })),
        ));
    }
    world(Vec::new(), asides).await
}

fn candidates(models: &[&str]) -> Vec<CandidateChoice> {
    models.iter().map(|m| CandidateChoice { driver: "openai-compatible".into(), model: Some(m.to_string()) }).collect()
}

fn group_args(brief: &str, candidates: Vec<CandidateChoice>) -> CreateSessionGroupArgs {
    CreateSessionGroupArgs { brief: brief.into(), title: None, create_modules: None, candidates }
}

async fn settled_group(w: &World, group: &str) -> GroupView {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let view = w.engine.get_group(GroupIdArgs { group_id: group.into() }).await.unwrap();
        let done = view
            .candidates
            .iter()
            .all(|c| !c.running && c.state != SessionState::Running && c.gates.iter().any(|g| g.gate == "tests"));
        if done {
            return view;
        }
        assert!(Instant::now() < deadline, "the group never settled: {view:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_group_races_its_candidates_compares_them_and_picks_one() {
    let w = racing_world().await;
    let made = w
        .engine
        .create_session_group(group_args("Fix the sum of big numbers in @numbers/sum", candidates(&["m1", "m2", "m3"])))
        .await
        .unwrap();
    assert_eq!(made.candidates.len(), 3);
    assert_eq!(made.title, "Fix the sum of big numbers in @numbers/sum");
    let ids: Vec<String> = made.candidates.iter().map(|c| c.session_id.clone()).collect();
    for (n, id) in ids.iter().enumerate() {
        let s = w.session(id).await;
        assert_eq!((s.group_id.as_deref(), s.candidate), (Some(made.id.as_str()), Some(n as i64)));
        assert_eq!(s.model.as_deref(), Some(["m1", "m2", "m3"][n]));
        assert_ne!(w.workdir(id), w.workdir(&ids[(n + 1) % 3]), "each in its own working copy");
    }

    let view = settled_group(&w, &made.id).await;
    let [one, two, three] = [0, 1, 2].map(|i| &view.candidates[i]);
    assert_eq!((one.driver.as_deref(), one.model.as_deref()), (Some("openai-compatible"), Some("m1")));
    assert_eq!((one.files_changed, one.additions, one.deletions), (Some(1), Some(1), Some(1)), "{one:#?}");
    assert_eq!((three.files_changed, three.additions, three.deletions), (Some(1), Some(2), Some(1)), "{three:#?}");
    let tests = |c: &CandidateView| c.gates.iter().find(|g| g.gate == "tests").cloned().unwrap();
    assert_eq!((tests(one).status, tests(one).tests), (GateStatus::Passed, Some(TestCounts { passed: 1, failed: 0 })));
    assert_eq!((tests(two).status, tests(two).tests), (GateStatus::Failed, Some(TestCounts { passed: 0, failed: 1 })));
    assert!(one.reviews.iter().any(|r| r.passed && !r.stale), "{:#?}", one.reviews);
    for c in &view.candidates {
        assert!(c.usage.turns >= 1 && c.usage.input_tokens > 0, "{c:#?}");
        // The scripted endpoint reports no cost: unknown, never free.
        assert_eq!((c.usage.cost_usd, c.usage.unknown_cost_turns > 0), (None, true), "{c:#?}");
        assert!(c.elapsed_ms.is_some_and(|ms| ms > 0), "{c:#?}");
        assert_eq!(c.screenshot_id, None);
        assert!(!c.waiting && c.archived_at.is_none());
    }

    // Two candidates' trees compared: the one file they wrote differently, by module.
    let compare = |left: &str, right: &str| {
        w.engine.compare_candidates(CompareCandidatesArgs {
            group_id: made.id.clone(),
            left: left.into(),
            right: right.into(),
        })
    };
    let diff = compare(&ids[0], &ids[1]).await.unwrap();
    assert_eq!(diff.modules.len(), 1, "{diff:#?}");
    assert_eq!((diff.modules[0].module_id.as_str(), diff.modules[0].files.len()), ("@numbers/sum", 1));
    let file = &diff.modules[0].files[0];
    assert_eq!((file.path.as_str(), file.additions, file.deletions), ("packages/sum/index.js", 1, 1));
    assert!(file.hunks[0].lines.iter().any(|l| l.kind == LineKind::Add && l.text.contains("a - b")), "{file:#?}");
    assert!(compare(&ids[0], &ids[0]).await.unwrap().modules.is_empty());

    // The dashboard lists the group with its candidates.
    let groups = w.engine.list_groups(EmptyArgs {}).await.unwrap();
    assert_eq!(
        (groups.len(), groups[0].session_ids.clone(), groups[0].picked_session_id.clone()),
        (1, ids.clone(), None)
    );

    // The pick keeps one and archives the others, their checkpoints kept.
    let picked = w
        .engine
        .pick_candidate(PickCandidateArgs { group_id: made.id.clone(), session_id: ids[0].clone() })
        .await
        .unwrap();
    assert_eq!(picked.picked_session_id.as_deref(), Some(ids[0].as_str()));
    assert!(picked.candidates[0].archived_at.is_none());
    for id in &ids[1..] {
        let s = w.session(id).await;
        assert!(s.archived_at.is_some(), "{s:#?}");
        assert!(s.checkpoints.len() >= 2, "its checkpoints stay: {:#?}", s.checkpoints);
    }
    let winner = w.session(&ids[0]).await;
    assert!(winner.archived_at.is_none());
    assert!(w.texts(&ids[0], EntryKind::System).await.iter().any(|t| t.starts_with("Picked as the winner")));
    assert_eq!(
        w.engine.list_groups(EmptyArgs {}).await.unwrap()[0].picked_session_id.as_deref(),
        Some(ids[0].as_str())
    );
    // The winner is a normal session: its delivery is planned as any session's.
    let plan = w
        .engine
        .plan_delivery(PlanDeliveryArgs { session_id: ids[0].clone(), target: Some(DeliveryTarget::Workspace) })
        .await
        .unwrap();
    assert!(plan.blockers.is_empty(), "{:#?}", plan.blockers);
}

#[tokio::test]
async fn refused_groups_and_picks_change_nothing() {
    let w = racing_world().await;
    let brief = "Fix the sum of big numbers in @numbers/sum";
    let refused = [
        (group_args(brief, candidates(&["m1"])), ErrorCode::InvalidInput),
        (group_args(brief, candidates(&["m1", "m2", "m3", "m1", "m2", "m3"])), ErrorCode::InvalidInput),
        (
            group_args(
                brief,
                vec![
                    CandidateChoice { driver: "openai-compatible".into(), model: None },
                    CandidateChoice { driver: "nope".into(), model: None },
                ],
            ),
            ErrorCode::InvalidInput,
        ),
        (group_args("   ", candidates(&["m1", "m2"])), ErrorCode::InvalidInput),
        (group_args("Fix module packages/nope", candidates(&["m1", "m2"])), ErrorCode::ModuleUnknown),
    ];
    for (args, code) in refused {
        let err = w.engine.create_session_group(args.clone()).await.unwrap_err();
        assert_eq!(err.code, code, "{args:?}: {err:?}");
    }
    // A missing agent CLI is the driver's own refusal.
    let missing = w.repo.with_file_name("no-such-claude").display().to_string();
    w.engine.update_settings(UpdateSettingsArgs { claude_path: Some(missing), ..Default::default() }).await.unwrap();
    let with_claude = vec![
        CandidateChoice { driver: "openai-compatible".into(), model: None },
        CandidateChoice { driver: "claude".into(), model: None },
    ];
    let err = w.engine.create_session_group(group_args(brief, with_claude)).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::DriverNotFound, "{err:?}");
    let all = w.engine.list_sessions(ListSessionsArgs { include_archived: Some(true) }).await.unwrap();
    assert!(all.is_empty(), "nothing was made: {all:#?}");
    assert!(w.engine.list_groups(EmptyArgs {}).await.unwrap().is_empty());
    let sessions = std::fs::read_dir(w.repo.join(".kiln/sessions")).unwrap().count();
    assert_eq!(sessions, 0, "no working copy was made");

    // Picks that name no group, or a session that is none of its candidates.
    let group = w.engine.create_session_group(group_args(brief, candidates(&["m1", "m3"]))).await.unwrap();
    let other = create(&w.engine, "Look at @numbers/sum").await;
    let pick = |group: &str, session: &str| {
        w.engine.pick_candidate(PickCandidateArgs { group_id: group.into(), session_id: session.into() })
    };
    assert_eq!(pick("nope", &other.id).await.unwrap_err().code, ErrorCode::GroupNotFound);
    assert_eq!(pick(&group.id, &other.id).await.unwrap_err().code, ErrorCode::InvalidInput);
    let compare = CompareCandidatesArgs { group_id: group.id.clone(), left: other.id.clone(), right: other.id.clone() };
    assert_eq!(w.engine.compare_candidates(compare).await.unwrap_err().code, ErrorCode::InvalidInput);
    let view = w.engine.get_group(GroupIdArgs { group_id: group.id.clone() }).await.unwrap();
    assert_eq!(view.picked_session_id, None);
    assert!(view.candidates.iter().all(|c| c.archived_at.is_none()), "{view:#?}");
    // An archived candidate cannot win until it is restored.
    let first = view.candidates[0].session_id.clone();
    w.engine.archive_session(StopArgs { session_id: first.clone(), stop: Some(true) }).await.unwrap();
    assert_eq!(pick(&group.id, &first).await.unwrap_err().code, ErrorCode::SessionArchived);
    let view = w.engine.get_group(GroupIdArgs { group_id: group.id.clone() }).await.unwrap();
    assert_eq!(view.picked_session_id, None);
    assert!(view.candidates[1].archived_at.is_none());
    for c in &view.candidates {
        w.engine.stop_turn(SessionIdArgs { session_id: c.session_id.clone() }).await.ok();
    }
}
