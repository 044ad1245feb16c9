//! Rust, Python and Go detection, and the Makefile or justfile targets any repository
//! may have. Python gets its own virtual environment in the working copy (`.venv`,
//! first on the gates' PATH); Go runs with the local toolchain only.

use super::{Found, Repo};

pub(super) fn rust(repo: &Repo, gate: &str) -> Result<Found, String> {
    let id = &repo.module.id;
    let manifest = "Cargo.toml";
    match gate {
        "dependencies" => {
            Ok(Found::new(format!("{}{{ cargo fetch --offline || cargo fetch; }}", lock_dir(repo)), "Cargo.toml"))
        }
        "typecheck" => Ok(match nightly_benches(repo) {
            Some(bench) => Found::new(
                format!("cargo check -p {id} {STABLE_TARGETS}"),
                format!("Cargo.toml; benches left out: `{bench}` needs a nightly toolchain (#![feature])"),
            ),
            None => Found::new(format!("cargo check -p {id} --all-targets"), manifest),
        }),
        "tests" => Ok(Found::new(format!("cargo test -p {id}"), manifest)),
        "format" => Ok(Found::new(format!("cargo fmt -p {id} --check"), "Cargo.toml: rustfmt")),
        "lint" => {
            let configured = ["clippy.toml", ".clippy.toml"]
                .iter()
                .find(|f| repo.root_file(f) || repo.module_file(f))
                .map(|f| f.to_string())
                .or_else(|| {
                    let lints = |text: Option<String>| {
                        text.is_some_and(|t| t.contains("[lints.clippy]") || t.contains("[workspace.lints.clippy]"))
                    };
                    (lints(repo.read_root(manifest)) || lints(repo.read_module(manifest)))
                        .then(|| "[lints.clippy] in Cargo.toml".into())
                });
            match configured {
                Some(source) => {
                    let targets = if nightly_benches(repo).is_some() { STABLE_TARGETS } else { "--all-targets" };
                    Ok(Found::new(format!("cargo clippy -p {id} {targets} -- -D warnings"), source))
                }
                None => Err("clippy is not configured (no clippy.toml or [lints.clippy])".into()),
            }
        }
        _ => Err(String::new()),
    }
}

/// Every target but the benches.
const STABLE_TARGETS: &str = "--lib --bins --tests --examples";

/// A bench of the module that builds only on nightly (`#![feature(…)]`, as `#![feature(test)]`
/// for the built-in bench harness), when the repository does not pin a nightly toolchain:
/// `--all-targets` would fail on the stable toolchain whatever the change.
fn nightly_benches(repo: &Repo) -> Option<String> {
    let pinned = |name: &str| repo.read_root(name).or_else(|| repo.read_module(name));
    if ["rust-toolchain.toml", "rust-toolchain"].iter().any(|f| pinned(f).is_some_and(|t| t.contains("nightly"))) {
        return None;
    }
    let benches = std::fs::read_dir(repo.dir.join("benches")).ok()?;
    let mut names: Vec<std::path::PathBuf> = benches.flatten().map(|e| e.path()).collect();
    names.sort();
    names.into_iter().find_map(|path| {
        let file = if path.is_dir() { path.join("main.rs") } else { path.clone() };
        let text = std::fs::read_to_string(&file).ok()?;
        let gated = text.lines().any(|l| l.trim_start().starts_with("#![feature("));
        gated.then(|| format!("benches/{}", path.file_name().unwrap_or_default().to_string_lossy()))
    })
}

/// Cargo fetches for the whole workspace from the directory holding `Cargo.lock`.
fn lock_dir(repo: &Repo) -> String {
    if repo.root_file("Cargo.lock") || repo.root_file("Cargo.toml") {
        repo.to_root()
    } else {
        String::new()
    }
}

/// How a Python project installs: uv, poetry or pip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PyManager {
    Uv,
    Poetry,
    Pip,
}

