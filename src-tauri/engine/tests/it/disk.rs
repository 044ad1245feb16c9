//! Disk use and clean-up: `disk_usage` measures what is on disk (as `du` does, links not
//! followed, hard links once) and stays fast on a large working copy; `clean_up` changes
//! nothing in a dry run, and applied removes only archived and rejected sessions' working
//! copies, after a checkpoint that keeps their unsaved changes, and says so.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::*;
use kiln_engine::types::*;
use kiln_engine::Engine;

/// `du -s -B1`: the allocated bytes under `path`, as coreutils counts them.
fn du(path: &Path) -> u64 {
    let out = std::process::Command::new("du").args(["-s", "-B1"]).arg(path).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap().parse().unwrap()
}

/// `len` bytes that no file system stores sparsely or compresses away.
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

async fn disk(engine: &Engine) -> DiskUsageView {
    engine.disk_usage(EmptyArgs {}).await.unwrap()
}

fn of<'a>(view: &'a DiskUsageView, id: &str) -> &'a SessionDiskUsage {
    view.sessions.iter().find(|s| s.session_id == id).unwrap_or_else(|| panic!("no usage of {id}: {view:?}"))
}

#[tokio::test]
async fn sizes_are_what_is_on_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let (shop, engine) = shop_without_setup(tmp.path()).await;
    let s = create(&engine, "Add a wishlist to @shop/catalog").await;
    let dir = shop.join(".kiln/sessions").join(&s.id);
    let work = dir.join("workspace");

    let before = disk(&engine).await;
    let first = of(&before, &s.id).working_copy_bytes.unwrap();
    assert_eq!(first, du(&work));
    assert_eq!(before.store_bytes, du(&shop.join(".kiln/store.git")));
    assert_eq!(before.sessions_bytes, du(&shop.join(".kiln/sessions")));
    assert_eq!(of(&before, &s.id).attachments_bytes, 0);

    // 3 MB written: the copy grows by that (give or take a block and a directory).
    std::fs::write(work.join("big.bin"), noise(3_000_000, 7)).unwrap();
    // A hard link to it is the same blocks; a link to a big file outside is not followed.
    std::fs::hard_link(work.join("big.bin"), work.join("modules/big-again.bin")).unwrap();
    std::fs::write(tmp.path().join("outside.bin"), noise(5_000_000, 9)).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("outside.bin"), work.join("outside.bin")).unwrap();
    engine
        .add_attachment(AddAttachmentArgs {
            session_id: s.id.clone(),
            name: "notes.md".into(),
            data_base64: base64_of(&"Notes for the agent.\n".repeat(500)),
        })
        .await
        .unwrap();

    let after = disk(&engine).await;
    let now = of(&after, &s.id);
    let grown = now.working_copy_bytes.unwrap() - first;
    // The attachment's copy in the working copy (10.5 kB) and a few blocks besides.
    assert!((3_000_000..3_000_000 + 64 * 1024).contains(&grown), "grew by {grown}");
    assert_eq!(now.working_copy_bytes, Some(du(&work)));
    assert_eq!(now.attachments_bytes, du(&dir.join("attachments")));
    assert!(now.attachments_bytes >= 10_500, "{now:?}");
    assert_eq!(after.sessions_bytes, du(&shop.join(".kiln/sessions")));
    assert_eq!(
        now.working_copy_bytes.unwrap() + now.attachments_bytes + now.other_bytes,
        du(&dir),
        "the parts add up to the session's directory"
    );
    assert!(!after.measured_at.is_empty());

    // Without a working copy the size is null, not 0.
    std::fs::remove_dir_all(&work).unwrap();
    assert_eq!(of(&disk(&engine).await, &s.id).working_copy_bytes, None);
}

