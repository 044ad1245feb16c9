//! Sessions' lifecycle and bad input (ARCHITECTURE.md: Sessions and isolation, Lifecycle and usage): each refusal has its stable code
//! and changes nothing on disk or in the database.

use std::path::Path;

use crate::common::*;
use kiln_engine::types::*;
use kiln_engine::{Engine, ErrorCode};

async fn count_rows(engine: &Engine) -> (usize, usize) {
    let sessions = engine.list_sessions(ListSessionsArgs { include_archived: Some(true) }).await.unwrap();
    let mut entries = 0;
    for s in &sessions {
        entries += engine
            .get_transcript(GetTranscriptArgs { session_id: s.id.clone(), after: None, before: None, last: None })
            .await
            .unwrap()
            .len();
    }
    (sessions.len(), entries)
}

fn session_dirs(root: &Path) -> usize {
    std::fs::read_dir(root.join(".kiln/sessions")).map(|d| d.count()).unwrap_or(0)
}

#[tokio::test]
async fn archive_restore_reject_delete_with_tombstones() {
    let tmp = tempfile::tempdir().unwrap();
    let (shop, engine) = shop_without_setup(tmp.path()).await;
    let s = create(&engine, "Add a wishlist to @shop/catalog").await;
    let id = || SessionIdArgs { session_id: s.id.clone() };
    let stop = |stop: bool| StopArgs { session_id: s.id.clone(), stop: Some(stop) };
    assert_eq!(s.state, SessionState::Editing);
    assert_eq!(s.kind, SessionKind::EditModule);
    assert_eq!(s.modules.len(), 1);

    let transcript = engine
        .get_transcript(GetTranscriptArgs { session_id: s.id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    assert_eq!(transcript[0].kind, EntryKind::System);
    assert!(transcript[0].text.contains("@shop/catalog"));

    let archived = engine.archive_session(stop(false)).await.unwrap();
    assert!(archived.archived_at.is_some());
    assert!(engine.list_sessions(ListSessionsArgs::default()).await.unwrap().is_empty());
    assert_eq!(engine.list_sessions(ListSessionsArgs { include_archived: Some(true) }).await.unwrap().len(), 1);
    assert_eq!(engine.archive_session(stop(false)).await.unwrap_err().code, ErrorCode::SessionArchived);
    let add = AddModuleArgs { session_id: s.id.clone(), module_id: "@shop/cart".into() };
    assert_eq!(engine.add_module(add.clone()).await.unwrap_err().code, ErrorCode::SessionArchived);

    let restored = engine.restore_session(id()).await.unwrap();
    assert!(restored.archived_at.is_none());
    assert_eq!(engine.restore_session(id()).await.unwrap_err().code, ErrorCode::SessionNotArchived);

    let added = engine.add_module(add.clone()).await.unwrap();
    assert_eq!(added.modules.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["@shop/catalog", "@shop/cart"]);
    assert_eq!(added.modules[1].base_sequence, 0);
    assert_eq!(engine.add_module(add).await.unwrap_err().code, ErrorCode::ModuleAlreadyInSession);
    let missing = AddModuleArgs { session_id: s.id.clone(), module_id: "@shop/nope".into() };
    assert_eq!(engine.add_module(missing).await.unwrap_err().code, ErrorCode::ModuleNotFound);

    let rejected = engine.reject_session(stop(false)).await.unwrap();
    assert!(rejected.rejected_at.is_some());
    assert!(engine.list_sessions(ListSessionsArgs::default()).await.unwrap().is_empty());
    engine.restore_session(id()).await.unwrap();

    // Delete keeps a tombstone: record and transcript stay, files and checkpoints go.
    let workdir = shop.join(".kiln/sessions").join(&s.id);
    assert!(workdir.join("workspace/modules/catalog/package.json").is_file());
    let deleted = engine
        .delete_session(DeleteSessionArgs { session_id: s.id.clone(), stop: None, keep_transcript: None })
        .await
        .unwrap()
        .unwrap();
    assert!(deleted.deleted_at.is_some());
    assert!(deleted.checkpoints.is_empty());
    assert!(!workdir.exists());
    let store = git2::Repository::open_bare(shop.join(".kiln/store.git")).unwrap();
    assert_eq!(store.references_glob(&format!("refs/kiln/{}/*", s.id)).unwrap().count(), 0);
    let transcript = engine
        .get_transcript(GetTranscriptArgs { session_id: s.id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    assert!(transcript.last().unwrap().text.starts_with("Deleted"));
    for code in [
        engine.archive_session(stop(false)).await.unwrap_err().code,
        engine.restore_session(id()).await.unwrap_err().code,
        engine.reject_session(stop(false)).await.unwrap_err().code,
        engine
            .add_module(AddModuleArgs { session_id: s.id.clone(), module_id: "@shop/orders".into() })
            .await
            .unwrap_err()
            .code,
        engine
            .delete_session(DeleteSessionArgs { session_id: s.id.clone(), stop: None, keep_transcript: None })
            .await
            .unwrap_err()
            .code,
    ] {
        assert_eq!(code, ErrorCode::SessionDeleted);
    }
    // The tombstone is listed with the archived ones only.
    assert!(engine.list_sessions(ListSessionsArgs::default()).await.unwrap().is_empty());
    assert_eq!(engine.list_sessions(ListSessionsArgs { include_archived: Some(true) }).await.unwrap().len(), 1);

    // keepTranscript: false removes the record itself.
    let purged = engine
        .delete_session(DeleteSessionArgs { session_id: s.id.clone(), stop: None, keep_transcript: Some(false) })
        .await
        .unwrap();
    assert!(purged.is_none());
    assert_eq!(engine.get_session(id()).await.unwrap_err().code, ErrorCode::SessionNotFound);
    assert_eq!(count_rows(&engine).await, (0, 0));
}

#[tokio::test]
async fn hostile_ids_are_refused_before_any_path_is_built() {
    let tmp = tempfile::tempdir().unwrap();
    let (shop, engine) = shop_without_setup(tmp.path()).await;
    create(&engine, "Touch @shop/cart").await;
    // A directory a traversal would reach, to prove it is never touched.
    let victim = shop.join(".kiln/victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("keep.txt"), "x").unwrap();
    let before = (count_rows(&engine).await, session_dirs(&shop));
    for bad in
        ["../victim", "../../..", "/etc", "", "x", "..", "0f8fad5b-d9cb-469f-a165-70867728950e/../../victim", "%2e%2e"]
    {
        for code in [
            engine.get_session(SessionIdArgs { session_id: bad.into() }).await.unwrap_err().code,
            engine.archive_session(StopArgs { session_id: bad.into(), stop: Some(true) }).await.unwrap_err().code,
            engine
                .delete_session(DeleteSessionArgs {
                    session_id: bad.into(),
                    stop: Some(true),
                    keep_transcript: Some(false),
                })
                .await
                .unwrap_err()
                .code,
            engine
                .add_module(AddModuleArgs { session_id: bad.into(), module_id: "@shop/cart".into() })
                .await
                .unwrap_err()
                .code,
            engine
                .get_transcript(GetTranscriptArgs { session_id: bad.into(), after: None, before: None, last: None })
                .await
                .unwrap_err()
                .code,
        ] {
            assert_eq!(code, ErrorCode::InvalidSessionId, "{bad:?}");
        }
    }
    assert!(victim.join("keep.txt").is_file());
    assert_eq!((count_rows(&engine).await, session_dirs(&shop)), before);
    // A well-formed id that names nothing.
    let unknown = uuid::Uuid::new_v4().to_string();
    assert_eq!(
        engine.get_session(SessionIdArgs { session_id: unknown }).await.unwrap_err().code,
        ErrorCode::SessionNotFound
    );
}

#[tokio::test]
async fn a_running_setup_refuses_delete_and_archive_unless_stopped() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());
    let path = shop.join("kiln.toml");
    let text = std::fs::read_to_string(&path).unwrap().replace("npm ci --offline --no-audit --no-fund", "sleep 30");
    std::fs::write(path, text).unwrap();
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    let s = create(&engine, "Touch @shop/cart").await;
    assert!(s.running);
    assert_eq!(s.setup, SetupState::Running);
    let del = |stop| DeleteSessionArgs { session_id: s.id.clone(), stop: Some(stop), keep_transcript: None };
    let before = count_rows(&engine).await;
    assert_eq!(engine.delete_session(del(false)).await.unwrap_err().code, ErrorCode::SessionRunning);
    assert_eq!(
        engine.archive_session(StopArgs { session_id: s.id.clone(), stop: None }).await.unwrap_err().code,
        ErrorCode::SessionRunning
    );
    assert_eq!(
        engine.reject_session(StopArgs { session_id: s.id.clone(), stop: None }).await.unwrap_err().code,
        ErrorCode::SessionRunning
    );
    assert_eq!(
        engine
            .add_module(AddModuleArgs { session_id: s.id.clone(), module_id: "@shop/orders".into() })
            .await
            .unwrap_err()
            .code,
        ErrorCode::SessionRunning
    );
    assert_eq!(count_rows(&engine).await, before);
    assert!(shop.join(".kiln/sessions").join(&s.id).join("workspace").is_dir());

    let deleted = engine.delete_session(del(true)).await.unwrap().unwrap();
    assert!(deleted.deleted_at.is_some());
    assert!(!deleted.running);
    assert!(!shop.join(".kiln/sessions").join(&s.id).exists());
}

#[tokio::test]
async fn setup_runs_in_the_background_and_is_reported_as_the_dependencies_gate() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());
    std::fs::write(shop.join(".env"), "SHOP_NAME=Copied\n").unwrap();
    let path = shop.join("kiln.toml");
    let text =
        std::fs::read_to_string(&path).unwrap().replace("npm ci --offline --no-audit --no-fund", "cat .env && exit 3");
    std::fs::write(path, text).unwrap();
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    let s = create(&engine, "Touch @shop/cart").await;
    let s = wait_setup(&engine, &s.id).await;
    assert_eq!(s.setup, SetupState::Failed);
    let transcript = engine
        .get_transcript(GetTranscriptArgs { session_id: s.id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    let gate = transcript.iter().find(|e| e.kind == EntryKind::Gate).expect("a gate entry");
    assert!(gate.text.contains("dependencies") && gate.text.contains("exit code 3"), "{}", gate.text);
    // The ignored `.env` was carried in by `[session] copy`, so setup could read it.
    assert!(gate.text.contains("SHOP_NAME=Copied"), "{}", gate.text);
}

#[tokio::test]
async fn bad_workspaces_and_briefs_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = engine(&tmp.path().join("config"));

    let missing =
        engine.open_workspace(OpenWorkspaceArgs { path: tmp.path().join("nope").display().to_string() }).await;
    assert_eq!(missing.unwrap_err().code, ErrorCode::WorkspaceNotFound);
    assert_eq!(engine.list_sessions(ListSessionsArgs::default()).await.unwrap_err().code, ErrorCode::WorkspaceNotOpen);

    let shop = shop_copy(tmp.path());
    let original = std::fs::read_to_string(shop.join("kiln.toml")).unwrap();
    std::fs::write(shop.join("kiln.toml"), original.replace("globs =", "globz =")).unwrap();
    let err = engine.open_workspace(OpenWorkspaceArgs { path: shop.display().to_string() }).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::ConfigInvalid);
    assert!(err.message.contains("globz"), "{}", err.message);
    assert!(!shop.join(".kiln").exists(), "a refused open wrote .kiln/");
    std::fs::write(shop.join("kiln.toml"), original.replace("[gates.node]", "[gates.nodejs]")).unwrap();
    let err = engine.open_workspace(OpenWorkspaceArgs { path: shop.display().to_string() }).await.unwrap_err();
    assert!(err.message.contains("gates.nodejs"), "{}", err.message);

    std::fs::write(shop.join("kiln.toml"), &original).unwrap();
    without_setup(&shop);
    open(&engine, &shop).await;
    for (brief, code) in [
        ("   ", ErrorCode::InvalidInput),
        ("Make the cart faster", ErrorCode::ModuleRequired),
        ("Fix module modules/nope", ErrorCode::ModuleUnknown),
        // An id by the new-module pattern is not made a module without the operator's word.
        ("Create @shop/reviews with star ratings", ErrorCode::ModuleUnknown),
    ] {
        let err = engine
            .create_session(CreateSessionArgs { brief: brief.into(), title: None, create_modules: None, issue: None })
            .await
            .unwrap_err();
        assert_eq!(err.code, code, "{brief:?}");
    }
    assert_eq!(count_rows(&engine).await, (0, 0));
    assert_eq!(session_dirs(&shop), 0);
    let store = git2::Repository::open_bare(shop.join(".kiln/store.git"));
    assert!(store.map(|s| s.references().unwrap().count() == 0).unwrap_or(true));

    // A new module by the workspace's id pattern, once the operator confirms it.
    let s = create_new(&engine, "Create @shop/reviews with star ratings", &["@shop/reviews"]).await;
    assert_eq!(s.kind, SessionKind::NewModule);
    assert_eq!((s.modules[0].id.as_str(), s.modules[0].directory.as_str()), ("@shop/reviews", "modules/reviews"));
    assert_eq!(s.modules[0].kind, ModuleChange::New);
    // The recent list remembers the workspace.
    let state = engine.get_state(EmptyArgs {}).await.unwrap();
    assert_eq!(state.recent_workspaces[0], shop.canonicalize().unwrap().display().to_string());
}

#[tokio::test]
async fn shutdown_stops_what_sessions_run() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());
    let path = shop.join("kiln.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("npm ci --offline --no-audit --no-fund", "sleep 2; touch setup-survived");
    std::fs::write(path, text).unwrap();
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    let s = create(&engine, "Touch @shop/cart").await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    engine.shutdown().await;
    // Shutting down waited for the stopped setup to record its end: nothing is left to
    // write after the engine is gone.
    let after = engine.get_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert_eq!(after.setup, SetupState::Failed, "the setup's end was not recorded before shutdown returned");
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert!(!shop.join(".kiln/sessions").join(&s.id).join("workspace/setup-survived").exists());
}
