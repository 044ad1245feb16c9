//! The OS confinement of agents' commands (`kiln_engine::testing::sandbox`), with real commands
//! and the real kernel: through the spawn the agent CLIs run under (`drivers::runner`)
//! and through Kiln's own tool loop's `run_command` (`drivers::tools`), a write outside
//! the working copy is refused by the kernel ("Permission denied") and leaves nothing,
//! while the working copy and the temporary directories stay writable. Then the
//! fallback: with `KILN_NO_LANDLOCK=1` (as on a kernel without Landlock) nothing is
//! confined, and the support report says so.
//!
//! The paths that must stay unwritable live outside the temporary directories, which are
//! writable to commands (`common::unwritable_temp`).

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use kiln_engine::testing::drivers::events::{DriverEvent, ToolStatus};
use kiln_engine::testing::drivers::runner::{self, CliRun};
use kiln_engine::testing::drivers::tools::{Toolbox, NO_COMMANDS};
use kiln_engine::testing::drivers::TurnSink;
use kiln_engine::testing::process;
use kiln_engine::testing::sandbox::{self, Confinement, Enforcement, DISABLE_ENV};
use kiln_engine::types::CommandPolicy;
use serde_json::json;
use tempfile::TempDir;
use tokio::sync::mpsc;

const TIMEOUT: Duration = Duration::from_secs(30);

/// A working copy (in the system temp dir, like a real one is not, but writable either
/// way) and a directory outside every writable path, with a file in it.
struct Scene {
    _workdir: TempDir,
    workdir: PathBuf,
    _outside: TempDir,
    outside: PathBuf,
    /// Stands in for the home directory: not writable, apart from its agent state.
    home: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let workdir_dir = TempDir::new().unwrap();
        let outside_dir = common::unwritable_temp("outside-");
        let outside = outside_dir.path().canonicalize().unwrap();
        std::fs::write(outside.join("existing.txt"), "kept\n").unwrap();
        let home = outside.join("home");
        std::fs::create_dir_all(&home).unwrap();
        Scene {
            workdir: workdir_dir.path().canonicalize().unwrap(),
            _workdir: workdir_dir,
            outside,
            _outside: outside_dir,
            home,
        }
    }

    fn env(&self) -> Vec<(String, String)> {
        vec![("HOME".into(), self.home.display().to_string())]
    }

    fn confinement(&self) -> Confinement {
        Confinement::for_turn(&self.workdir, false, &self.env())
    }
}

fn landlock_here() -> u32 {
    assert!(std::env::var_os(DISABLE_ENV).is_none(), "unset {DISABLE_ENV}: these tests check the confinement itself");
    sandbox::kernel_abi().expect("this kernel has no Landlock: the confinement cannot be tested here")
}

fn unique(name: &str) -> String {
    format!("{name}-{}", uuid::Uuid::new_v4().simple())
}

#[test]
fn support_reports_landlock_and_its_abi() {
    let abi = landlock_here();
    let support = sandbox::support();
    assert!(support.available && support.mechanism == "landlock", "{support:?}");
    assert_eq!(support.abi, Some(abi));
    assert_eq!(support.enforcement, if abi >= 3 { Enforcement::Full } else { Enforcement::Partial });
    assert!(support.detail.contains(&format!("Landlock (ABI {abi})")), "{}", support.detail);
    assert!(support.detail.contains("working copy"), "{}", support.detail);
}