pub(super) fn py_manager(repo: &Repo) -> (PyManager, &'static str) {
    let pyproject = repo.read_module("pyproject.toml").unwrap_or_default();
    if repo.module_file("uv.lock") || repo.root_file("uv.lock") {
        (PyManager::Uv, "uv.lock")
    } else if repo.module_file("poetry.lock") || pyproject.contains("[tool.poetry]") {
        (PyManager::Poetry, "poetry (pyproject.toml [tool.poetry])")
    } else {
        (PyManager::Pip, "pyproject.toml: pip")
    }
}

pub(super) fn python(repo: &Repo, gate: &str) -> Result<Found, String> {
    let pyproject = repo.read_module("pyproject.toml").unwrap_or_default();
    let setup_cfg = repo.read_module("setup.cfg").unwrap_or_default();
    let has = |names: &[&str]| names.iter().any(|n| repo.module_file(n) || repo.root_file(n));
    match gate {
        "dependencies" => Ok(python_install(repo, &pyproject)),
        "tests" => {
            let configured = pyproject.contains("[tool.pytest")
                || has(&["pytest.ini", "conftest.py"])
                || setup_cfg.contains("[tool:pytest]");
            let tests_dir = ["tests", "test"].into_iter().find(|d| repo.dir.join(d).is_dir());
            match (configured, tests_dir) {
                (_, Some(dir)) => Ok(Found::new(
                    format!("python -m pytest {dir}"),
                    format!("`{dir}/` directory: pytest in the project's virtual environment"),
                )),
                (true, None) => Ok(Found::new("python -m pytest", "pytest configuration in pyproject.toml")),
                (false, None) => Err("no tests directory or pytest configuration found".into()),
            }
        }
        "format" => {
            if pyproject.contains("[tool.ruff") || has(&["ruff.toml", ".ruff.toml"]) {
                Ok(Found::new(
                    format!("{}ruff format --check {{changed:py}}", repo.to_root()),
                    "ruff configuration: on the changed files",
                ))
            } else if pyproject.contains("[tool.black]") {
                Ok(Found::new(
                    format!("{}black --check {{changed:py}}", repo.to_root()),
                    "pyproject.toml [tool.black]: on the changed files",
                ))
            } else {
                Err("the project configures no formatter (ruff or black)".into())
            }
        }
        "lint" => {
            if pyproject.contains("[tool.ruff") || has(&["ruff.toml", ".ruff.toml"]) {
                Ok(Found::new(
                    format!("{}ruff check {{changed:py}}", repo.to_root()),
                    "ruff configuration: on the changed files",
                ))
            } else {
                Err("the project configures no linter (ruff)".into())
            }
        }
        "typecheck" => {
            if pyproject.contains("[tool.mypy]") || has(&["mypy.ini", ".mypy.ini"]) || setup_cfg.contains("[mypy") {
                let target = if repo.dir.join("src").is_dir() { "src" } else { "." };
                Ok(Found::new(format!("python -m mypy {target}"), "mypy configuration"))
            } else {
                Err("the project configures no type checker (mypy)".into())
            }
        }
        _ => Err(String::new()),
    }
}

/// The project's own virtual environment in the working copy, offline first. pip's
/// venv sees the machine's site packages, so tools already installed need no network.
fn python_install(repo: &Repo, pyproject: &str) -> Found {
    let (manager, source) = py_manager(repo);
    let extras: Vec<&str> =
        ["test", "tests", "testing", "dev"].into_iter().filter(|e| pyproject.contains(&format!("\n{e} = ["))).collect();
    match manager {
        PyManager::Uv => Found::new("{ uv sync --offline --all-extras || uv sync --all-extras; }", source),
        PyManager::Poetry => Found::new("POETRY_VIRTUALENVS_IN_PROJECT=true poetry install --no-interaction", source),
        PyManager::Pip => {
            let target = if pyproject.is_empty() && repo.module_file("requirements.txt") {
                "-r requirements.txt".to_string()
            } else if extras.is_empty() {
                "-e .".to_string()
            } else {
                format!("-e '.[{}]'", extras.join(","))
            };
            let pip = ".venv/bin/python -m pip install --disable-pip-version-check -q";
            Found::new(
                format!("{{ [ -x .venv/bin/python ] || python3 -m venv --system-site-packages .venv; }} && {{ {pip} --no-index --no-build-isolation {target} || {pip} {target}; }}"),
                source,
            )
        }
    }
}

