//! Gates that judge the change (issue 31): a failure that is there at the session's base is
//! `failing-before` and blocks nothing; one new failing test among old ones is `failed` and
//! named; a module whose dependencies fail has its other gates "not run: setup failed"; a
//! reason delivers past gate blockers only. The repository is generated here: a Makefile
//! project whose tests print TAP, one of them failing from the start.

use std::path::Path;

use crate::common::*;
use kiln_engine::types::*;

/// A repository with no kiln.toml: `make test` runs every `tests/t_*.sh` and prints TAP;
/// `t_old.sh` fails at the base. `deps` says whether the dependencies step (a `check`
/// target standing in for the typecheck, which needs them) can install.
fn repository(root: &Path, deps_fail: bool) {
    write(&root.join("Makefile"), "test:\n\tsh run-tests.sh\n\ntypecheck:\n\ttest -f .deps-installed\n");
    write(
        &root.join("run-tests.sh"),
        "n=0; bad=0\nfor t in tests/t_*.sh; do n=$((n+1)); name=$(basename \"$t\" .sh)\n  if sh \"$t\"; then echo \"ok $n - $name\"; else echo \"not ok $n - $name\"; bad=1; fi\ndone\nexit $bad\n",
    );
    write(&root.join("tests/t_adds.sh"), "test $((1 + 1)) -eq 2\n");
    write(&root.join("tests/t_old.sh"), "exit 1\n");
    let install =
        if deps_fail { "echo 'error: the registry refused the package' >&2; exit 1" } else { "touch .deps-installed" };
    write(
        &root.join("kiln.toml"),
        &format!("[session]\nsetup = \"\"\n\n[gates.generic]\ndependencies = \"{install}\"\n"),
    );
    sh_git(root, &["init", "-q", "-b", "main"]);
    sh_git(root, &["add", "-A"]);
    sh_git(root, &["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "base"]);
}

fn gate<'a>(results: &'a [GateResultView], name: &str) -> &'a GateResultView {
    results.iter().find(|r| r.gate == name).unwrap_or_else(|| panic!("no {name} gate in {results:#?}"))
}

async fn session(
    deps_fail: bool,
) -> (tempfile::TempDir, std::sync::Arc<kiln_engine::Engine>, String, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    repository(&repo, deps_fail);
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &repo).await;
    let s = create(&engine, "Make the adder faster").await;
    let workdir = repo.join(".kiln/sessions").join(&s.id).join("workspace");
    assert!(workdir.join("Makefile").is_file(), "the session's working copy is at {}", workdir.display());
    (tmp, engine, s.id, workdir)
}