/// The spawn every agent CLI runs under (`drivers::runner::run`), with `sh` standing in
/// for the CLI: what it starts inherits the confinement.
#[tokio::test]
async fn a_command_started_like_an_agent_cli_writes_only_where_it_may() {
    landlock_here();
    let scene = Scene::new();
    let outside_file = scene.outside.join("file");
    let in_tmp = PathBuf::from("/tmp").join(unique("kiln-sandbox"));
    let grandchild_file = scene.outside.join("grandchild");
    let script = format!(
        "echo x > '{out}' || echo REFUSED-OUTSIDE
         truncate -s 0 '{existing}' || echo REFUSED-TRUNCATE
         mv '{existing}' ./moved.txt || echo REFUSED-MOVE
         echo y > inside.txt && cat inside.txt
         echo z > '{tmp}' && cat '{tmp}'
         cat '{existing}'
         echo to-null > /dev/null && echo devnull-ok
         echo to-stdout > /dev/stdout
         sh -c \"echo g > '{grand}'\" 2>&1 || echo REFUSED-GRANDCHILD
         grep NoNewPrivs /proc/self/status",
        out = outside_file.display(),
        existing = scene.outside.join("existing.txt").display(),
        tmp = in_tmp.display(),
        grand = grandchild_file.display(),
    );
    let sh = PathBuf::from("/bin/sh");
    let cli = CliRun {
        binary: &sh,
        args: vec!["-c".into(), format!("exec 2>&1\n{script}")],
        env: scene.env(),
        workdir: &scene.workdir,
        confinement: Some(scene.confinement()),
    };
    let (events, mut received) = mpsc::unbounded_channel();
    let sink = TurnSink::new(events, Box::new(|_| {}));
    let run = runner::run(cli, sink, |line| vec![DriverEvent::Text { text: line.to_string() }]);
    tokio::time::timeout(TIMEOUT, run).await.expect("the command ends").expect("the command starts");
    let mut lines = Vec::new();
    while let Ok(event) = received.try_recv() {
        if let DriverEvent::Text { text } = event {
            lines.push(text);
        }
    }
    let output = lines.join("\n");
    let _ = std::fs::remove_file(&in_tmp);

    assert!(output.contains("Permission denied"), "the kernel's refusal: {output}");
    for refused in ["REFUSED-OUTSIDE", "REFUSED-TRUNCATE", "REFUSED-MOVE", "REFUSED-GRANDCHILD"] {
        assert!(output.contains(refused), "{refused}: {output}");
    }
    assert!(!outside_file.exists() && !grandchild_file.exists(), "nothing written outside: {output}");
    assert_eq!(
        std::fs::read_to_string(scene.outside.join("existing.txt")).unwrap(),
        "kept\n",
        "not truncated or moved"
    );
    assert_eq!(std::fs::read_to_string(scene.workdir.join("inside.txt")).unwrap(), "y\n");
    for expected in ["y", "z", "kept", "devnull-ok", "to-stdout"] {
        assert!(lines.iter().any(|l| l == expected), "{expected}: {output}");
    }
    assert!(output.contains("NoNewPrivs:\t1"), "no new privileges: {output}");
}

/// Kiln's own tool loop: `run_command` is confined too (more narrowly, see `scope.rs`),
/// and the model reads the kernel's refusal in the tool's output.
#[tokio::test]
async fn the_tool_loops_run_command_is_refused_outside_the_working_copy() {
    landlock_here();
    let scene = Scene::new();
    let toolbox = Toolbox::new(&scene.workdir, &scene.workdir.with_extension("session"), false, TIMEOUT).unwrap();
    let outside_file = scene.outside.join("from-the-model.txt");

    let refused =
        toolbox.run("run_command", &json!({ "command": format!("echo x > '{}'", outside_file.display()) })).await;
    assert_eq!(refused.status, ToolStatus::Failed, "{}", refused.output);
    assert!(refused.output.contains("Permission denied"), "{}", refused.output);
    assert!(!outside_file.exists());

    let command = "echo ok > made.txt && cat made.txt && echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"";
    let allowed = toolbox.run("run_command", &json!({ "command": command })).await;
    assert_eq!(allowed.status, ToolStatus::Completed, "{}", allowed.output);
    assert!(allowed.output.contains("ok\nt"), "{}", allowed.output);
    assert_eq!(std::fs::read_to_string(scene.workdir.join("made.txt")).unwrap(), "ok\n");
}

/// The policy "no commands" takes `run_command` away from the model altogether.
#[tokio::test]
async fn no_commands_takes_run_command_away() {
    let scene = Scene::new();
    let toolbox = Toolbox::new(&scene.workdir, &scene.workdir.with_extension("session"), false, TIMEOUT)
        .unwrap()
        .with_commands(CommandPolicy::None);
    let names: Vec<String> =
        toolbox.definitions().iter().filter_map(|d| d["function"]["name"].as_str().map(String::from)).collect();
    assert!(!names.contains(&"run_command".to_string()) && names.contains(&"write_file".to_string()), "{names:?}");
    let refused = toolbox.run("run_command", &json!({ "command": "echo ran > ran.txt" })).await;
    assert_eq!(refused.status, ToolStatus::Failed);
    assert_eq!(refused.output, NO_COMMANDS);
    assert!(!scene.workdir.join("ran.txt").exists());
    // Edits are still allowed.
    let wrote = toolbox.run("write_file", &json!({ "path": "notes.md", "content": "hi\n" })).await;
    assert_eq!(wrote.status, ToolStatus::Completed, "{}", wrote.output);
}

