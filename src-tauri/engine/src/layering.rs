//! The layer test: reads every engine source file's `crate::` paths (in `use` lines,
//! grouped ones too, and in code) and fails on an import that reaches up a layer, on a
//! same-layer import not listed as allowed, and on a module missing from the table.
//! The layers are drawn in ARCHITECTURE.md; this table is their one source, and a test fails
//! when the document's table says otherwise.

use std::collections::BTreeSet;
use std::path::Path;

use kiln_test_support::source::{paths, rust_files};

/// Every module of the engine with its layer, bottom (0) to top. Beneath them all are two
/// crates rustc keeps from importing the engine: the vocabulary every layer speaks (the
/// API's types, its errors, the operation table), `kiln_types::`; how Kiln touches the
/// machine (processes, the sandbox, paths beneath a handle, redaction, secrets, listeners,
/// the clock), `kiln_runtime::`; and what a workspace keeps (all SQL, the object store of
/// checkpoints, working copies written from it), `kiln_records::`, above the runtime.
const LAYERS: &[(&str, u8)] = &[
    // 0 base
    ("config", 0),
    ("events", 0),
    ("ids", 0),
    ("modules", 0),
    ("roles", 0),
    ("attachment_rules", 0),
    ("pause", 0),
    ("mcp_config", 0),
    // 1 live state
    ("live", 1),
    ("registry", 1),
    ("background", 1),
    ("busy", 1),
    ("permissions", 1),
    ("watch", 1),
    ("slots", 1),
    ("hosts", 1),
    // 2 sessions
    ("attachments", 2),
    ("checkpoint", 2),
    ("working_copy", 2),
    ("detect", 2),
    ("diff", 2),
    ("review", 2),
    ("review_comments", 2),
    ("session", 2),
    ("workspace", 2),
    ("recover", 2),
    ("disk", 2),
    ("settings", 2),
    ("mcp", 2),
    // 3 tools
    ("drivers", 3),
    ("gates", 3),
    ("preview", 3),
    ("terminal", 3),
    // 4 the chain
    ("approval", 4),
    ("chain", 4),
    ("handoff", 4),
    ("planner", 4),
    ("planner_agent", 4),
    ("routing", 4),
    ("turn", 4),
    ("update", 4),
    ("operator", 4),
    ("groups", 4),
    // 5 delivery
    ("delivery", 5),
    // 6 the API
    ("api", 6),
    // benches' and tests' door in (when lib.rs has one)
    ("testing", 6),
    // the test itself
    ("layering", 6),
];

/// Imports between modules of one layer (importer, imported). Anything else within a
/// layer is refused, so a new sideways import is a decision, not an accident.
const SIDEWAYS: &[(&str, &str)] = &[
    // base
    ("modules", "config"),
    ("roles", "config"),
    ("config", "mcp_config"),
    // sessions: the session's own facts, then what reads its working copy
    ("attachments", "session"),
    ("attachments", "workspace"),
    ("checkpoint", "working_copy"),
    ("checkpoint", "session"),
    ("checkpoint", "workspace"),
    ("detect", "workspace"),
    ("diff", "working_copy"),
    ("diff", "session"),
    ("diff", "workspace"),
    ("review", "workspace"),
    ("session", "review"),
    ("session", "workspace"),
    ("review_comments", "checkpoint"),
    ("review_comments", "working_copy"),
    ("review_comments", "session"),
    ("review_comments", "workspace"),
    ("recover", "attachments"),
    ("recover", "checkpoint"),
    ("recover", "working_copy"),
    ("recover", "detect"),
    ("recover", "session"),
    ("recover", "workspace"),
    ("disk", "checkpoint"),
    ("disk", "working_copy"),
    ("disk", "recover"),
    ("disk", "session"),
    ("disk", "workspace"),
    ("settings", "workspace"),
    ("mcp", "workspace"),
    ("mcp", "settings"),
    // tools
    ("terminal", "drivers"),
    // the chain: the rules, then who runs them
    ("chain", "approval"),
    ("chain", "handoff"),
    ("chain", "planner"),
    ("chain", "planner_agent"),
    ("chain", "routing"),
    ("chain", "turn"),
    ("turn", "operator"),
    ("planner_agent", "planner"),
    ("groups", "chain"),
];

/// The module a file belongs to: its first path segment.
fn module_of(rel: &Path) -> String {
    let first = rel.iter().next().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string());
    first.unwrap_or_default()
}

/// The module a `crate::` path names: its first segment.
fn module_named(path: &str) -> String {
    let first = path.split("::").map(str::trim).next().unwrap_or_default().to_string();
    first
}