#[tokio::test]
async fn a_failure_there_before_the_session_blocks_nothing_and_a_new_one_is_named() {
    let (_tmp, engine, id, workdir) = session(false).await;
    // The session changes a file; the old failure stays as it was.
    write(&workdir.join("tests/t_adds.sh"), "test $((2 + 2)) -eq 4\n");
    let mut events = engine.subscribe(None).receiver;
    let results = engine.check_modules(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    let tests = gate(&results, "tests");
    assert_eq!(tests.status, GateStatus::FailingBefore, "{tests:#?}");
    // Every view heard the same results, as they were recorded: no view needs to ask.
    let heard = std::iter::from_fn(|| events.try_recv().ok())
        .find_map(|event| match event.body {
            EventBody::Gates { session_id, gates } if session_id == id => Some(gates),
            _ => None,
        })
        .expect("a gates event for the session");
    assert_eq!(heard, results);
    assert_eq!(tests.note, "1 failure, there before this session");
    // The base was compared in a copy of its own, inside the session's directory.
    let base = workdir.parent().unwrap().join("baseline/workspace");
    assert_eq!(std::fs::read_to_string(base.join("tests/t_adds.sh")).unwrap(), "test $((1 + 1)) -eq 2\n");
    let plan = engine.plan_delivery(PlanDeliveryArgs { session_id: id.clone(), target: None }).await.unwrap();
    assert!(!plan.blockers.iter().any(|b| b.message.contains("`tests`")), "{:#?}", plan.blockers);

    // A test the change breaks is new, named, and a blocker the operator may override.
    write(&workdir.join("tests/t_adds.sh"), "test $((2 + 2)) -eq 5\n");
    let results = engine.check_modules(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    let tests = gate(&results, "tests");
    assert_eq!(tests.status, GateStatus::Failed, "{tests:#?}");
    assert_eq!(tests.note, "1 new failure: `t_adds`; 1 more was there before this session");
    let transcript = engine
        .get_transcript(GetTranscriptArgs { session_id: id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    assert!(transcript.iter().any(|e| e.kind == EntryKind::Gate && e.text.contains("1 new failure: `t_adds`")));
    let plan = engine.plan_delivery(PlanDeliveryArgs { session_id: id.clone(), target: None }).await.unwrap();
    let blocker = plan.blockers.iter().find(|b| b.message.contains("`tests`")).expect("the tests blocker");
    assert!(blocker.overridable && blocker.message.contains("t_adds"), "{blocker:#?}");
    let review = plan.blockers.iter().find(|b| b.message.contains("review")).expect("the review blocker");
    assert!(!review.overridable);

    // A reason goes past gates only: the missing review still stops it, and nothing ran.
    let args = |anyway: &str| DeliverArgs {
        session_id: id.clone(),
        target: plan.target,
        plan_id: plan.plan_id.clone(),
        anyway: Some(anyway.into()),
    };
    let err = engine.deliver(args("the flaky adder is fixed upstream")).await.unwrap_err();
    assert_eq!(err.code, kiln_engine::ErrorCode::DeliveryBlocked);
    assert!(err.message.contains("not gates"), "{}", err.message);
    let err = engine.deliver(args("   ")).await.unwrap_err();
    assert_eq!(err.code, kiln_engine::ErrorCode::InvalidInput);
    assert!(engine.get_delivery(SessionIdArgs { session_id: id.clone() }).await.unwrap().is_none());

    // A change that breaks the runner names no test where the base named one: new, not before.
    write(&workdir.join("run-tests.sh"), "echo 'syntax error near unexpected token' >&2; exit 2\n");
    let results = engine.check_modules(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    let tests = gate(&results, "tests");
    assert_eq!(tests.status, GateStatus::Failed, "{tests:#?}");
    assert_eq!(tests.note, "it fails another way than at the session's base, where `t_old` failed");
    std::fs::copy(workdir.parent().unwrap().join("baseline/workspace/run-tests.sh"), workdir.join("run-tests.sh"))
        .unwrap();

    // A new test file has no base: its failure is new even though the base fails too.
    write(&workdir.join("tests/t_adds.sh"), "test $((2 + 2)) -eq 4\n");
    write(&workdir.join("tests/t_subtracts.sh"), "test $((2 - 2)) -eq 1\n");
    let results = engine.check_modules(SessionIdArgs { session_id: id }).await.unwrap();
    let tests = gate(&results, "tests");
    assert_eq!(tests.status, GateStatus::Failed);
    assert!(tests.note.starts_with("1 new failure: `t_subtracts`"), "{}", tests.note);
}

#[tokio::test]
async fn gates_that_need_the_dependencies_do_not_run_when_they_fail() {
    let (_tmp, engine, id, workdir) = session(true).await;
    write(&workdir.join("tests/t_adds.sh"), "test $((2 + 2)) -eq 4\n");
    let results = engine.check_modules(SessionIdArgs { session_id: id }).await.unwrap();
    let deps = gate(&results, "dependencies");
    assert!(matches!(deps.status, GateStatus::Failed | GateStatus::FailingBefore), "{deps:#?}");
    for name in ["typecheck", "tests"] {
        let g = gate(&results, name);
        assert_eq!(g.status, GateStatus::Skipped, "{g:#?}");
        assert_eq!(g.note, "not run: setup failed: error: the registry refused the package", "{name}");
    }
}
