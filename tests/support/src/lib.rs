//! The fixtures the Rust tests of the engine, `kiln serve` and the app share: where the
//! repository is, a copy of `examples/shop` to open, and an engine on a config directory of
//! the test's own. Each crate's tests add what only they need (the engine's tests: their
//! records on PostgreSQL when asked, git fixtures, scripted agents). `source` reads Rust sources
//! for the architecture tests (the engine's layers, the crates' import circles).

pub mod source;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kiln_engine::types::{ServeMode, Transport};
use kiln_engine::{Engine, EngineOptions};

/// The root of Kiln's repository.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// A copy of `examples/shop` at `dir/shop`, without its `node_modules` or `.kiln`, and with no
/// screenshots after its turns: each would start the shop's preview and a Chromium, which
/// outlive a dropped engine. Tests of screenshots use workspaces of their own.
pub fn shop_copy(dir: &Path) -> PathBuf {
    let dest = dir.join("shop");
    copy_tree(&repo_root().join("examples/shop"), &dest);
    edit(&dest.join("kiln.toml"), "[preview]\n", "[preview]\nscreenshots = false\n");
    dest
}

/// The shop of `shop_copy` with no install step: sessions start ready, and no setup entries
/// interleave with what a test reads of the transcript.
pub fn without_setup(shop: &Path) {
    edit(&shop.join("kiln.toml"), "setup = \"npm ci --offline --no-audit --no-fund\"", "setup = \"\"");
}

/// Copies a directory tree, leaving out `node_modules` and `.kiln` wherever they are.
pub fn copy_tree(src: &Path, dest: &Path) {
    std::fs::create_dir_all(dest).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "node_modules" || name == ".kiln" {
            continue;
        }
        let to = dest.join(&name);
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), to).unwrap();
        }
    }
}

/// An engine on `config_dir` for `transport` (see `options`), its records in SQLite.
pub fn engine(config_dir: &Path, transport: Transport) -> Arc<Engine> {
    Arc::new(Engine::new(options(config_dir, transport)))
}

/// The options of a test's engine: loopback mode, agent commands and terminals off (the tests
/// of those turn them on).
pub fn options(config_dir: &Path, transport: Transport) -> EngineOptions {
    EngineOptions {
        config_dir: config_dir.to_path_buf(),
        transport,
        mode: ServeMode::Loopback,
        allow_agent_commands: false,
        allow_terminals: false,
    }
}

/// Replaces `from` with `to` in a fixture's file; a fixture that no longer has `from` fails
/// the test rather than leaving it to run on an unchanged file.
fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} no longer has `{from}`: update the fixture's edit", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}
