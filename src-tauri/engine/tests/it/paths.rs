//! Path confinement (ARCHITECTURE.md: Attachments, Recovery, Security): every path a request or an agent names stays
//! inside its session. Each refusal has its stable code, and each test checks that a
//! directory outside the workspace, reachable only through a planted symbolic link,
//! is exactly as it was: a refusal that still wrote or removed something would pass a
//! code check alone.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::common::*;
use base64::Engine as _;
use kiln_engine::testing::ids::SessionId;
use kiln_engine::types::*;
use kiln_engine::{Engine, ErrorCode};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

/// A session of the example shop (no setup), and a directory outside it with files.
struct Setup {
    tmp: tempfile::TempDir,
    shop: PathBuf,
    outside: PathBuf,
    engine: Arc<Engine>,
    id: String,
}

impl Setup {
    async fn new() -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        let shop = shop_copy(tmp.path());
        let toml = shop.join("kiln.toml");
        let text = std::fs::read_to_string(&toml)
            .unwrap()
            .replace("setup = \"npm ci --offline --no-audit --no-fund\"", "setup = \"\"");
        std::fs::write(toml, text).unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(outside.join("dir")).unwrap();
        std::fs::write(outside.join("victim.txt"), "untouched\n").unwrap();
        std::fs::write(outside.join("dir/inner.txt"), "untouched too\n").unwrap();
        std::fs::write(outside.join("SPEC.md"), "---\nstatus: draft\n---\n# Not yours\n").unwrap();
        let engine = engine(&tmp.path().join("config"));
        open(&engine, &shop).await;
        let id = create(&engine, "Paths in @shop/catalog").await.id;
        Setup { tmp, shop, outside, engine, id }
    }

    fn session_dir(&self) -> PathBuf {
        self.shop.join(".kiln/sessions").join(&self.id)
    }

    fn work(&self) -> PathBuf {
        self.session_dir().join("workspace")
    }

    /// Every file outside the workspace: the planted target and the temp dir's top level.
    fn outside_state(&self) -> (BTreeMap<String, Vec<u8>>, Vec<String>) {
        let mut top: Vec<String> = std::fs::read_dir(self.tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        top.sort();
        (files(&self.outside, &[]), top)
    }

    async fn session(&self) -> SessionView {
        self.engine.get_session(SessionIdArgs { session_id: self.id.clone() }).await.unwrap()
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

#[tokio::test]
async fn ids_are_checked_before_any_path_is_built() {
    let s = Setup::new().await;
    let before = s.outside_state();
    let sessions = listing(&s.shop.join(".kiln/sessions"));
    let climbing = format!("{}/..", s.id);
    for bad in ["../../outside", "/tmp", "..", "", climbing.as_str(), "0f8fad5b-d9cb-469f-a165-70867728950\0"] {
        let id = || bad.to_string();
        let e = s.engine.get_session(SessionIdArgs { session_id: id() }).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidSessionId, "{bad:?}");
        let e = s
            .engine
            .delete_session(DeleteSessionArgs { session_id: id(), stop: Some(true), keep_transcript: Some(false) })
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidSessionId, "{bad:?}");
        let e = s.engine.restore_checkpoint(RestoreCheckpointArgs { session_id: id(), sequence: 0 }).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidSessionId, "{bad:?}");
        let add = AddAttachmentArgs { session_id: id(), name: "a.txt".into(), data_base64: b64(b"a") };
        assert_eq!(s.engine.add_attachment(add).await.unwrap_err().code, ErrorCode::InvalidSessionId, "{bad:?}");
        // An attachment id is a UUID too, checked before a file name is made of it.
        let remove = RemoveAttachmentArgs { session_id: s.id.clone(), attachment_id: id() };
        assert_eq!(s.engine.remove_attachment(remove).await.unwrap_err().code, ErrorCode::InvalidInput, "{bad:?}");
    }
    // Module ids are looked up among the session's modules, never joined to a path.
    for module_id in ["../../outside", "/etc", "modules/../../outside"] {
        let e =
            s.engine.get_spec(ModuleArgs { session_id: s.id.clone(), module_id: module_id.into() }).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::ModuleNotFound);
        let save = SaveSpecArgs { session_id: s.id.clone(), module_id: module_id.into(), text: "x".into() };
        assert_eq!(s.engine.save_spec(save).await.unwrap_err().code, ErrorCode::ModuleNotFound);
        let add = AddModuleArgs { session_id: s.id.clone(), module_id: module_id.into() };
        assert_eq!(s.engine.add_module(add).await.unwrap_err().code, ErrorCode::ModuleNotFound);
    }
    assert_eq!(s.outside_state(), before);
    assert_eq!(listing(&s.shop.join(".kiln/sessions")), sessions);
    assert!(s.work().join("modules/catalog/SPEC.md").is_file());
}

