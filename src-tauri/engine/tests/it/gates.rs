//! Gates under fault: a hanging gate is killed at its timeout and reported as timed
//! out; a gate that prints 50 MB keeps only its head and tail; module gates use the
//! allowlisted environment, never the operator's secrets.

use crate::common::*;
use kiln_engine::types::*;

async fn shop_with(
    tests: &str,
    extra_session: &str,
) -> (tempfile::TempDir, std::sync::Arc<kiln_engine::Engine>, String) {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());
    let toml = shop.join("kiln.toml");
    let text = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("setup = \"npm ci --offline --no-audit --no-fund\"", &format!("setup = \"\"\n{extra_session}"))
        .replace(
            "tests = \"npm test\"",
            &format!("dependencies = \"\"\ntests = {}", toml::Value::String(tests.into())),
        );
    std::fs::write(toml, text).unwrap();
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    let s = create(&engine, "Gates in @shop/catalog").await;
    (tmp, engine, s.id)
}

fn gate<'a>(results: &'a [GateResultView], name: &str) -> &'a GateResultView {
    results.iter().find(|r| r.gate == name).unwrap_or_else(|| panic!("no {name} gate in {results:#?}"))
}

#[tokio::test]
async fn a_hanging_gate_is_killed_at_its_timeout() {
    let (_tmp, engine, id) = shop_with("sleep 30", "gate_timeout_seconds = 1").await;
    let started = std::time::Instant::now();
    let results = engine.check_modules(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(gate(&results, "tests").status, GateStatus::Failed);
    let entries = engine
        .get_transcript(GetTranscriptArgs { session_id: id, after: None, before: None, last: None })
        .await
        .unwrap();
    assert!(entries.iter().any(|e| e.kind == EntryKind::Gate && e.text.contains("timed out after 1 s")));
}

#[tokio::test]
async fn a_gate_that_prints_50_mb_keeps_head_and_tail() {
    let (_tmp, engine, id) = shop_with("yes kiln | head -c 50000000; echo LAST-LINE", "").await;
    let results = engine.check_modules(SessionIdArgs { session_id: id }).await.unwrap();
    let tests = gate(&results, "tests");
    assert_eq!(tests.status, GateStatus::Passed);
    assert!(tests.output_head.len() <= 16 * 1024 && tests.output_tail.len() <= 16 * 1024);
    assert!(tests.output_tail.ends_with("LAST-LINE\n"));
}

#[tokio::test]
async fn gates_see_only_the_allowlisted_environment() {
    // KILN_TEST_SECRET_TOKEN is planted in the test process (common::environment).
    let (_tmp, engine, id) = shop_with("env; test -z \"$KILN_TEST_SECRET_TOKEN\"", "").await;
    let results = engine.check_modules(SessionIdArgs { session_id: id }).await.unwrap();
    let tests = gate(&results, "tests");
    assert_eq!(tests.status, GateStatus::Passed, "{}", tests.output_head);
    assert!(!tests.output_head.contains("do-not-leak"));
    assert!(tests.output_head.contains("PATH=") && tests.output_head.contains("node_modules/.bin"));
}

/// Session `n`'s own `node --test` suite: `n % 4 + 1` passing tests and `n % 3` failing
/// ones, each named after the session so that output from another session would show.
fn suite(n: usize) -> (String, usize, usize) {
    let (passing, failing) = (n % 4 + 1, n % 3);
    let mut text = String::from("const test = require('node:test');\nconst assert = require('node:assert');\n");
    for k in 0..passing {
        text.push_str(&format!("test('session-{n}: passes {k}', () => assert.equal({k} + 1, {} ));\n", k + 1));
    }
    for k in 0..failing {
        text.push_str(&format!("test('session-{n}: fails {k}', () => assert.equal({k}, -1));\n"));
    }
    (text, passing, failing)
}

/// Twenty sessions gate at once, each a real `node --test` run of a suite of its own; each
/// result (status, exit code, counts, output) is its session's, as is what `get_gates` keeps.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_sessions_gating_at_once_get_their_own_results() {
    const SESSIONS: usize = 20;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("gating");
    std::fs::create_dir_all(root.join("modules/app")).unwrap();
    write(&root.join("package.json"), r#"{"name":"gating","private":true,"workspaces":["modules/*"]}"#);
    write(&root.join("modules/app/package.json"), r#"{"name":"app","version":"1.0.0"}"#);
    write(
        &root.join("kiln.toml"),
        "[modules]\nglobs = [\"modules/*\"]\n\n[session]\nsetup = \"\"\n\n[gates.node]\n\
         dependencies = \"\"\ntypecheck = \"\"\ntests = \"node --test\"\nformat = \"\"\nlint = \"\"\n",
    );
    sh_git(&root, &["init", "-q", "-b", "main"]);
    sh_git(&root, &["add", "-A"]);
    sh_git(&root, &["commit", "-q", "-m", "gating"]);
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &root).await;
    let mut ids = Vec::new();
    for n in 0..SESSIONS {
        let id = create(&engine, &format!("In app gate run {n}")).await.id;
        let test_dir = root.join(".kiln/sessions").join(&id).join("workspace/modules/app/test");
        write(&test_dir.join("suite.test.js"), &suite(n).0);
        ids.push(id);
    }

    let mut gating = tokio::task::JoinSet::new();
    for (n, id) in ids.iter().enumerate() {
        let (engine, id) = (engine.clone(), id.clone());
        gating.spawn(async move { (n, engine.check_modules(SessionIdArgs { session_id: id }).await.unwrap()) });
    }
    let mut finished = Vec::new();
    while let Some(joined) = gating.join_next().await {
        finished.push(joined.unwrap());
    }
    assert_eq!(finished.len(), SESSIONS);

    let named = regex::Regex::new(r"session-(\d+):").unwrap();

    for (n, results) in finished {
        let (_, passing, failing) = suite(n);
        let kept = engine.get_gates(SessionIdArgs { session_id: ids[n].clone() }).await.unwrap();
        for results in [&results, &kept] {
            let tests = gate(results, "tests");
            let output = format!("{}\n{}", tests.output_head, tests.output_tail);
            let expected = if failing == 0 { GateStatus::Passed } else { GateStatus::Failed };
            assert_eq!(tests.status, expected, "session {n}: {output}");
            assert_eq!(tests.exit_code, Some(if failing == 0 { 0 } else { 1 }), "session {n}: {output}");
            for (count, line) in [(passing + failing, "tests"), (passing, "pass"), (failing, "fail")] {
                // node's summary: `# tests 3` (TAP, when not on a terminal) or `ℹ tests 3`.
                let summary = [format!("# {line} {count}\n"), format!("ℹ {line} {count}\n")];
                assert!(summary.iter().any(|s| output.contains(s)), "session {n}, {line} {count}: {output}");
            }
            let sessions: std::collections::BTreeSet<usize> =
                named.captures_iter(&output).map(|c| c[1].parse().unwrap()).collect();
            assert_eq!(sessions, [n].into(), "session {n} saw only its own tests: {output}");
        }
    }
}

/// A gate result says which files it judged: after a restore the results of the
/// restored files are the ones shown (the later run of other files is not), and a
/// change no gate saw leaves the results marked as not of the files as they are.
#[tokio::test]
async fn after_a_restore_the_gates_are_those_of_the_restored_files() {
    let (tmp, engine, id) = shop_with("test ! -e broken", "").await;
    let module = tmp.path().join("shop/.kiln/sessions").join(&id).join("workspace/modules/catalog");
    assert!(module.is_dir(), "{}", module.display());
    let get = || engine.get_gates(SessionIdArgs { session_id: id.clone() });

    let first = engine.check_modules(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    assert_eq!(gate(&first, "tests").status, GateStatus::Passed);
    std::fs::write(module.join("broken"), "x").unwrap();
    let second = engine.check_modules(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    assert_eq!(gate(&second, "tests").status, GateStatus::Failed);
    let now = get().await.unwrap();
    assert_eq!((gate(&now, "tests").status, gate(&now, "tests").current), (GateStatus::Failed, Some(true)));

    // Back to the start: the files the first run judged, and its results again.
    engine.restore_checkpoint(RestoreCheckpointArgs { session_id: id.clone(), sequence: 0 }).await.unwrap();
    assert!(!module.join("broken").exists());
    let restored = get().await.unwrap();
    let tests = gate(&restored, "tests");
    assert_eq!((tests.status, tests.current, tests.id), (GateStatus::Passed, Some(true), gate(&first, "tests").id));

    // An edit no gate saw: the results shown are not of these files.
    std::fs::write(module.join("new.txt"), "y").unwrap();
    let edited = get().await.unwrap();
    assert_eq!(gate(&edited, "tests").current, Some(false), "{edited:#?}");
    assert!(!edited.iter().any(|g| g.current == Some(true)), "{edited:#?}");
}
