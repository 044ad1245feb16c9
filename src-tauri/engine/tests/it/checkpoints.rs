//! Restore round trips (ARCHITECTURE.md: Checkpoints): content, deletions, renames, executable bits, symbolic
//! links inside the tree and directories (which, as in git, exist only through files).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::common::*;
use kiln_engine::testing::ids::SessionId;
use kiln_engine::types::*;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn restore_round_trips_every_kind_of_change() {
    let tmp = tempfile::tempdir().unwrap();
    let (shop, engine) = shop_without_setup(tmp.path()).await;
    let s = create(&engine, "Round trips in @shop/catalog").await;
    let id = SessionId::parse(&s.id).unwrap();
    let work = shop.join(".kiln/sessions").join(&s.id).join("workspace");
    let m = work.join("modules/catalog");

    // State A: a script, a link to it, a nested file.
    std::fs::create_dir_all(m.join("tools/deep")).unwrap();
    std::fs::write(m.join("tools/run.sh"), "#!/bin/sh\necho a\n").unwrap();
    std::fs::set_permissions(m.join("tools/run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("run.sh", m.join("tools/link.sh")).unwrap();
    std::fs::write(m.join("tools/deep/notes.md"), "notes\n").unwrap();
    let a = checkpoint(&engine, id.as_str(), "state A").await;

    // State B: rename, delete, mode change, relink, a new empty directory.
    std::fs::rename(m.join("tools/deep/notes.md"), m.join("tools/notes-renamed.md")).unwrap();
    std::fs::remove_file(m.join("SPEC.md")).unwrap();
    std::fs::set_permissions(m.join("tools/run.sh"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::remove_file(m.join("tools/link.sh")).unwrap();
    std::os::unix::fs::symlink("notes-renamed.md", m.join("tools/link.sh")).unwrap();
    std::fs::create_dir_all(m.join("empty/inside")).unwrap();
    let b = checkpoint(&engine, id.as_str(), "state B").await;
    let b_files = files(&work, &[".git"]);

    let restore = |sequence| engine.restore_checkpoint(RestoreCheckpointArgs { session_id: s.id.clone(), sequence });
    restore(a).await.unwrap();
    assert_eq!(std::fs::read_to_string(m.join("tools/deep/notes.md")).unwrap(), "notes\n");
    assert!(!m.join("tools/notes-renamed.md").exists());
    assert!(m.join("SPEC.md").is_file());
    assert_eq!(mode(&m.join("tools/run.sh")), 0o755);
    assert_eq!(std::fs::read_link(m.join("tools/link.sh")).unwrap(), Path::new("run.sh"));

    restore(b).await.unwrap();
    assert_eq!(files(&work, &[".git"]), b_files);
    assert_eq!(mode(&m.join("tools/run.sh")) & 0o111, 0);
    assert!(!m.join("tools/deep").exists(), "a directory emptied by the restore goes, as in git");

    restore(0).await.unwrap();
    assert!(!m.join("tools").exists());
    assert!(m.join("SPEC.md").is_file());
}

#[tokio::test]
async fn pruned_checkpoints_are_collected_and_the_kept_ones_still_restore() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());
    let toml = shop.join("kiln.toml");
    let text = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("setup = \"npm ci --offline --no-audit --no-fund\"", "setup = \"\"\nmax_checkpoints = 3");
    std::fs::write(toml, text).unwrap();
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    let s = create(&engine, "Prune in @shop/catalog").await;
    let id = SessionId::parse(&s.id).unwrap();
    let file = shop.join(".kiln/sessions").join(&s.id).join("workspace/modules/catalog/notes.txt");
    let blob = |text: &str| git2::Oid::hash_object(git2::ObjectType::Blob, text.as_bytes()).unwrap();
    let has =
        |oid: git2::Oid| git2::Repository::open_bare(shop.join(".kiln/store.git")).unwrap().find_blob(oid).is_ok();

    let mut events = engine.subscribe(None).receiver;
    for n in 1..=3 {
        std::fs::write(&file, format!("only in checkpoint {n}\n")).unwrap();
        checkpoint(&engine, id.as_str(), &format!("step {n}")).await;
    }
    let session = engine.get_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert_eq!(session.checkpoints.iter().map(|c| c.sequence).collect::<Vec<_>>(), [0, 2, 3]);
    assert!(!has(blob("only in checkpoint 1\n")), "what only the pruned checkpoint held was collected");
    assert!(has(blob("only in checkpoint 2\n")) && has(blob("only in checkpoint 3\n")));
    // The pruning session keeps its stat cache: it names only what it just committed.
    assert!(shop.join(".kiln/sessions").join(&s.id).join("index").is_file());
    engine.restore_checkpoint(RestoreCheckpointArgs { session_id: s.id.clone(), sequence: 2 }).await.unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "only in checkpoint 2\n");
    // Each checkpoint made, then the restore, was told to every view as it happened.
    let heard: Vec<(i64, bool)> = std::iter::from_fn(|| events.try_recv().ok())
        .filter_map(|event| match event.body {
            EventBody::Checkpoint { session_id, sequence, restored } if session_id == s.id => {
                Some((sequence, restored))
            }
            _ => None,
        })
        .collect();
    assert_eq!(heard, [(1, false), (2, false), (3, false), (2, true)]);
    engine.restore_checkpoint(RestoreCheckpointArgs { session_id: s.id.clone(), sequence: 0 }).await.unwrap();
    assert!(!file.exists());
}