/// The fallback, in a child test process with `KILN_NO_LANDLOCK=1` (the variable would
/// change the other tests' confinement if set here): the report says commands run with
/// the policy alone, and they are not confined.
#[test]
fn without_landlock_commands_run_with_the_policy_alone() {
    if std::env::var_os(DISABLE_ENV).is_some() {
        let support = sandbox::support();
        assert!(!support.available && support.mechanism == "none" && support.abi.is_none(), "{support:?}");
        assert_eq!(support.enforcement, Enforcement::None);
        assert!(support.detail.contains("policy alone") && support.detail.contains(DISABLE_ENV), "{}", support.detail);
        let scene = Scene::new();
        let prepared = scene.confinement().prepare().unwrap();
        assert_eq!(prepared.enforcement(), Enforcement::None);
        let outside_file = scene.outside.join("unconfined.txt");
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let outcome = runtime
            .block_on(process::run_confined(
                &format!("echo x > '{}'", outside_file.display()),
                &scene.workdir,
                &scene.env(),
                TIMEOUT,
                &scene.confinement(),
                |_| {},
            ))
            .unwrap();
        assert!(outcome.passed(), "{outcome:?}");
        assert!(outside_file.exists(), "without Landlock the write goes through");
        return;
    }
    let me = std::env::current_exe().unwrap();
    let output = std::process::Command::new(me)
        .args([
            "--exact",
            "sandbox::without_landlock_commands_run_with_the_policy_alone",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(DISABLE_ENV, "1")
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success() && text.contains("1 passed"), "the fallback run failed:\n{text}");
}

/// A read-only turn's confinement leaves the working copy unwritable too.
#[tokio::test]
async fn a_read_only_turn_cannot_write_its_working_copy() {
    landlock_here();
    let scene = Scene::new();
    // Outside the system temp dir, which is writable whatever the turn.
    let workdir = scene.outside.join("workspace");
    std::fs::create_dir_all(&workdir).unwrap();
    let confinement = Confinement::for_turn(&workdir, true, &scene.env());
    let outcome = process::run_confined("echo x > inside.txt", &workdir, &scene.env(), TIMEOUT, &confinement, |_| {})
        .await
        .unwrap();
    assert!(!outcome.passed() && outcome.head.contains("Permission denied"), "{outcome:?}");
    assert!(!workdir.join("inside.txt").exists());
    let writable = Confinement::for_turn(&workdir, false, &scene.env());
    let outcome =
        process::run_confined("echo x > inside.txt", &workdir, &scene.env(), TIMEOUT, &writable, |_| {}).await.unwrap();
    assert!(outcome.passed(), "{outcome:?}");
}

/// Paths that do not exist get no rule, and the agent's own state is writable once made.
#[tokio::test]
async fn agent_state_is_writable_and_missing_paths_are_skipped() {
    landlock_here();
    let scene = Scene::new();
    let mut confinement = scene.confinement();
    confinement.create(scene.home.join(".claude"));
    confinement.allow(scene.outside.join("does-not-exist"));
    let command =
        "echo s > \"$HOME/.claude/state.json\" && echo c > \"$HOME/.cache/c\" && (echo h > \"$HOME/.bashrc\" || echo REFUSED-HOME)";
    let outcome =
        process::run_confined(command, &scene.workdir, &scene.env(), TIMEOUT, &confinement, |_| {}).await.unwrap();
    assert!(outcome.passed() && outcome.head.contains("REFUSED-HOME"), "{outcome:?}");
    assert!(scene.home.join(".claude/state.json").exists() && scene.home.join(".cache/c").exists());
    assert!(!scene.home.join(".bashrc").exists());
    assert!(!scene.outside.join("does-not-exist").exists());
}
