//! Gate and setup detection (ARCHITECTURE.md: Gates) on small repositories written here, each with no
//! kiln.toml: what each gate runs and where it came from, the setup step, toolchain
//! checks, kiln.toml overriding detection, "Save as kiln.toml", and a not-configured
//! gate that never blocks delivery while a failing detected one does.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::*;
use kiln_engine::testing::detect;
use kiln_engine::types::*;

fn gates_of(view: &DetectionView, module: &str) -> BTreeMap<String, (Option<String>, String)> {
    let m = view
        .modules
        .iter()
        .find(|m| m.id == module)
        .unwrap_or_else(|| panic!("no module {module} in {:#?}", view.modules));
    m.gates.iter().map(|g| (g.gate.clone(), (g.command.clone(), g.source.clone()))).collect()
}

fn command(view: &DetectionView, module: &str, gate: &str) -> Option<String> {
    gates_of(view, module)[gate].0.clone()
}

fn source(view: &DetectionView, module: &str, gate: &str) -> String {
    gates_of(view, module)[gate].1.clone()
}

/// A pnpm monorepo tested from a root vitest config with projects; one package has its
/// own test script; prettier configured at the root.
fn pnpm_monorepo(root: &Path) {
    write(
        &root.join("package.json"),
        r#"{"name": "mono", "private": true, "packageManager": "pnpm@9.15.9", "devDependencies": {"vitest": "3.2.4"}, "scripts": {"typecheck": "tsc -b"}}"#,
    );
    write(&root.join("pnpm-workspace.yaml"), "packages:\n  - 'packages/*'\n");
    write(&root.join("pnpm-lock.yaml"), "lockfileVersion: '9.0'\n");
    write(&root.join("vitest.config.ts"), "export default { test: { projects: ['packages/*'] } };\n");
    write(&root.join(".prettierrc"), "{}\n");
    write(&root.join("packages/text/package.json"), r#"{"name": "@mono/text", "version": "1.0.0"}"#);
    write(&root.join("packages/text/src/index.ts"), "export const up = (s: string) => s.toUpperCase();\n");
    write(&root.join("packages/dates/package.json"), r#"{"name": "@mono/dates", "scripts": {"test": "node --test"}}"#);
    write(&root.join("packages/dates/tsconfig.json"), "{}\n");
}

#[test]
fn a_pnpm_monorepo_tested_from_the_root() {
    let tmp = tempfile::tempdir().unwrap();
    pnpm_monorepo(tmp.path());
    let view = detect::detect_path(tmp.path()).unwrap();
    let ids: Vec<&str> = view.modules.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["@mono/dates", "@mono/text"]);
    assert_eq!(view.workflow, Workflow::Direct);
    // The root runner scoped to the package, run from the root.
    assert_eq!(command(&view, "@mono/text", "tests").as_deref(), Some("cd ../.. && vitest run packages/text"));
    assert_eq!(source(&view, "@mono/text", "tests"), "vitest.config.ts at the repository root");
    // A package's own test script comes first, through the repository's package manager.
    assert_eq!(command(&view, "@mono/dates", "tests").as_deref(), Some("corepack pnpm test"));
    assert_eq!(source(&view, "@mono/dates", "tests"), "package.json scripts.test in `packages/dates`");
    assert_eq!(command(&view, "@mono/dates", "typecheck").as_deref(), Some("tsc --noEmit -p tsconfig.json"));
    assert_eq!(command(&view, "@mono/text", "typecheck").as_deref(), Some("cd ../.. && corepack pnpm run typecheck"));
    // Prettier from the root (its ignore file holds) on the changed files only.
    assert_eq!(
        command(&view, "@mono/text", "format").as_deref(),
        Some("cd ../.. && prettier --check --ignore-unknown {changed}")
    );
    assert_eq!(command(&view, "@mono/text", "lint"), None, "no eslint config: not configured");
    let setup = view.setup.clone().unwrap();
    assert_eq!(setup.command, "{ corepack pnpm install --frozen-lockfile --offline || corepack pnpm install --frozen-lockfile --prefer-offline; }");
    assert!(setup.source.contains("pnpm@9.15.9"), "{}", setup.source);
    assert!(view.toolchains.iter().any(|t| t.name == "node" && t.ok), "{:#?}", view.toolchains);
    // The TOML says the same and reads back as Kiln reads kiln.toml.
    let config = kiln_engine::testing::config::Config::parse(&view.toml, Path::new("kiln.toml")).unwrap();
    assert_eq!(
        config.modules.overrides["@mono/text"].gates.tests.as_deref(),
        Some("cd ../.. && vitest run packages/text")
    );
    assert_eq!(config.modules.overrides["@mono/text"].gates.lint.as_deref(), Some(""));
    // Detection writes nothing, not even .kiln/.
    assert!(!tmp.path().join(".kiln").exists());
}

#[test]
fn npm_jest_cargo_python_go_and_make() {
    let tmp = tempfile::tempdir().unwrap();

    let npm = tmp.path().join("npm");
    write(
        &npm.join("package.json"),
        r#"{"name": "slugs", "scripts": {"test": "jest"}, "devDependencies": {"jest": "29.7.0"}}"#,
    );
    write(&npm.join("package-lock.json"), "{}\n");
    let view = detect::detect_path(&npm).unwrap();
    assert_eq!(command(&view, "slugs", "tests").as_deref(), Some("npm test"));
    assert_eq!(
        view.setup.unwrap().command,
        "{ npm ci --offline --no-audit --no-fund || npm ci --prefer-offline --no-audit --no-fund; }"
    );

    let cargo = tmp.path().join("cargo");
    write(
        &cargo.join("Cargo.toml"),
        "[workspace]\nmembers = [\"crates/*\"]\n\n[workspace.lints.clippy]\nall = \"warn\"\n",
    );
    write(
        &cargo.join("crates/core/Cargo.toml"),
        "[package]\nname = \"tally-core\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    write(&cargo.join("crates/core/src/lib.rs"), "");
    let view = detect::detect_path(&cargo).unwrap();
    assert_eq!(command(&view, "tally-core", "tests").as_deref(), Some("cargo test -p tally-core"));
    assert_eq!(command(&view, "tally-core", "format").as_deref(), Some("cargo fmt -p tally-core --check"));
    assert_eq!(
        command(&view, "tally-core", "lint").as_deref(),
        Some("cargo clippy -p tally-core --all-targets -- -D warnings")
    );
    assert_eq!(source(&view, "tally-core", "lint"), "[lints.clippy] in Cargo.toml");
    assert_eq!(command(&view, "tally-core", "typecheck").as_deref(), Some("cargo check -p tally-core --all-targets"));
    assert_eq!(view.setup.unwrap().command, "{ cargo fetch --offline || cargo fetch; }");
    // A bench that needs nightly (`#![feature(test)]`) is left out on a repository that
    // pins no nightly toolchain, and the source says why; a pinned nightly keeps it.
    write(&cargo.join("crates/core/benches/speed.rs"), "#![feature(test)]\nextern crate test;\n");
    let view = detect::detect_path(&cargo).unwrap();
    assert_eq!(
        command(&view, "tally-core", "typecheck").as_deref(),
        Some("cargo check -p tally-core --lib --bins --tests --examples")
    );
    assert!(source(&view, "tally-core", "typecheck").contains("`benches/speed.rs` needs a nightly toolchain"));
    assert_eq!(
        command(&view, "tally-core", "lint").as_deref(),
        Some("cargo clippy -p tally-core --lib --bins --tests --examples -- -D warnings")
    );
    write(&cargo.join("rust-toolchain.toml"), "[toolchain]\nchannel = \"nightly-2026-01-01\"\n");
    let view = detect::detect_path(&cargo).unwrap();
    assert_eq!(command(&view, "tally-core", "typecheck").as_deref(), Some("cargo check -p tally-core --all-targets"));

    let python = tmp.path().join("python");
    write(&python.join("pyproject.toml"), "[project]\nname = \"wordfreq\"\nversion = \"0.1.0\"\nrequires-python = \">=3.8\"\n\n[project.optional-dependencies]\ntest = [\"pytest\"]\n\n[tool.ruff]\nline-length = 100\n");
    write(&python.join("src/wordfreq/__init__.py"), "");
    write(&python.join("tests/test_count.py"), "def test_x():\n    assert True\n");
    let view = detect::detect_path(&python).unwrap();
    assert_eq!(view.modules[0].toolchain, Toolchain::Python);
    assert_eq!(command(&view, "wordfreq", "tests").as_deref(), Some("python -m pytest tests"));
    assert_eq!(command(&view, "wordfreq", "format").as_deref(), Some("ruff format --check {changed:py}"));
    assert_eq!(command(&view, "wordfreq", "lint").as_deref(), Some("ruff check {changed:py}"));
    let setup = view.setup.unwrap().command;
    assert!(
        setup.contains("python3 -m venv --system-site-packages .venv") && setup.contains("-e '.[test]'"),
        "{setup}"
    );

    let go = tmp.path().join("go");
    write(&go.join("go.mod"), "module example.com/units\n\ngo 1.19\n");
    write(&go.join("convert/convert.go"), "package convert\n");
    let view = detect::detect_path(&go).unwrap();
    assert_eq!(view.modules[0].id, "example.com/units");
    assert_eq!(view.modules[0].toolchain, Toolchain::Go);
    assert_eq!(command(&view, "example.com/units", "tests").as_deref(), Some("go test ./..."));
    assert_eq!(command(&view, "example.com/units", "typecheck").as_deref(), Some("go vet ./..."));
    assert!(command(&view, "example.com/units", "format").unwrap().starts_with("files=$(gofmt -l {changed:go})"));

    let make = tmp.path().join("make");
    write(&make.join("Makefile"), "TESTS := a b\n\nbuild:\n\tcc -o tool tool.c\n\ntest: build\n\t./run-tests.sh\n");
    let view = detect::detect_path(&make).unwrap();
    assert_eq!(view.modules[0].toolchain, Toolchain::Generic);
    assert_eq!(command(&view, "make", "tests").as_deref(), Some("make test"));
    assert_eq!(source(&view, "make", "tests"), "Makefile target `test`");
    assert_eq!(command(&view, "make", "format"), None);
    assert!(view.setup.is_none());
}

#[test]
fn an_old_toolchain_is_named_with_what_to_install() {
    let tmp = tempfile::tempdir().unwrap();
    write(&tmp.path().join("go.mod"), "module example.com/future\n\ngo 1.999\n");
    let view = detect::detect_path(tmp.path()).unwrap();
    let go = view.toolchains.iter().find(|t| t.name == "go").unwrap();
    assert!(!go.ok);
    assert_eq!(go.required.as_deref(), Some("1.999"));
    let message = go.message.clone().unwrap();
    assert!(message.contains("go 1.999") && message.contains("install Go"), "{message}");

    // The version files a repository pins its toolchains with are read and shown.
    let node = tmp.path().join("node");
    write(&node.join("package.json"), r#"{"name": "pinned", "scripts": {"test": "node --test"}}"#);
    write(&node.join("package-lock.json"), "{}\n");
    write(&node.join(".nvmrc"), "v999.1.0\n");
    let view = detect::detect_path(&node).unwrap();
    let found = view.toolchains.iter().find(|t| t.name == "node").unwrap();
    assert_eq!(found.required.as_deref(), Some("999.1.0"));
    assert!(!found.ok && found.message.as_deref().unwrap().contains("node 999.1.0"), "{found:#?}");
    let python = tmp.path().join("python");
    write(&python.join("pyproject.toml"), "[project]\nname = \"pinned\"\nversion = \"0.1.0\"\n");
    write(&python.join(".python-version"), "3.8\n");
    let view = detect::detect_path(&python).unwrap();
    let found = view.toolchains.iter().find(|t| t.name == "python3").unwrap();
    assert_eq!((found.required.as_deref(), found.ok), (Some("3.8"), true), "{found:#?}");
    write(&python.join(".python-version"), "system\n");
    let view = detect::detect_path(&python).unwrap();
    assert_eq!(
        view.toolchains.iter().find(|t| t.name == "python3").unwrap().required,
        None,
        "an alias pins no version"
    );
}

#[test]
fn kiln_toml_overrides_detection_and_can_turn_a_gate_off() {
    let tmp = tempfile::tempdir().unwrap();
    pnpm_monorepo(tmp.path());
    write(
        &tmp.path().join("kiln.toml"),
        "[gates.node]\nformat = \"\"\n\n[modules.overrides.\"@mono/text\".gates]\ntests = \"npm run special\"\n",
    );
    let view = detect::detect_path(tmp.path()).unwrap();
    assert_eq!(command(&view, "@mono/text", "tests").as_deref(), Some("npm run special"));
    assert_eq!(source(&view, "@mono/text", "tests"), "kiln.toml [modules.overrides.\"@mono/text\".gates]");
    assert_eq!(
        command(&view, "@mono/dates", "tests").as_deref(),
        Some("corepack pnpm test"),
        "the other module is still detected"
    );
    assert_eq!(command(&view, "@mono/text", "format"), None);
    assert_eq!(source(&view, "@mono/text", "format"), "kiln.toml [gates.node]");
}

#[tokio::test]
async fn save_as_kiln_toml_writes_what_was_edited_and_keeps_a_replaced_file() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    pnpm_monorepo(&repo);
    let engine = engine(&tmp.path().join("config"));
    let opened = open(&engine, &repo).await;
    assert_eq!(opened.workflow, Workflow::Direct);
    assert_eq!(opened.roles.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["engineer"]);
    let detected = engine.detect_workspace(EmptyArgs {}).await.unwrap();
    assert_eq!(detected.config_path, None);

    let save = |replace: bool, tests: &str| SaveConfigArgs {
        workflow: Workflow::Direct,
        setup: Some("corepack pnpm install --offline".into()),
        modules: vec![SaveModuleGates {
            id: "@mono/text".into(),
            gates: [("tests".to_string(), tests.to_string()), ("lint".into(), String::new())].into(),
        }],
        replace,
    };
    let saved = engine.save_config(save(false, "cd ../.. && vitest run packages/text --reporter=dot")).await.unwrap();
    let path = repo.join("kiln.toml");
    assert_eq!(saved.config_path.as_deref(), Some(path.to_str().unwrap()));
    assert_eq!(
        command(&saved, "@mono/text", "tests").as_deref(),
        Some("cd ../.. && vitest run packages/text --reporter=dot")
    );
    assert!(source(&saved, "@mono/text", "tests").starts_with("kiln.toml"));
    assert_eq!(saved.setup.unwrap().source, "kiln.toml [session] setup");
    let state = engine.get_state(EmptyArgs {}).await.unwrap();
    assert!(state.workspace.unwrap().config_path.is_some(), "the workspace was reopened with its kiln.toml");

    // A second save must say so; bad input changes nothing.
    let user_text =
        std::fs::read_to_string(&path).unwrap() + "\n[preview]\ncommand = \"node server.js\" # the user's own\n";
    std::fs::write(&path, &user_text).unwrap();
    let err = engine.save_config(save(false, "x")).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::ConfigExists);
    let mut bad = save(true, "x");
    bad.modules[0].gates.insert("deploy".into(), "rm -rf /".into());
    assert_eq!(engine.save_config(bad).await.unwrap_err().code, ErrorCode::InvalidInput);
    let mut unknown = save(true, "x");
    unknown.modules[0].id = "@mono/nope".into();
    assert_eq!(engine.save_config(unknown).await.unwrap_err().code, ErrorCode::ModuleNotFound);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), user_text);

    // Replacing keeps the keys and comments the set-up screen does not show, and a copy.
    let replaced = engine.save_config(save(true, "vitest run")).await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("command = \"node server.js\" # the user's own"), "{text}");
    assert!(text.contains("tests = \"vitest run\""), "{text}");
    assert_eq!(command(&replaced, "@mono/text", "tests").as_deref(), Some("vitest run"));
    let backups: Vec<_> = std::fs::read_dir(repo.join(".kiln/backups")).unwrap().flatten().collect();
    assert_eq!(backups.len(), 1);
    assert_eq!(std::fs::read_to_string(backups[0].path()).unwrap(), user_text);
}

#[tokio::test]
async fn a_session_whose_toolchain_is_too_old_fails_its_setup_saying_what_to_install() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("future");
    write(&repo.join("go.mod"), "module example.com/future\n\ngo 1.999\n");
    write(&repo.join("future.go"), "package future\n");
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &repo).await;
    let s = create(&engine, "Anything").await;
    let s = wait_setup(&engine, &s.id).await;
    assert_eq!(s.setup, SetupState::Failed);
    let gates = engine
        .get_transcript(GetTranscriptArgs { session_id: s.id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    let entry = gates.iter().find(|e| e.kind == EntryKind::Gate).expect("the setup's entry");
    assert!(entry.text.contains("go 1.999") && entry.text.contains("TOOLCHAIN_MISSING"), "{}", entry.text);
    let results = engine.get_gates(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    let setup = results.iter().find(|g| g.gate == "dependencies" && g.module.is_none()).unwrap();
    assert_eq!((setup.status, setup.source.as_str()), (GateStatus::Failed, "go.mod"));
}