#[tokio::test]
async fn attachment_names_never_make_a_path_or_a_hidden_file() {
    let s = Setup::new().await;
    let before = s.outside_state();
    let long = format!("{}.txt", "x".repeat(296));
    // (name as sent, content, the stored name or the refusal)
    let cases: Vec<(&str, &[u8], Result<String, ErrorCode>)> = vec![
        ("a/b.txt", b"t", Ok("b.txt".into())),
        ("..\\..\\evil.txt", b"t", Ok("evil.txt".into())),
        ("C:\\Users\\me\\shot.png", PNG, Ok("shot.png".into())),
        ("../../../../outside/victim.txt", b"t", Ok("victim.txt".into())),
        ("/etc/passwd.txt", b"t", Ok("passwd.txt".into())),
        ("..", b"t", Err(ErrorCode::AttachmentType)),
        ("../", b"t", Err(ErrorCode::AttachmentType)),
        ("/", b"t", Err(ErrorCode::AttachmentType)),
        (".hidden.txt", b"t", Ok("hidden.txt".into())),
        ("...txt", b"t", Err(ErrorCode::AttachmentType)),
        ("-rf.txt", b"t", Ok("rf.txt".into())),
        (long.as_str(), b"t", Ok(format!("{}.txt", "x".repeat(124)))),
        ("bad\0name\n\r\u{7}.txt", b"t", Ok("bad-name.txt".into())),
        ("..\u{2215}..\u{2215}evil.txt", b"t", Ok("evil.txt".into())),
        ("..\u{2044}..\u{2044}evil.txt", b"t", Ok("evil.txt".into())),
        ("..\u{ff0f}..\u{ff0f}evil.txt", b"t", Ok("evil.txt".into())),
        ("\u{ff0e}\u{ff0e}\u{ff0f}evil.txt", b"t", Ok("evil.txt".into())),
        ("\u{ff0e}hidden.txt", b"t", Ok("hidden.txt".into())),
        // U+202E would show `report\u{202e}gpj.txt` as `reporttxt.jpg`: the real
        // extension is the one checked and shown.
        ("report\u{202e}gpj.txt", b"t", Ok("report-gpj.txt".into())),
        ("invoice\u{202e}fdp.exe", b"MZ", Err(ErrorCode::AttachmentType)),
    ];
    let stored_dir = s.session_dir().join("attachments");
    let copy_dir = s.work().join("reference/attachments");
    for (name, bytes, expected) in cases {
        let add = AddAttachmentArgs { session_id: s.id.clone(), name: name.into(), data_base64: b64(bytes) };
        match (s.engine.add_attachment(add).await, expected) {
            (Ok(view), Ok(safe)) => {
                assert_eq!(view.name, safe, "{name:?}");
                assert!(!view.name.starts_with('.'), "{name:?}");
                assert_eq!(listing(&stored_dir), [format!("{}-{safe}", view.id)], "{name:?}");
                assert_eq!(listing(&copy_dir), std::slice::from_ref(&safe), "{name:?}");
                assert_eq!(std::fs::read(copy_dir.join(&safe)).unwrap(), bytes);
                let remove = RemoveAttachmentArgs { session_id: s.id.clone(), attachment_id: view.id.clone() };
                s.engine.remove_attachment(remove).await.unwrap();
                assert!(listing(&stored_dir).is_empty() && listing(&copy_dir).is_empty(), "{name:?}");
            }
            (Err(e), Err(code)) => {
                assert_eq!(e.code, code, "{name:?}");
                assert!(listing(&stored_dir).is_empty() && listing(&copy_dir).is_empty(), "{name:?}");
            }
            (got, expected) => panic!("{name:?}: got {got:?}, expected {expected:?}"),
        }
    }
    assert!(s.session().await.attachments.is_empty());
    assert_eq!(s.outside_state(), before);
    // Nothing escaped into the session directory or the working copy's root either.
    for name in listing(&s.session_dir()) {
        assert!(["attachments", "index", "workspace"].contains(&name.as_str()), "{name}");
    }
    assert!(!s.work().join("victim.txt").exists() && !s.work().join("evil.txt").exists());
}

