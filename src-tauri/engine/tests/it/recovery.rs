//! Recovery of working copies (README: Recovery), in process: a copy removed by hand
//! comes back from its checkpoint at the next operation, a copy whose stat cache was
//! truncated is moved aside (its differing files named) and rebuilt, the check also runs
//! when a process opens the workspace, and a copy the clean-up removed says nothing was
//! lost. The SIGKILL tests are in `crash`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::*;
use kiln_engine::types::*;
use kiln_engine::Engine;

pub(crate) struct World {
    pub tmp: tempfile::TempDir,
    pub shop: PathBuf,
    pub engine: std::sync::Arc<Engine>,
}

/// A copy of the shop whose setup only leaves a mark (`setup-ran`) and whose gates are off.
pub(crate) async fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());
    setup_command(&shop, "touch setup-ran");
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    World { tmp, shop, engine }
}

/// A session of the world's shop whose setup has run.
async fn wishlist_session(w: &World) -> SessionView {
    let s = create(&w.engine, "Wishlist in @shop/catalog").await;
    wait_setup(&w.engine, &s.id).await;
    s
}

/// Sets the shop's `[session] setup` to `command`, module gates off.
pub(crate) fn setup_command(shop: &Path, command: &str) {
    let toml = shop.join("kiln.toml");
    let text = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("setup = \"npm ci --offline --no-audit --no-fund\"", &format!("setup = \"{command}\""))
        .replace("tests = \"npm test\"", "dependencies = \"\"\ntests = \"\"");
    std::fs::write(toml, text).unwrap();
}

pub(crate) fn workdir(shop: &Path, id: &str) -> PathBuf {
    shop.join(".kiln/sessions").join(id).join("workspace")
}

pub(crate) async fn system_entries(engine: &Engine, id: &str) -> Vec<String> {
    let entries = engine
        .get_transcript(GetTranscriptArgs { session_id: id.into(), after: None, before: None, last: None })
        .await
        .unwrap();
    entries.into_iter().filter(|e| e.kind == EntryKind::System).map(|e| e.text).collect()
}

