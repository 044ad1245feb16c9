//! Node detection: the package manager from `packageManager` and the lockfile (pnpm and
//! yarn through corepack), tests from the package's own `test` script or the root's
//! runner scoped to the package (vitest with or without projects, jest, node's own
//! runner), typecheck from a tsconfig or a `typecheck`/`check`/`type-check` script, and
//! prettier and eslint on the changed files when the repository configures them.

use serde_json::Value;

use super::{json, shell_word, Found, Repo};

/// npm's placeholder `test` script, which only fails.
const NO_TEST: &str = "no test specified";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Manager {
    Npm,
    Pnpm,
    Yarn,
    Bun,
}

pub(super) struct Pm {
    pub manager: Manager,
    /// How to invoke it: `npm`, `corepack pnpm`, `pnpm`…
    pub run: String,
    pub source: String,
}

/// The package manager of the repository: `packageManager` in the root package.json
/// first (run through corepack, which fetches that exact version), then the lockfile.
pub(super) fn manager(repo: &Repo) -> Pm {
    let root = json(repo.read_root("package.json"));
    if let Some(spec) = root["packageManager"].as_str() {
        let name = spec.split('@').next().unwrap_or_default();
        let manager = match name {
            "pnpm" => Some(Manager::Pnpm),
            "yarn" => Some(Manager::Yarn),
            "npm" => Some(Manager::Npm),
            _ => None,
        };
        if let Some(manager) = manager {
            let run = if manager == Manager::Npm { "npm".into() } else { format!("corepack {name}") };
            // `pnpm@9.15.9+sha512.…`: the hash is corepack's business, not the reader's.
            let shown = spec.split('+').next().unwrap_or(spec);
            return Pm { manager, run, source: format!("packageManager `{shown}` in package.json") };
        }
    }
    let lock = |name: &str| repo.root_file(name) || repo.module_file(name);
    let (manager, run, file) = if lock("pnpm-lock.yaml") {
        (Manager::Pnpm, "corepack pnpm", "pnpm-lock.yaml")
    } else if lock("yarn.lock") {
        (Manager::Yarn, "corepack yarn", "yarn.lock")
    } else if lock("bun.lockb") || lock("bun.lock") {
        (Manager::Bun, "bun", "bun.lock")
    } else if lock("package-lock.json") {
        (Manager::Npm, "npm", "package-lock.json")
    } else {
        return Pm { manager: Manager::Npm, run: "npm".into(), source: "no lockfile: npm".into() };
    };
    Pm { manager, run: run.into(), source: file.into() }
}

pub(super) fn gate(repo: &Repo, gate: &str) -> Result<Found, String> {
    let pm = manager(repo);
    match gate {
        "dependencies" => Ok(install(repo, &pm)),
        "tests" => tests(repo, &pm),
        "typecheck" => typecheck(repo, &pm),
        "format" => format(repo),
        "lint" => lint(repo),
        _ => Err(String::new()),
    }
}

/// Offline first, from the machine's own store or cache; then fetch only what it lacks.
/// Without a lockfile none is written: the install must not change the repository.
fn install(repo: &Repo, pm: &Pm) -> Found {
    let up = repo.to_root();
    let run = &pm.run;
    let locked = |name: &str| repo.root_file(name);
    let command = match pm.manager {
        Manager::Pnpm if locked("pnpm-lock.yaml") => {
            format!("{up}{{ {run} install --frozen-lockfile --offline || {run} install --frozen-lockfile --prefer-offline; }}")
        }
        Manager::Pnpm => {
            format!("{up}{{ {run} install --no-lockfile --offline || {run} install --no-lockfile --prefer-offline; }}")
        }
        Manager::Yarn if locked("yarn.lock") => {
            format!("{up}{{ {run} install --frozen-lockfile --offline || {run} install --frozen-lockfile --prefer-offline; }}")
        }
        Manager::Yarn => {
            format!("{up}{{ {run} install --no-lockfile --offline || {run} install --no-lockfile --prefer-offline; }}")
        }
        Manager::Bun => format!("{up}bun install"),
        Manager::Npm if locked("package-lock.json") || repo.module_file("package-lock.json") => {
            let up = if locked("package-lock.json") { up } else { String::new() };
            format!("{up}{{ npm ci --offline --no-audit --no-fund || npm ci --prefer-offline --no-audit --no-fund; }}")
        }
        Manager::Npm => format!("{up}npm install --no-package-lock --prefer-offline --no-audit --no-fund"),
    };
    Found::new(command, pm.source.clone())
}

