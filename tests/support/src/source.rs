//! Reading Rust sources for the architecture tests (the engine's layers, the crates' import
//! circles): the files of a crate, their code without comments, and the module paths the code
//! names through `crate::` and `super::`.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, sorted.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect(dir, &mut out);
    out.sort();
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without comments and without its trailing test module.
pub fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines().map(|line| line.find("//").map_or(line, |at| &line[..at])).collect::<Vec<_>>().join("\n")
}

/// The paths a file's code names through `crate::` and `super::`, each as its segments
/// (leading `super`s kept), grouped imports expanded one entry at a time.
pub fn paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let starts = rest.starts_with("crate::") || rest.starts_with("super::");
        let word_start = at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        if !(starts && word_start) {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '{')).unwrap_or(rest.len());
        let head = &rest[..end];
        if let Some(open) = head.find('{') {
            let prefix: Vec<String> = head[..open].split("::").filter(|s| !s.is_empty()).map(String::from).collect();
            let group = &rest[open + 1..];
            let close = matching_brace(group);
            for entry in top_level_entries(&group[..close]) {
                let mut path = prefix.clone();
                path.extend(entry.split("::").map(|s| s.trim().to_string()).filter(|s| !s.is_empty() && s != "{"));
                out.push(path);
            }
            at += open + 1 + close;
        } else {
            out.push(head.split("::").filter(|s| !s.is_empty()).map(String::from).collect());
            at += end;
        }
    }
    out
}

/// Where the group that starts `text` (just after its `{`) closes.
fn matching_brace(text: &str) -> usize {
    let mut depth = 1;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// A group's entries at its own level (`a::X, b::{c, d}` is `a::X` and `b::{c, d}`; the
/// inner group's prefix names the module).
fn top_level_entries(group: &str) -> Vec<String> {
    let mut entries = Vec::new();
    let mut depth = 0;
    let mut entry = String::new();
    for c in group.chars().chain([',']) {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                let text = entry.split('{').next().unwrap_or_default().trim().to_string();
                if !text.is_empty() {
                    entries.push(text);
                }
                entry.clear();
                continue;
            }
            _ => {}
        }
        entry.push(c);
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_grouped_and_plain_paths_and_skips_comments_and_the_test_module() {
        let text = "use crate::{store::{A, B}, ids::SessionId}; // crate::not::this\nlet x = crate::clock::now();\nfn f() { super::super::a::go() }\n#[cfg(test)]\nmod tests { use crate::tested::It; }\n";
        let found: Vec<String> = paths(&code(text)).iter().map(|p| p.join("::")).collect();
        assert_eq!(found, ["crate::store", "crate::ids::SessionId", "crate::clock::now", "super::super::a::go"]);
    }
}