/// Polls until `check` holds, for at most `limit`.
pub(crate) async fn until<F: std::future::Future<Output = bool>>(
    limit: Duration,
    what: &str,
    mut check: impl FnMut() -> F,
) {
    let deadline = std::time::Instant::now() + limit;
    while !check().await {
        assert!(std::time::Instant::now() < deadline, "never happened: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

const FILE: &str = "modules/catalog/src/server/wishlist.js";

#[tokio::test]
async fn a_removed_working_copy_comes_back_from_its_checkpoint_at_the_next_diff() {
    let w = world().await;
    let s = wishlist_session(&w).await;
    let work = workdir(&w.shop, &s.id);
    write(&work.join(FILE), "export const wishlist = [];\n");
    let sequence = checkpoint(&w.engine, &s.id, "the wishlist").await;
    let attached = AddAttachmentArgs {
        session_id: s.id.clone(),
        name: "notes.md".into(),
        data_base64: base64::Engine::encode(&base64::engine::general_purpose::STANDARD, b"# notes\n"),
    };
    w.engine.add_attachment(attached).await.unwrap();
    let before = files(&work, &["setup-ran", ".git"]);

    std::fs::remove_dir_all(&work).unwrap();
    let diff = w.engine.get_diff(GetDiffArgs { session_id: s.id.clone(), module_id: None }).await.unwrap();
    assert!(diff.modules[0].files.iter().any(|f| f.path == FILE), "the diff is the checkpoint's");
    assert_eq!(files(&work, &["setup-ran", ".git"]), before, "the checkpoint's files and the attachment copy are back");

    let entries = system_entries(&w.engine, &s.id).await;
    let rebuilt = entries.iter().find(|t| t.contains("was missing")).expect("a rebuild entry");
    assert!(rebuilt.contains(&format!("checkpoint {sequence}")), "{rebuilt}");
    assert!(rebuilt.contains("Changes made after it, if any, were lost"), "{rebuilt}");
    assert!(rebuilt.contains("the setup runs again"), "{rebuilt}");
    // The setup ran again in the new copy, as at creation.
    let s = wait_setup(&w.engine, &s.id).await;
    assert_eq!(s.setup, SetupState::Passed);
    assert!(work.join("setup-ran").is_file());
    // A whole copy is left alone: no second rebuild.
    w.engine.get_diff(GetDiffArgs { session_id: s.id.clone(), module_id: None }).await.unwrap();
    let again = system_entries(&w.engine, &s.id).await;
    assert_eq!(again.iter().filter(|t| t.contains("was missing")).count(), 1);
}

#[tokio::test]
async fn a_truncated_stat_cache_moves_the_copy_aside_lists_what_differs_and_rebuilds() {
    let w = world().await;
    let s = wishlist_session(&w).await;
    let work = workdir(&w.shop, &s.id);
    write(&work.join(FILE), "export const wishlist = [];\n");
    let sequence = checkpoint(&w.engine, &s.id, "the wishlist").await;
    // Work after the checkpoint, then the cache cut in half (a crash mid-write).
    write(&work.join(FILE), "export const wishlist = ['changed'];\n");
    write(&work.join("modules/catalog/NOTES.md"), "new\n");
    let index = w.shop.join(".kiln/sessions").join(&s.id).join("index");
    let len = std::fs::metadata(&index).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(&index).unwrap();
    file.set_len(len / 2).unwrap();
    drop(file);

    w.engine
        .send_message(SendMessageArgs {
            session_id: s.id.clone(),
            text: "go on".into(),
            role: None,
            module: None,
            driver: Some("no-such-driver".into()),
            model: None,
            context: None,
        })
        .await
        .unwrap_err();
    // Rebuilt before the message was even looked at: the checkpoint's content is back.
    assert_eq!(std::fs::read_to_string(work.join(FILE)).unwrap(), "export const wishlist = [];\n");
    assert!(!work.join("modules/catalog/NOTES.md").exists());
    let session_dir = w.shop.join(".kiln/sessions").join(&s.id);
    let aside: Vec<PathBuf> = std::fs::read_dir(&session_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("damaged-"))
        .collect();
    assert_eq!(aside.len(), 1, "the damaged copy is moved aside");
    assert_eq!(std::fs::read_to_string(aside[0].join(FILE)).unwrap(), "export const wishlist = ['changed'];\n");
    assert!(aside[0].join("modules/catalog/NOTES.md").is_file());

    let entries = system_entries(&w.engine, &s.id).await;
    let rebuilt = entries.iter().find(|t| t.contains("was damaged")).expect("a rebuild entry");
    assert!(rebuilt.contains("stat cache"), "{rebuilt}");
    assert!(rebuilt.contains(&format!("checkpoint {sequence}")), "{rebuilt}");
    let rel = aside[0].strip_prefix(&w.shop).unwrap().display().to_string();
    assert!(rebuilt.contains(&rel), "{rebuilt}");
    assert!(rebuilt.contains("2 files there differ"), "{rebuilt}");
    assert!(rebuilt.contains(&format!("`{FILE}`")) && rebuilt.contains("`modules/catalog/NOTES.md`"), "{rebuilt}");
    // The new copy snapshots and checkpoints as before.
    let next = checkpoint(&w.engine, &s.id, "after the rebuild").await;
    assert_eq!(next, sequence + 1);
}

#[tokio::test]
async fn opening_the_workspace_rebuilds_a_removed_copy_before_anything_else_runs_on_it() {
    let w = world().await;
    let s = wishlist_session(&w).await;
    let work = workdir(&w.shop, &s.id);
    drop(w.engine);
    // Gone while Kiln was not running.
    let until_released = std::time::Instant::now() + Duration::from_secs(30);
    while std::fs::remove_dir_all(&work).is_err() && std::time::Instant::now() < until_released {}
    assert!(!work.exists());

    let engine = engine(&w.tmp.path().join("config2"));
    open_when_released(&engine, &w.shop, Duration::from_secs(30)).await;
    // Nothing asked for the session: the check at open brings it back by itself.
    until(Duration::from_secs(20), "the copy rebuilt at open", || async { work.join("modules/catalog").is_dir() })
        .await;
    until(Duration::from_secs(20), "the rebuild's entry", || async {
        system_entries(&engine, &s.id).await.iter().any(|t| t.contains("was missing") && t.contains("checkpoint 0"))
    })
    .await;
}

#[tokio::test]
async fn a_copy_the_clean_up_removed_comes_back_on_restore_saying_nothing_was_lost() {
    let w = world().await;
    let s = wishlist_session(&w).await;
    let work = workdir(&w.shop, &s.id);
    write(&work.join(FILE), "export const wishlist = [];\n");
    w.engine.archive_session(StopArgs { session_id: s.id.clone(), stop: None }).await.unwrap();
    // The clean-up keeps the unsaved file in a checkpoint, removes the copy and records it.
    let cleaned = w.engine.clean_up(CleanUpArgs { apply: Some(true) }).await.unwrap();
    assert_eq!(cleaned.sessions.len(), 1, "{cleaned:?}");
    assert!(cleaned.sessions[0].checkpoint_taken, "{cleaned:?}");
    let sequence = cleaned.sessions[0].checkpoint;
    assert!(!work.exists());

    let restored = w.engine.restore_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert!(restored.archived_at.is_none());
    assert_eq!(std::fs::read_to_string(work.join(FILE)).unwrap(), "export const wishlist = [];\n");
    let entries = system_entries(&w.engine, &s.id).await;
    let rebuilt = entries
        .iter()
        .find(|t| t.contains("removed by clean-up") && t.contains("was rebuilt"))
        .expect("a rebuild entry");
    assert!(rebuilt.contains(&format!("checkpoint {sequence}")) && rebuilt.contains("Nothing was lost"), "{rebuilt}");
    assert!(!w.shop.join(".kiln/sessions").join(&s.id).join("removed.json").exists());
    let s = wait_setup(&w.engine, &s.id).await;
    assert!(work.join("setup-ran").is_file(), "the setup ran again once the session was open again");
    assert_eq!(s.setup, SetupState::Passed);
}

#[tokio::test]
async fn a_planner_cut_short_by_kiln_stopping_is_explained_at_the_next_start() {
    let w = world().await;
    let s = wishlist_session(&w).await;
    drop(w.engine);
    // What a process killed while its planner agent worked leaves behind.
    let pool =
        sqlx::SqlitePool::connect(&format!("sqlite://{}", w.shop.join(".kiln/kiln.db").display())).await.unwrap();
    sqlx::query("UPDATE sessions SET state = 'planning' WHERE id = ?").bind(&s.id).execute(&pool).await.unwrap();
    pool.close().await;

    let engine = engine(&w.tmp.path().join("config2"));
    open_when_released(&engine, &w.shop, Duration::from_secs(30)).await;
    until(Duration::from_secs(20), "the planner's entry", || async {
        system_entries(&engine, &s.id).await.iter().any(|t| t.starts_with("Kiln stopped while the planner agent"))
    })
    .await;
    let s = engine.get_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert_eq!(s.state, SessionState::Editing);
}

#[tokio::test]
async fn a_checkpoint_ref_lost_from_the_store_is_made_again_before_the_next_operation() {
    let w = world().await;
    let s = wishlist_session(&w).await;
    write(&workdir(&w.shop, &s.id).join(FILE), "export const wishlist = [];\n");
    let sequence = checkpoint(&w.engine, &s.id, "the wishlist").await;
    let store = git2::Repository::open_bare(w.shop.join(".kiln/store.git")).unwrap();
    let name = format!("refs/kiln/{}/{sequence}", s.id);
    let commit = store.find_reference(&name).unwrap().target().unwrap();
    store.find_reference(&name).unwrap().delete().unwrap();

    w.engine.get_diff(GetDiffArgs { session_id: s.id.clone(), module_id: None }).await.unwrap();
    assert_eq!(store.find_reference(&name).unwrap().target(), Some(commit), "the ref names the recorded commit again");
    let entries = system_entries(&w.engine, &s.id).await;
    assert!(!entries.iter().any(|t| t.contains("rebuilt")), "a whole copy is not rebuilt: {entries:#?}");
}