fn scripts(package: &Value) -> &serde_json::Map<String, Value> {
    static EMPTY: std::sync::OnceLock<serde_json::Map<String, Value>> = std::sync::OnceLock::new();
    package["scripts"].as_object().unwrap_or_else(|| EMPTY.get_or_init(Default::default))
}

fn depends_on(package: &Value, name: &str) -> bool {
    ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"]
        .iter()
        .any(|k| package[k].get(name).is_some())
}

fn run_script(pm: &Pm, script: &str) -> String {
    match (pm.manager, script) {
        (Manager::Npm, "test") => "npm test".into(),
        (_, "test") => format!("{} test", pm.run),
        (_, s) => format!("{} run {s}", pm.run),
    }
}

const VITEST_CONFIGS: &[&str] = &[
    "vitest.config.ts",
    "vitest.config.mts",
    "vitest.config.js",
    "vitest.config.mjs",
    "vitest.config.cts",
    "vitest.workspace.ts",
    "vitest.workspace.js",
    "vitest.workspace.json",
];
const JEST_CONFIGS: &[&str] =
    &["jest.config.js", "jest.config.ts", "jest.config.mjs", "jest.config.cjs", "jest.config.json"];

fn tests(repo: &Repo, pm: &Pm) -> Result<Found, String> {
    let own = json(repo.read_module("package.json"));
    if let Some(script) = scripts(&own).get("test").and_then(|s| s.as_str()) {
        if !script.contains(NO_TEST) {
            return Ok(Found::new(run_script(pm, "test"), format!("package.json scripts.test{}", repo.where_module())));
        }
    }
    let root = json(repo.read_root("package.json"));
    let up = repo.to_root();
    let scope = if repo.at_root() { String::new() } else { format!(" {}", shell_word(&repo.module.directory)) };
    // The root's runner, scoped to the package by its directory (a path filter works
    // with and without vitest projects, and for jest).
    let vite_has_test = ["vite.config.ts", "vite.config.js", "vite.config.mts", "vite.config.mjs"]
        .iter()
        .find(|f| repo.read_root(f).is_some_and(|t| t.contains("test:") || t.contains("test :")));
    if let Some(config) = VITEST_CONFIGS.iter().find(|f| repo.root_file(f)).copied().or(vite_has_test.copied()) {
        return Ok(Found::new(format!("{up}vitest run{scope}"), format!("{config} at the repository root")));
    }
    if depends_on(&root, "vitest") && !repo.at_root() {
        return Ok(Found::new(format!("{up}vitest run{scope}"), "vitest in the root package.json"));
    }
    if let Some(config) = JEST_CONFIGS.iter().find(|f| repo.root_file(f)) {
        return Ok(Found::new(format!("{up}jest{scope}"), format!("{config} at the repository root")));
    }
    if !root["jest"].is_null() || depends_on(&root, "jest") {
        return Ok(Found::new(format!("{up}jest{scope}"), "jest in the root package.json"));
    }
    if !repo.at_root() {
        if let Some(script) = scripts(&root).get("test").and_then(|s| s.as_str()).filter(|s| !s.contains(NO_TEST)) {
            // A root script that runs everything is still this package's tests.
            return Ok(Found::new(
                format!("{up}{}", run_script(pm, "test")),
                format!("package.json scripts.test at the repository root (`{script}`)"),
            ));
        }
    }
    if has_node_tests(&repo.dir) {
        return Ok(Found::new("node --test", "test files and no test runner: node's own runner"));
    }
    Err("no test runner found: add a `test` script to package.json, or set `tests` in kiln.toml".into())
}

