//! Objects in a bucket (SPEC §21), against a real S3-compatible server (`s3s-fs`) and real
//! git: checkpoints go up as content-addressed packs with a manifest per session and
//! hold everything a checkpoint needs by themselves; a workspace that lost `.kiln/store.git`
//! and its working copy rebuilds both from the bucket; a second clone of the repository
//! fetches a session's checkpoints by id (what failover uses); a bucket that does not
//! answer is `OBJECTS_UNAVAILABLE` and changes nothing.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::s3::S3;
use crate::common::*;
use crate::recovery::{until, workdir};
use kiln_engine::backing::Backing;
use kiln_engine::testing::ids::SessionId;
use kiln_engine::types::*;
use kiln_engine::{Engine, ErrorCode};
use kiln_records::objects::{packs, Bucket};

const FILE: &str = "modules/catalog/src/server/wishlist.js";

/// The shop as a git repository (its objects are the store's alternate), no setup step.
fn shop_repo(dir: &Path) -> PathBuf {
    let shop = shop_copy(dir);
    without_setup(&shop);
    sh_git(&shop, &["init", "-q"]);
    sh_git(&shop, &["add", "-A"]);
    sh_git(&shop, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "the shop"]);
    shop
}

fn backed(config: &Path, url: &str) -> Arc<Engine> {
    let engine = Arc::try_unwrap(engine(config)).ok().expect("a fresh engine");
    Arc::new(engine.backed_by(Backing { database: None, objects: Some(url.to_string()) }))
}

/// The files of `commit` in the bare store at `store`, written out under `dest`.
fn checkpoint_files(store: &Path, commit: &str, dest: &Path) -> BTreeMap<String, Vec<u8>> {
    let repo = kiln_engine::testing::snapshot::open_store(store, None).unwrap();
    kiln_engine::testing::snapshot::materialize(&repo, git2::Oid::from_str(commit).unwrap(), dest).unwrap();
    files(dest, &[])
}

fn store_ref(shop: &Path, name: &str) -> String {
    let repo = git2::Repository::open_bare(shop.join(".kiln/store.git")).unwrap();
    let found = repo.find_reference(name).unwrap().target().unwrap().to_string();
    found
}

/// A session with two checkpoints after its start; the expected files of each, by sequence.
struct Worked {
    id: String,
    expected: Vec<BTreeMap<String, Vec<u8>>>,
}

async fn two_checkpoints(engine: &Engine, shop: &Path, scratch: &Path) -> Worked {
    let s = create(engine, "Wishlist in @shop/catalog").await;
    let work = workdir(shop, &s.id);
    write(&work.join(FILE), "export const wishlist = [];\n");
    assert_eq!(checkpoint(engine, &s.id, "the wishlist").await, 1);
    write(&work.join(FILE), "export const wishlist = ['socks'];\n");
    write(&work.join("modules/catalog/NOTES.md"), "notes\n");
    assert_eq!(checkpoint(engine, &s.id, "socks").await, 2);
    let mut expected = Vec::new();
    for sequence in 0..3 {
        let commit = store_ref(shop, &format!("refs/kiln/{}/{sequence}", s.id));
        expected.push(checkpoint_files(
            &shop.join(".kiln/store.git"),
            &commit,
            &scratch.join(format!("expected-{sequence}")),
        ));
    }
    assert_eq!(expected[2].get(FILE).map(Vec::as_slice), Some(&b"export const wishlist = ['socks'];\n"[..]));
    Worked { id: s.id, expected }
}