#[tokio::test]
async fn attachments_are_never_written_or_removed_through_a_planted_link() {
    let s = Setup::new().await;
    let before = s.outside_state();
    let add =
        |name: &str| AddAttachmentArgs { session_id: s.id.clone(), name: name.into(), data_base64: b64(b"bytes") };
    let copy_dir = s.work().join("reference/attachments");

    // `reference/attachments` (or `reference`) made a link leading out: refused, no record.
    std::fs::create_dir_all(s.work().join("reference")).unwrap();
    symlink(s.outside.join("dir"), &copy_dir).unwrap();
    assert_eq!(s.engine.add_attachment(add("inner.txt")).await.unwrap_err().code, ErrorCode::PathNotAllowed);
    std::fs::remove_file(&copy_dir).unwrap();
    // Even a link that stays inside is refused there: the directory is Kiln's own.
    symlink(s.work().join("modules"), &copy_dir).unwrap();
    assert_eq!(s.engine.add_attachment(add("inner.txt")).await.unwrap_err().code, ErrorCode::PathNotAllowed);
    std::fs::remove_file(&copy_dir).unwrap();
    std::fs::remove_dir(s.work().join("reference")).unwrap();
    symlink(&s.outside, s.work().join("reference")).unwrap();
    assert_eq!(s.engine.add_attachment(add("victim.txt")).await.unwrap_err().code, ErrorCode::PathNotAllowed);
    std::fs::remove_file(s.work().join("reference")).unwrap();
    assert!(s.session().await.attachments.is_empty());
    assert!(listing(&s.session_dir().join("attachments")).is_empty());
    assert_eq!(s.outside_state(), before);

    // A link planted where the copy goes is replaced by the copy, not written through.
    std::fs::create_dir_all(&copy_dir).unwrap();
    symlink(s.outside.join("victim.txt"), copy_dir.join("victim.txt")).unwrap();
    let view = s.engine.add_attachment(add("victim.txt")).await.unwrap();
    assert_eq!(view.name, "victim.txt");
    let meta = std::fs::symlink_metadata(copy_dir.join("victim.txt")).unwrap();
    assert!(meta.is_file(), "the copy is a plain file now");
    assert_eq!(std::fs::read(copy_dir.join("victim.txt")).unwrap(), b"bytes");
    assert_eq!(s.outside_state(), before);

    // A copy swapped for a link by the agent: removing the attachment removes the link.
    std::fs::remove_file(copy_dir.join("victim.txt")).unwrap();
    symlink(s.outside.join("victim.txt"), copy_dir.join("victim.txt")).unwrap();
    s.engine
        .remove_attachment(RemoveAttachmentArgs { session_id: s.id.clone(), attachment_id: view.id.clone() })
        .await
        .unwrap();
    assert!(std::fs::symlink_metadata(copy_dir.join("victim.txt")).is_err());
    assert_eq!(s.outside_state(), before);
}

#[tokio::test]
async fn deleting_a_session_removes_planted_links_never_what_they_point_to() {
    let s = Setup::new().await;
    let before = s.outside_state();
    symlink(s.outside.join("dir"), s.work().join("evil")).unwrap();
    symlink(&s.outside, s.work().join("modules/catalog/deep-evil")).unwrap();
    symlink(s.outside.join("victim.txt"), s.work().join("victim-link.txt")).unwrap();
    symlink(&s.outside, s.session_dir().join("beside-the-workspace")).unwrap();

    // Archive and reject remove nothing, links included.
    s.engine.archive_session(StopArgs { session_id: s.id.clone(), stop: None }).await.unwrap();
    s.engine.restore_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    s.engine.reject_session(StopArgs { session_id: s.id.clone(), stop: None }).await.unwrap();
    assert!(std::fs::symlink_metadata(s.work().join("evil")).unwrap().file_type().is_symlink());

    let deleted = s
        .engine
        .delete_session(DeleteSessionArgs { session_id: s.id.clone(), stop: None, keep_transcript: None })
        .await
        .unwrap();
    assert!(deleted.unwrap().deleted_at.is_some());
    assert!(std::fs::symlink_metadata(s.session_dir()).is_err(), "the session directory is gone");
    assert_eq!(s.outside_state(), before, "what the links pointed to is intact");
}

