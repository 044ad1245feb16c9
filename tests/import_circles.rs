//! No import circles between the files of any Rust crate of Kiln: a newcomer reads each crate
//! bottom up, and a circle is a knot two files can only be understood together. An arrow is a
//! `crate::` or `super::` path in code (grouped `use` lines expanded, comments and the trailing
//! `#[cfg(test)]` module left out) from one file to the file of the module it names. A module
//! naming its own submodules is not an arrow: a parent owns its children. The engine's layers
//! within the crate are checked by its own `layering` test; this one covers every crate, and the
//! UI's files are checked by `ui/src/architecture.test.ts`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use kiln_test_support::source::{code, paths, rust_files};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Every crate's source folder.
const CRATES: &[&str] = &[
    "src-tauri/src",
    "src-tauri/types/src",
    "src-tauri/runtime/src",
    "src-tauri/records/src",
    "src-tauri/engine/src",
    "src-tauri/serve/src",
    "tests/support/src",
];

/// A module as the path of segments under its crate's root (`[]` is the crate root).
type Module = Vec<String>;

/// The module a file holds: `a/b.rs` and `a/b/mod.rs` are `a::b`; `lib.rs` and `main.rs` the root.
fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Module = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The module file a path from `from` (a file holding `module`, a folder's `mod.rs` or not)
/// lands in: the longest prefix of the resolved path that is a module of the crate.
fn target(modules: &BTreeSet<Module>, module: &Module, path: &[String]) -> Option<Module> {
    let (mut base, mut rest) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        _ => (module.clone(), path),
    };
    while rest.first().map(String::as_str) == Some("super") {
        base.pop()?;
        rest = &rest[1..];
    }
    let full: Module = base.into_iter().chain(rest.iter().cloned()).collect();
    (0..=full.len()).rev().map(|n| full[..n].to_vec()).find(|m| modules.contains(m))
}

/// The arrows between the files of the crate at `src`.
fn arrows(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let files = rust_files(src);
    let modules: BTreeSet<Module> = files.iter().map(|f| module_of(src, f)).collect();
    let mut arrows: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for file in &files {
        let module = module_of(src, file);
        let text = code(&std::fs::read_to_string(file).unwrap());
        for path in paths(&text) {
            let Some(to) = target(&modules, &module, &path) else { continue };
            // Itself, or one of its own submodules.
            if to.starts_with(&module) {
                continue;
            }
            arrows.entry(module.clone()).or_default().insert(to);
        }
    }
    arrows
}

/// The circles among `arrows`: each strongly connected set of more than one module.
fn circles(arrows: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    let nodes: BTreeSet<&Module> = arrows.keys().chain(arrows.values().flatten()).collect();
    let reaches = |from: &Module| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for next in arrows.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&Module, BTreeSet<Module>> = nodes.iter().map(|n| (*n, reaches(n))).collect();
    let mut found: BTreeSet<Vec<Module>> = BTreeSet::new();
    for n in &nodes {
        let circle: Vec<Module> =
            nodes.iter().filter(|m| reach[*n].contains(**m) && reach[**m].contains(*n)).map(|m| (*m).clone()).collect();
        if circle.len() > 1 {
            found.insert(circle);
        }
    }
    found.into_iter().collect()
}

fn named(module: &Module) -> String {
    if module.is_empty() {
        "(crate root)".into()
    } else {
        module.join("::")
    }
}

#[test]
fn no_crate_has_an_import_circle() {
    let mut problems = Vec::new();
    for krate in CRATES {
        for circle in circles(&arrows(&Path::new(ROOT).join(krate))) {
            problems.push(format!("{krate}: {}", circle.iter().map(named).collect::<Vec<_>>().join(" <-> ")));
        }
    }
    assert!(problems.is_empty(), "import circles:\n{}", problems.join("\n"));
}

#[test]
fn the_check_sees_circles_through_crate_super_and_groups_and_not_a_parent_naming_its_child() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let path = tmp.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "mod a; mod b; mod c; mod d;\n");
    // a -> b through a group, b -> a through super: a circle.
    write("a.rs", "use crate::{x::Y, b::{One, Two}};\n");
    write("b.rs", "fn f() { super::a::go() }\n");
    // c -> d only in a comment and in its test module: no arrow.
    write("c.rs", "// crate::d::Z\n#[cfg(test)]\nmod tests { use crate::d::Z; }\n");
    write("d.rs", "use crate::c::W;\n");
    // A parent naming its child and the child naming its parent: not a circle.
    write("p/mod.rs", "mod child; pub use crate::p::child::K;\n");
    write("p/child.rs", "use super::Parent;\n");
    let found = circles(&arrows(tmp.path()));
    let names: Vec<Vec<String>> = found.iter().map(|c| c.iter().map(named).collect()).collect();
    assert_eq!(names, vec![vec!["a".to_string(), "b".to_string()]]);
}
