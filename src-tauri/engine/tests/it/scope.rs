//! The scope of the commands Kiln runs on code an agent may have written (setup, gates,
//! the tool loop's `run_command`, the preview): with the real kernel, each sees only the
//! allowlisted environment (no `KILN_*` variable, no operator secret) and the session's
//! own home and temporary directory; a write outside the working copy, into `/tmp` or
//! into Kiln's config directory is refused, and so is reading Kiln's config directory or
//! the workspace's `.kiln` (its database, the other sessions). Then the self-hosted
//! switch: a server not started with `--allow-agent-commands` gives agents no
//! `run_command` at all.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use kiln_engine::testing::drivers::events::ToolStatus;
use kiln_engine::testing::drivers::tools::{Toolbox, NO_COMMANDS};
use kiln_engine::testing::sandbox;
use kiln_engine::types::*;
use kiln_engine::{Engine, EngineOptions};
use serde_json::json;

const TIMEOUT: Duration = Duration::from_secs(60);

fn landlock_here() {
    assert!(
        std::env::var_os(sandbox::DISABLE_ENV).is_none(),
        "unset {}: these tests check the confinement",
        sandbox::DISABLE_ENV
    );
    sandbox::kernel_abi().expect("this kernel has no Landlock: the confinement cannot be tested here");
}

fn unique(name: &str) -> String {
    format!("{name}-{}", uuid::Uuid::new_v4().simple())
}

/// The shop with `setup` as its setup step and `tests` as the catalog's test gate.
async fn shop_with(tmp: &Path, setup: &str, tests: &str) -> (Arc<Engine>, PathBuf) {
    let shop = shop_copy(tmp);
    let toml = shop.join("kiln.toml");
    let quoted = |s: &str| toml::Value::String(s.into()).to_string();
    let text = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("setup = \"npm ci --offline --no-audit --no-fund\"", &format!("setup = {}", quoted(setup)))
        .replace("tests = \"npm test\"", &format!("dependencies = \"\"\ntests = {}", quoted(tests)));
    std::fs::write(toml, text).unwrap();
    let engine = engine(&tmp.join("config"));
    open(&engine, &shop).await;
    (engine, shop)
}

/// A config directory holding an access store, as `kiln serve` leaves it.
fn config_with_tokens(dir: &Path) -> PathBuf {
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("access.db"), "tokens").unwrap();
    config
}

/// A shell line that tries every way out, printing a marker for each that worked (spelt
/// with quotes inside, so a transcript showing the command line does not show them).
fn escape_attempts(outside: &Path, tmp_file: &Path, config: &Path, kiln: &Path) -> String {
    format!(
        "head -c 16 '{k}/kiln.db' 2>/dev/null && echo READ\"\"-DATABASE; \
         cat '{c}/access.db' 2>/dev/null && echo READ\"\"-CONFIG; \
         ls '{k}/sessions' 2>/dev/null && echo LISTED\"\"-SESSIONS; \
         echo x > '{o}/escaped.txt' 2>/dev/null && echo WROTE\"\"-OUTSIDE; \
         echo x > '{t}' 2>/dev/null && echo WROTE\"\"-TMP; \
         echo x > '{c}/minted' 2>/dev/null && echo WROTE\"\"-CONFIG; \
         echo x > \"$TMPDIR/own\" && echo OWN\"\"-TMP-OK; \
         echo x > \"$HOME/.profile\" && echo OWN\"\"-HOME-OK; \
         echo \"HOME=$HOME\"; echo \"CONFIG=${{KILN_CONFIG_DIR:-unset}}\"; echo \"SECRET=${{KILN_SCOPE_TEST_SECRET:-unset}}\"",
        o = outside.display(),
        t = tmp_file.display(),
        c = config.display(),
        k = kiln.display()
    )
}