#[tokio::test]
async fn checkpoints_go_up_as_content_addressed_packs_that_hold_everything_they_need() {
    let s3 = S3::start();
    let url = s3.bucket("packs");
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_repo(tmp.path());
    let engine = backed(&tmp.path().join("config"), &url);
    open(&engine, &shop).await;
    let worked = two_checkpoints(&engine, &shop, tmp.path()).await;

    let bucket = Bucket::open(&url).unwrap();
    let manifest = packs::manifest(&bucket, &worked.id).await.unwrap().expect("a manifest");
    let names: Vec<String> = (0..3).map(|n| format!("refs/kiln/{}/{n}", worked.id)).collect();
    assert_eq!(manifest.refs.keys().cloned().collect::<Vec<_>>(), names);
    for name in &names {
        assert_eq!(manifest.refs[name], store_ref(&shop, name), "{name}");
    }
    // The start's tree as a base pack, then one pack per upload (the start's commit, each
    // checkpoint), each named by its bytes' hash.
    assert_eq!(manifest.bases.len(), 1, "{manifest:?}");
    assert_eq!(manifest.packs.len(), 4, "{manifest:?}");
    let mut listed = bucket.list("packs").await.unwrap();
    listed.sort();
    let mut named = manifest.packs.clone();
    named.sort();
    assert_eq!(listed, named);
    for name in &manifest.packs {
        let bytes = bucket.get(name).await.unwrap().unwrap();
        assert_eq!(name, &format!("packs/{}.pack", kiln_records::objects::sha256_hex(&bytes)));
    }

    // Nothing new: nothing sent. The same objects packed again: the same name, stored once.
    let ws = engine.workspace().unwrap();
    let id = SessionId::parse(&worked.id).unwrap();
    let again = kiln_engine::testing::checkpoint::upload(&ws, &id).await.unwrap().unwrap();
    assert_eq!(again.pack, None);
    bucket.delete(&format!("sessions/{}/refs.json", worked.id)).await.unwrap();
    let whole = kiln_engine::testing::checkpoint::upload(&ws, &id).await.unwrap().unwrap().pack.unwrap();
    bucket.delete(&format!("sessions/{}/refs.json", worked.id)).await.unwrap();
    let whole_again = kiln_engine::testing::checkpoint::upload(&ws, &id).await.unwrap().unwrap().pack.unwrap();
    assert_eq!(whole, whole_again);
    assert_eq!(bucket.list("packs").await.unwrap().len(), 5, "one more pack, stored once");

    // A second session started from the same tree shares the base: one small pack more.
    let second = create(&engine, "Wishlist in @shop/catalog").await;
    let theirs = packs::manifest(&bucket, &second.id).await.unwrap().unwrap();
    assert_eq!(theirs.bases, manifest.bases);
    assert_eq!(theirs.packs.len(), 2, "{theirs:?}");
    assert_eq!(theirs.packs[0], manifest.packs[0], "the base pack is shared");
    // (Its start's commit is the first session's when both were made in one second: then
    // even that pack is the same one.)
    let packs_now = bucket.list("packs").await.unwrap().len();
    assert!(packs_now == 5 || packs_now == 6, "{packs_now}");
    let own = bucket.get(&theirs.packs[1]).await.unwrap().unwrap();
    let base = bucket.get(&manifest.packs[0]).await.unwrap().unwrap();
    assert!(
        own.len() * 10 < base.len(),
        "the session's own pack ({} bytes) leaves the base ({} bytes) out",
        own.len(),
        base.len()
    );

    // The packs alone (no alternate to the user's repository) hold every checkpoint.
    let alone = tmp.path().join("alone.git");
    let repo = git2::Repository::init_bare(&alone).unwrap();
    for name in bucket.list("packs").await.unwrap() {
        let bytes = bucket.get(&name).await.unwrap().unwrap();
        let odb = repo.odb().unwrap();
        let mut writer = odb.packwriter().unwrap();
        writer.write_all(&bytes).unwrap();
        writer.commit().unwrap();
    }
    for (sequence, expected) in worked.expected.iter().enumerate() {
        let commit = &manifest.refs[&names[sequence]];
        let got = checkpoint_files(&alone, commit, &tmp.path().join(format!("alone-{sequence}")));
        assert_eq!(&got, expected, "checkpoint {sequence} from the packs alone");
    }

    // What `kiln serve --check` prints.
    let line = kiln_records::objects::check(&Backing { database: None, objects: Some(url.clone()) }).await.unwrap();
    assert!(line.contains("s3://packs/team") && line.contains(&format!("127.0.0.1:{}", s3.port)), "{line}");
    assert!(line.contains("written, read back and deleted"), "{line}");
}

