//! A real S3-compatible server for the bucket tests: `s3s-fs` (crates.io, installed by
//! `scripts/deps`) on a free loopback port over a temporary root, one directory per
//! bucket. The credentials it takes are the ones `AmazonS3Builder::from_env` reads, set
//! once for the whole test process (`environment`); each bucket URL carries its server's
//! endpoint, so tests with servers of their own run side by side.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The AWS variables every test bucket is reached with (set before main).
pub(crate) const CREDENTIALS: &[(&str, &str)] = &[
    ("AWS_ACCESS_KEY_ID", "kiln-test-access"),
    ("AWS_SECRET_ACCESS_KEY", "kiln-test-secret"),
    ("AWS_REGION", "us-east-1"),
];

pub(crate) struct S3 {
    child: Child,
    root: tempfile::TempDir,
    pub port: u16,
}

/// `s3s-fs` where `cargo install` puts it, else on PATH.
fn binary() -> PathBuf {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cargo"));
    let installed = cargo_home.join("bin/s3s-fs");
    if installed.is_file() {
        installed
    } else {
        PathBuf::from("s3s-fs")
    }
}

/// A loopback port nothing listens on (as the kernel hands one out now).
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl S3 {
    /// Starts the server and waits (20 s at most) until it takes connections.
    pub(crate) fn start() -> S3 {
        let root = tempfile::tempdir().unwrap();
        let port = free_port();
        let child = spawn(root.path(), port);
        let mut s3 = S3 { child, root, port };
        s3.wait_answering();
        s3
    }

    /// Stops the server: the bucket does not answer until `start_again`.
    pub(crate) fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The same server again: the same port, the same objects.
    pub(crate) fn start_again(&mut self) {
        self.child = spawn(self.root.path(), self.port);
        self.wait_answering();
    }

    fn wait_answering(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("s3s-fs exited before answering: {status}");
            }
            assert!(Instant::now() < deadline, "s3s-fs never answered on port {}", self.port);
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// A new bucket, as the URL `--objects` takes (prefix `team`).
    pub(crate) fn bucket(&self, name: &str) -> String {
        std::fs::create_dir_all(self.root.path().join(name)).unwrap();
        format!("s3://{name}/team?endpoint=http://127.0.0.1:{}&allow_http=true", self.port)
    }
}

fn spawn(root: &std::path::Path, port: u16) -> Child {
    Command::new(binary())
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--access-key", CREDENTIALS[0].1, "--secret-key", CREDENTIALS[1].1])
        .arg(root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("s3s-fs runs (scripts/deps installs it)")
}

impl Drop for S3 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
