//! The desktop app's update round trip against a loopback update server: the installed version
//! (tauri.conf.json's) finds a newer signed build in latest.json, downloads it with progress and
//! verifies its signature; a build signed with another key, tampered bytes, a missing or garbage
//! signature, a signature made for another version and one naming no version (the shipped
//! `requireSignedVersion`) are refused; a latest.json with a lower or
//! equal version offers nothing. The app is Tauri's mock runtime with the app's own updater plugin
//! (`desktop::updater_plugin`) and endpoint override (`desktop::apply_update_endpoint`), and the
//! shipped `plugins.updater` block with only its public key swapped for a throwaway one: tests
//! never hold the release private key. The newer build is a real .deb (dpkg-deb) signed by the
//! real tauri CLI (`tauri signer`), as scripts/release signs releases. Nothing is installed: the
//! plugin's install step would run dpkg on this machine, and it verifies with the same `verify`.
//! The server speaks plain http: the updater only warns about that in debug builds (`cargo test`);
//! a release-profile run sets `dangerousInsecureTransportProtocol` in the test's copy of the config.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use base64::Engine as _;
use kiln_app::desktop::{apply_update_endpoint, updater_plugin};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tauri::test::{mock_builder, mock_context, noop_assets, MockRuntime};
use tauri_plugin_updater::{Error, Update, UpdaterExt};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The newer build's version, and the name tauri's bundler gives its .deb.
const NEWER: &str = "0.2.0";
const DEB_NAME: &str = "kiln_0.2.0_amd64.deb";
/// Incompressible bytes inside the .deb, so the package is big enough to arrive in many pieces.
const PAYLOAD_BYTES: usize = 320 * 1024;
const NOTES: &str = "Kiln 0.2.0\n\n- Faster diffs";
/// latest.json's pub_date as scripts/release writes it (RFC 3339, whole seconds, Z), and its Unix time.
const PUB_DATE: &str = "2025-11-28T09:30:00Z";
const PUB_DATE_UNIX: i64 = 1_764_322_200;

// --- a loopback update server --------------------------------------------------------------------

/// Serves registered files over HTTP/1.1 on 127.0.0.1 and records each request as "GET /path".
/// A bundle is written in 16 KiB pieces a moment apart, as a network delivers it, so the updater's
/// progress reporting is exercised; latest.json is written at once.
struct UpdateServer {
    addr: SocketAddr,
    files: Arc<Mutex<HashMap<String, Vec<u8>>>>,
    requests: Arc<Mutex<Vec<String>>>,
}

const PIECE: usize = 16 * 1024;

impl UpdateServer {
    fn start() -> UpdateServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().unwrap();
        let files: Arc<Mutex<HashMap<String, Vec<u8>>>> = Arc::default();
        let requests: Arc<Mutex<Vec<String>>> = Arc::default();
        let (f, r) = (files.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (f, r) = (f.clone(), r.clone());
                std::thread::spawn(move || serve(stream, &f, &r));
            }
        });
        UpdateServer { addr, files, requests }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn put(&self, path: &str, body: Vec<u8>) {
        self.files.lock().unwrap().insert(path.to_string(), body);
    }

    /// The requests made so far under `prefix` (each case has a directory of its own).
    fn requests_under(&self, prefix: &str) -> Vec<String> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.split(' ').nth(1).is_some_and(|p| p.starts_with(prefix)))
            .cloned()
            .collect()
    }
}