#[tokio::test]
async fn a_workspace_that_lost_its_store_and_working_copy_rebuilds_them_from_the_bucket() {
    let s3 = S3::start();
    let url = s3.bucket("rebuild");
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_repo(tmp.path());
    let engine = backed(&tmp.path().join("config"), &url);
    open(&engine, &shop).await;
    let worked = two_checkpoints(&engine, &shop, tmp.path()).await;
    drop(engine);
    let work = workdir(&shop, &worked.id);
    let until_released = Instant::now() + Duration::from_secs(30);
    while (std::fs::remove_dir_all(shop.join(".kiln/store.git")).is_err() || std::fs::remove_dir_all(&work).is_err())
        && Instant::now() < until_released
    {}
    assert!(!work.exists() && !shop.join(".kiln/store.git").exists());

    let engine = backed(&tmp.path().join("config2"), &url);
    open_when_released(&engine, &shop, Duration::from_secs(30)).await;
    until(Duration::from_secs(30), "the copy rebuilt at open", || async {
        crate::recovery::system_entries(&engine, &worked.id).await.iter().any(|t| t.contains("was missing"))
    })
    .await;
    let view = engine.get_session(SessionIdArgs { session_id: worked.id.clone() }).await.unwrap();
    assert_eq!(
        view.checkpoints.iter().map(|c| c.sequence).collect::<Vec<_>>(),
        vec![0, 1, 2],
        "every checkpoint is back"
    );
    let skip = [".env", "reference"];
    let strip = |mut m: BTreeMap<String, Vec<u8>>| {
        m.retain(|k, _| !skip.iter().any(|s| k == s || k.starts_with(&format!("{s}/"))));
        m
    };
    assert_eq!(strip(files(&work, &[])), worked.expected[2], "the working copy is checkpoint 2's");

    engine.restore_checkpoint(RestoreCheckpointArgs { session_id: worked.id.clone(), sequence: 1 }).await.unwrap();
    assert_eq!(strip(files(&work, &[])), worked.expected[1], "restored to checkpoint 1 exactly");

    // The session goes on: its next checkpoint is 3, and it is in the bucket too.
    write(&work.join(FILE), "export const wishlist = ['hats'];\n");
    assert_eq!(checkpoint(&engine, &worked.id, "hats").await, 3);
    let bucket = Bucket::open(&url).unwrap();
    let manifest = packs::manifest(&bucket, &worked.id).await.unwrap().unwrap();
    let third = format!("refs/kiln/{}/3", worked.id);
    assert_eq!(manifest.refs.get(&third), Some(&store_ref(&shop, &third)));
}

#[tokio::test]
async fn a_second_clone_with_the_same_bucket_fetches_a_session_by_id_and_materializes_it_exactly() {
    let s3 = S3::start();
    let url = s3.bucket("failover");
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_repo(tmp.path());
    let engine = backed(&tmp.path().join("config"), &url);
    open(&engine, &shop).await;
    let worked = two_checkpoints(&engine, &shop, tmp.path()).await;

    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    sh_git(&other, &["clone", "-q", shop.to_str().unwrap(), "shop"]);
    let clone = other.join("shop");
    let engine2 = backed(&tmp.path().join("config2"), &url);
    open(&engine2, &clone).await;
    let ws2 = engine2.workspace().unwrap();
    let id = SessionId::parse(&worked.id).unwrap();
    let fetched = kiln_engine::testing::recover::present(&ws2, &id).await.unwrap();
    assert_eq!(fetched.refs, 3, "{fetched:?}");
    assert_eq!(fetched.packs, 4, "the base and three of the session's own: {fetched:?}");
    for (sequence, expected) in worked.expected.iter().enumerate() {
        let name = format!("refs/kiln/{}/{sequence}", worked.id);
        assert_eq!(store_ref(&clone, &name), store_ref(&shop, &name));
        let got = checkpoint_files(
            &clone.join(".kiln/store.git"),
            &store_ref(&clone, &name),
            &other.join(format!("got-{sequence}")),
        );
        assert_eq!(&got, expected, "checkpoint {sequence} on the second clone");
    }
    // Asked again, there is nothing to fetch.
    let again = kiln_engine::testing::recover::present(&ws2, &id).await.unwrap();
    assert_eq!((again.packs, again.refs), (0, 0));
}

#[tokio::test]
async fn a_bucket_that_does_not_answer_is_objects_unavailable_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_repo(tmp.path());
    let port = crate::common::s3::free_port();
    let url = format!("s3://nowhere/team?endpoint=http://127.0.0.1:{port}&allow_http=true");
    let engine = backed(&tmp.path().join("config"), &url);
    let started = Instant::now();
    let err = engine.open_workspace(OpenWorkspaceArgs { path: shop.display().to_string() }).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::ObjectsUnavailable, "{err:?}");
    assert!(err.message.contains("s3://nowhere/team"), "{}", err.message);
    assert!(started.elapsed() < Duration::from_secs(60), "said within the retry limit");
    assert!(!shop.join(".kiln").exists(), "nothing was written");
    assert!(engine.workspace().is_err());

    let check = kiln_records::objects::check(&Backing { database: None, objects: Some(url) }).await.unwrap_err();
    assert_eq!(check.code, ErrorCode::ObjectsUnavailable);
    for bad in ["http://not-s3/x", "s3:///prefix", "s3://b/p?secret_access_key=x"] {
        let err = Bucket::open(bad).unwrap_err();
        assert_eq!(err.code, ErrorCode::ObjectsUnavailable, "{bad}");
    }
}

