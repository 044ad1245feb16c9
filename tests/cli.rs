//! The `kiln session` command line: lists sessions, and archives or deletes one only
//! with `--apply` (a dry run otherwise), and so cleans up archived sessions' working
//! copies; refusals exit non-zero with their code. `kiln health` says how commands are
//! supervised.

use std::process::Command;

use kiln_engine::types::*;
use kiln_engine::Engine;

fn kiln(config: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kiln")).args(args).env("KILN_CONFIG_DIR", config).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn session_commands_are_dry_runs_unless_applied() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("app");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("package.json"), r#"{"name":"app"}"#).unwrap();
    let config = tmp.path().join("config");
    let engine = Engine::new(kiln_test_support::options(&config, Transport::Serve));
    engine.open_workspace(OpenWorkspaceArgs { path: root.display().to_string() }).await.unwrap();
    let s = engine
        .create_session(CreateSessionArgs {
            brief: "Speed up the app".into(),
            title: None,
            create_modules: None,
            issue: None,
        })
        .await
        .unwrap();
    drop(engine);
    let ws = root.display().to_string();

    // One process works on a workspace at a time: the dropped engine's lock goes when the
    // last of its work (the session's setup, run in the background) has ended.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let (ok, out, err) = loop {
        let (ok, out, err) = kiln(&config, &["session", "--workspace", &ws, "list"]);
        if !err.contains("WORKSPACE_IN_USE") {
            break (ok, out, err);
        }
        assert!(std::time::Instant::now() < deadline, "the engine never let the workspace go: {err}");
        // Asleep on the runtime, not the thread: the setup's task runs on this runtime.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert!(ok && out.contains(&s.id) && out.contains("Speed up the app"), "{out}{err}");

    // Deliver: the plan, and nothing runs without --apply; a reason goes past gates only.
    let (ok, out, _) = kiln(&config, &["session", "--workspace", &ws, "deliver", &s.id]);
    assert!(ok && out.contains(&format!("Delivery of {}", s.id)) && out.contains("blocker: "), "{out}");
    assert!(out.contains("Run again with --apply"), "{out}");
    let args = ["session", "--workspace", &ws, "deliver", &s.id, "--anyway", "it is urgent", "--apply"];
    let (ok, _, err) = kiln(&config, &args);
    assert!(!ok && err.contains("[DELIVERY_BLOCKED]") && err.contains("not gates"), "{err}");
    let (ok, _, err) = kiln(&config, &["session", "--workspace", &ws, "deliver", &s.id, "--target", "nope"]);
    assert!(!ok && err.contains("[INVALID_INPUT]"), "{err}");

    let (ok, out, _) = kiln(&config, &["session", "--workspace", &ws, "archive", &s.id]);
    assert!(ok && out.starts_with("Would archive"), "{out}");
    let (_, out, _) = kiln(&config, &["session", "--workspace", &ws, "list"]);
    assert!(out.contains(&s.id), "a dry run archived the session: {out}");

    let (ok, out, _) = kiln(&config, &["session", "--workspace", &ws, "archive", &s.id, "--apply"]);
    assert!(ok && out.starts_with("Archived"), "{out}");
    let (_, out, _) = kiln(&config, &["session", "--workspace", &ws, "list"]);
    assert!(!out.contains(&s.id), "{out}");
    let (_, out, _) = kiln(&config, &["session", "--workspace", &ws, "list", "--all"]);
    assert!(out.contains("(archived)"), "{out}");

    // Clean-up lists the archived session's working copy, and removes it only when applied.
    let copy = root.join(".kiln/sessions").join(&s.id).join("workspace");
    let (ok, out, _) = kiln(&config, &["session", "--workspace", &ws, "clean-up"]);
    assert!(ok && out.starts_with("Would remove the working copy of") && out.contains(&s.id), "{out}");
    assert!(out.contains("Run again with --apply") && copy.is_dir(), "{out}");
    let (ok, out, _) = kiln(&config, &["session", "--workspace", &ws, "clean-up", "--apply"]);
    assert!(ok && out.starts_with("Removed the working copy of") && out.contains("Freed "), "{out}");
    assert!(!copy.exists(), "{out}");
    let (ok, out, _) = kiln(&config, &["session", "--workspace", &ws, "clean-up"]);
    assert!(ok && out.starts_with("No archived or rejected session has a working copy"), "{out}");

    let workdir = root.join(".kiln/sessions").join(&s.id);
    let (ok, out, _) = kiln(&config, &["session", "--workspace", &ws, "delete", &s.id]);
    assert!(ok && out.starts_with("Would delete") && workdir.exists(), "{out}");
    let (ok, _, _) = kiln(&config, &["session", "--workspace", &ws, "delete", &s.id, "--apply"]);
    assert!(ok && !workdir.exists());

    let (ok, _, err) = kiln(&config, &["session", "--workspace", &ws, "delete", "../etc", "--apply"]);
    assert!(!ok && err.contains("INVALID_SESSION_ID"), "{err}");
    let (ok, _, err) = kiln(&config, &["session", "--workspace", &ws, "archive", &s.id, "--apply"]);
    assert!(!ok && err.contains("SESSION_DELETED"), "{err}");
}