pub(super) fn go(repo: &Repo, gate: &str) -> Result<Found, String> {
    match gate {
        "dependencies" => Ok(Found::new("{ GOFLAGS=-mod=mod GOPROXY=off go mod download || go mod download; }", "go.mod")),
        "typecheck" => Ok(Found::new("go vet ./...", "go.mod: go vet")),
        "tests" => Ok(Found::new("go test ./...", "go.mod: go test")),
        // `{changed}` is relative to the repository root, so gofmt runs from there.
        "format" => Ok(Found::new(
            format!("{}files=$(gofmt -l {{changed:go}}) && [ -z \"$files\" ] || {{ echo \"not gofmt-formatted:\"; echo \"$files\"; exit 1; }}", repo.to_root()),
            "go.mod: gofmt on the changed files",
        )),
        "lint" => {
            if [".golangci.yml", ".golangci.yaml", ".golangci.toml"].iter().any(|f| repo.root_file(f) || repo.module_file(f)) {
                Ok(Found::new("golangci-lint run ./...", ".golangci.yml"))
            } else {
                Err("no golangci-lint configuration".into())
            }
        }
        _ => Err(String::new()),
    }
}

/// A Makefile or justfile target for `tests` (`test`, else `check`) or `typecheck`
/// (`check`, when `test` exists too), in the module's directory or at the root.
pub(super) fn task_target(repo: &Repo, gate: &str) -> Option<Found> {
    let wanted: &[&str] = match gate {
        "tests" => &["test", "tests", "check"],
        "typecheck" => &["typecheck", "lint-types"],
        "lint" => &["lint"],
        _ => return None,
    };
    let at = |dir_is_root: bool| -> Option<Found> {
        let read = |name: &str| if dir_is_root { repo.read_root(name) } else { repo.read_module(name) };
        let prefix = if dir_is_root { repo.to_root() } else { String::new() };
        for (file, tool) in [
            ("Makefile", "make"),
            ("makefile", "make"),
            ("GNUmakefile", "make"),
            ("justfile", "just"),
            ("Justfile", "just"),
        ] {
            let Some(text) = read(file) else { continue };
            if let Some(target) = wanted.iter().find(|t| has_target(&text, t)) {
                return Some(Found::new(format!("{prefix}{tool} {target}"), format!("{file} target `{target}`")));
            }
        }
        None
    };
    at(false).or_else(|| if repo.at_root() { None } else { at(true) })
}

fn has_target(text: &str, target: &str) -> bool {
    text.lines().any(|line| {
        // `test:` or `test: deps` (make), `test *args:` (just); never `test := …` or `testdata:`.
        let Some(rest) = line.strip_prefix(target) else { return false };
        let Some((args, after)) = rest.split_once(':') else { return false };
        if after.starts_with('=') {
            return false;
        }
        args.is_empty()
            || (args.starts_with(' ')
                && args.split_whitespace().all(|a| {
                    a.starts_with(['*', '+']) || a.chars().all(|c| c.is_alphanumeric() || "_=\"'".contains(c))
                }))
    })
}

#[cfg(test)]
mod tests {
    use super::has_target;

    #[test]
    fn make_and_just_targets() {
        assert!(has_target("all: build\ntest: build\n\t./run-tests\n", "test"));
        assert!(has_target("test:\n\tgo test\n", "test"));
        assert!(has_target("test *args:\n  cargo test {{args}}\n", "test"));
        assert!(!has_target("TESTS := a b\ntestdata:\n", "test"));
        assert!(!has_target("test := 1\n", "test"));
        assert!(!has_target("check: test\n", "test"));
    }
}