/// What every scoped command must show.
fn assert_scoped(output: &str, session_dir: &Path, outside: &Path, tmp_file: &Path) {
    for marker in ["READ-DATABASE", "READ-CONFIG", "LISTED-SESSIONS", "WROTE-OUTSIDE", "WROTE-TMP", "WROTE-CONFIG"] {
        assert!(!output.contains(marker), "{marker}: {output}");
    }
    // KILN_CONFIG_DIR and KILN_SCOPE_TEST_SECRET are planted in the test process
    // (common::environment).
    for marker in ["OWN-TMP-OK", "OWN-HOME-OK", "CONFIG=unset", "SECRET=unset"] {
        assert!(output.contains(marker), "{marker}: {output}");
    }
    assert!(output.contains(&format!("HOME={}", session_dir.join("home").display())), "the session's home: {output}");
    assert!(!outside.join("escaped.txt").exists() && !tmp_file.exists(), "nothing written outside");
}

/// Gates run the agent's code (finding: a turn that may only write tests got its test
/// run as the user): scoped, they cannot write outside the working copy.
#[tokio::test]
async fn a_gate_runs_the_agents_code_scoped() {
    landlock_here();
    let tmp = tempfile::tempdir().unwrap();
    let outside = unwritable_temp("outside-");
    let tmp_file = PathBuf::from("/tmp").join(unique("kiln-gate"));
    let config = config_with_tokens(tmp.path());
    let kiln = tmp.path().join("shop/.kiln");
    let (engine, shop) = shop_with(tmp.path(), "", &escape_attempts(outside.path(), &tmp_file, &config, &kiln)).await;
    let s = create(&engine, "Gates in @shop/catalog").await;
    let results = engine.check_modules(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    let tests = results.iter().find(|r| r.gate == "tests").expect("a tests gate");
    let _ = std::fs::remove_file(&tmp_file);
    assert_eq!(tests.status, GateStatus::Passed, "{}", tests.output_head);
    assert_scoped(&tests.output_head, &shop.join(".kiln/sessions").join(&s.id), outside.path(), &tmp_file);
    assert!(!config.join("minted").exists(), "Kiln's config directory is not writable");
}

/// Setup runs the repository's install scripts: scoped the same way.
#[tokio::test]
async fn setup_runs_scoped() {
    landlock_here();
    let tmp = tempfile::tempdir().unwrap();
    let outside = unwritable_temp("outside-");
    let tmp_file = PathBuf::from("/tmp").join(unique("kiln-setup"));
    let config = config_with_tokens(tmp.path());
    let kiln = tmp.path().join("shop/.kiln");
    let (engine, shop) =
        shop_with(tmp.path(), &escape_attempts(outside.path(), &tmp_file, &config, &kiln), "true").await;
    let s = create(&engine, "Setup in @shop/catalog").await;
    let s = wait_setup(&engine, &s.id).await;
    let _ = std::fs::remove_file(&tmp_file);
    assert_eq!(s.setup, SetupState::Passed, "{s:#?}");
    let entries = engine
        .get_transcript(GetTranscriptArgs { session_id: s.id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    let output: String = entries.iter().map(|e| e.text.clone()).collect::<Vec<_>>().join("\n");
    assert_scoped(&output, &shop.join(".kiln/sessions").join(&s.id), outside.path(), &tmp_file);
    assert!(!config.join("minted").exists());
}

/// The tool loop's `run_command`: the reproduction of the self-hosted escalation. The
/// model's command finds neither Kiln's config directory (nor could write it) nor the
/// operator's secrets.
#[tokio::test]
async fn run_command_sees_no_kiln_state_and_cannot_reach_it() {
    landlock_here();
    let tmp = tempfile::tempdir().unwrap();
    let kiln = tmp.path().join("ws/.kiln");
    let session = kiln.join("sessions/one");
    let workdir = session.join("workspace");
    std::fs::create_dir_all(&workdir).unwrap();
    std::fs::create_dir_all(kiln.join("sessions/two")).unwrap();
    std::fs::write(kiln.join("kiln.db"), "SQLite format 3").unwrap();
    let outside = unwritable_temp("outside-");
    let tmp_file = PathBuf::from("/tmp").join(unique("kiln-tool"));
    let config = config_with_tokens(tmp.path());
    // As the engine does on opening a workspace.
    sandbox::hidden::hide(&config);
    sandbox::hidden::hide(&kiln);
    let toolbox = Toolbox::new(&workdir, &session, false, TIMEOUT).unwrap();
    let line = escape_attempts(outside.path(), &tmp_file, &config, &kiln);
    let ran = toolbox.run("run_command", &json!({ "command": format!("{line}; env") })).await;
    let _ = std::fs::remove_file(&tmp_file);
    assert_eq!(ran.status, ToolStatus::Completed, "{}", ran.output);
    assert_scoped(&ran.output, &session, outside.path(), &tmp_file);
    assert!(!ran.output.contains("do-not-leak") && !ran.output.contains("KILN_"), "{}", ran.output);
    assert!(!config.join("minted").exists());
    // The working copy stays the command's to change.
    let wrote = toolbox.run("run_command", &json!({ "command": "echo made > made.txt" })).await;
    assert_eq!(wrote.status, ToolStatus::Completed, "{}", wrote.output);
    assert_eq!(std::fs::read_to_string(workdir.join("made.txt")).unwrap(), "made\n");
}

fn self_hosted(config: &Path, allow_agent_commands: bool) -> Arc<Engine> {
    Arc::new(Engine::new(EngineOptions {
        mode: ServeMode::SelfHosted,
        allow_agent_commands,
        ..kiln_test_support::options(config, Transport::Serve)
    }))
}

/// A self-hosted server gives agents commands only when its operator said so: without
/// `--allow-agent-commands` the policy is "no commands", asking for more is refused,
/// and the tool loop offers no `run_command`.
#[tokio::test]
async fn a_self_hosted_server_runs_no_agent_commands_unless_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    let shop = shop_copy(tmp.path());

    let engine = self_hosted(&tmp.path().join("config"), false);
    open(&engine, &shop).await;
    assert_eq!(engine.get_settings(EmptyArgs {}).await.unwrap().command_policy, CommandPolicy::None);
    let args: UpdateSettingsArgs = serde_json::from_value(json!({ "commandPolicy": "workdir" })).unwrap();
    let refused = engine.update_settings(args).await.unwrap_err();
    assert_eq!(refused.code, kiln_engine::ErrorCode::NotAllowedInMode);
    assert!(refused.message.contains("--allow-agent-commands"), "{}", refused.message);
    let ws = engine.workspace().unwrap();
    let policy = kiln_engine::testing::settings::command_policy(&ws).await.unwrap();
    let toolbox = Toolbox::new(&shop, &tmp.path().join("session"), false, TIMEOUT).unwrap().with_commands(policy);
    let ran = toolbox.run("run_command", &json!({ "command": "echo ran > ran.txt" })).await;
    assert_eq!((ran.status, ran.output.as_str()), (ToolStatus::Failed, NO_COMMANDS));
    assert!(!shop.join("ran.txt").exists());
    drop((ws, engine));

    let allowed = self_hosted(&tmp.path().join("config"), true);
    open(&allowed, &shop).await;
    assert_eq!(allowed.get_settings(EmptyArgs {}).await.unwrap().command_policy, CommandPolicy::Workdir);
}

/// The preview server is the agent's code too: scoped like the rest, it prints what it
/// could reach into its log, then serves.
#[tokio::test]
async fn the_preview_runs_scoped() {
    landlock_here();
    let tmp = tempfile::tempdir().unwrap();
    let outside = unwritable_temp("outside-");
    let tmp_file = PathBuf::from("/tmp").join(unique("kiln-preview"));
    let config = config_with_tokens(tmp.path());
    let root = tmp.path().join("app");
    let kiln = root.join(".kiln");
    std::fs::create_dir_all(root.join("modules/web")).unwrap();
    std::fs::write(root.join("package.json"), r#"{"name":"app","private":true,"workspaces":["modules/*"]}"#).unwrap();
    std::fs::write(root.join("modules/web/package.json"), r#"{"name":"web","version":"1.0.0"}"#).unwrap();
    std::fs::write(
        root.join("kiln.toml"),
        "[modules]\nglobs = [\"modules/*\"]\n\n[preview]\ncommand = \"sh preview.sh\"\n",
    )
    .unwrap();
    let serve =
        "exec node -e \"require('http').createServer((q,s)=>s.end('ok')).listen(process.env.PORT,'127.0.0.1')\"";
    std::fs::write(
        root.join("preview.sh"),
        format!("{}\n{serve}\n", escape_attempts(outside.path(), &tmp_file, &config, &kiln)),
    )
    .unwrap();
    let engine = engine(&config);
    open(&engine, &root).await;
    let s = create(&engine, "Preview web").await;
    wait_setup(&engine, &s.id).await;
    engine.start_preview(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    let deadline = std::time::Instant::now() + TIMEOUT;
    let view = loop {
        let view = engine.get_preview(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
        if view.state == PreviewState::Ready {
            break view;
        }
        assert!(
            std::time::Instant::now() < deadline && view.state != PreviewState::Crashed,
            "the preview never became ready: {view:#?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    engine.stop_preview(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    let _ = std::fs::remove_file(&tmp_file);
    assert_scoped(&view.log.join("\n"), &kiln.join("sessions").join(&s.id), outside.path(), &tmp_file);
    assert!(!config.join("minted").exists());
}

/// A command working in a directory inside a hidden one (git-pr's worktree in
/// `.kiln/worktrees`) still reads and writes its own directory, and nothing else there.
#[tokio::test]
async fn a_command_working_inside_kilns_state_sees_its_own_directory_only() {
    landlock_here();
    let tmp = tempfile::tempdir().unwrap();
    let kiln = tmp.path().join("repo/.kiln");
    let worktree = kiln.join("worktrees/one");
    let session = kiln.join("sessions/one");
    std::fs::create_dir_all(&worktree).unwrap();
    std::fs::create_dir_all(&session).unwrap();
    std::fs::write(worktree.join("package.json"), "{}").unwrap();
    std::fs::write(kiln.join("kiln.db"), "SQLite format 3").unwrap();
    sandbox::hidden::hide(&kiln);
    let scope = sandbox::Scope::new(&session, &[&worktree], &[], &[], &Default::default()).unwrap();
    let line = "cat package.json && echo made > made.txt && cat made.txt; cat ../../kiln.db 2>/dev/null && echo READ\"\"-DATABASE";
    let out = kiln_engine::testing::process::run_scoped(line, &worktree, &scope, TIMEOUT, |_| {}).await.unwrap();
    assert!(out.head.contains("{}") && out.head.contains("made"), "{out:?}");
    assert!(!out.head.contains("READ-DATABASE"), "{out:?}");
}

/// The agent CLIs (and every command they start) read what the user can, but not Kiln's own
/// state: the access store, a loopback server's token, the database and the other sessions.
/// Their own working copy, inside `.kiln`, stays theirs.
#[test]
fn an_agent_cli_cannot_read_kilns_state() {
    landlock_here();
    // Not under /tmp, which an agent may write and so read whole (as the config directory
    // and a workspace usually are not).
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let kiln = tmp.path().join("ws/.kiln");
    let workdir = kiln.join("sessions/one/workspace");
    std::fs::create_dir_all(&workdir).unwrap();
    std::fs::create_dir_all(kiln.join("sessions/two")).unwrap();
    std::fs::write(kiln.join("kiln.db"), "SQLite format 3").unwrap();
    std::fs::write(workdir.join("own.txt"), "mine").unwrap();
    let config = config_with_tokens(tmp.path());
    std::fs::write(config.join("loopback-4320.token"), "the-server-token").unwrap();
    sandbox::hidden::hide(&config);
    sandbox::hidden::hide(&kiln);
    let (c, k) = (config.display(), kiln.display());
    let line = format!(
        "cat '{c}/access.db' && echo READ\"\"-ACCESS; cat '{c}/loopback-4320.token' && echo READ\"\"-TOKEN; \
         cat '{k}/kiln.db' && echo READ\"\"-DB; ls '{k}/sessions/two' && echo LISTED\"\"-OTHER; \
         cat own.txt && echo READ\"\"-OWN; ls . >/dev/null && echo LISTED\"\"-OWN"
    );
    let prepared = sandbox::Confinement::for_turn(&workdir, false, &[]).prepare().unwrap();
    let mut command = std::process::Command::new("sh");
    command.arg("-c").arg(&line).current_dir(&workdir);
    prepared.apply(&mut command);
    let out = command.output().unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("READ-OWN") && printed.contains("LISTED-OWN"), "{printed}");
    for marker in ["READ-ACCESS", "READ-TOKEN", "READ-DB", "LISTED-OTHER"] {
        assert!(!printed.contains(marker), "{marker}: {printed}");
    }
    assert!(!printed.contains("the-server-token") && !printed.contains("tokens"), "{printed}");
}

/// A confined command (an agent CLI's, or one Kiln runs) cannot signal a process outside its
/// domain, Kiln among them, nor connect to an abstract UNIX socket made outside it (where a
/// D-Bus or X11 server may listen); its own children it can still signal.
#[test]
fn a_confined_command_cannot_signal_kiln_or_reach_an_abstract_socket() {
    use std::os::linux::net::SocketAddrExt;
    landlock_here();
    if sandbox::kernel_abi().unwrap_or(0) < 6 {
        eprintln!("skipped: Landlock ABI {:?} has no scopes", sandbox::kernel_abi());
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let name = unique("kiln-abstract");
    let address = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = std::os::unix::net::UnixListener::bind_addr(&address).unwrap();
    let line = format!(
        "kill -0 {kiln} 2>/dev/null && echo SIGNALLED\"\"-KILN; \
         sleep 30 & child=$!; kill $child && echo SIGNALLED\"\"-OWN; \
         python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"\\0{name}\"); print(\"REACHED\" + \"-SOCKET\")' \
           2>/dev/null || echo REFUSED\"\"-SOCKET",
        kiln = std::process::id()
    );
    let prepared = sandbox::Confinement::for_turn(tmp.path(), false, &[]).prepare().unwrap();
    let mut command = std::process::Command::new("sh");
    command.arg("-c").arg(&line).current_dir(tmp.path());
    prepared.apply(&mut command);
    let out = command.output().unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("SIGNALLED-OWN") && printed.contains("REFUSED-SOCKET"), "{printed}");
    assert!(!printed.contains("SIGNALLED-KILN") && !printed.contains("REACHED-SOCKET"), "{printed}");
    // Unconfined, the same socket answers: the refusal was the domain's.
    assert!(std::os::unix::net::UnixStream::connect_addr(&address).is_ok());
    drop(listener);
}

/// A confined command cannot kill its own reaper (its parent, outside the domain) to leave
/// what it started to init: the reaper outlives it and reaps its tree.
#[tokio::test]
async fn a_confined_command_cannot_signal_its_reaper() {
    landlock_here();
    if sandbox::kernel_abi().unwrap_or(0) < 6 {
        eprintln!("skipped: Landlock ABI {:?} has no scopes", sandbox::kernel_abi());
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let confinement = sandbox::Confinement::for_turn(tmp.path(), false, &[]);
    let line = "kill -0 $PPID 2>/dev/null && echo SIGNALLED\"\"-REAPER; kill -9 $PPID 2>/dev/null; echo still-here";
    let outcome = kiln_engine::testing::process::run_confined(line, tmp.path(), &[], TIMEOUT, &confinement, |_| {})
        .await
        .unwrap();
    assert!(outcome.passed(), "{outcome:?}");
    assert!(outcome.head.contains("still-here") && !outcome.head.contains("SIGNALLED-REAPER"), "{}", outcome.head);
}
