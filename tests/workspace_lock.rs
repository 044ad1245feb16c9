//! One engine per workspace, across processes: two real `kiln serve` started at the same
//! moment on one fresh workspace. Exactly one serves; the other exits non-zero with
//! `WORKSPACE_IN_USE` naming the first one's pid, never with a half-run migration, and the
//! database is whole afterwards.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A started `kiln serve` and everything it printed so far (stdout and stderr).
struct Started {
    child: Child,
    output: Arc<Mutex<String>>,
}

impl Started {
    fn spawn(config: &Path, workspace: &Path, ui: &Path) -> Started {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kiln"))
            .args(["serve", "--port", "0", "--mode", "loopback", "--workspace"])
            .arg(workspace)
            .arg("--ui-dir")
            .arg(ui)
            .env("KILN_CONFIG_DIR", config)
            .env_remove("KILN_MODE")
            .env_remove("KILN_UI_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let output = Arc::new(Mutex::new(String::new()));
        let streams: [Box<dyn Read + Send>; 2] =
            [Box::new(child.stdout.take().unwrap()), Box::new(child.stderr.take().unwrap())];
        for stream in streams {
            let output = output.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    output.lock().unwrap().push_str(&format!("{line}\n"));
                }
            });
        }
        Started { child, output }
    }

    fn output(&self) -> String {
        self.output.lock().unwrap().clone()
    }

    /// The port of its `Kiln is serving http://127.0.0.1:PORT/` line, once printed.
    fn serving_port(&self) -> Option<u16> {
        let output = self.output();
        let line = output.lines().find(|l| l.starts_with("Kiln is serving http://127.0.0.1:"))?;
        line.trim_start_matches("Kiln is serving http://127.0.0.1:").split('/').next()?.parse().ok()
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET /` on the server, as a browser on this machine would send it.
fn get_root(port: u16) -> String {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(stream, "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

#[test]
fn two_servers_started_together_on_a_fresh_workspace_one_serves_the_other_names_it() {
    let tmp = tempfile::tempdir().unwrap();
    let workspace = tmp.path().join("app");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("package.json"), r#"{"name":"app"}"#).unwrap();
    let ui = tmp.path().join("ui");
    std::fs::create_dir_all(&ui).unwrap();
    std::fs::write(ui.join("index.html"), "<!doctype html><title>kiln</title>").unwrap();
    // One user, one config directory: the access store is fresh for both as well.
    let config = tmp.path().join("config");

    let mut servers = [Started::spawn(&config, &workspace, &ui), Started::spawn(&config, &workspace, &ui)];

    // Until one has said it serves and the other has exited (or the deadline passes).
    let deadline = Instant::now() + Duration::from_secs(60);
    let (winner, loser, status) = loop {
        let exited: Vec<_> = servers.iter_mut().map(|s| s.child.try_wait().unwrap()).collect();
        let serving: Vec<_> = servers.iter().map(|s| s.serving_port().is_some()).collect();
        match (exited[0], exited[1], serving[0], serving[1]) {
            (None, Some(status), true, _) => break (0, 1, status),
            (Some(status), None, _, true) => break (1, 0, status),
            (None, None, true, true) => panic!(
                "both servers serve one workspace:\n--- first ---\n{}\n--- second ---\n{}",
                servers[0].output(),
                servers[1].output()
            ),
            _ => {}
        }
        assert!(
            Instant::now() < deadline,
            "expected one server serving and the other gone; they printed:\n--- first ---\n{}\n--- second ---\n{}",
            servers[0].output(),
            servers[1].output()
        );
        std::thread::sleep(Duration::from_millis(50));
    };

    let holder = servers[winner].child.id();
    let refusal = servers[loser].output();
    assert!(!status.success(), "the second server exits non-zero: {refusal}");
    assert!(refusal.contains("WORKSPACE_IN_USE"), "{refusal}");
    assert!(
        refusal.contains(&format!("`kiln serve` (pid {holder}")),
        "the refusal names the holder's pid {holder}: {refusal}"
    );
    assert!(!refusal.contains("INTERNAL") && !refusal.contains("migration"), "{refusal}");
    assert!(servers[loser].serving_port().is_none(), "{refusal}");

    // The one left serves.
    let port = servers[winner].serving_port().unwrap();
    let answer = get_root(port);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(servers[winner].child.try_wait().unwrap().is_none(), "{}", servers[winner].output());

    // Stopped, the records it left are whole and fully migrated.
    let _ = servers[winner].child.kill();
    let _ = servers[winner].child.wait();
    let db = workspace.join(".kiln/kiln.db");
    let migrations =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("src-tauri/records/migrations")).unwrap().count();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (integrity, applied) = runtime.block_on(async {
        use sqlx::Connection;
        let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display())).await.unwrap();
        let integrity: String = sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&mut conn).await.unwrap();
        let applied: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations WHERE success")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        (integrity, applied)
    });
    assert_eq!(integrity, "ok");
    assert_eq!(applied as usize, migrations, "every migration applied once");
}