/// Prints what a bucket on loopback adds to a checkpoint (`--nocapture` shows it): ten
/// one-file checkpoints with a bucket and ten without.
#[tokio::test]
async fn what_a_bucket_adds_to_a_checkpoint() {
    let s3 = S3::start();
    let url = s3.bucket("timing");
    let mut medians = Vec::new();
    for bucket in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let shop = shop_repo(tmp.path());
        let engine = if bucket { backed(&tmp.path().join("config"), &url) } else { engine(&tmp.path().join("config")) };
        open(&engine, &shop).await;
        let s = create(&engine, "Wishlist in @shop/catalog").await;
        let work = workdir(&shop, &s.id);
        let mut took = Vec::new();
        for n in 0..10 {
            write(&work.join(FILE), &format!("export const wishlist = [{n}];\n"));
            let started = Instant::now();
            checkpoint(&engine, &s.id, "a change").await;
            took.push(started.elapsed());
        }
        took.sort();
        medians.push(took[took.len() / 2]);
    }
    eprintln!(
        "checkpoint of one changed file, median of 10: {:?} without a bucket, {:?} with one on loopback (s3s-fs): {:?} added",
        medians[0],
        medians[1],
        medians[1].saturating_sub(medians[0])
    );
    assert!(medians[1] < Duration::from_secs(5), "a checkpoint with a bucket on loopback stays quick: {medians:?}");
}

#[tokio::test]
async fn a_checkpoint_the_bucket_does_not_take_is_kept_said_and_sent_with_the_next() {
    let mut s3 = S3::start();
    let url = s3.bucket("down");
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_repo(tmp.path());
    let engine = backed(&tmp.path().join("config"), &url);
    open(&engine, &shop).await;
    let s = create(&engine, "Wishlist in @shop/catalog").await;
    let work = workdir(&shop, &s.id);

    s3.stop();
    write(&work.join(FILE), "export const wishlist = [];\n");
    assert_eq!(checkpoint(&engine, &s.id, "while the bucket is down").await, 1, "the checkpoint is taken");
    let entries = crate::recovery::system_entries(&engine, &s.id).await;
    let said =
        entries.iter().find(|t| t.contains("could not be copied to the bucket")).expect("the transcript says so");
    assert!(said.starts_with("Checkpoint 1 is kept on this host"), "{said}");
    assert!(said.contains("sent with the next checkpoint"), "{said}");

    s3.start_again();
    let bucket = Bucket::open(&url).unwrap();
    let before = packs::manifest(&bucket, &s.id).await.unwrap().unwrap();
    assert_eq!(before.refs.len(), 1, "only the start went up: {before:?}");
    write(&work.join(FILE), "export const wishlist = ['back'];\n");
    assert_eq!(checkpoint(&engine, &s.id, "the bucket is back").await, 2);
    let after = packs::manifest(&bucket, &s.id).await.unwrap().unwrap();
    for sequence in 0..3 {
        let name = format!("refs/kiln/{}/{sequence}", s.id);
        assert_eq!(after.refs.get(&name), Some(&store_ref(&shop, &name)), "{name} went up with the next checkpoint");
    }
    // And what went up rebuilds checkpoint 1 elsewhere: its objects are in the packs.
    let alone = tmp.path().join("alone.git");
    let repo = git2::Repository::init_bare(&alone).unwrap();
    for name in &after.packs {
        let bytes = bucket.get(name).await.unwrap().unwrap();
        let odb = repo.odb().unwrap();
        let mut writer = odb.packwriter().unwrap();
        writer.write_all(&bytes).unwrap();
        writer.commit().unwrap();
    }
    let one = &after.refs[&format!("refs/kiln/{}/1", s.id)];
    let got = checkpoint_files(&alone, one, &tmp.path().join("one"));
    assert_eq!(got.get(FILE).map(Vec::as_slice), Some(&b"export const wishlist = [];\n"[..]));
}

