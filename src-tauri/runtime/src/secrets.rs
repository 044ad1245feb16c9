//! Sealing keys and tokens at rest: AES-256-GCM under the workspace's own key in
//! `.kiln/secret.key`, a fresh random nonce per seal. The UI never sees a secret,
//! only its `fingerprint`.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use sha2::{Digest, Sha256};

use kiln_types::error::{ApiError, ErrorCode, Result};

pub const KEY_FILE: &str = "secret.key";
const KEY_BYTES: usize = 32;
const NONCE_BYTES: usize = 12;
/// Names the format of a sealed string, so a later format can still open this one.
const VERSION: &str = "v1:";

pub struct Sealer {
    key: Key<Aes256Gcm>,
}

// Never print the key, not even in a debug log.
impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer { .. }")
    }
}

impl Sealer {
    /// Reads `<kiln_dir>/secret.key`, creating it on first use. Two first uses at
    /// once end with one key: each writes a complete private temp file and links it
    /// into place, and a link never replaces a key another process already placed.
    pub fn open_or_create(kiln_dir: &Path) -> Result<Sealer> {
        let path = kiln_dir.join(KEY_FILE);
        match read_key(&path) {
            Err(err) if err.kind() == ErrorKind::NotFound => {}
            other => return Ok(Sealer { key: other.map_err(|e| key_error(&path, e))? }),
        }
        std::fs::create_dir_all(kiln_dir)?;
        let mut fresh = [0u8; KEY_BYTES];
        fresh.copy_from_slice(&Aes256Gcm::generate_key(&mut OsRng));
        place_key(kiln_dir, &path, &fresh)?;
        // Whoever won the race, the key on disk is the one to use.
        Ok(Sealer { key: read_key(&path).map_err(|e| key_error(&path, e))? })
    }

    /// `v1:` then base64 of nonce || ciphertext-with-tag.
    pub fn seal(&self, plaintext: &[u8]) -> String {
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let ciphertext = Aes256Gcm::new(&self.key)
            .encrypt(&nonce, plaintext)
            .expect("AES-GCM only refuses plaintexts of more than 64 GiB");
        let mut sealed = nonce.to_vec();
        sealed.extend_from_slice(&ciphertext);
        format!("{VERSION}{}", BASE64.encode(sealed))
    }

    /// The plaintext, or an error when the text was altered or sealed under another
    /// key: GCM's tag makes sure a wrong key never yields garbage.
    pub fn open(&self, sealed: &str) -> Result<Vec<u8>> {
        let unreadable = |why: &str| {
            ApiError::new(
                ErrorCode::SecretUnreadable,
                format!("cannot open a sealed secret: {why}; enter it again in Settings"),
            )
        };
        let body = sealed.strip_prefix(VERSION).ok_or_else(|| unreadable("it is not in the `v1:` format"))?;
        let bytes = BASE64.decode(body).map_err(|_| unreadable("it is not valid base64"))?;
        if bytes.len() < NONCE_BYTES {
            return Err(unreadable("it is too short"));
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_BYTES);
        Aes256Gcm::new(&self.key)
            .decrypt(Nonce::from_slice(nonce), ciphertext)
            .map_err(|_| unreadable("it was altered, or sealed with another workspace's key"))
    }
}

