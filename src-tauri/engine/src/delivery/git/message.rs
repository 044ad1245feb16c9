//! How git's outcome is worded for the person reading a delivery: the lines of its
//! output that say what went wrong, and short SHAs.

use super::GitOutput;

/// The last lines of git's output that say what went wrong, for a one-line message.
pub(super) fn summary(out: &GitOutput) -> String {
    let lines: Vec<&str> = out.output.lines().map(str::trim).filter(|l| !l.is_empty() && *l != "Done").collect();
    let telling: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("fatal:") || l.starts_with("error:") || l.starts_with("remote:"))
        .collect();
    let chosen = if telling.is_empty() {
        lines.iter().rev().take(1).copied().collect::<Vec<_>>()
    } else {
        telling.into_iter().rev().take(3).rev().collect()
    };
    if chosen.is_empty() {
        format!("git exited with {}", out.status.map(|c| c.to_string()).unwrap_or_else(|| "a signal".into()))
    } else {
        chosen.join(" / ")
    }
}

pub(super) fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}
