//! The real `kiln serve` for the hostile-input suite: a fixture workspace (a copy of
//! examples/shop), a private config directory, a UI directory with a file planted
//! beside it, and the binary started on a free loopback port, killed on drop.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_kiln");
/// In a file beside the UI directory: a path traversal through the UI's files finds it.
pub(crate) const UI_NEIGHBOUR_MARKER: &str = "hostile-suite-ui-neighbour-7c1e";
pub(crate) const UI_MARKER: &str = "hostile-suite-ui-index";

pub(crate) struct Fixture {
    pub tmp: tempfile::TempDir,
    /// The workspace root (a copy of examples/shop without its setup command).
    pub workspace: PathBuf,
    pub config: PathBuf,
    pub ui: PathBuf,
    /// A directory outside the workspace that requests must never reach.
    pub outside: PathBuf,
}

pub(crate) fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let workspace = tmp.path().join("shop");
    kiln_test_support::copy_tree(&kiln_test_support::repo_root().join("examples/shop"), &workspace);
    // Setup would run in the background and write to the database mid-test: none at all
    // (an empty command; without the key Kiln would run the detected install step).
    let toml = workspace.join("kiln.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let text: String = text
        .lines()
        .map(|l| if l.trim_start().starts_with("setup") { "setup = \"\"\n".to_string() } else { format!("{l}\n") })
        .collect();
    std::fs::write(&toml, text).unwrap();
    let config = tmp.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    let ui = tmp.path().join("ui");
    std::fs::create_dir_all(&ui).unwrap();
    std::fs::write(ui.join("index.html"), format!("<!doctype html><title>{UI_MARKER}</title>")).unwrap();
    std::fs::write(ui.join(".hidden.txt"), UI_NEIGHBOUR_MARKER).unwrap();
    std::fs::write(tmp.path().join("ui-neighbour.txt"), UI_NEIGHBOUR_MARKER).unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(outside.join("nested")).unwrap();
    std::fs::write(outside.join("keep.txt"), "outside the workspace: must survive\n").unwrap();
    std::fs::write(outside.join("nested/deep.txt"), "deep and outside\n").unwrap();
    Fixture { tmp, workspace, config, ui, outside }
}

/// A running `kiln serve`.
pub(crate) struct Server {
    child: Child,
    pub port: u16,
    /// As printed: `loopback` or `self-hosted`.
    pub mode: String,
    /// The host part of the printed address.
    pub host: String,
    /// A loopback server's own token, from the link it prints.
    pub token: Option<String>,
    /// Everything the server printed so far, stdout and stderr (for leak scans).
    pub output: Arc<Mutex<String>>,
}

impl Server {
    pub(crate) fn start(fx: &Fixture, mode: &str) -> Server {
        Server::start_with(fx, mode, &[])
    }

    /// `start` with more environment (the transport's limits, which tests shorten).
    pub(crate) fn start_with(fx: &Fixture, mode: &str, env: &[(&str, &str)]) -> Server {
        let ws = fx.workspace.display().to_string();
        let ui = fx.ui.display().to_string();
        Server::spawn(&fx.config, &["serve", "--port", "0", "--mode", mode, "--workspace", &ws, "--ui-dir", &ui], env)
            .unwrap_or_else(|e| panic!("`kiln serve --mode {mode}` did not start: {e}"))
    }

    /// Starts `kiln <args>` and waits for its `Kiln is serving …` line (and a loopback
    /// server's link with its token).
    pub(crate) fn spawn(config: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<Server, String> {
        let mut cmd = Command::new(BIN);
        cmd.args(args).env("KILN_CONFIG_DIR", config).env_remove("KILN_MODE").env_remove("KILN_UI_DIR");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        let output = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel::<String>();
        for (stream, is_stdout) in [
            (Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>, true),
            (Box::new(child.stderr.take().unwrap()), false),
        ] {
            let output = output.clone();
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    output.lock().unwrap().push_str(&format!("{line}\n"));
                    if is_stdout {
                        let _ = tx.send(line);
                    }
                }
            });
        }
        drop(tx);
        let ready = regex::Regex::new(r"^Kiln is serving http://(\S+):(\d+)/ \((loopback|self-hosted)\)$").unwrap();
        let link = regex::Regex::new(r"^http://\S+:\d+/\?token=([A-Za-z0-9_-]{43})$").unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let mut serving: Option<(String, u16, String)> = None;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    let token = match (&serving, ready.captures(line.trim()), link.captures(line.trim())) {
                        (None, Some(c), _) => {
                            serving = Some((c[1].to_string(), c[2].parse().unwrap(), c[3].to_string()));
                            None
                        }
                        (Some(_), _, Some(c)) => Some(c[1].to_string()),
                        _ => continue,
                    };
                    let Some((host, port, mode)) = serving.clone() else { continue };
                    if mode == "loopback" && token.is_none() {
                        continue;
                    }
                    return Ok(Server { child, host, port, mode, token, output });
                }
                Err(_) => {
                    let _ = child.kill();
                    let status = child.wait().ok();
                    std::thread::sleep(Duration::from_millis(100));
                    return Err(format!(
                        "no `Kiln is serving …` line (exit {status:?}); output:\n{}",
                        output.lock().unwrap()
                    ));
                }
            }
        }
    }

    pub(crate) fn output(&self) -> String {
        self.output.lock().unwrap().clone()
    }

    /// Sends a signal (`TERM`, `INT`, …) by its name, as `kill -<name>` does.
    pub(crate) fn signal(&self, name: &str) {
        let status =
            Command::new("kill").arg(format!("-{name}")).arg(self.child.id().to_string()).status().expect("run kill");
        assert!(status.success(), "kill -{name} {}: {status}", self.child.id());
    }

    /// Waits until the server exits, at most `within`: its status, or `None` while it runs.
    pub(crate) fn wait_exit(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let deadline = std::time::Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for kiln serve") {
                return Some(status);
            }
            if std::time::Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Kills the server and waits for it (the database is left as a crash leaves it).
    pub(crate) fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `kiln <args>` to the end: (exit code, stdout, stderr). Killed after 30 s.
pub(crate) fn kiln(config: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(BIN);
    cmd.args(args).env("KILN_CONFIG_DIR", config).env_remove("KILN_MODE").stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `kiln token create`: the token, checked for its format.
pub(crate) fn create_token(config: &Path, name: &str, expires: Option<&str>) -> String {
    let mut args = vec!["token", "create", "--name", name];
    if let Some(e) = expires {
        args.extend(["--expires", e]);
    }
    let (code, out, err) = kiln(config, &args, &[]);
    assert_eq!(code, 0, "kiln token create failed: {err}");
    let token = out.trim().to_string();
    assert!(
        regex::Regex::new(r"^kiln_[A-Za-z0-9_-]{43}$").unwrap().is_match(&token),
        "`kiln token create` printed {out:?}, not a token alone on one line"
    );
    token
}

/// The id `kiln token list` shows for the token named `name`.
pub(crate) fn token_id(config: &Path, name: &str) -> String {
    let (code, out, err) = kiln(config, &["token", "list"], &[]);
    assert_eq!(code, 0, "kiln token list failed: {err}");
    out.lines()
        .find_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            (cols.get(1) == Some(&name)).then(|| cols[0].to_string())
        })
        .unwrap_or_else(|| panic!("no token named {name} in `kiln token list`:\n{out}"))
}
