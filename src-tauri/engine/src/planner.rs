//! The planner's rules (ARCHITECTURE.md: Planner, the deterministic part): which modules a brief names
//! and whether each is an edit or a new module. Applied before any agent, and an agent
//! can only add to what they find.
//!
//! - an existing module named by its whole id (`parties.core`, `@shop/cart`) or as
//!   `module <directory>` or `module <id>` is an edit, in the order the brief names them;
//! - a token matching the workspace's `id_pattern` that names no module, or a
//!   `module <x>` naming nothing, is `MODULE_UNKNOWN` (listing the modules) unless the
//!   operator confirmed creating it (`createModules`): then it is a new module;
//! - a bare English word never selects a module, and neither does a file name.

use regex::Regex;

use crate::modules::ModuleInfo;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::ModuleChange;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub id: String,
    pub directory: String,
    pub kind: ModuleChange,
    pub reason: String,
}

/// Extensions that mark a token as a file name rather than a module id.
const FILE_EXTENSIONS: &[&str] = &[
    "json", "md", "ts", "tsx", "js", "jsx", "mjs", "cjs", "rs", "toml", "yaml", "yml", "lock", "txt", "css", "scss",
    "html", "py", "sh", "sql", "svg", "png", "jpg", "env", "cfg", "ini", "xml", "go", "java", "vue",
];

pub struct Rules<'a> {
    pub modules: &'a [ModuleInfo],
    pub id_pattern: Option<&'a Regex>,
    /// `[modules] globs`, used to place a new module's directory.
    pub globs: &'a [String],
}