/// Whether the package holds test files node's runner would find.
fn has_node_tests(dir: &std::path::Path) -> bool {
    let test_file = regex::Regex::new(r"(^|[.\-_])test\.(c|m)?js$").unwrap();
    ignore::WalkBuilder::new(dir)
        .max_depth(Some(3))
        .filter_entry(|e| e.file_name() != "node_modules")
        .build()
        .flatten()
        .any(|e| {
            let name = e.file_name().to_string_lossy();
            let in_test_dir = e.path().parent().is_some_and(|p| p.ends_with("test") || p.ends_with("tests"));
            e.file_type().is_some_and(|t| t.is_file())
                && (test_file.is_match(&name) || (in_test_dir && name.ends_with(".js")))
        })
}

fn typecheck(repo: &Repo, pm: &Pm) -> Result<Found, String> {
    const NAMES: &[&str] = &["typecheck", "type-check", "check", "tsc"];
    let own = json(repo.read_module("package.json"));
    if let Some(name) = NAMES.iter().find(|n| scripts(&own).contains_key(**n)) {
        return Ok(Found::new(run_script(pm, name), format!("package.json scripts.{name}{}", repo.where_module())));
    }
    if repo.module_file("tsconfig.json") {
        return Ok(Found::new("tsc --noEmit -p tsconfig.json", format!("tsconfig.json{}", repo.where_module())));
    }
    let root = json(repo.read_root("package.json"));
    if let Some(name) = NAMES.iter().find(|n| scripts(&root).contains_key(**n)) {
        return Ok(Found::new(
            format!("{}{}", repo.to_root(), run_script(pm, name)),
            format!("package.json scripts.{name} at the repository root"),
        ));
    }
    if repo.root_file("tsconfig.json") {
        return Ok(Found::new(
            format!("{}tsc --noEmit -p tsconfig.json", repo.to_root()),
            "tsconfig.json at the repository root",
        ));
    }
    Err("no tsconfig.json and no `typecheck` script found".into())
}

const PRETTIER: &[&str] = &[
    ".prettierrc",
    ".prettierrc.json",
    ".prettierrc.yaml",
    ".prettierrc.yml",
    ".prettierrc.js",
    ".prettierrc.cjs",
    ".prettierrc.mjs",
    ".prettierrc.toml",
    "prettier.config.js",
    "prettier.config.cjs",
    "prettier.config.mjs",
    "prettier.config.ts",
];
const ESLINT: &[&str] = &[
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    ".eslintrc",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.json",
    ".eslintrc.yml",
    ".eslintrc.yaml",
];

/// Prettier from the repository root, so the root's `.prettierignore` holds, on the
/// files the session changed only.
fn format(repo: &Repo) -> Result<Found, String> {
    let root = json(repo.read_root("package.json"));
    let own = json(repo.read_module("package.json"));
    let config =
        PRETTIER.iter().find(|f| repo.root_file(f) || repo.module_file(f)).map(|f| f.to_string()).or_else(|| {
            (!root["prettier"].is_null() || !own["prettier"].is_null()).then(|| "`prettier` in package.json".into())
        });
    match config {
        Some(config) => Ok(Found::new(
            format!("{}prettier --check --ignore-unknown {{changed}}", repo.to_root()),
            format!("{config}: prettier on the changed files, from the repository root"),
        )),
        None => Err("the repository configures no formatter (no .prettierrc)".into()),
    }
}

fn lint(repo: &Repo) -> Result<Found, String> {
    let root = json(repo.read_root("package.json"));
    let own = json(repo.read_module("package.json"));
    let config =
        ESLINT.iter().find(|f| repo.root_file(f) || repo.module_file(f)).map(|f| f.to_string()).or_else(|| {
            (!root["eslintConfig"].is_null() || !own["eslintConfig"].is_null())
                .then(|| "`eslintConfig` in package.json".into())
        });
    match config {
        Some(config) => Ok(Found::new(
            format!("{}eslint {{changed:js,jsx,ts,tsx,mjs,cjs,mts,cts}}", repo.to_root()),
            format!("{config}: eslint on the changed files, from the repository root"),
        )),
        None => Err("the repository configures no linter (no eslint config)".into()),
    }
}