#[tokio::test]
async fn a_session_directory_replaced_by_a_link_is_refused_and_nothing_is_removed() {
    let s = Setup::new().await;
    // The real directory moves away, a link to the outside takes its place.
    let moved = s.shop.join(".kiln/moved-away");
    std::fs::rename(s.session_dir(), &moved).unwrap();
    symlink(&s.outside, s.session_dir()).unwrap();
    let before = s.outside_state();
    let checkpoints = s.session().await.checkpoints.len();

    for keep_transcript in [Some(true), Some(false)] {
        let args = DeleteSessionArgs { session_id: s.id.clone(), stop: Some(true), keep_transcript };
        assert_eq!(s.engine.delete_session(args).await.unwrap_err().code, ErrorCode::PathNotAllowed);
    }
    assert_eq!(s.outside_state(), before);
    assert!(std::fs::symlink_metadata(s.session_dir()).unwrap().file_type().is_symlink(), "the link itself stays too");
    let session = s.session().await;
    assert!(session.deleted_at.is_none());
    assert_eq!(session.checkpoints.len(), checkpoints, "its checkpoints stay");

    // A link that leads nowhere, and one that stays inside `.kiln/sessions`, likewise.
    std::fs::remove_file(s.session_dir()).unwrap();
    symlink(s.tmp.path().join("nowhere"), s.session_dir()).unwrap();
    let args = || DeleteSessionArgs { session_id: s.id.clone(), stop: None, keep_transcript: None };
    assert_eq!(s.engine.delete_session(args()).await.unwrap_err().code, ErrorCode::PathNotAllowed);
    std::fs::remove_file(s.session_dir()).unwrap();
    let sibling = s.shop.join(".kiln/sessions/not-a-session");
    std::fs::rename(&moved, &sibling).unwrap();
    symlink(&sibling, s.session_dir()).unwrap();
    assert_eq!(s.engine.delete_session(args()).await.unwrap_err().code, ErrorCode::PathNotAllowed);
    assert!(sibling.join("workspace/modules/catalog/SPEC.md").is_file());

    // Put back, the same delete goes through.
    std::fs::remove_file(s.session_dir()).unwrap();
    std::fs::rename(&sibling, s.session_dir()).unwrap();
    s.engine.delete_session(args()).await.unwrap();
    assert!(!s.session_dir().exists());
    assert_eq!(s.outside_state(), before);
}

#[tokio::test]
async fn restoring_a_checkpoint_never_writes_through_a_planted_link() {
    let s = Setup::new().await;
    std::fs::write(s.outside.join("out.txt"), "outside\n").unwrap();
    let before = s.outside_state();
    let module = s.work().join("modules/catalog");
    std::fs::create_dir_all(module.join("build")).unwrap();
    std::fs::write(module.join("build/out.txt"), "checkpointed\n").unwrap();
    let with_build = checkpoint(&s.engine, &s.id, "with build/").await;

    // The agent ignores `build` and swaps it for a link out: the link is in no snapshot,
    // so only `build/out.txt` differs, and restoring it must not follow the link.
    std::fs::write(module.join(".gitignore"), "build\n").unwrap();
    std::fs::remove_dir_all(module.join("build")).unwrap();
    symlink(&s.outside, module.join("build")).unwrap();
    s.engine
        .restore_checkpoint(RestoreCheckpointArgs { session_id: s.id.clone(), sequence: with_build })
        .await
        .unwrap();
    assert_eq!(s.outside_state(), before);
    assert!(
        std::fs::symlink_metadata(module.join("build")).unwrap().is_dir(),
        "the link became the directory the checkpoint holds"
    );
    assert_eq!(std::fs::read_to_string(module.join("build/out.txt")).unwrap(), "checkpointed\n");
    assert!(!module.join(".gitignore").exists());

    // Putting back "no file" at a path under a planted link removes nothing out there:
    // the path is not in the working copy at all.
    std::fs::remove_dir_all(module.join("build")).unwrap();
    symlink(&s.outside, module.join("build")).unwrap();
    let store = kiln_engine::testing::snapshot::open_store(&s.shop.join(".kiln/store.git"), None).unwrap();
    let start = store.find_reference(&format!("refs/kiln/{}/0", s.id)).unwrap().peel_to_tree().unwrap();
    kiln_engine::testing::snapshot::put_path(&store, &start, &s.work(), "modules/catalog/build/out.txt").unwrap();
    assert_eq!(s.outside_state(), before);
    for bad in ["../x", "/etc/x", "modules/../../x", ""] {
        let e = kiln_engine::testing::snapshot::put_path(&store, &start, &s.work(), bad).unwrap_err();
        assert_eq!(e.code, ErrorCode::PathNotAllowed, "{bad:?}");
    }
    std::fs::remove_file(module.join("build")).unwrap();

    // The working copy itself swapped for a link: refused, nothing written.
    let moved = s.session_dir().join("moved-away");
    std::fs::rename(s.work(), &moved).unwrap();
    symlink(&s.outside, s.work()).unwrap();
    let e = s
        .engine
        .restore_checkpoint(RestoreCheckpointArgs { session_id: s.id.clone(), sequence: with_build })
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::PathNotAllowed);
    assert_eq!(s.outside_state(), before);
    assert!(!s.outside.join("modules").exists());
}

