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
