//! The session diff (ARCHITECTURE.md: Diff) in a copy of examples/shop: statuses, hunks with line
//! numbers, counts, binary and too-large files, workspace-relative paths, modules kept
//! apart and filtered, a late module's own base, the cache, and what never shows. And in
//! the direct workflow (a pnpm monorepo without kiln.toml): the files outside every module
//! in a group of their own, a changed module not in the session in its own group.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::common::*;
use kiln_engine::types::*;
use kiln_engine::Engine;

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    engine: Arc<Engine>,
}

/// A workspace at `root` (written by `prepare`) with no setup and no planner agent.
async fn world_at(tmp: tempfile::TempDir, root: PathBuf) -> World {
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &root).await;
    engine.update_settings(UpdateSettingsArgs { planner_agent: Some(false), ..Default::default() }).await.unwrap();
    World { _tmp: tmp, root, engine }
}

/// examples/shop without its setup (kept fast), plus catalog files the tests change.
async fn shop() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());
    let toml = shop.join("kiln.toml");
    let text = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("setup = \"npm ci --offline --no-audit --no-fund\"", "setup = \"\"");
    std::fs::write(toml, text).unwrap();
    let catalog = shop.join("modules/catalog");
    write(&catalog.join("src/notes.txt"), "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n");
    write(&catalog.join("src/old-name.js"), "export const a = 1;\nexport const b = 2;\nexport const c = 3;\n");
    write(&catalog.join("src/gone.txt"), "bye\n");
    write(&catalog.join("run.sh"), "#!/bin/sh\necho hi\n");
    let big: String = (0..150_000).map(|i| format!("row {i}\n")).collect();
    assert!(big.len() > 1024 * 1024);
    write(&catalog.join("src/big.txt"), &big);
    world_at(tmp, shop).await
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn workdir(w: &World, id: &str) -> PathBuf {
    w.root.join(".kiln/sessions").join(id).join("workspace")
}

async fn diff(w: &World, id: &str, module: Option<&str>) -> DiffView {
    w.engine.get_diff(GetDiffArgs { session_id: id.into(), module_id: module.map(str::to_string) }).await.unwrap()
}

fn module<'a>(view: &'a DiffView, id: &str) -> &'a ModuleDiff {
    view.modules.iter().find(|m| m.module_id == id).unwrap_or_else(|| panic!("no module {id} in {view:?}"))
}

fn file<'a>(m: &'a ModuleDiff, path: &str) -> &'a FileDiff {
    m.files.iter().find(|f| f.path == path).unwrap_or_else(|| panic!("no {path} in {:?}", paths(m)))
}

fn paths(m: &ModuleDiff) -> Vec<&str> {
    m.files.iter().map(|f| f.path.as_str()).collect()
}

fn line(kind: LineKind, old: Option<i64>, new: Option<i64>, text: &str) -> DiffLine {
    DiffLine { kind, old_line: old, new_line: new, text: text.into() }
}