#[test]
fn materialize_replaces_planted_links_instead_of_writing_through_them() {
    let tmp = tempfile::tempdir().unwrap();
    let source = tmp.path().join("source");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(source.join("a/b")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(source.join("a/b/deep.txt"), "deep\n").unwrap();
    std::fs::write(source.join("top.txt"), "top\n").unwrap();
    symlink("top.txt", source.join("kept-link")).unwrap();
    std::fs::write(outside.join("top.txt"), "outside\n").unwrap();
    let store = kiln_engine::testing::snapshot::open_store(&tmp.path().join("store.git"), None).unwrap();
    let tree = kiln_engine::testing::snapshot::snapshot(
        &store,
        kiln_engine::testing::snapshot::Source::Plain { root: &source, skip: &[] },
    )
    .unwrap();
    let commit = kiln_engine::testing::snapshot::commit(&store, tree, None, "t", "refs/kiln/t/0").unwrap();
    let before = files(&outside, &[]);

    // Links planted where a directory and a file go, and where a link goes.
    let dest = tmp.path().join("dest");
    std::fs::create_dir_all(&dest).unwrap();
    symlink(&outside, dest.join("a")).unwrap();
    symlink(outside.join("top.txt"), dest.join("top.txt")).unwrap();
    symlink(&outside, dest.join("kept-link")).unwrap();
    assert_eq!(kiln_engine::testing::snapshot::materialize(&store, commit, &dest).unwrap(), 3);
    assert_eq!(files(&outside, &[]), before);
    assert_eq!(files(&dest, &[]), files(&source, &[]));
    assert!(std::fs::symlink_metadata(dest.join("a")).unwrap().is_dir());

    // The destination itself a link: refused before anything is written.
    let linked = tmp.path().join("linked");
    symlink(&outside, &linked).unwrap();
    let e = kiln_engine::testing::snapshot::materialize(&store, commit, &linked).unwrap_err();
    assert_eq!(e.code, ErrorCode::PathNotAllowed);
    assert_eq!(files(&outside, &[]), before);
}

#[tokio::test]
async fn specifications_behind_a_link_leading_out_are_neither_read_nor_written() {
    let s = Setup::new().await;
    let before = s.outside_state();
    let module = s.work().join("modules/catalog");
    let spec = || ModuleArgs { session_id: s.id.clone(), module_id: "@shop/catalog".into() };
    let save = || SaveSpecArgs { session_id: s.id.clone(), module_id: "@shop/catalog".into(), text: "# Mine\n".into() };
    let approve = || ApproveSpecArgs { session_id: s.id.clone(), module_id: "@shop/catalog".into() };
    assert!(s.engine.get_spec(spec()).await.unwrap().text.is_some());

    // The specification a link to a file outside.
    std::fs::remove_file(module.join("SPEC.md")).unwrap();
    symlink(s.outside.join("SPEC.md"), module.join("SPEC.md")).unwrap();
    assert_eq!(s.engine.get_spec(spec()).await.unwrap_err().code, ErrorCode::PathNotAllowed);
    assert_eq!(s.engine.save_spec(save()).await.unwrap_err().code, ErrorCode::PathNotAllowed);
    assert_eq!(s.engine.approve_spec(approve()).await.unwrap_err().code, ErrorCode::PathNotAllowed);
    assert_eq!(s.outside_state(), before);

    // The gates say so instead of reading it, or running anything out there.
    let ws = s.engine.workspace().unwrap();
    let id = SessionId::parse(&s.id).unwrap();
    let modules = s.session().await.modules;
    let schema = kiln_engine::testing::gates::spec_schema(&ws, &id, &modules);
    assert_eq!(schema.status, GateStatus::Failed);
    assert!(schema.head.contains("outside"), "{}", schema.head);

    // The whole module directory a link to a directory outside.
    let moved = s.work().join("moved-catalog");
    std::fs::remove_file(module.join("SPEC.md")).unwrap();
    std::fs::rename(&module, &moved).unwrap();
    symlink(&s.outside, &module).unwrap();
    assert_eq!(s.engine.save_spec(save()).await.unwrap_err().code, ErrorCode::PathNotAllowed);
    assert_eq!(s.engine.approve_spec(approve()).await.unwrap_err().code, ErrorCode::PathNotAllowed);
    let schema = kiln_engine::testing::gates::module_schema(&ws, &id, &modules);
    assert_eq!(schema.status, GateStatus::Failed);
    let info = ws.module("@shop/catalog").unwrap().clone();
    let gate = kiln_engine::testing::gates::run_module_gate(&ws, &id, &info, "tests", &[]).await;
    assert_eq!(gate.status, GateStatus::Failed);
    assert_eq!(gate.exit_code, None, "nothing ran");
    assert_eq!(s.outside_state(), before);

    // Back to a real directory, the same save works.
    std::fs::remove_file(&module).unwrap();
    std::fs::rename(&moved, &module).unwrap();
    assert_eq!(s.engine.save_spec(save()).await.unwrap().text.as_deref(), Some("# Mine\n"));
    assert_eq!(std::fs::read_to_string(module.join("SPEC.md")).unwrap(), "# Mine\n");
}

#[tokio::test]
async fn session_copy_entries_follow_the_same_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());
    let toml = shop.join("kiln.toml");
    let text = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("setup = \"npm ci --offline --no-audit --no-fund\"", "setup = \"\"")
        .replace(
            "copy = [\".env\"]",
            "copy = [\".env\", \".kiln/private.txt\", \"../outside.txt\", \"/etc/hostname\", \"fixtures/.env.local\"]",
        );
    std::fs::write(toml, text).unwrap();
    std::fs::write(shop.join(".env"), "A=1\n").unwrap();
    std::fs::write(shop.join("fixtures/.env.local"), "B=2\n").unwrap();
    // Ignored, so only the copy can bring it into the working copy.
    let ignore = std::fs::read_to_string(shop.join(".gitignore")).unwrap();
    std::fs::write(shop.join(".gitignore"), format!("{ignore}*.local\n")).unwrap();
    std::fs::create_dir_all(shop.join(".kiln")).unwrap();
    std::fs::write(shop.join(".kiln/private.txt"), "Kiln's own\n").unwrap();
    std::fs::write(tmp.path().join("outside.txt"), "outside\n").unwrap();
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &shop).await;
    let s = create(&engine, "Copies in @shop/catalog").await;
    let session_dir = shop.join(".kiln/sessions").join(&s.id);
    let work = session_dir.join("workspace");
    assert_eq!(std::fs::read_to_string(work.join(".env")).unwrap(), "A=1\n");
    assert_eq!(
        std::fs::read_to_string(work.join("fixtures/.env.local")).unwrap(),
        "B=2\n",
        "dotted names are ordinary"
    );
    assert!(!work.join(".kiln").exists(), "Kiln's own state never reaches the working copy");
    assert!(!session_dir.join("outside.txt").exists());
    assert!(!work.join("etc").exists());
}

#[test]
fn a_new_module_id_never_makes_an_empty_directory_name() {
    use kiln_engine::testing::modules::{ModuleInfo, Toolchain};
    use kiln_engine::testing::planner::Rules;
    let module = |id: &str, directory: &str| ModuleInfo {
        id: id.into(),
        directory: directory.into(),
        toolchain: Toolchain::Node,
        spec_status: None,
    };
    let modules = vec![module("@shop/cart", "modules/cart"), module("@shop/catalog", "modules/catalog")];
    let pattern = regex::Regex::new("^@shop/.+$").unwrap();
    let globs = vec!["modules/*".to_string()];
    let rules = Rules { modules: &modules, id_pattern: Some(&pattern), globs: &globs };
    // `@shop/.x` has no short name: its directory would be `modules/` itself, every
    // module's parent, so it selects nothing.
    assert_eq!(rules.classify("Build @shop/.x").unwrap_err().code, ErrorCode::ModuleRequired);
    assert_eq!(
        rules.classify_with("Build @shop/reviews", &["@shop/reviews".into()]).unwrap()[0].directory,
        "modules/reviews"
    );
}