fn serve(mut stream: TcpStream, files: &Mutex<HashMap<String, Vec<u8>>>, requests: &Mutex<Vec<String>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) if head.len() < 64 * 1024 => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head);
    let mut request_line = head.lines().next().unwrap_or("").split(' ');
    let (method, target) = (request_line.next().unwrap_or(""), request_line.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("").to_string();
    requests.lock().unwrap().push(format!("{method} {path}"));
    let body = if method == "GET" { files.lock().unwrap().get(&path).cloned() } else { None };
    let Some(body) = body else {
        let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
    };
    let content_type =
        if path.ends_with(".json") { "application/json" } else { "application/vnd.debian.binary-package" };
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    if path.ends_with(".json") {
        let _ = stream.write_all(&body);
        return;
    }
    for piece in body.chunks(PIECE) {
        if stream.write_all(piece).and_then(|_| stream.flush()).is_err() {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

// --- the newer build and its signatures, made once for all cases ---------------------------------

struct Fixture {
    server: UpdateServer,
    /// The .deb of kiln 0.2.0 as served.
    deb: Vec<u8>,
    /// Key A's public key (tauri.conf.json's format: base64 of the minisign public-key file).
    pubkey_a: String,
    /// The .deb's .sig content by key A (bound to 0.2.0, as `tauri build` signs), and by key B.
    sig_a: String,
    sig_b: String,
    /// Key A's signature of the .deb that names no version.
    sig_a_unversioned: String,
    /// tauri.conf.json, parsed.
    shipped: Value,
    _scratch: tempfile::TempDir,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let started = Instant::now();
        let scratch = tempfile::tempdir().unwrap();
        let deb_path = build_deb(scratch.path());
        let (key_a, pubkey_a) = generate_key(&scratch.path().join("key-a"));
        let (key_b, pubkey_b) = generate_key(&scratch.path().join("key-b"));
        assert_ne!(pubkey_a, pubkey_b);
        let sig_a = sign(&deb_path, &key_a, &scratch.path().join("signed-by-a"), Some(NEWER));
        let sig_b = sign(&deb_path, &key_b, &scratch.path().join("signed-by-b"), Some(NEWER));
        let sig_a_unversioned = sign(&deb_path, &key_a, &scratch.path().join("signed-by-a-bare"), None);
        let shipped: Value =
            serde_json::from_str(&std::fs::read_to_string(Path::new(ROOT).join("tauri.conf.json")).unwrap()).unwrap();
        assert_ne!(
            shipped["plugins"]["updater"]["pubkey"].as_str(),
            Some(pubkey_a.as_str()),
            "the test key must not be the shipped one"
        );
        let deb = std::fs::read(&deb_path).unwrap();
        eprintln!(
            "updater fixture: {DEB_NAME} of {} bytes, two key pairs and signatures in {:?}",
            deb.len(),
            started.elapsed()
        );
        Fixture {
            server: UpdateServer::start(),
            deb,
            pubkey_a,
            sig_a,
            sig_b,
            sig_a_unversioned,
            shipped,
            _scratch: scratch,
        }
    })
}

fn tauri_cli() -> PathBuf {
    let cli = Path::new(ROOT).join("ui/node_modules/.bin/tauri");
    assert!(cli.exists(), "no {}: run ./scripts/deps (it installs @tauri-apps/cli with ui/'s packages); the update test signs with the real tauri signer", cli.display());
    cli
}

fn run(command: &mut Command) -> String {
    let output = command.output().unwrap_or_else(|e| panic!("could not run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A throwaway key pair without password from `tauri signer generate`: (private key string, public key string).
fn generate_key(file: &Path) -> (String, String) {
    run(Command::new(tauri_cli()).args(["signer", "generate", "--ci", "-p", "", "-w"]).arg(file));
    let read = |p: PathBuf| std::fs::read_to_string(p).unwrap().trim().to_string();
    (read(file.to_path_buf()), read(file.with_extension("pub")))
}

/// `tauri signer sign` of a copy of `file` in `dir`, bound to `version` as `tauri build` binds
/// release signatures (None: a bare signature naming no version): the .sig's content, which is
/// what latest.json carries.
fn sign(file: &Path, private_key: &str, dir: &Path, version: Option<&str>) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let copy = dir.join(file.file_name().unwrap());
    std::fs::copy(file, &copy).unwrap();
    let mut command = Command::new(tauri_cli());
    command.args(["signer", "sign"]);
    if let Some(version) = version {
        command.args(["--app-version", version]);
    }
    run(command
        .arg(&copy)
        .env("TAURI_SIGNING_PRIVATE_KEY", private_key)
        .env("TAURI_SIGNING_PRIVATE_KEY_PASSWORD", "")
        .env_remove("TAURI_SIGNING_PRIVATE_KEY_PATH"));
    std::fs::read_to_string(dir.join(format!("{DEB_NAME}.sig"))).unwrap().trim().to_string()
}

/// kiln 0.2.0 as a .deb: a stand-in /usr/bin/kiln and incompressible data (SHA-256 in counter mode).
fn build_deb(scratch: &Path) -> PathBuf {
    assert!(
        Command::new("dpkg-deb").arg("--version").output().is_ok_and(|o| o.status.success()),
        "dpkg-deb is missing: run ./scripts/deps"
    );
    let root = scratch.join("pkg");
    std::fs::create_dir_all(root.join("DEBIAN")).unwrap();
    std::fs::create_dir_all(root.join("usr/bin")).unwrap();
    std::fs::create_dir_all(root.join("usr/share/kiln")).unwrap();
    std::fs::write(
        root.join("DEBIAN/control"),
        format!("Package: kiln\nVersion: {NEWER}\nArchitecture: amd64\nMaintainer: Kiln <kiln@example.invalid>\nSection: devel\nPriority: optional\nDescription: Kiln update test build\n"),
    )
    .unwrap();
    let bin = root.join("usr/bin/kiln");
    std::fs::write(&bin, format!("#!/bin/sh\necho kiln {NEWER}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut payload = Vec::with_capacity(PAYLOAD_BYTES);
    let mut counter = 0u64;
    while payload.len() < PAYLOAD_BYTES {
        payload.extend_from_slice(&Sha256::digest(counter.to_le_bytes()));
        counter += 1;
    }
    std::fs::write(root.join("usr/share/kiln/payload.bin"), &payload).unwrap();
    let deb = scratch.join(DEB_NAME);
    run(Command::new("dpkg-deb").args(["--root-owner-group", "--build"]).arg(&root).arg(&deb));
    assert_eq!(run(Command::new("dpkg-deb").args(["-f"]).arg(&deb).arg("Version")).trim(), NEWER);
    deb
}

// --- the app ------------------------------------------------------------------------------------

/// The version the installed app reports: tauri.conf.json's, as `generate_context!` takes it.
fn installed_version() -> String {
    fixture().shipped["version"].as_str().expect("tauri.conf.json has a version").to_string()
}

/// The mock app for `case`: tauri.conf.json's version, the shipped `plugins.updater` with
/// `pubkey` (when given) in place of the release key, the endpoint set by the app's own override
/// to the case's latest.json on the loopback server, and the app's own updater plugin.
fn app(case: &str, pubkey: Option<&str>) -> tauri::App<MockRuntime> {
    let fx = fixture();
    let mut context = mock_context(noop_assets());
    let version = installed_version();
    context.config_mut().version = Some(version.clone());
    context.package_info_mut().version = version.parse().unwrap();
    let mut updater = fx.shipped["plugins"]["updater"].clone();
    if let Some(pubkey) = pubkey {
        updater["pubkey"] = json!(pubkey);
    }
    // Release builds refuse http endpoints; the loopback server has no TLS. A test-only setting,
    // and the_shipped_updater_config_is_https_with_the_release_key keeps it out of tauri.conf.json.
    if !cfg!(debug_assertions) {
        updater["dangerousInsecureTransportProtocol"] = json!(true);
    }
    context.config_mut().plugins.0.insert("updater".into(), updater);
    let endpoint = fx.server.url(&format!("/{case}/latest.json"));
    apply_update_endpoint(context.config_mut(), Some(&endpoint));
    // Before any request: were the override broken, the check would go to the shipped endpoint.
    assert_eq!(
        context.config().plugins.0["updater"]["endpoints"],
        json!([endpoint]),
        "the endpoint override did not apply"
    );
    mock_builder().plugin(updater_plugin()).build(context).expect("the mock app builds")
}

/// latest.json as scripts/release writes it: the .deb under `<os>-<arch>-deb` and `<os>-<arch>`.
fn manifest(case: &str, version: &str, signature: &str) -> Value {
    let platform = tauri_plugin_updater::target().expect("the updater knows this platform");
    let entry = json!({ "signature": signature, "url": fixture().server.url(&format!("/{case}/{DEB_NAME}")) });
    json!({ "version": version, "notes": NOTES, "pub_date": PUB_DATE, "platforms": { format!("{platform}-deb"): entry, platform: entry } })
}

/// Puts the case's latest.json and .deb on the server.
fn publish(case: &str, version: &str, signature: &str, deb: Vec<u8>) {
    let server = &fixture().server;
    server
        .put(&format!("/{case}/latest.json"), serde_json::to_vec_pretty(&manifest(case, version, signature)).unwrap());
    server.put(&format!("/{case}/{DEB_NAME}"), deb);
}

/// `check()` as the app's plugin does it. No proxy: a proxy from the environment must not carry
/// loopback requests elsewhere. A timeout, so a hung server fails the test instead of hanging it.
fn check(app: &tauri::App<MockRuntime>) -> Result<Option<Update>, Error> {
    let updater =
        app.updater_builder().no_proxy().timeout(Duration::from_secs(30)).build().expect("the updater builds");
    tauri::async_runtime::block_on(updater.check())
}

/// What a download reported: its chunks (length, announced total), whether it finished, and the result.
struct Download {
    chunks: Vec<(usize, Option<u64>)>,
    finished: bool,
    result: Result<Vec<u8>, Error>,
}

fn download(update: &Update) -> Download {
    let mut chunks = Vec::new();
    let mut finished = false;
    let result =
        tauri::async_runtime::block_on(update.download(|len, total| chunks.push((len, total)), || finished = true));
    Download { chunks, finished, result }
}

/// A refused download: the error, which must be a signature error, and nothing to install.
fn refused(case: &str, update: &Update) -> Error {
    let download = download(update);
    let error = match download.result {
        Ok(bytes) => panic!("{case}: the download of {} bytes was accepted", bytes.len()),
        Err(e) => e,
    };
    // It was fetched whole and refused on verification, not on the way.
    assert!(download.finished, "{case}: the download did not finish before the refusal: {error}");
    assert_eq!(download.chunks.iter().map(|c| c.0).sum::<usize>(), fixture().deb.len(), "{case}");
    eprintln!("updater {case}: refused: {error:?}: {error}");
    error
}

/// A download refused by minisign's check with exactly `message`.
fn refused_by_minisign(case: &str, update: &Update, message: &str) {
    match refused(case, update) {
        Error::Minisign(e) => assert_eq!(e.to_string(), message, "{case}"),
        e => panic!("{case}: not a signature error: {e:?}"),
    }
}

fn checked(case: &str, app: &tauri::App<MockRuntime>) -> Update {
    let update = check(app)
        .unwrap_or_else(|e| panic!("{case}: check failed: {e}"))
        .unwrap_or_else(|| panic!("{case}: check offered nothing"));
    assert_eq!(update.version, NEWER, "{case}");
    update
}

fn deb_gets(case: &str) -> usize {
    fixture()
        .server
        .requests_under(&format!("/{case}/"))
        .iter()
        .filter(|r| *r == &format!("GET /{case}/{DEB_NAME}"))
        .count()
}

// --- the cases ----------------------------------------------------------------------------------

#[test]
fn a_newer_signed_build_is_found_downloaded_with_progress_and_verified() {
    let fx = fixture();
    publish("newer", NEWER, &fx.sig_a, fx.deb.clone());
    let app = app("newer", Some(&fx.pubkey_a));
    let started = Instant::now();
    let update = checked("newer", &app);
    assert_eq!(update.current_version, installed_version());
    assert_eq!(update.body.as_deref(), Some(NOTES));
    assert_eq!(update.date.map(|d| d.unix_timestamp()), Some(PUB_DATE_UNIX));
    assert_eq!(update.signature, fx.sig_a);
    assert_eq!(update.download_url.as_str(), fx.server.url(&format!("/newer/{DEB_NAME}")));
    assert_eq!(fx.server.requests_under("/newer/"), ["GET /newer/latest.json"], "check fetches latest.json only");

    let download = download(&update);
    let bytes = download.result.unwrap_or_else(|e| panic!("the signed build was refused: {e:?}: {e}"));
    let total: usize = download.chunks.iter().map(|c| c.0).sum();
    assert!(download.chunks.len() >= 4, "progress came in {} chunk(s): {:?}", download.chunks.len(), download.chunks);
    assert_eq!(total, fx.deb.len());
    assert!(download.chunks.iter().all(|c| c.1 == Some(fx.deb.len() as u64)), "content length: {:?}", download.chunks);
    assert!(download.finished, "on_finish was not called");
    assert!(bytes == fx.deb, "the downloaded bytes are not the served .deb");
    assert_eq!(deb_gets("newer"), 1, "{:?}", fx.server.requests_under("/newer/"));
    update.verify(&bytes).expect("the downloaded build verifies");
    eprintln!(
        "updater newer: {} bytes in {} chunks, check + download + verify in {:?}",
        total,
        download.chunks.len(),
        started.elapsed()
    );
}

#[test]
fn a_build_signed_with_another_key_is_refused() {
    let fx = fixture();
    publish("other-key", NEWER, &fx.sig_b, fx.deb.clone());
    let update = checked("other-key", &app("other-key", Some(&fx.pubkey_a)));
    refused_by_minisign("other-key", &update, "The signature was created with a different key than the one provided");
    assert_eq!(deb_gets("other-key"), 1);
}

#[test]
fn the_shipped_release_key_refuses_a_build_it_did_not_sign() {
    // The shipped block as is: the release key, which never signed this throwaway build.
    let fx = fixture();
    publish("release-key", NEWER, &fx.sig_a, fx.deb.clone());
    let update = checked("release-key", &app("release-key", None));
    refused_by_minisign("release-key", &update, "The signature was created with a different key than the one provided");
}

#[test]
fn tampered_bytes_are_refused() {
    let fx = fixture();
    let mut tampered = fx.deb.clone();
    let middle = tampered.len() / 2;
    tampered[middle] ^= 0x01;
    publish("tampered", NEWER, &fx.sig_a, tampered);
    let update = checked("tampered", &app("tampered", Some(&fx.pubkey_a)));
    refused_by_minisign("tampered", &update, "The signature verification failed");
    // The same update accepts the genuine bytes: the refusal is the flipped byte's doing.
    update.verify(&fx.deb).expect("the genuine .deb verifies");
}

#[test]
fn missing_and_garbage_signatures_are_refused_after_the_download() {
    // The manifest parses (the signature is only a string to check()), so check offers the
    // update; the download then fails verification and returns nothing to install.
    let fx = fixture();
    let not_minisign =
        base64::engine::general_purpose::STANDARD.encode("untrusted comment: nothing\nnot a signature\n");
    let cases = [
        ("unsigned", String::new()),
        ("garbage-text", "this is not a signature!".to_string()),
        ("garbage-base64", not_minisign),
    ];
    for (case, signature) in cases {
        publish(case, NEWER, &signature, fx.deb.clone());
        let update = checked(case, &app(case, Some(&fx.pubkey_a)));
        let error = refused(case, &update);
        match (case, &error) {
            ("unsigned" | "garbage-base64", Error::Minisign(e)) => {
                assert_eq!(e.to_string(), "Invalid encoding in minisign data", "{case}")
            }
            ("garbage-text", Error::Base64(e)) => assert_eq!(e.to_string(), "Invalid symbol 32, offset 4.", "{case}"),
            _ => panic!("{case}: unexpected error {error:?}"),
        }
        assert_eq!(deb_gets(case), 1, "{case}");
    }
}

#[test]
fn a_signature_made_for_another_version_is_refused() {
    // A tampered latest.json announcing 0.3.0 with the genuine 0.2.0 build and signature: the
    // signature's trusted comment binds it to 0.2.0 (tauri signer --app-version, as tauri build).
    let fx = fixture();
    publish("replayed", "0.3.0", &fx.sig_a, fx.deb.clone());
    let app = app("replayed", Some(&fx.pubkey_a));
    let update = check(&app).unwrap().expect("0.3.0 is offered");
    assert_eq!(update.version, "0.3.0");
    match refused("replayed", &update) {
        Error::SignedVersionMismatch { signed, announced } => {
            assert_eq!((signed.as_str(), announced.as_str()), (NEWER, "0.3.0"))
        }
        e => panic!("replayed: not a version mismatch: {e:?}"),
    }
}

#[test]
fn a_signature_that_names_no_version_is_refused() {
    // The shipped requireSignedVersion: a genuine signature by the trusted key that is not bound to
    // a version could be replayed under any version number, so it is refused.
    let fx = fixture();
    publish("unversioned", NEWER, &fx.sig_a_unversioned, fx.deb.clone());
    let update = checked("unversioned", &app("unversioned", Some(&fx.pubkey_a)));
    match refused("unversioned", &update) {
        Error::MissingSignedVersion => {}
        e => panic!("unversioned: not a missing signed version: {e:?}"),
    }
}

#[test]
fn a_lower_or_equal_version_offers_nothing() {
    let fx = fixture();
    for (case, version) in [("lower", "0.0.9".to_string()), ("equal", installed_version())] {
        // Validly signed and downloadable: only the version keeps it from being offered.
        publish(case, &version, &fx.sig_a, fx.deb.clone());
        let offered = check(&app(case, Some(&fx.pubkey_a))).unwrap_or_else(|e| panic!("{case}: check failed: {e}"));
        assert!(offered.is_none(), "{case}: version {version} was offered over {}", installed_version());
        assert_eq!(
            fx.server.requests_under(&format!("/{case}/")),
            [format!("GET /{case}/latest.json")],
            "{case}: the .deb must never be fetched"
        );
    }
}

// --- the app's endpoint override and the shipped config ----------------------------------------

fn shipped_config() -> tauri::Config {
    let mut config = mock_context::<MockRuntime, _>(noop_assets()).config().clone();
    config.plugins.0.insert("updater".into(), fixture().shipped["plugins"]["updater"].clone());
    config
}

#[test]
fn the_update_endpoint_override_replaces_the_shipped_endpoints() {
    let shipped = fixture().shipped["plugins"]["updater"].clone();
    let mut config = shipped_config();
    apply_update_endpoint(&mut config, Some("  http://127.0.0.1:9/beta/latest.json \n"));
    assert_eq!(config.plugins.0["updater"]["endpoints"], json!(["http://127.0.0.1:9/beta/latest.json"]));
    assert_eq!(config.plugins.0["updater"]["pubkey"], shipped["pubkey"], "the override only touches the endpoints");
    for endpoint in [None, Some(""), Some("  \t\n")] {
        let mut config = shipped_config();
        apply_update_endpoint(&mut config, endpoint);
        assert_eq!(config.plugins.0["updater"], shipped, "{endpoint:?} must leave the shipped config");
    }
}

#[test]
fn the_shipped_updater_config_is_https_with_the_release_key() {
    let updater = &fixture().shipped["plugins"]["updater"];
    let endpoints = updater["endpoints"].as_array().expect("plugins.updater.endpoints");
    assert!(!endpoints.is_empty());
    for endpoint in endpoints {
        assert!(endpoint.as_str().is_some_and(|e| e.starts_with("https://")), "not https: {endpoint}");
    }
    assert_eq!(updater["requireSignedVersion"], json!(true), "release signatures must be bound to their version");
    for dangerous in
        ["dangerousInsecureTransportProtocol", "dangerousAcceptInvalidCerts", "dangerousAcceptInvalidHostnames"]
    {
        assert!(
            matches!(updater.get(dangerous), None | Some(Value::Bool(false))),
            "{dangerous} is set: {}",
            updater[dangerous]
        );
    }
    let pubkey = updater["pubkey"].as_str().expect("plugins.updater.pubkey");
    let text = String::from_utf8(base64::engine::general_purpose::STANDARD.decode(pubkey).expect("pubkey is base64"))
        .expect("pubkey is text");
    let mut lines = text.lines();
    let comment = lines.next().unwrap_or("");
    let key_id = comment
        .strip_prefix("untrusted comment: minisign public key: ")
        .unwrap_or_else(|| panic!("not a minisign public key: {comment}"));
    let key =
        base64::engine::general_purpose::STANDARD.decode(lines.next().unwrap_or("")).expect("the key line is base64");
    assert_eq!(key.len(), 42, "Ed + key id + Ed25519 key");
    assert_eq!(&key[..2], b"Ed");
    // The comment names the key the line holds (minisign prints the id as a little-endian u64).
    assert_eq!(format!("{:016X}", u64::from_le_bytes(key[2..10].try_into().unwrap())), key_id);
    assert_ne!(pubkey, fixture().pubkey_a);
}
