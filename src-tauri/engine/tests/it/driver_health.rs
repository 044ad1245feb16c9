//! A local agent's health in Settings: its version is read from `--version` once per
//! binary (cached until the binary changes), without Kiln's own variables; whether it is
//! signed in is told from the keys in its environment and the credentials file its login
//! writes under its home.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use kiln_engine::testing::drivers::health;

/// A fake CLI that prints `version` and appends a line per run to `runs`, saying whether it
/// saw a `KILN_` variable.
fn fake_cli(dir: &Path, version: &str, runs: &Path) -> std::path::PathBuf {
    let bin = dir.join("claude");
    let script = format!(
        "#!/bin/sh\nif env | grep -q '^KILN_'; then echo kiln-vars >> '{runs}'; else echo clean >> '{runs}'; fi\n[ \"$1\" = --version ] && printf '%s\\nmore\\n' '{version}'\n",
        runs = runs.display()
    );
    std::fs::write(&bin, script).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

fn runs(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(String::from).collect()
}

#[tokio::test]
async fn the_version_is_read_once_per_binary_without_kilns_variables() {
    // KILN_CONFIG_DIR is planted in the test process (common::environment).
    let tmp = tempfile::tempdir().unwrap();
    let count = tmp.path().join("runs");
    let bin = fake_cli(tmp.path(), "2.0.14 (Claude Code)", &count);

    assert_eq!(health::version(&bin).await.as_deref(), Some("2.0.14 (Claude Code)"));
    assert_eq!(health::version(&bin).await.as_deref(), Some("2.0.14 (Claude Code)"));
    assert_eq!(runs(&count), ["clean"], "one run, and without KILN_ variables");

    // A new binary at the same path (another size) is asked again.
    let bin = fake_cli(tmp.path(), "2.1.0 (Claude Code)", &count);
    assert_eq!(health::version(&bin).await.as_deref(), Some("2.1.0 (Claude Code)"));
    assert_eq!(runs(&count).len(), 2);

    // Two reads at once (the dashboard and the composer) start one run.
    let both = tempfile::tempdir().unwrap();
    let count = both.path().join("runs");
    let bin = fake_cli(both.path(), "codex-cli 0.46.0", &count);
    let (a, b) = tokio::join!(health::version(&bin), health::version(&bin));
    assert_eq!((a.as_deref(), b.as_deref()), (Some("codex-cli 0.46.0"), Some("codex-cli 0.46.0")));
    assert_eq!(runs(&count).len(), 1);

    // A long first line is cut to one short line; a binary that fails says nothing.
    let long = tempfile::tempdir().unwrap();
    let bin = fake_cli(long.path(), &"x".repeat(200), &long.path().join("runs"));
    assert_eq!(health::version(&bin).await.map(|v| v.chars().count()), Some(60));
    let failing = tmp.path().join("failing");
    std::fs::write(&failing, "#!/bin/sh\nexit 3\n").unwrap();
    std::fs::set_permissions(&failing, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(health::version(&failing).await, None);
    assert_eq!(health::version(&tmp.path().join("missing")).await, None);
}

#[test]
fn first_lines_are_trimmed() {
    assert_eq!(health::first_line("\n  codex-cli 0.46.0  \nextra").as_deref(), Some("codex-cli 0.46.0"));
    assert_eq!(health::first_line("  \n"), None);
}

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    move |k: &str| map.get(k).cloned()
}

#[test]
fn claude_is_signed_in_by_a_key_or_its_credentials_file() {
    let home = tempfile::tempdir().unwrap();
    // A test double's key, as the browser tests give it, counts.
    assert_eq!(
        health::claude_signed_in(&env_of(&[("ANTHROPIC_API_KEY", "sk-ant-test")]), Some(home.path())),
        Some(true)
    );
    assert_eq!(health::claude_signed_in(&env_of(&[("ANTHROPIC_AUTH_TOKEN", "t")]), Some(home.path())), Some(true));
    // An empty key is no key.
    let nothing = health::claude_signed_in(&env_of(&[("ANTHROPIC_API_KEY", "")]), Some(home.path()));
    if cfg!(target_os = "macos") {
        assert_eq!(nothing, None, "the keychain may hold a login Kiln cannot see");
    } else {
        assert_eq!(nothing, Some(false));
    }
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::fs::write(home.path().join(".claude/.credentials.json"), "{}").unwrap();
    assert_eq!(health::claude_signed_in(&env_of(&[]), Some(home.path())), Some(true));
    // CLAUDE_CONFIG_DIR moves the file.
    let elsewhere = tempfile::tempdir().unwrap();
    let moved = health::claude_signed_in(
        &env_of(&[("CLAUDE_CONFIG_DIR", elsewhere.path().to_str().unwrap())]),
        Some(home.path()),
    );
    assert_eq!(moved, if cfg!(target_os = "macos") { None } else { Some(false) });
}

#[test]
fn codex_is_signed_in_by_a_key_or_its_auth_file() {
    let home = tempfile::tempdir().unwrap();
    assert_eq!(health::codex_signed_in(&env_of(&[("OPENAI_API_KEY", "sk-test")]), Some(home.path())), Some(true));
    assert_eq!(health::codex_signed_in(&env_of(&[("CODEX_API_KEY", "k")]), Some(home.path())), Some(true));
    assert_eq!(health::codex_signed_in(&env_of(&[]), Some(home.path())), Some(false));
    std::fs::create_dir_all(home.path().join(".codex")).unwrap();
    std::fs::write(home.path().join(".codex/auth.json"), "{}").unwrap();
    assert_eq!(health::codex_signed_in(&env_of(&[]), Some(home.path())), Some(true));
    let codex_home = tempfile::tempdir().unwrap();
    assert_eq!(
        health::codex_signed_in(&env_of(&[("CODEX_HOME", codex_home.path().to_str().unwrap())]), Some(home.path())),
        Some(false)
    );
}

#[test]
fn kilns_own_variables_are_not_the_clis() {
    assert_eq!(health::cli_env("KILN_CONFIG_DIR"), None);
}