/// What the UI shows instead of a secret: 8 lowercase hex characters of its SHA-256.
pub fn fingerprint(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())[..4].iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads the key, refusing a symbolic link, a file others could read or write, or
/// one of the wrong length. Checks the opened file, not the path, so what is checked
/// is what is read.
fn read_key(path: &Path) -> std::io::Result<Key<Aes256Gcm>> {
    let mut file = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(path)?;
    let meta = file.metadata()?;
    let invalid = |why: String| std::io::Error::new(ErrorKind::InvalidData, why);
    if !meta.is_file() {
        return Err(invalid("it is not a regular file".into()));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & !0o600 != 0 {
        return Err(invalid(format!("its mode is {mode:04o}; it must be 0600 (run `chmod 600` on it)")));
    }
    if meta.len() != KEY_BYTES as u64 {
        return Err(invalid(format!("it holds {} bytes; a key is exactly {KEY_BYTES}", meta.len())));
    }
    let mut key = Key::<Aes256Gcm>::default();
    file.read_exact(&mut key)?;
    Ok(key)
}

fn key_error(path: &Path, err: std::io::Error) -> ApiError {
    let why =
        if err.raw_os_error() == Some(libc::ELOOP) { "it is a symbolic link".to_string() } else { err.to_string() };
    ApiError::internal("secret key", format!("refusing `{}`: {why}", path.display()))
}

/// Writes the key to a private temp file beside `path`, makes it durable, then links
/// it to `path`. A link fails when `path` exists, unlike a rename, so a key already
/// placed by a concurrent first use is kept and this one is dropped.
fn place_key(kiln_dir: &Path, path: &Path, key: &[u8; KEY_BYTES]) -> Result<()> {
    let temp = kiln_dir.join(format!(".{KEY_FILE}.{}-{}.tmp", std::process::id(), uuid::Uuid::new_v4().simple()));
    let placed = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).mode(0o600).open(&temp)?;
        // The umask can only narrow the mode; set it anyway in case it was changed.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        file.write_all(key)?;
        file.sync_all()?;
        match std::fs::hard_link(&temp, path) {
            Err(err) if err.kind() == ErrorKind::AlreadyExists => {}
            other => other?,
        }
        File::open(kiln_dir)?.sync_all()
    })();
    let _ = std::fs::remove_file(&temp);
    placed.map_err(|e| ApiError::internal("secret key", format!("cannot create `{}`: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kiln_dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn round_trip() {
        let dir = kiln_dir();
        let sealer = Sealer::open_or_create(dir.path()).unwrap();
        let sealed = sealer.seal(b"sk-live-123");
        assert!(sealed.starts_with("v1:"));
        assert!(!sealed.contains("sk-live"));
        assert_eq!(sealer.open(&sealed).unwrap(), b"sk-live-123");
        assert_eq!(sealer.open(&sealer.seal(b"")).unwrap(), b"");
        // Opening the workspace again reads the same key.
        assert_eq!(Sealer::open_or_create(dir.path()).unwrap().open(&sealed).unwrap(), b"sk-live-123");
    }

    #[test]
    fn two_seals_of_the_same_text_differ() {
        let dir = kiln_dir();
        let sealer = Sealer::open_or_create(dir.path()).unwrap();
        assert_ne!(sealer.seal(b"same"), sealer.seal(b"same"));
    }

    #[test]
    fn a_tampered_seal_is_an_error() {
        let dir = kiln_dir();
        let sealer = Sealer::open_or_create(dir.path()).unwrap();
        let sealed = sealer.seal(b"token");
        let mut bytes = BASE64.decode(&sealed[3..]).unwrap();
        for at in [0, NONCE_BYTES, bytes.len() - 1] {
            bytes[at] ^= 0x01;
            let tampered = format!("v1:{}", BASE64.encode(&bytes));
            assert_eq!(sealer.open(&tampered).unwrap_err().code, ErrorCode::SecretUnreadable);
            bytes[at] ^= 0x01;
        }
        for bad in ["", "v1:", "v1:!!!", "v2:AAAA", &sealed[3..], &sealed[..sealed.len() - 4]] {
            assert!(sealer.open(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn another_key_cannot_open() {
        let (a, b) = (kiln_dir(), kiln_dir());
        let sealed = Sealer::open_or_create(a.path()).unwrap().seal(b"token");
        assert!(Sealer::open_or_create(b.path()).unwrap().open(&sealed).is_err());
    }

    #[test]
    fn the_key_file_is_private_and_32_bytes() {
        let dir = kiln_dir();
        Sealer::open_or_create(dir.path()).unwrap();
        let meta = std::fs::metadata(dir.path().join(KEY_FILE)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(meta.len(), 32);
        // No temp file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn concurrent_first_uses_end_with_one_key() {
        let dir = kiln_dir();
        let kiln = dir.path().join(".kiln");
        let start = std::sync::Barrier::new(8);
        let sealers: Vec<Sealer> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    scope.spawn(|| {
                        start.wait();
                        Sealer::open_or_create(&kiln).unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for a in &sealers {
            let sealed = a.seal(b"shared");
            for b in &sealers {
                assert_eq!(b.open(&sealed).unwrap(), b"shared");
            }
        }
        assert_eq!(std::fs::read_dir(&kiln).unwrap().count(), 1);
    }

    #[test]
    fn a_key_file_others_can_read_is_refused() {
        let dir = kiln_dir();
        let path = dir.path().join(KEY_FILE);
        std::fs::write(&path, [7u8; 32]).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = Sealer::open_or_create(dir.path()).unwrap_err();
        assert!(err.message.contains("0644"), "{}", err.message);
        // Refused, not replaced.
        assert_eq!(std::fs::read(&path).unwrap(), [7u8; 32]);
    }

    #[test]
    fn a_key_file_of_the_wrong_length_or_a_link_is_refused() {
        let dir = kiln_dir();
        let path = dir.path().join(KEY_FILE);
        std::fs::write(&path, [7u8; 16]).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let err = Sealer::open_or_create(dir.path()).unwrap_err();
        assert!(err.message.contains("16 bytes"), "{}", err.message);

        let other = kiln_dir();
        let target = other.path().join("elsewhere");
        std::fs::write(&target, [7u8; 32]).unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::symlink(&target, other.path().join(KEY_FILE)).unwrap();
        let err = Sealer::open_or_create(other.path()).unwrap_err();
        assert!(err.message.contains("symbolic link"), "{}", err.message);
    }

    #[test]
    fn fingerprints_are_8_lowercase_hex() {
        // SHA-256("abc") = ba7816bf…
        assert_eq!(fingerprint("abc"), "ba7816bf");
        assert_eq!(fingerprint("sk-live-123").len(), 8);
        assert_ne!(fingerprint("a"), fingerprint("b"));
    }
}
