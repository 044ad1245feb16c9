//! Test counts read from a tests gate's output, for the comparison of candidates: the
//! summary lines the common runners print (node's test runner, vitest, jest, cargo test,
//! pytest). Several summaries (an npm workspace runs one per package, cargo one per
//! binary) add up. Output with no summary Kiln reads has no counts, never zero.

use kiln_types::TestCounts;

/// The counts the output's summaries add up to, or `None` when it has none.
pub(crate) fn read(output: &str) -> Option<TestCounts> {
    let mut total: Option<TestCounts> = None;
    let mut add = |passed: i64, failed: i64| {
        let t = total.get_or_insert(TestCounts { passed: 0, failed: 0 });
        t.passed += passed;
        t.failed += failed;
    };
    // node --test: a pass line, then a fail line ("# pass 3" in TAP, "ℹ pass 3" in spec).
    let mut node_pass: Option<i64> = None;
    for line in output.lines() {
        let line = line.trim();
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["#" | "ℹ", "pass", n] => node_pass = n.parse().ok(),
            ["#" | "ℹ", "fail", n] => {
                if let (Some(passed), Ok(failed)) = (node_pass.take(), n.parse::<i64>()) {
                    add(passed, failed);
                }
            }
            _ => {}
        }
        if let Some(rest) = line.strip_prefix("test result:") {
            // cargo: "test result: ok. 3 passed; 0 failed; 0 ignored; …"
            add(count_before(rest, "passed"), count_before(rest, "failed"));
        } else if let Some(rest) = line.strip_prefix("Tests:") {
            // jest: "Tests:       1 failed, 3 passed, 4 total"
            add(count_before(rest, "passed"), count_before(rest, "failed"));
        } else if let Some(rest) = line.strip_prefix("Tests ") {
            // vitest: "Tests  1 failed | 3 passed (4)"
            if rest.contains("passed") || rest.contains("failed") {
                add(count_before(rest, "passed"), count_before(rest, "failed"));
            }
        } else if line.starts_with('=') && line.ends_with('=') && (line.contains(" passed") || line.contains(" failed"))
        {
            // pytest: "===== 3 passed, 1 failed in 0.12s ====="
            add(count_before(line, "passed"), count_before(line, "failed"));
        }
    }
    total
}

/// The number right before `word` in `text` ("3 passed" → 3), 0 when there is none.
fn count_before(text: &str, word: &str) -> i64 {
    let words: Vec<&str> = text.split(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == '|').collect();
    let words: Vec<&str> = words.into_iter().filter(|w| !w.is_empty()).collect();
    words
        .windows(2)
        .find(|pair| pair[1].trim_end_matches(['.', ',']) == word)
        .and_then(|pair| pair[0].parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(passed: i64, failed: i64) -> Option<TestCounts> {
        Some(TestCounts { passed, failed })
    }

    #[test]
    fn node_summaries_add_up_across_packages() {
        let out = "# tests 3\n# suites 0\n# pass 3\n# fail 0\n…\nℹ tests 2\nℹ pass 1\nℹ fail 1\n";
        assert_eq!(read(out), counts(4, 1));
    }

    #[test]
    fn cargo_jest_vitest_and_pytest_are_read() {
        assert_eq!(
            read("test result: ok. 3 passed; 0 failed; 0 ignored\ntest result: FAILED. 1 passed; 2 failed;"),
            counts(4, 2)
        );
        assert_eq!(read("Tests:       1 failed, 3 passed, 4 total"), counts(3, 1));
        assert_eq!(read(" Test Files  1 passed (1)\n      Tests  1 failed | 3 passed (4)"), counts(3, 1));
        assert_eq!(read("======= 5 passed, 2 failed in 0.31s ======="), counts(5, 2));
    }

    #[test]
    fn output_without_a_summary_has_no_counts() {
        assert_eq!(read("npm ERR! missing script: test"), None);
        assert_eq!(read(""), None);
    }
}