/// No secret on a command line (issue 32, finding 3): every process on the machine reads
/// `/proc/<pid>/cmdline`, so a database or bucket URL with a password is refused there,
/// with exit code 2 and the ways that keep it off (the variable, a password file); the
/// refusal itself never prints the password. The same URL in the environment is taken.
#[test]
fn a_password_on_the_command_line_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("config");
    let url = "postgres://kiln:hunter2@127.0.0.1:1/team";
    for args in [
        vec!["serve", "--check", "--database", url],
        vec!["serve", "--check", &format!("--database={url}")],
        vec!["token", "list", "--database", url],
        vec!["serve", "--check", "--objects", "s3://key:hunter2@bucket/kiln"],
    ] {
        let out =
            Command::new(env!("CARGO_BIN_EXE_kiln")).args(&args).env("KILN_CONFIG_DIR", &config).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("command line") && stderr.contains("_URL"), "{args:?}: {stderr}");
        assert!(!stderr.contains("hunter2"), "{args:?} printed the password: {stderr}");
    }
    // From the environment, or with the password in a file, the URL gets past the command
    // line (and then fails to connect, on a port where nothing listens), never printed.
    let secret = tmp.path().join("db-password");
    std::fs::write(&secret, "hunter2\n").unwrap();
    for (args, env) in [
        (vec!["token", "list"], Some(url)),
        (
            vec![
                "token",
                "list",
                "--database",
                "postgres://kiln@127.0.0.1:1/team",
                "--database-password-file",
                secret.to_str().unwrap(),
            ],
            None,
        ),
    ] {
        let mut command = Command::new(env!("CARGO_BIN_EXE_kiln"));
        command.args(&args).env("KILN_CONFIG_DIR", &config).env_remove("KILN_DATABASE_URL");
        if let Some(url) = env {
            command.env("KILN_DATABASE_URL", url);
        }
        let out = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(!stderr.contains("command line"), "{args:?}: {stderr}");
        assert!(!stderr.contains("hunter2"), "{args:?} printed the password: {stderr}");
    }
}

/// `kiln health` says how commands are supervised here: on a kernel that lists children (as
/// Linux with `/proc` does), each under a reaper of its own.
#[test]
fn health_says_how_commands_are_supervised() {
    let tmp = tempfile::tempdir().unwrap();
    let (ok, out, err) = kiln(tmp.path(), &["health"]);
    assert!(ok, "{err}");
    let line = out.lines().find(|l| l.starts_with("processes: ")).unwrap_or_else(|| panic!("no processes line: {out}"));
    let listed = std::path::Path::new("/proc/thread-self/children").exists();
    assert_eq!(line.contains("a reaper of its own"), listed, "{line}");
}