#[tokio::test]
async fn statuses_hunks_counts_and_binary_files_of_a_module() {
    use LineKind::*;
    let w = shop().await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    let wc = workdir(&w, &s.id);
    let cat = wc.join("modules/catalog");
    write(&cat.join("src/notes.txt"), "one\nTWO\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n");
    write(&cat.join("src/new.txt"), "hello\nworld\n");
    std::fs::remove_file(cat.join("src/gone.txt")).unwrap();
    std::fs::rename(cat.join("src/old-name.js"), cat.join("src/new-name.js")).unwrap();
    std::fs::create_dir_all(cat.join("assets")).unwrap();
    std::fs::write(
        cat.join("assets/logo.png"),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89",
    )
    .unwrap();
    std::fs::set_permissions(cat.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut big = std::fs::read_to_string(cat.join("src/big.txt")).unwrap();
    big.push_str("extra\n");
    std::fs::write(cat.join("src/big.txt"), big).unwrap();
    write(&cat.join("node_modules/left-pad/index.js"), "module.exports = 1;\n");

    let view = diff(&w, &s.id, None).await;
    assert_eq!(view.modules.len(), 1);
    let m = module(&view, "@shop/catalog");
    assert_eq!((m.directory.as_str(), m.base_sequence), ("modules/catalog", 0));
    assert_eq!(
        paths(m),
        [
            "modules/catalog/assets/logo.png",
            "modules/catalog/run.sh",
            "modules/catalog/src/big.txt",
            "modules/catalog/src/gone.txt",
            "modules/catalog/src/new-name.js",
            "modules/catalog/src/new.txt",
            "modules/catalog/src/notes.txt",
        ],
        "sorted, workspace-relative, no node_modules"
    );

    let notes = file(m, "modules/catalog/src/notes.txt");
    assert_eq!(
        (notes.status, notes.binary, notes.too_large, notes.additions, notes.deletions),
        (FileStatus::Modified, false, false, 2, 1)
    );
    assert_eq!(notes.hunks.len(), 2);
    let (first, second) = (&notes.hunks[0], &notes.hunks[1]);
    assert_eq!((first.old_start, first.old_lines, first.new_start, first.new_lines), (1, 5, 1, 5));
    assert!(first.header.starts_with("@@ -1,5 +1,5 @@") && !first.header.ends_with('\n'), "{}", first.header);
    assert_eq!(
        first.lines,
        [
            line(Context, Some(1), Some(1), "one"),
            line(Delete, Some(2), None, "two"),
            line(Add, None, Some(2), "TWO"),
            line(Context, Some(3), Some(3), "three"),
            line(Context, Some(4), Some(4), "four"),
            line(Context, Some(5), Some(5), "five"),
        ]
    );
    assert_eq!((second.old_start, second.old_lines, second.new_start, second.new_lines), (8, 3, 8, 4));
    assert_eq!(
        second.lines,
        [
            line(Context, Some(8), Some(8), "eight"),
            line(Context, Some(9), Some(9), "nine"),
            line(Context, Some(10), Some(10), "ten"),
            line(Add, None, Some(11), "eleven"),
        ]
    );

    let added = file(m, "modules/catalog/src/new.txt");
    assert_eq!(
        (added.status, added.additions, added.deletions, added.old_path.as_deref()),
        (FileStatus::Added, 2, 0, None)
    );
    assert_eq!(added.hunks[0].lines, [line(Add, None, Some(1), "hello"), line(Add, None, Some(2), "world")]);

    let gone = file(m, "modules/catalog/src/gone.txt");
    assert_eq!((gone.status, gone.additions, gone.deletions), (FileStatus::Deleted, 0, 1));
    assert_eq!(gone.hunks[0].lines, [line(Delete, Some(1), None, "bye")]);

    let renamed = file(m, "modules/catalog/src/new-name.js");
    assert_eq!(renamed.status, FileStatus::Renamed);
    assert_eq!(renamed.old_path.as_deref(), Some("modules/catalog/src/old-name.js"));
    assert_eq!((renamed.additions, renamed.deletions, renamed.hunks.len()), (0, 0, 0));

    let logo = file(m, "modules/catalog/assets/logo.png");
    assert_eq!((logo.status, logo.binary, logo.additions, logo.hunks.len()), (FileStatus::Added, true, 0, 0));

    let run = file(m, "modules/catalog/run.sh");
    assert_eq!(
        (run.status, run.binary, run.additions, run.deletions, run.hunks.len()),
        (FileStatus::Modified, false, 0, 0, 0)
    );

    let big = file(m, "modules/catalog/src/big.txt");
    assert_eq!(
        (big.status, big.too_large, big.additions, big.deletions, big.hunks.len()),
        (FileStatus::Modified, true, 1, 0, 0)
    );

    let json = serde_json::to_string(&view).unwrap();
    assert!(!json.contains(&w.root.display().to_string()), "no absolute path in the view");
    assert!(m
        .files
        .iter()
        .all(|f| !f.path.starts_with('/') && f.old_path.as_deref().is_none_or(|p| !p.starts_with('/'))));
}

#[tokio::test]
async fn modules_are_kept_apart_and_filtered() {
    let w = shop().await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    w.engine.add_module(AddModuleArgs { session_id: s.id.clone(), module_id: "@shop/cart".into() }).await.unwrap();
    let wc = workdir(&w, &s.id);
    write(&wc.join("modules/catalog/src/new.txt"), "catalog\n");
    write(&wc.join("modules/cart/src/new.txt"), "cart\n");
    write(&wc.join("modules/orders/src/new.txt"), "orders, not in the session\n");
    write(&wc.join("CHANGELOG.md"), "a root file: the specs workflow shows only the session's modules\n");

    let view = diff(&w, &s.id, None).await;
    let ids: Vec<&str> = view.modules.iter().map(|m| m.module_id.as_str()).collect();
    assert_eq!(ids, ["@shop/catalog", "@shop/cart"]);
    assert!(view.modules.iter().all(|m| m.group == DiffGroup::Module));
    assert_eq!(paths(module(&view, "@shop/catalog")), ["modules/catalog/src/new.txt"]);
    assert_eq!(paths(module(&view, "@shop/cart")), ["modules/cart/src/new.txt"]);

    let cart = diff(&w, &s.id, Some("@shop/cart")).await;
    assert_eq!(cart.modules.len(), 1);
    assert_eq!(cart.modules[0], *module(&view, "@shop/cart"));

    let error = |args: GetDiffArgs| {
        let engine = w.engine.clone();
        async move { engine.get_diff(args).await.unwrap_err().code }
    };
    let args = |session: &str, module: Option<&str>| GetDiffArgs {
        session_id: session.into(),
        module_id: module.map(str::to_string),
    };
    assert_eq!(error(args(&s.id, Some("@shop/orders"))).await, kiln_engine::ErrorCode::ModuleNotFound);
    assert_eq!(error(args("../../etc", None)).await, kiln_engine::ErrorCode::InvalidSessionId);
    assert_eq!(
        error(args("5b0f8c1e-2f4c-4d8e-9a3b-1c2d3e4f5a6b", None)).await,
        kiln_engine::ErrorCode::SessionNotFound
    );
}

#[tokio::test]
async fn a_late_module_diffs_against_the_checkpoint_it_joined_at() {
    let w = shop().await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    let wc = workdir(&w, &s.id);
    // What checkpoint 1 holds: a catalog change and, before cart joins, a cart change.
    write(&wc.join("modules/catalog/src/new.txt"), "catalog\n");
    write(&wc.join("modules/cart/src/before-joining.txt"), "already there\n");
    let ws = w.engine.workspace().unwrap();
    let id = kiln_engine::testing::ids::SessionId::parse(&s.id).unwrap();
    let tree = kiln_engine::testing::working_copy::snapshot_workdir(&ws.open_store().unwrap(), &wc).unwrap();
    let sequence = kiln_engine::testing::checkpoint::take(
        &ws,
        w.engine.events(),
        &id,
        tree,
        "a turn",
        None,
        Some("@shop/catalog"),
    )
    .await
    .unwrap();
    assert_eq!(sequence, 1);

    let joined =
        w.engine.add_module(AddModuleArgs { session_id: s.id.clone(), module_id: "@shop/cart".into() }).await.unwrap();
    assert_eq!(joined.modules[1].base_sequence, 1);
    let view = diff(&w, &s.id, None).await;
    assert_eq!(module(&view, "@shop/cart").base_sequence, 1);
    assert!(module(&view, "@shop/cart").files.is_empty(), "its base already holds the earlier change");
    assert_eq!(paths(module(&view, "@shop/catalog")), ["modules/catalog/src/new.txt"], "catalog still diffs against 0");

    write(&wc.join("modules/cart/src/after-joining.txt"), "new\n");
    let view = diff(&w, &s.id, Some("@shop/cart")).await;
    assert_eq!(paths(&view.modules[0]), ["modules/cart/src/after-joining.txt"]);
}

#[tokio::test]
async fn an_unchanged_working_copy_is_answered_from_the_cache() {
    let w = shop().await;
    let s = create(&w.engine, "Add a wishlist to @shop/catalog").await;
    let wc = workdir(&w, &s.id);
    write(&wc.join("modules/catalog/src/new.txt"), "one\n");
    let cache = || w.engine.workspace().unwrap().diffs.computed();

    let first = diff(&w, &s.id, None).await;
    let computed = cache();
    let again = diff(&w, &s.id, None).await;
    let filtered = diff(&w, &s.id, Some("@shop/catalog")).await;
    assert_eq!(first, again);
    assert_eq!(first, filtered);
    assert_eq!(cache(), computed, "no diff was computed again");

    write(&wc.join("modules/catalog/src/new.txt"), "one\ntwo\n");
    let changed = diff(&w, &s.id, None).await;
    assert_eq!(cache(), computed + 1);
    assert_ne!(changed, first);
    assert_eq!(changed.modules[0].files[0].additions, 2);
    // Putting the file back is a tree seen before, but the cache holds only the last.
    write(&wc.join("modules/catalog/src/new.txt"), "one\n");
    assert_eq!(diff(&w, &s.id, None).await, first);
}

#[tokio::test]
async fn attachment_copies_and_node_modules_never_show() {
    // A plain directory with no workspaces is one module at `.`, and no .gitignore
    // keeps node_modules out of its snapshots.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("solo");
    write(&root.join("package.json"), "{ \"name\": \"solo\", \"version\": \"1.0.0\" }\n");
    write(&root.join("index.js"), "console.log(1);\n");
    let w = world_at(tmp, root).await;
    let s = create(&w.engine, "Log two").await;
    assert_eq!(s.modules[0].directory, ".");
    w.engine
        .add_attachment(AddAttachmentArgs {
            session_id: s.id.clone(),
            name: "notes.md".into(),
            data_base64: "IyBOb3RlcwoKU3RhcnMu".into(),
        })
        .await
        .unwrap();
    let wc = workdir(&w, &s.id);
    assert!(wc.join("reference/attachments/notes.md").exists());
    write(&wc.join("node_modules/left-pad/index.js"), "module.exports = 1;\n");
    write(&wc.join("lib/node_modules/x.js"), "nested install\n");
    write(&wc.join("index.js"), "console.log(2);\n");

    let view = diff(&w, &s.id, None).await;
    assert_eq!(paths(&view.modules[0]), ["index.js"]);
    assert_eq!(view.modules.len(), 1, "a whole-repository module leaves nothing outside: {view:#?}");
}

/// What `pnpm install` writes for the monorepo (so the detected install step leaves it be).
const LOCKFILE: &str = "lockfileVersion: '9.0'\n\nsettings:\n  autoInstallPeers: true\n  excludeLinksFromLockfile: false\n\nimporters:\n\n  .: {}\n\n  packages/a: {}\n\n  packages/b: {}\n";

/// A pnpm monorepo with no kiln.toml (so the direct workflow): `packages/a` and
/// `packages/b`, a root lockfile, a changelog and docs.
fn monorepo(root: &Path) {
    write(&root.join("pnpm-workspace.yaml"), "packages:\n  - \"packages/*\"\n");
    write(&root.join("package.json"), "{ \"name\": \"mono\", \"private\": true }\n");
    write(&root.join("pnpm-lock.yaml"), LOCKFILE);
    write(&root.join("CHANGELOG.md"), "# Changes\n");
    write(&root.join("docs/old.md"), "one\ntwo\nthree\nfour\n");
    write(&root.join("packages/a/package.json"), "{ \"name\": \"@mono/a\", \"version\": \"1.0.0\" }\n");
    write(&root.join("packages/a/src/x.js"), "export const x = 1;\n");
    write(&root.join("packages/b/package.json"), "{ \"name\": \"@mono/b\", \"version\": \"1.0.0\" }\n");
    write(&root.join("packages/b/src/y.js"), "export const y = 1;\n");
}

#[tokio::test]
async fn direct_workflow_groups_root_files_and_modules_not_in_the_session_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("mono");
    monorepo(&root);
    let w = world_at(tmp, root).await;
    let ws = w.engine.workspace().unwrap();
    assert_eq!(ws.config.workflow(), Workflow::Direct, "no kiln.toml: direct");
    let s = create(&w.engine, "Make x two in @mono/a").await;
    // The detected install step (pnpm) runs first; what it installs never shows.
    wait_setup(&w.engine, &s.id).await;
    assert_eq!(s.modules.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["@mono/a"]);

    // Nothing changed yet: the session's module, empty, and no other group.
    let view = diff(&w, &s.id, None).await;
    assert_eq!(view.modules.len(), 1, "{view:#?}");
    assert!(view.modules[0].files.is_empty());

    let wc = workdir(&w, &s.id);
    write(&wc.join("packages/a/src/x.js"), "export const x = 2;\n");
    write(&wc.join("pnpm-lock.yaml"), &format!("{LOCKFILE}\n# regenerated\n"));
    write(&wc.join("CHANGELOG.md"), "# Changes\n\n- x is two\n");
    write(&wc.join(".github/workflows/ci.yml"), "on: push\n");
    std::fs::rename(wc.join("docs/old.md"), wc.join("docs/new.md")).unwrap();
    write(&wc.join("packages/b/src/y.js"), "export const y = 2;\n");
    write(&wc.join("node_modules/left-pad/index.js"), "module.exports = 1;\n");

    let view = diff(&w, &s.id, None).await;
    let groups: Vec<(&str, &str, DiffGroup)> =
        view.modules.iter().map(|m| (m.module_id.as_str(), m.directory.as_str(), m.group)).collect();
    assert_eq!(
        groups,
        [
            ("@mono/a", "packages/a", DiffGroup::Module),
            ("@mono/b", "packages/b", DiffGroup::OtherModule),
            (OUTSIDE_MODULES_ID, "", DiffGroup::Outside)
        ]
    );
    assert_eq!(OUTSIDE_MODULES_ID, "(repository)");
    assert_eq!(paths(module(&view, "@mono/a")), ["packages/a/src/x.js"]);
    assert_eq!(paths(module(&view, "@mono/b")), ["packages/b/src/y.js"]);
    let outside = module(&view, OUTSIDE_MODULES_ID);
    assert_eq!(
        paths(outside),
        [".github/workflows/ci.yml", "CHANGELOG.md", "docs/new.md", "pnpm-lock.yaml"],
        "sorted, no node_modules"
    );
    assert_eq!(outside.base_sequence, 0);
    let renamed = file(outside, "docs/new.md");
    assert_eq!(
        (renamed.status, renamed.old_path.as_deref()),
        (FileStatus::Renamed, Some("docs/old.md")),
        "a rename within the group"
    );
    let lock = file(outside, "pnpm-lock.yaml");
    assert_eq!((lock.status, lock.additions, lock.deletions), (FileStatus::Modified, 2, 0));
    assert_eq!(lock.hunks[0].lines.last().unwrap(), &line(LineKind::Add, None, Some(15), "# regenerated"));

    // Each group can be asked for alone; an unknown id cannot.
    let only = diff(&w, &s.id, Some(OUTSIDE_MODULES_ID)).await;
    assert_eq!(only.modules, std::slice::from_ref(outside));
    assert_eq!(diff(&w, &s.id, Some("@mono/b")).await.modules, [module(&view, "@mono/b").clone()]);
    let err = w
        .engine
        .get_diff(GetDiffArgs { session_id: s.id.clone(), module_id: Some("@mono/zzz".into()) })
        .await
        .unwrap_err();
    assert_eq!(err.code, kiln_engine::ErrorCode::ModuleNotFound);

    // Once @mono/b joins the session it is one of its modules, against the checkpoint it joined at.
    w.engine.add_module(AddModuleArgs { session_id: s.id.clone(), module_id: "@mono/b".into() }).await.unwrap();
    let view = diff(&w, &s.id, None).await;
    let groups: Vec<(&str, DiffGroup)> = view.modules.iter().map(|m| (m.module_id.as_str(), m.group)).collect();
    assert_eq!(
        groups,
        [("@mono/a", DiffGroup::Module), ("@mono/b", DiffGroup::Module), (OUTSIDE_MODULES_ID, DiffGroup::Outside)]
    );

    // A file moved from the root into a module shows on both sides: deleted outside, added in the module.
    std::fs::rename(wc.join("CHANGELOG.md"), wc.join("packages/a/CHANGELOG.md")).unwrap();
    let view = diff(&w, &s.id, None).await;
    let moved = file(module(&view, OUTSIDE_MODULES_ID), "CHANGELOG.md");
    assert_eq!(moved.status, FileStatus::Deleted);
    assert_eq!(file(module(&view, "@mono/a"), "packages/a/CHANGELOG.md").status, FileStatus::Added);
}