fn base64_of(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// A 20,000-file working copy (most of it an installed `node_modules`) is measured in
/// well under a second on a warm cache; the bound here is loose for a loaded CI machine.
#[tokio::test]
async fn measuring_a_large_working_copy_is_fast() {
    let tmp = tempfile::tempdir().unwrap();
    let (shop, engine) = shop_without_setup(tmp.path()).await;
    let s = create(&engine, "Add a wishlist to @shop/catalog").await;
    let modules = shop.join(".kiln/sessions").join(&s.id).join("workspace/node_modules");
    let body = vec![b'x'; 900];
    for package in 0..400 {
        let dir = modules.join(format!("package-{package}/lib"));
        std::fs::create_dir_all(&dir).unwrap();
        for file in 0..50 {
            std::fs::write(dir.join(format!("file-{file}.js")), &body).unwrap();
        }
    }
    disk(&engine).await; // the cache warmed, as on a dashboard opened twice
    let started = Instant::now();
    let view = disk(&engine).await;
    let took = started.elapsed();
    eprintln!("disk_usage of a 20,000-file working copy: {took:?}");
    // 20,000 files of one block each at least.
    assert!(of(&view, &s.id).working_copy_bytes.unwrap() >= 20_000 * 900);
    assert!(took < Duration::from_secs(5), "disk_usage took {took:?}");
}

/// The tree of a checkpoint's commit, by path, as the store holds it.
fn checkpoint_file(shop: &Path, session: &str, sequence: i64, path: &str) -> Option<String> {
    let store = git2::Repository::open_bare(shop.join(".kiln/store.git")).unwrap();
    let reference = store.find_reference(&format!("refs/kiln/{session}/{sequence}")).ok()?;
    let tree = reference.peel_to_commit().unwrap().tree().unwrap();
    let entry = tree.get_path(Path::new(path)).ok()?;
    let blob = store.find_blob(entry.id()).unwrap();
    Some(String::from_utf8(blob.content().to_vec()).unwrap())
}

fn refs_of(shop: &Path, session: &str) -> usize {
    let store = git2::Repository::open_bare(shop.join(".kiln/store.git")).unwrap();
    let count = store.references_glob(&format!("refs/kiln/{session}/*")).unwrap().count();
    count
}

#[tokio::test]
async fn clean_up_removes_only_shelved_working_copies_and_keeps_what_they_held() {
    let tmp = tempfile::tempdir().unwrap();
    let (shop, engine) = shop_without_setup(tmp.path()).await;
    let sessions = shop.join(".kiln/sessions");
    let stop = |id: &str| StopArgs { session_id: id.into(), stop: None };

    // archived: an attachment, and a change no checkpoint holds.
    let archived = create(&engine, "Add a wishlist to @shop/catalog").await;
    engine
        .add_attachment(AddAttachmentArgs {
            session_id: archived.id.clone(),
            name: "notes.md".into(),
            data_base64: base64_of("# Notes\n"),
        })
        .await
        .unwrap();
    let unsaved = sessions.join(&archived.id).join("workspace/modules/catalog/unsaved.md");
    write(&unsaved, "keep me\n");
    engine.archive_session(stop(&archived.id)).await.unwrap();
    // rejected: no changes since its start.
    let rejected = create(&engine, "Speed up @shop/cart").await;
    engine.reject_session(stop(&rejected.id)).await.unwrap();
    // active: never touched.
    let active = create(&engine, "Tidy @shop/orders").await;
    // busy: archived, but a message of it waits for the planner.
    let busy = create(&engine, "Rename things in @shop/catalog").await;
    engine.archive_session(stop(&busy.id)).await.unwrap();
    engine.workspace().unwrap().busy.queue(&busy.id);

    // A dry run lists and changes nothing: no file of the sessions or the store moves.
    let before = (files(&sessions, &[]), files(&shop.join(".kiln/store.git"), &[]));
    let dry = engine.clean_up(CleanUpArgs::default()).await.unwrap();
    assert!(!dry.applied);
    let listed: Vec<&str> = dry.sessions.iter().map(|s| s.session_id.as_str()).collect();
    assert_eq!(listed, [archived.id.as_str(), rejected.id.as_str()], "{dry:?}");
    assert_eq!(dry.sessions[0].title, archived.title);
    assert!(dry.sessions.iter().all(|s| s.bytes > 0 && s.checkpoint == 0 && !s.checkpoint_taken), "{dry:?}");
    assert_eq!(dry.freed_bytes, dry.sessions.iter().map(|s| s.bytes).sum::<u64>());
    assert_eq!(dry.skipped.len(), 1, "{dry:?}");
    assert_eq!(dry.skipped[0].session_id, busy.id);
    assert!(dry.skipped[0].reason.contains("running"), "{dry:?}");
    assert_eq!((files(&sessions, &[]), files(&shop.join(".kiln/store.git"), &[])), before);
    let usage = disk(&engine).await;
    assert_eq!(of(&usage, &archived.id).working_copy_bytes, Some(du(&sessions.join(&archived.id).join("workspace"))));

    let mut events = engine.subscribe(None).receiver;
    let entries_before = engine
        .get_transcript(GetTranscriptArgs { session_id: archived.id.clone(), after: None, before: None, last: None })
        .await
        .unwrap()
        .len();
    let done = engine.clean_up(CleanUpArgs { apply: Some(true) }).await.unwrap();
    assert!(done.applied);
    let by_id = |id: &str| done.sessions.iter().find(|s| s.session_id == id).unwrap();
    // The archived copy had a change: a checkpoint was taken first and holds it.
    assert_eq!((by_id(&archived.id).checkpoint, by_id(&archived.id).checkpoint_taken), (1, true));
    assert_eq!((by_id(&rejected.id).checkpoint, by_id(&rejected.id).checkpoint_taken), (0, false));
    assert_eq!(done.skipped.len(), 1);
    assert_eq!(done.freed_bytes, done.sessions.iter().map(|s| s.bytes).sum::<u64>());
    assert_eq!(
        checkpoint_file(&shop, &archived.id, 1, "modules/catalog/unsaved.md").as_deref(),
        Some("keep me\n"),
        "the unsaved change is in the checkpoint taken before clean-up"
    );

    // Only the shelved copies went; attachments, checkpoints and records stayed.
    assert!(!sessions.join(&archived.id).join("workspace").exists());
    assert!(!sessions.join(&rejected.id).join("workspace").exists());
    assert!(sessions.join(&active.id).join("workspace/modules").is_dir());
    assert!(sessions.join(&busy.id).join("workspace/modules").is_dir());
    let stored: Vec<_> = std::fs::read_dir(sessions.join(&archived.id).join("attachments")).unwrap().collect();
    assert_eq!(stored.len(), 1);
    assert_eq!(refs_of(&shop, &archived.id), 2);
    assert_eq!(refs_of(&shop, &rejected.id), 1);
    let view = engine.get_session(SessionIdArgs { session_id: archived.id.clone() }).await.unwrap();
    assert!(view.archived_at.is_some());
    assert_eq!(view.checkpoints.len(), 2);
    assert_eq!(view.checkpoints[1].label, "Before clean-up");
    assert_eq!(view.attachments.len(), 1);

    // The transcript says what went and where it comes back from; the views are told of it.
    let transcript = engine
        .get_transcript(GetTranscriptArgs { session_id: archived.id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    assert_eq!(transcript.len(), entries_before + 1);
    let last = transcript.last().unwrap();
    assert_eq!(last.kind, EntryKind::System);
    assert!(last.text.starts_with("Working copy removed by clean-up ("), "{}", last.text);
    assert!(
        last.text.ends_with("it will be rebuilt from checkpoint 1 when the session is used again."),
        "{}",
        last.text
    );
    let mut told = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let EventBody::Session { session } = event.body {
            told.push(session.id);
        }
    }
    // A view is sent once per change: the archived session's has its new checkpoint; the
    // rejected one's is as it was sent last (nothing to checkpoint), so it is not sent again.
    assert!(told.contains(&archived.id), "{told:?}");
    assert!(!told.contains(&rejected.id) && !told.contains(&active.id) && !told.contains(&busy.id), "{told:?}");
    let usage = disk(&engine).await;
    assert_eq!(of(&usage, &archived.id).working_copy_bytes, None);
    assert!(of(&usage, &archived.id).attachments_bytes > 0);
    assert!(of(&usage, &active.id).working_copy_bytes.is_some());

    // Nothing is left to clean up but the busy one.
    engine.workspace().unwrap().busy.unqueue(&busy.id);
    let again = engine.clean_up(CleanUpArgs { apply: Some(false) }).await.unwrap();
    let listed: Vec<&str> = again.sessions.iter().map(|s| s.session_id.as_str()).collect();
    assert_eq!(listed, [busy.id.as_str()]);
    assert!(again.skipped.is_empty());
    // Bad input changes nothing.
    let bad = engine.dispatch("clean_up", serde_json::json!({ "apply": "yes" })).await.unwrap_err();
    assert_eq!(bad.code, kiln_engine::ErrorCode::InvalidInput);
    assert!(sessions.join(&busy.id).join("workspace").is_dir());
}