impl Rules<'_> {
    /// The modules the brief selects, in the order it names them; no new module.
    #[cfg(feature = "test-support")]
    pub fn classify(&self, brief: &str) -> Result<Vec<Selection>> {
        self.classify_with(brief, &[])
    }

    /// The direct workflow's reading: as `classify_with`, and a module id written as a plain
    /// word (`Fix the false positives in ignore`, where `ignore` is a crate of the workspace)
    /// selects it too, since there a word names a module only when it is exactly its id. A
    /// brief that names none selects none (never `MODULE_REQUIRED`): the session starts on the
    /// repository and modules join as the agent changes them.
    pub fn classify_direct(&self, brief: &str, create: &[String]) -> Result<Vec<Selection>> {
        let named = self.classify_with(brief, create);
        if !matches!(&named, Err(e) if e.code == ErrorCode::ModuleRequired) {
            return named;
        }
        let word = Regex::new(r"[A-Za-z0-9_-]+").unwrap();
        let mut selected: Vec<Selection> = Vec::new();
        for m in word.find_iter(brief) {
            if let Some(module) = self.modules.iter().find(|x| x.id == m.as_str()) {
                if !selected.iter().any(|s| s.id == module.id) {
                    selected.push(edit(module, "its id is a word of the brief".into()));
                }
            }
        }
        Ok(selected)
    }

    /// The modules the brief selects, in the order it names them; `create` holds the
    /// ids the operator confirmed as new modules.
    pub fn classify_with(&self, brief: &str, create: &[String]) -> Result<Vec<Selection>> {
        let mut found: Vec<(usize, Selection)> = Vec::new();
        let push = |at: usize, s: Selection, found: &mut Vec<(usize, Selection)>| {
            if !found.iter().any(|(_, f)| f.id == s.id) {
                found.push((at, s));
            }
        };
        let confirmed = |id: &str| create.iter().any(|c| c.trim() == id);
        let mut unknown: Vec<String> = Vec::new();

        // `module <directory>` and `module <id>` phrases.
        let phrase = Regex::new(r"(?i)\bmodule\s+`?([A-Za-z0-9_./@-]+)").unwrap();
        for cap in phrase.captures_iter(brief) {
            let m = cap.get(1).unwrap();
            let named = clean_token(m.as_str());
            let dir = named.trim_start_matches("./").trim_end_matches('/');
            if let Some(module) = self.modules.iter().find(|x| x.directory == dir) {
                let reason = format!("named as `module {dir}`");
                push(m.start(), edit(module, reason), &mut found);
            } else if let Some(module) = self.modules.iter().find(|x| x.id == named) {
                let reason = format!("named as `module {named}`");
                push(m.start(), edit(module, reason), &mut found);
            } else if !self.looks_like_a_name(named) {
                // "the module that…", "module 3": English, not a name.
            } else if confirmed(named) {
                push(m.start(), self.new_module(named)?, &mut found);
            } else if !unknown.iter().any(|u| u == named) {
                unknown.push(named.to_string());
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
                    if self.modules.iter().any(|x| x.directory == directory) || directory.split('/').any(str::is_empty)
                    {
                        continue;
                    }
                    if found.iter().any(|(_, f)| f.id == word) {
                        continue;
                    }
                    // Never silently: a new module only when the operator confirmed it.
                    if !confirmed(word) {
                        if !unknown.iter().any(|u| u == word) {
                            unknown.push(word.to_string());
                        }
                        continue;
                    }
                    let reason = format!(
                        "matches the new-module pattern `{}`, no module has this id, and you confirmed creating it",
                        pattern.as_str()
                    );
                    push(
                        m.start(),
                        Selection { id: word.to_string(), directory, kind: ModuleChange::New, reason },
                        &mut found,
                    );
                }
            }
        }
        // Confirmed ids the brief does not name still join, after the ones it names.
        for id in create.iter().map(|c| c.trim()).filter(|c| !c.is_empty()) {
            if found.iter().any(|(_, f)| f.id == id) || unknown.iter().any(|u| u == id) {
                continue;
            }
            match self.modules.iter().find(|x| x.id == id) {
                Some(module) => push(usize::MAX, edit(module, "confirmed with the brief".into()), &mut found),
                None => push(usize::MAX, self.new_module(id)?, &mut found),
            }
        }
        if !unknown.is_empty() {
            let named: Vec<String> = unknown.iter().map(|u| format!("`{u}`")).collect();
            let (is, them) = if unknown.len() == 1 { ("is not a module", "it") } else { ("are not modules", "them") };
            let create = match self.id_pattern {
                Some(p) => format!(
                    " To create {them} as new, confirm {} (`createModules`); a new module's id matches `{}`.",
                    named.join(", "),
                    p.as_str()
                ),
                None => String::new(),
            };
            return Err(ApiError::new(
                ErrorCode::ModuleUnknown,
                format!("{} {is} of this workspace. Modules: {}.{create}", named.join(", "), self.listing()),
            ));
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

    /// Whether the word after `module` names something (a path, a scoped or pattern id)
    /// rather than being English that happens to follow the word "module".
    fn looks_like_a_name(&self, word: &str) -> bool {
        if is_bare_word(word) || is_file_name(word) {
            return false;
        }
        word.contains('/') || word.starts_with('@') || self.id_pattern.is_some_and(|p| p.is_match(word))
    }

    /// A confirmed new module `id`: it must match the id pattern and make a plain
    /// directory that no module has.
    fn new_module(&self, id: &str) -> Result<Selection> {
        let refuse =
            |why: String| ApiError::new(ErrorCode::InvalidInput, format!("`{id}` cannot be a new module: {why}"));
        let pattern = self.id_pattern.ok_or_else(|| {
            refuse("the workspace sets no pattern for new module ids (`[modules] id_pattern`)".into())
        })?;
        if !pattern.is_match(id) {
            return Err(refuse(format!("a new module's id matches `{}`", pattern.as_str())));
        }
        let directory = self.new_directory(id);
        let plain = !id.chars().any(char::is_control)
            && !directory.split('/').any(str::is_empty)
            && kiln_runtime::paths::relative(&directory).is_ok();
        if !plain || self.modules.iter().any(|x| x.directory == directory) {
            return Err(refuse(format!("its directory `{directory}` is not free")));
        }
        let reason = format!("named as a new module, which you confirmed; it matches `{}`", pattern.as_str());
        Ok(Selection { id: id.to_string(), directory, kind: ModuleChange::New, reason })
    }

    fn listing(&self) -> String {
        let ids: Vec<String> = self.modules.iter().map(|m| format!("`{}` ({})", m.id, m.directory)).collect();
        if ids.is_empty() {
            "none".into()
        } else {
            ids.join(", ")
        }
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
pub(crate) fn describe(selected: &[Selection], agent_follows: bool) -> String {
    let mut text = String::from("**Planner** — ");
    if selected.is_empty() {
        text.push_str("the brief names no module: the session starts on the whole repository, and each module joins when the agent changes it.");
        if agent_follows {
            text.push_str("\n\nThe planner agent is looking at the brief now.");
        }
        return text;
    }
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
