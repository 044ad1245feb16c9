//! One engine per workspace: a second engine opening a workspace another one holds is
//! refused with `WORKSPACE_IN_USE` naming the holder, and gets in once the holder has let
//! go (dropped, or switched to another workspace). Two engines in one process conflict as
//! two processes do: the lock belongs to each opening, not to the process.

use std::path::Path;

use crate::common::{engine, open};
use kiln_engine::types::*;
use kiln_engine::{Engine, ErrorCode};

fn workspace(root: &Path, name: &str) -> std::path::PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("package.json"), format!(r#"{{"name":"{name}"}}"#)).unwrap();
    dir
}

async fn try_open(engine: &Engine, path: &Path) -> kiln_engine::Result<WorkspaceView> {
    engine.open_workspace(OpenWorkspaceArgs { path: path.display().to_string() }).await
}

#[tokio::test]
async fn a_second_engine_is_refused_naming_the_holder_until_the_first_is_gone() {
    let tmp = tempfile::tempdir().unwrap();
    let app = workspace(tmp.path(), "app");
    let first = engine(&tmp.path().join("config-1"));
    open(&first, &app).await;
    // Reopening the open workspace in the same engine keeps its hold.
    open(&first, &app).await;

    let second = engine(&tmp.path().join("config-2"));
    let refused = try_open(&second, &app).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::WorkspaceInUse, "{}", refused.message);
    let holder = format!("`kiln serve` (pid {}", std::process::id());
    assert!(refused.message.contains(&holder), "the refusal names the holder: {}", refused.message);
    assert_eq!(second.workspace().err().map(|e| e.code), Some(ErrorCode::WorkspaceNotOpen));
    // The first engine still works on it.
    first.list_sessions(ListSessionsArgs { include_archived: None }).await.unwrap();

    drop(first);
    let view = try_open(&second, &app).await.unwrap();
    assert_eq!(Path::new(&view.root), app.canonicalize().unwrap());
}

#[tokio::test]
async fn switching_workspaces_lets_the_first_go() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (workspace(tmp.path(), "a"), workspace(tmp.path(), "b"));
    let switcher = engine(&tmp.path().join("config-1"));
    open(&switcher, &a).await;
    let other = engine(&tmp.path().join("config-2"));
    let refused = try_open(&other, &a).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::WorkspaceInUse);
    assert!(refused.message.contains(&format!("(pid {}", std::process::id())), "{}", refused.message);

    open(&switcher, &b).await;
    try_open(&other, &a).await.expect("the switcher let `a` go when it opened `b`");
    // A refused switch keeps the workspace the engine has open.
    assert_eq!(try_open(&switcher, &a).await.unwrap_err().code, ErrorCode::WorkspaceInUse);
    assert_eq!(Path::new(&switcher.workspace().unwrap().root), b.canonicalize().unwrap());
}
