//! What a failed gate names as failing, read from its output: the tests of the runners that
//! name them (cargo test, pytest, go test, vitest, jest, node's runner) and, for a gate that
//! checks files (format, lint on the changed files), the files. Comparing these sets between
//! the session and its base tells a new failure from one that was there before.

use std::collections::BTreeSet;

/// The tests `output` reports failing, or `None` when it names none in a form read here.
pub(super) fn failing_tests(output: &str) -> Option<BTreeSet<String>> {
    let mut names = BTreeSet::new();
    for line in output.lines() {
        let trimmed = line.trim();
        // cargo test: `test parse::rejects_empty ... FAILED`
        if let Some(rest) = trimmed.strip_prefix("test ") {
            if let Some(name) = rest.strip_suffix(" ... FAILED") {
                names.insert(name.trim().to_string());
                continue;
            }
        }
        // pytest's short summary: `FAILED tests/test_x.py::test_y - AssertionError`
        for prefix in ["FAILED ", "ERROR "] {
            if let Some(rest) = line.strip_prefix(prefix) {
                let name = rest.split(" - ").next().unwrap_or(rest).trim();
                if name.contains("::") || name.ends_with(".py") {
                    names.insert(name.to_string());
                }
            }
        }
        // go test: `--- FAIL: TestName (0.00s)` (subtests indented), and a package that did
        // not build: `FAIL	example.com/m/pkg [build failed]`.
        if let Some(rest) = trimmed.strip_prefix("--- FAIL: ") {
            names.insert(rest.split(" (").next().unwrap_or(rest).trim().to_string());
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("FAIL\t").or_else(|| trimmed.strip_prefix("FAIL ")) {
            if let Some(package) = rest.strip_suffix("[build failed]").or_else(|| rest.strip_suffix("[setup failed]")) {
                names.insert(format!("{} (does not build)", package.trim()));
                continue;
            }
        }
        // node's runner, TAP: `not ok 2 - adds numbers` (a `# Subtest` line names suites)
        if let Some(rest) = trimmed.strip_prefix("not ok ") {
            let name = rest.split_once(" - ").map(|(_, n)| n).unwrap_or(rest);
            let name = name.split(" # ").next().unwrap_or(name).trim();
            if !name.is_empty() {
                names.insert(name.to_string());
            }
            continue;
        }
        // node's spec reporter `✖ adds numbers (1.2ms)`; vitest `× adds numbers 3ms`;
        // jest `● suite › adds numbers`.
        for mark in ["✖ ", "× ", "● "] {
            if let Some(rest) = trimmed.strip_prefix(mark) {
                let name = strip_duration(rest);
                if !name.is_empty() && !name.starts_with("failing tests") {
                    names.insert(name.to_string());
                }
            }
        }
        // vitest: ` FAIL  src/a.test.ts > suite > adds numbers`
        if let Some(rest) = trimmed.strip_prefix("FAIL  ") {
            if rest.contains(" > ") {
                names.insert(rest.trim().to_string());
            }
        }
    }
    (!names.is_empty()).then_some(names)
}

/// `adds numbers (1.2ms)` or `adds numbers 3ms` → `adds numbers`.
fn strip_duration(text: &str) -> &str {
    let text = text.trim();
    if let Some(open) = text.rfind(" (") {
        if text.ends_with("ms)") || text.ends_with("s)") {
            return text[..open].trim();
        }
    }
    match text.rsplit_once(' ') {
        Some((name, last)) if last.ends_with("ms") && last[..last.len() - 2].chars().all(|c| c.is_ascii_digit()) => {
            name.trim()
        }
        _ => text,
    }
}

/// Which of `files` (repository-relative) `output` names, as written or relative to the
/// module's directory `module_dir`: the files a file-scoped gate (gofmt -l, prettier --check,
/// eslint) reports.
pub(super) fn named_files(output: &str, files: &[String], module_dir: &str) -> BTreeSet<String> {
    let prefix = format!("{}/", module_dir.trim_end_matches('/'));
    files
        .iter()
        .filter(|f| {
            let local = f.strip_prefix(&prefix).unwrap_or(f);
            output.lines().any(|line| {
                line.split(|c: char| c.is_whitespace() || c == ':' || c == '\'' || c == '"')
                    .any(|token| token == f.as_str() || token == local || token.ends_with(&format!("/{local}")))
            })
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> Option<BTreeSet<String>> {
        Some(names.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn each_runner_names_its_failing_tests() {
        let cargo = "running 3 tests\ntest parse::ok ... ok\ntest parse::rejects_empty ... FAILED\ntest lex::tabs ... FAILED\n\nfailures:\n";
        assert_eq!(failing_tests(cargo), set(&["lex::tabs", "parse::rejects_empty"]));
        let pytest = "=== short test summary info ===\nFAILED tests/test_calc.py::test_add - assert 3 == 4\nERROR tests/test_io.py::test_read\n1 failed, 1 error\n";
        assert_eq!(failing_tests(pytest), set(&["tests/test_calc.py::test_add", "tests/test_io.py::test_read"]));
        let go = "=== RUN   TestAdd\n--- FAIL: TestAdd (0.00s)\n    --- FAIL: TestAdd/negative (0.00s)\nFAIL\nFAIL\texample.com/calc\t0.002s\nFAIL\texample.com/other [build failed]\n";
        assert_eq!(failing_tests(go), set(&["TestAdd", "TestAdd/negative", "example.com/other (does not build)"]));
        let tap = "TAP version 13\n# Subtest: adds\nok 1 - adds\nnot ok 2 - subtracts\n  ---\n";
        assert_eq!(failing_tests(tap), set(&["subtracts"]));
        let spec = "✔ adds (0.5ms)\n✖ subtracts (1.2ms)\n✖ failing tests:\n";
        assert_eq!(failing_tests(spec), set(&["subtracts"]));
        let vitest = " FAIL  src/calc.test.ts > calc > subtracts\n × calc > subtracts 3ms\n";
        assert_eq!(failing_tests(vitest), set(&["calc > subtracts", "src/calc.test.ts > calc > subtracts"]));
        assert_eq!(failing_tests("error: could not compile `calc`\n"), None);
    }

    #[test]
    fn a_file_gate_names_the_files_it_flags() {
        let files = vec!["pkg/calc/add.go".to_string(), "pkg/calc/sub.go".to_string(), "README.md".to_string()];
        assert_eq!(named_files("add.go\n", &files, "pkg/calc"), ["pkg/calc/add.go".to_string()].into());
        assert_eq!(
            named_files("[warn] pkg/calc/sub.go\n[warn] Code style issues found", &files, "."),
            ["pkg/calc/sub.go".to_string()].into()
        );
        assert!(named_files("all good\n", &files, "pkg/calc").is_empty());
    }
}
