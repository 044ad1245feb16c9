//! The planner's rules (SPEC §5, the deterministic part): which modules a brief names
//! and whether each is an edit or a new module. Applied before any agent, and an agent
//! can only add to what they find.
//!
//! - an existing module named by its whole id (`parties.core`, `@shop/cart`) or as
//!   `module <directory>` is an edit, in the order the brief names them;
//! - a token matching the workspace's `id_pattern` that names no module is a new one;
//! - a bare English word never selects a module, and neither does a file name.

use regex::Regex;

use crate::api::types::ModuleChange;
use crate::error::{ApiError, ErrorCode, Result};
use crate::modules::ModuleInfo;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub id: String,
    pub directory: String,
    pub kind: ModuleChange,
    pub reason: String,
}

/// Extensions that mark a token as a file name rather than a module id.
const FILE_EXTENSIONS: &[&str] = &[
    "json", "md", "ts", "tsx", "js", "jsx", "mjs", "cjs", "rs", "toml", "yaml", "yml", "lock", "txt", "css",
    "scss", "html", "py", "sh", "sql", "svg", "png", "jpg", "env", "cfg", "ini", "xml", "go", "java", "vue",
];

pub struct Rules<'a> {
    pub modules: &'a [ModuleInfo],
    pub id_pattern: Option<&'a Regex>,
    /// `[modules] globs`, used to place a new module's directory.
    pub globs: &'a [String],
}

impl Rules<'_> {
    /// The modules the brief selects, in the order it names them.
    pub fn classify(&self, brief: &str) -> Result<Vec<Selection>> {
        let mut found: Vec<(usize, Selection)> = Vec::new();
        let push = |at: usize, s: Selection, found: &mut Vec<(usize, Selection)>| {
            if !found.iter().any(|(_, f)| f.id == s.id) {
                found.push((at, s));
            }
        };

        // `module <directory>` phrases.
        let phrase = Regex::new(r"(?i)\bmodule\s+`?([A-Za-z0-9_./@-]+)").unwrap();
        for cap in phrase.captures_iter(brief) {
            let m = cap.get(1).unwrap();
            let dir = clean_token(m.as_str()).trim_start_matches("./").trim_end_matches('/');
            if let Some(module) = self.modules.iter().find(|x| x.directory == dir) {
                let reason = format!("named as `module {dir}`");
                push(m.start(), edit(module, reason), &mut found);
            } else if dir.contains('/') {
                return Err(ApiError::new(
                    ErrorCode::ModuleNotFound,
                    format!("the brief names `module {dir}`, but no module lives in `{dir}`. Modules: {}", self.listing()),
                ));
            }
        }

        // Whole tokens: existing ids, then new ids by the pattern.
        let token = Regex::new(r"[A-Za-z0-9@/._-]+").unwrap();
        for m in token.find_iter(brief) {
            let word = clean_token(m.as_str());
            if word.is_empty() || is_file_name(word) {
                continue;
            }
            if let Some(module) = self.modules.iter().find(|x| x.id == word) {
                if is_bare_word(word) {
                    continue;
                }
                push(m.start(), edit(module, "named by its id".into()), &mut found);
            } else if let Some(pattern) = self.id_pattern {
                if pattern.is_match(word) && !is_bare_word(word) {
                    let directory = self.new_directory(word);
                    // An id with no short name (`@shop/.x`) would make the glob's parent
                    // itself the new module's directory.
                    if self.modules.iter().any(|x| x.directory == directory) || directory.split('/').any(str::is_empty) {
                        continue;
                    }
                    let reason = format!("matches the new-module pattern `{}` and no module has this id", pattern.as_str());
                    push(m.start(), Selection { id: word.to_string(), directory, kind: ModuleChange::New, reason }, &mut found);
                }
            }
        }

        found.sort_by_key(|(at, _)| *at);
        let mut selected: Vec<Selection> = found.into_iter().map(|(_, s)| s).collect();
        if selected.is_empty() {
            if let [only] = self.modules {
                selected.push(edit(only, "the workspace has a single module".into()));
            } else {
                return Err(ApiError::new(
                    ErrorCode::ModuleRequired,
                    format!(
                        "the brief names no module. Name one by its id or as `module <directory>`. Modules: {}",
                        self.listing()
                    ),
                ));
            }
        }
        Ok(selected)
    }

    fn listing(&self) -> String {
        let ids: Vec<String> = self.modules.iter().map(|m| format!("`{}` ({})", m.id, m.directory)).collect();
        if ids.is_empty() { "none".into() } else { ids.join(", ") }
    }

    /// Where a new module goes: the first glob with a `*`, the `*` replaced by the
    /// id's short name (`@shop/reviews` → `reviews`, `parties.core` → `parties`).
    pub fn new_directory(&self, id: &str) -> String {
        let short = id.rsplit('/').next().unwrap_or(id);
        let short = short.split('.').next().unwrap_or(short);
        match self.globs.iter().find(|g| g.contains('*') && !g.starts_with('!')) {
            Some(glob) => glob.trim_start_matches("./").replacen("**", short, 1).replacen('*', short, 1),
            None => format!("modules/{short}"),
        }
    }
}

fn edit(module: &ModuleInfo, reason: String) -> Selection {
    Selection { id: module.id.clone(), directory: module.directory.clone(), kind: ModuleChange::Edit, reason }
}

/// Strips sentence punctuation a token picked up (`@shop/cart.` at the end of a sentence).
fn clean_token(token: &str) -> &str {
    token.trim_end_matches(['.', ',', '-', '/', ':'])
}

fn is_bare_word(token: &str) -> bool {
    token.chars().all(|c| c.is_ascii_alphabetic())
}

fn is_file_name(token: &str) -> bool {
    match token.rsplit_once('.') {
        Some((stem, ext)) => !stem.is_empty() && FILE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()),
        None => false,
    }
}

/// The first system entry of a session: what the rules found and why; `agent_follows`
/// when the planner agent will amend it.
pub fn describe(selected: &[Selection], agent_follows: bool) -> String {
    let mut text = String::from("**Planner** — ");
    let parts: Vec<String> = selected
        .iter()
        .map(|s| match s.kind {
            ModuleChange::Edit => format!("edit `{}`", s.id),
            ModuleChange::New => format!("new module `{}` in `{}`", s.id, s.directory),
        })
        .collect();
    text.push_str(&parts.join(", then "));
    text.push_str(".\n\n");
    for (i, s) in selected.iter().enumerate() {
        let primary = if i == 0 { " (primary)" } else { "" };
        text.push_str(&format!("- `{}`{primary}: {}.\n", s.id, s.reason));
    }
    if agent_follows {
        text.push_str("\nFound by the planner's rules; the planner agent is looking at the brief now.");
    } else {
        text.push_str("\nDecided by the planner's rules alone. If this is wrong, say so in your first message.");
    }
    text
}