#[test]
fn nothing_imports_upward() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = rust_files(&src);
    let layer = |m: &str| LAYERS.iter().find(|(name, _)| *name == m).map(|(_, l)| *l);
    let mut problems = BTreeSet::new();
    let mut used = BTreeSet::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        // lib.rs only declares modules; this file names paths in its strings.
        if rel == Path::new("lib.rs") || rel == Path::new("layering.rs") {
            continue;
        }
        let from = module_of(rel);
        let Some(from_layer) = layer(&from) else {
            problems.insert(format!("{}: module `{from}` is not in the layer table", rel.display()));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mut in_group = false;
        for (n, line) in lines.iter().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            // A grouped `use crate::{…}` spanning lines is read once, from its first line.
            if in_group {
                in_group = !code.contains("};");
                continue;
            }
            let tail = lines[n..].join("\n");
            let first_line_only = !code.contains("crate::{") || code.contains("};");
            let scanned =
                if first_line_only { line.to_string() } else { tail[..tail.find("};").unwrap_or(tail.len())].into() };
            if !first_line_only {
                in_group = true;
            }
            let named = paths(&scanned).into_iter().filter(|p| p.first().is_some_and(|s| s == "crate"));
            for path in named.map(|p| p[1..].join("::")) {
                let to = module_named(&path);
                if to == from || to.is_empty() {
                    continue;
                }
                let place = format!("{}:{}", rel.display(), n + 1);
                match layer(&to) {
                    None => {
                        problems
                            .insert(format!("{place}: `crate::{path}` names module `{to}`, not in the layer table"));
                    }
                    Some(to_layer) if to_layer > from_layer => {
                        problems.insert(format!(
                            "{place}: `{from}` (layer {from_layer}) imports `crate::{path}` from `{to}` (layer {to_layer}), a layer above"
                        ));
                    }
                    Some(to_layer) if to_layer == from_layer => {
                        if SIDEWAYS.contains(&(from.as_str(), to.as_str())) {
                            used.insert((from.clone(), to.clone()));
                        } else {
                            problems.insert(format!(
                                "{place}: `{from}` imports `crate::{path}` from `{to}` in its own layer {to_layer}, not listed in SIDEWAYS"
                            ));
                        }
                    }
                    Some(_) => {}
                }
            }
        }
    }
    // An allowance nothing uses any more goes, so the list says what is.
    for (from, to) in SIDEWAYS {
        if !used.contains(&(from.to_string(), to.to_string())) {
            problems.insert(format!("SIDEWAYS lists `{from}` -> `{to}`, which nothing imports any more"));
        }
    }
    // Every top-level module of the crate has a layer.
    for entry in std::fs::read_dir(&src).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().trim_end_matches(".rs").to_string();
        if name != "lib" && name != "api" && layer(&name).is_none() {
            problems.insert(format!(
                "src/{}: module `{name}` is not in the layer table",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    assert!(problems.is_empty(), "layer violations:\n{}", problems.into_iter().collect::<Vec<_>>().join("\n"));
}

/// The modules ARCHITECTURE.md's layer table names in each layer: the backticked names of each
/// row's second column, a folder's `/` and a file's `.rs` dropped.
fn documented_layers(text: &str) -> BTreeSet<(String, u8)> {
    let mut out = BTreeSet::new();
    for row in text.lines().filter(|line| line.starts_with("| ")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let Some(layer) = cells.get(1).and_then(|c| c.split(' ').next()).and_then(|n| n.parse::<u8>().ok()) else {
            continue;
        };
        for name in cells.get(2).unwrap_or(&"").split('`').skip(1).step_by(2) {
            out.insert((name.trim_end_matches('/').trim_end_matches(".rs").to_string(), layer));
        }
    }
    out
}

#[test]
fn the_architecture_document_draws_the_same_layers() {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ARCHITECTURE.md");
    let documented = documented_layers(&std::fs::read_to_string(doc).unwrap());
    // The test itself is no part of the design the document draws.
    let table: BTreeSet<(String, u8)> =
        LAYERS.iter().filter(|(name, _)| *name != "layering").map(|(name, layer)| (name.to_string(), *layer)).collect();
    let missing: Vec<_> = table.difference(&documented).collect();
    let extra: Vec<_> = documented.difference(&table).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "ARCHITECTURE.md's layer table and LAYERS differ:\n  not in the document: {missing:?}\n  not in LAYERS: {extra:?}"
    );
}

#[test]
fn names_modules_by_their_first_segment() {
    assert_eq!(module_named("store::A"), "store");
    assert_eq!(module_named("api::Engine"), "api");
    assert_eq!(module_of(Path::new("store/turns.rs")), "store");
    assert_eq!(module_of(Path::new("api/team.rs")), "api");
}
