//! A loopback server's own token. Loopback is not a trust boundary: every program on the
//! machine reaches 127.0.0.1, the commands Kiln runs for agents among them. So a loopback
//! `kiln serve` makes a random 256-bit token when it starts, prints it once as a link
//! (`http://127.0.0.1:<port>/?token=…`, which the page trades for its cookie), and writes it to
//! `loopback-<port>.token` in Kiln's config directory, readable by the user only, so the user's
//! own scripts can connect (`POST /api/connect {"token": …}`). The config directory is hidden
//! from every command Kiln runs (`kiln_runtime::sandbox::hidden`), and the token is in no
//! environment and on no command line, so those commands never see it. The file goes when the
//! server stops; a new start makes a new token.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use aes_gcm::aead::rand_core::RngCore;
use aes_gcm::aead::OsRng;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as BASE64URL;
use base64::Engine as _;
use sha2::{Digest, Sha256};

pub struct ServerToken {
    secret: String,
    /// The file holding it, removed on drop.
    file: Option<PathBuf>,
}

impl ServerToken {
    /// A fresh token, not yet written anywhere.
    pub fn new() -> ServerToken {
        let mut bytes = [0u8; 32];
        OsRng.fill_bytes(&mut bytes);
        ServerToken { secret: BASE64URL.encode(bytes), file: None }
    }

    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// The file the token was written to, once it was.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The link that connects a browser: the token rides in the query, and the page takes
    /// it out of the address bar as soon as it has read it.
    pub fn link(&self, base: &str) -> String {
        format!("{base}?token={}", self.secret)
    }

    /// Writes the token to `<config_dir>/loopback-<port>.token`, mode 0600. A file left by a
    /// server on the same port that did not stop cleanly is replaced, never written through:
    /// the new file is created exclusively, so a link planted in its place is not followed.
    pub fn write(&mut self, config_dir: &Path, port: u16) -> std::io::Result<&Path> {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(config_dir)?;
        let file = config_dir.join(format!("loopback-{port}.token"));
        write_private(&file, format!("{}\n", self.secret).as_bytes())?;
        Ok(self.file.insert(file))
    }

    /// Whether `token` is this server's token. Compared as digests, so the time taken says
    /// nothing about how much of a guess was right.
    pub fn matches(&self, token: &str) -> bool {
        let (a, b) = (Sha256::digest(self.secret.as_bytes()), Sha256::digest(token.trim().as_bytes()));
        a.iter().zip(b.iter()).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
    }
}

/// Writes `bytes` as `file`, mode 0600, replacing whatever stood there: the old file is
/// removed and the new one created exclusively, so a link planted in its place is never
/// written through. For the server's token and `kiln serve --open`'s redirect beside it.
pub fn write_private(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    match std::fs::remove_file(file) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(file)?;
    out.write_all(bytes)?;
    out.sync_all()
}

impl Default for ServerToken {
    fn default() -> Self {
        ServerToken::new()
    }
}

impl Drop for ServerToken {
    fn drop(&mut self) {
        if let Some(file) = &self.file {
            let _ = std::fs::remove_file(file);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_token_file_is_the_users_alone_and_goes_with_the_server() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("kiln");
        let mut token = ServerToken::new();
        assert!(token.matches(token.secret()) && !token.matches("kiln_guess") && !token.matches(""));
        assert_eq!(token.secret().len(), 43);
        let file = token.write(&config, 4320).unwrap().to_path_buf();
        assert_eq!(file, config.join("loopback-4320.token"));
        assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), token.secret());
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(&config).unwrap().permissions().mode() & 0o777, 0o700);
        // A second server on the port (the first one killed) replaces the file with its own.
        let mut again = ServerToken::new();
        again.write(&config, 4320).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), again.secret());
        assert_ne!(again.secret(), token.secret());
        std::mem::forget(token);
        drop(again);
        assert!(!file.exists(), "the file goes when the server stops");
    }

    #[test]
    fn a_link_in_place_of_the_file_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join("loopback-9.token")).unwrap();
        let mut token = ServerToken::new();
        token.write(dir.path(), 9).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(!std::fs::symlink_metadata(dir.path().join("loopback-9.token")).unwrap().is_symlink());
    }
}