#[tokio::test]
async fn attachments_and_screenshots_are_kept_by_content_and_come_back_from_the_bucket() {
    let s3 = S3::start();
    let url = s3.bucket("files");
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_repo(tmp.path());
    let engine = backed(&tmp.path().join("config"), &url);
    open(&engine, &shop).await;
    let bucket = Bucket::open(&url).unwrap();
    let bytes = b"# notes\nthe wishlist keeps socks\n".to_vec();
    let attach = |session: &str| AddAttachmentArgs {
        session_id: session.to_string(),
        name: "notes.md".into(),
        data_base64: base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &bytes),
    };
    let s = create(&engine, "Wishlist in @shop/catalog").await;
    let added = engine.add_attachment(attach(&s.id)).await.unwrap();
    let other = create(&engine, "Wishlist in @shop/catalog").await;
    engine.add_attachment(attach(&other.id)).await.unwrap();
    let sha = kiln_records::objects::sha256_hex(&bytes);
    assert_eq!(bucket.list("attachments").await.unwrap(), vec![format!("attachments/{sha}")], "stored once");
    let index = bucket.get(&format!("sessions/{}/attachments.json", s.id)).await.unwrap().unwrap();
    assert!(String::from_utf8(index).unwrap().contains(&added.id));

    // Lost on this host, original and copy: the rebuilt working copy has it from the bucket.
    let session_dir = shop.join(".kiln/sessions").join(&s.id);
    std::fs::remove_dir_all(session_dir.join("attachments")).unwrap();
    std::fs::remove_dir_all(session_dir.join("workspace")).unwrap();
    engine.get_diff(GetDiffArgs { session_id: s.id.clone(), module_id: None }).await.unwrap();
    let copy = session_dir.join("workspace").join(kiln_engine::testing::attachments::IN_WORKDIR).join("notes.md");
    assert_eq!(std::fs::read(&copy).unwrap(), bytes);
    assert_eq!(std::fs::read(session_dir.join(format!("attachments/{}-notes.md", added.id))).unwrap(), bytes);

    // A screenshot's PNG, kept twice (two captures of one page), is one object.
    use kiln_records::objects::files::{keep, recall, Kind};
    let png = b"\x89PNG\r\n\x1a\n not really".to_vec();
    keep(&bucket, &s.id, Kind::Screenshot, "1", png.clone()).await.unwrap();
    keep(&bucket, &s.id, Kind::Screenshot, "2", png.clone()).await.unwrap();
    assert_eq!(bucket.list("artifacts").await.unwrap().len(), 1);
    assert_eq!(recall(&bucket, &s.id, Kind::Screenshot, "2").await.unwrap(), Some(png));
    assert_eq!(recall(&bucket, &s.id, Kind::Screenshot, "3").await.unwrap(), None);
}

#[tokio::test]
async fn pruned_checkpoints_are_followed_by_the_manifest_and_still_rebuild_from_the_packs() {
    let s3 = S3::start();
    let url = s3.bucket("pruned");
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_repo(tmp.path());
    let config = shop.join("kiln.toml");
    let text = std::fs::read_to_string(&config).unwrap().replace("[session]\n", "[session]\nmax_checkpoints = 3\n");
    std::fs::write(&config, text).unwrap();
    let engine = backed(&tmp.path().join("config"), &url);
    open(&engine, &shop).await;
    let s = create(&engine, "Wishlist in @shop/catalog").await;
    let work = workdir(&shop, &s.id);
    for n in 1..=4 {
        write(&work.join(FILE), &format!("export const wishlist = [{n}];\n"));
        checkpoint(&engine, &s.id, &format!("change {n}")).await;
    }
    // Kept: the start and the newest two, re-parented onto the start (new commits).
    let view = engine.get_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert_eq!(view.checkpoints.iter().map(|c| c.sequence).collect::<Vec<_>>(), vec![0, 3, 4]);
    let bucket = Bucket::open(&url).unwrap();
    let manifest = packs::manifest(&bucket, &s.id).await.unwrap().unwrap();
    let kept: Vec<String> = [0, 3, 4].iter().map(|n| format!("refs/kiln/{}/{n}", s.id)).collect();
    assert_eq!(manifest.refs.keys().cloned().collect::<Vec<_>>(), kept, "the manifest follows the pruning");
    let alone = tmp.path().join("alone.git");
    let repo = git2::Repository::init_bare(&alone).unwrap();
    for name in &manifest.packs {
        let bytes = bucket.get(name).await.unwrap().unwrap();
        let odb = repo.odb().unwrap();
        let mut writer = odb.packwriter().unwrap();
        writer.write_all(&bytes).unwrap();
        writer.commit().unwrap();
    }
    for (name, n) in kept[1..].iter().zip([3, 4]) {
        assert_eq!(manifest.refs[name], store_ref(&shop, name));
        let got = checkpoint_files(&alone, &manifest.refs[name], &tmp.path().join(format!("kept-{n}")));
        assert_eq!(got.get(FILE).map(Vec::as_slice), Some(format!("export const wishlist = [{n}];\n").as_bytes()));
    }
}
