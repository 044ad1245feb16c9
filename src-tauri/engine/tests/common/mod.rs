//! Shared pieces of the engine's integration tests: an engine on a temp config dir,
//! the fixture workspaces, and a reader of a directory tree's files.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kiln_engine::types::*;
use kiln_engine::{Engine, EngineOptions};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

pub fn engine(config_dir: &Path) -> Arc<Engine> {
    Arc::new(Engine::new(EngineOptions { config_dir: config_dir.to_path_buf(), transport: Transport::Serve, mode: kiln_engine::types::ServeMode::Loopback }))
}

/// Builds the git fixture (tests/fixtures/git-workspace.sh) at `dir`.
pub fn git_fixture(dir: &Path) {
    let status = std::process::Command::new("bash")
        .arg(repo_root().join("tests/fixtures/git-workspace.sh"))
        .arg(dir)
        .status()
        .unwrap();
    assert!(status.success(), "fixture script failed");
}

/// A copy of examples/shop without node_modules or .kiln.
pub fn shop_copy(dir: &Path) -> PathBuf {
    let src = repo_root().join("examples/shop");
    let dest = dir.join("shop");
    copy_tree(&src, &dest);
    dest
}

fn copy_tree(src: &Path, dest: &Path) {
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

/// Every file under `root` (relative path → content; a symlink reads as "-> target"),
/// skipping the top-level directories named in `skip`.
pub fn files(root: &Path, skip: &[&str]) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    walk(root, root, skip, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, skip: &[&str], out: &mut BTreeMap<String, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        if skip.contains(&rel.as_str()) {
            continue;
        }
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            out.insert(rel, format!("-> {}", std::fs::read_link(&path).unwrap().display()).into_bytes());
        } else if kind.is_dir() {
            walk(root, &path, skip, out);
        } else {
            out.insert(rel, std::fs::read(&path).unwrap());
        }
    }
}

pub async fn open(engine: &Engine, path: &Path) -> WorkspaceView {
    engine.open_workspace(OpenWorkspaceArgs { path: path.display().to_string() }).await.unwrap()
}

pub async fn create(engine: &Engine, brief: &str) -> SessionView {
    engine.create_session(CreateSessionArgs { brief: brief.into(), title: None }).await.unwrap()
}

/// Waits until the session's setup is no longer running.
pub async fn wait_setup(engine: &Engine, id: &str) -> SessionView {
    for _ in 0..300 {
        let s = engine.get_session(SessionIdArgs { session_id: id.into() }).await.unwrap();
        if s.setup != SetupState::Running {
            return s;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("setup of {id} never finished");
}
