//! The search tools: glob for file names, grep for contents. Both walk the working copy
//! with the `ignore` crate, so `.gitignore`d files (build output, dependencies) stay out
//! of the answers, and neither follows symbolic links, so neither leaves it.

use std::path::Path;

use globset::GlobBuilder;
use ignore::{DirEntry, WalkBuilder};
use regex::RegexBuilder;
use serde_json::Value;

use super::confine::{is_private, Root};
use super::files::{io_error, is_binary};
use super::{string, ToolOutcome, ToolResult};

/// Paths a glob answers at most.
const GLOB_RESULTS: usize = 500;
/// Matching lines a grep answers at most.
const GREP_MATCHES: usize = 200;
/// Characters of a matching line shown: minified files have very long lines.
const LINE_CHARS: usize = 300;
/// Files larger than this are not searched (generated data, bundles).
const GREP_FILE_BYTES: u64 = 2 * 1024 * 1024;

pub(super) fn glob(root: &Root, input: &Value) -> ToolResult {
    let pattern = string(input, "pattern")?;
    let matcher = GlobBuilder::new(pattern.trim_start_matches("./"))
        .literal_separator(true)
        .build()
        .map_err(|e| format!("bad glob pattern `{pattern}`: {e}"))?
        .compile_matcher();
    let mut found = Vec::new();
    let mut more = false;
    for path in files(root.path()) {
        let relative = root.relative(&path);
        if matcher.is_match(&relative) {
            if found.len() == GLOB_RESULTS {
                more = true;
                break;
            }
            found.push(relative);
        }
    }
    if found.is_empty() {
        return Ok(ToolOutcome::completed(format!("no files match `{pattern}`")));
    }
    let mut answer = found.join("\n");
    if more {
        answer.push_str(&format!("\n[first {GLOB_RESULTS} files shown; narrow the pattern]"));
    }
    Ok(ToolOutcome::completed(answer))
}

pub(super) fn grep(root: &Root, input: &Value) -> ToolResult {
    let pattern = string(input, "pattern")?;
    let regex = RegexBuilder::new(pattern).build().map_err(|e| format!("bad regular expression: {e}"))?;
    let raw = input["path"].as_str().unwrap_or(".");
    let start = root.resolve(raw)?;
    let opened = root.beneath().open_read(&start).and_then(|f| f.metadata()).map_err(|e| io_error(raw, e))?;
    let candidates: Box<dyn Iterator<Item = _>> =
        if opened.is_dir() { Box::new(files(&root.path().join(&start))) } else { Box::new(std::iter::once(start)) };
    let mut matches = Vec::new();
    'files: for path in candidates {
        // The walk only names files; each is read beneath the working copy's handle.
        let Some(text) = searchable(root, &path) else { continue };
        for (number, line) in text.lines().enumerate() {
            if regex.is_match(line) {
                if matches.len() == GREP_MATCHES {
                    matches.push(format!("[first {GREP_MATCHES} matches shown; narrow the pattern or the path]"));
                    break 'files;
                }
                let shown: String = line.chars().take(LINE_CHARS).collect();
                matches.push(format!("{}:{}: {shown}", root.relative(&path), number + 1));
            }
        }
    }
    if matches.is_empty() {
        return Ok(ToolOutcome::completed(format!("no matches for `{pattern}`")));
    }
    Ok(ToolOutcome::completed(matches.join("\n")))
}

/// A file's text, unless it is too large or binary.
fn searchable(root: &Root, path: &Path) -> Option<String> {
    let relative = path.strip_prefix(root.path()).unwrap_or(path);
    let bytes = root.beneath().read(relative, GREP_FILE_BYTES).ok()?;
    (!is_binary(&bytes)).then(|| String::from_utf8_lossy(&bytes).into_owned())
}

/// Every file under `dir`, in name order, hidden ones included, ignored ones and
/// `.git`/`.kiln` left out.
fn files(dir: &Path) -> impl Iterator<Item = std::path::PathBuf> {
    WalkBuilder::new(dir)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|entry| !is_private(entry.file_name()))
        .build()
        .flatten()
        .filter(|entry: &DirEntry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .map(DirEntry::into_path)
}
