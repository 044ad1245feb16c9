//! A failed gate judged against the session's base (ARCHITECTURE.md: Gates): the same command
//! runs on checkpoint 0 in a scratch working copy (`.kiln/sessions/<id>/baseline/workspace`,
//! set up once like the session; it goes with the session's directory, and disk clean-up
//! removes it with the working copy), and the result is kept per base tree and command, so
//! later turns and other sessions from the same base reuse it without running it again.
//!
//! A gate that fails the same way at the base is *failing before* and never blocks. For
//! runners that name their tests (and gates that name files) the failing sets are compared, so
//! one new failure among old ones is still new, and a run that names none where the base named
//! some (the change broke the build) is new too.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::failures::{failing_tests, named_files};
use super::Outcome;
use crate::ids::SessionId;
use crate::modules::ModuleInfo;
use crate::workspace::Workspace;
use kiln_records::store::gate_results::{self, Baseline};
use kiln_runtime::clock::now;
use kiln_types::GateStatus;

/// One baseline run at a time in this process: two sessions from the same base share the
/// scratch copy, and a gate's build is heavy enough to run alone.
static RUNNING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Marks a scratch copy whose setup ran: its first line says how it went.
const SET_UP: &str = "setup-done";

/// The failing gate's command and what it checks, as the base must run it.
pub(super) struct Failure<'a> {
    pub module: &'a ModuleInfo,
    /// The command template (`{changed}` not yet filled).
    pub template: &'a str,
    /// The files the session changed, repository-relative.
    pub changed: &'a [String],
}

/// Judges the failed `outcome` against the session's base and turns it into `failing-before`
/// when the base fails the same way; its note says which failures are new. Anything that
/// keeps the base from answering leaves the failure as it is, with a note saying so.
pub(super) async fn judge(ws: &Workspace, id: &SessionId, failure: Failure<'_>, outcome: &mut Outcome) {
    if outcome.status != GateStatus::Failed || outcome.command.is_empty() {
        return;
    }
    match compare(ws, id, &failure, outcome).await {
        Ok(Verdict::Before(note)) => {
            outcome.status = GateStatus::FailingBefore;
            outcome.note = Some(note);
        }
        Ok(Verdict::New(note)) => outcome.note = Some(join(outcome.note.take(), note)),
        Err(why) => {
            tracing::warn!("the baseline of `{}` for {id}: {why}", outcome.gate);
            outcome.note = Some(join(outcome.note.take(), format!("not compared with the base: {why}")));
        }
    }
}

fn join(first: Option<String>, second: String) -> String {
    match first {
        Some(first) if !first.is_empty() => format!("{first}; {second}"),
        _ => second,
    }
}

enum Verdict {
    /// It fails the same way at the base.
    Before(String),
    /// The change made it fail.
    New(String),
}

async fn compare(ws: &Workspace, id: &SessionId, failure: &Failure<'_>, outcome: &Outcome) -> Result<Verdict, String> {
    let file_scoped = failure.template.contains("{changed");
    let (commit, tree) = base(ws, id).await?;
    let mut at_base: Vec<String> = failure.changed.to_vec();
    if file_scoped {
        // A file new in the session has no base: only the base versions of the others run.
        let store = ws.open_store().map_err(|e| e.message)?;
        let base_tree = store.find_tree(tree).map_err(|e| e.to_string())?;
        at_base.retain(|f| base_tree.get_path(Path::new(f)).is_ok());
    }
    let now_output = format!("{}\n{}", outcome.head, outcome.tail);
    let now_failing: Option<BTreeSet<String>> = if file_scoped {
        Some(named_files(&now_output, failure.changed, &failure.module.directory)).filter(|s| !s.is_empty())
    } else {
        failing_tests(&now_output)
    };
    let Some(command) = crate::detect::with_changed(failure.template, &at_base) else {
        // Every file it checks is new in this session.
        return Ok(Verdict::New("it checks only files this session added".into()));
    };
    let tree_id = tree.to_string();
    let base = match gate_results::baseline(&ws.pool, &tree_id, &failure.module.id, &outcome.gate, &command)
        .await
        .map_err(|e| e.message)?
    {
        Some(kept) => kept,
        None => {
            let ran = run_at_base(ws, id, commit, failure, &command).await?;
            let at = now();
            gate_results::keep_baseline(&ws.pool, &tree_id, &failure.module.id, &outcome.gate, &command, &ran, &at)
                .await
                .map_err(|e| e.message)?;
            ran
        }
    };
    if base.passed {
        let note = match &now_failing {
            Some(names) => new_failures_note(names),
            None => "it passes at the session's base".into(),
        };
        return Ok(Verdict::New(note));
    }
    // An empty set names nothing, as no set does.
    let base_failing: Option<BTreeSet<String>> = base
        .failing
        .as_deref()
        .and_then(|j| serde_json::from_str::<BTreeSet<String>>(j).ok())
        .filter(|s| !s.is_empty());
    let now_failing = now_failing.filter(|s| !s.is_empty());
    match (now_failing, base_failing) {
        (Some(now), Some(before)) => {
            let new: BTreeSet<String> = now.difference(&before).cloned().collect();
            if new.is_empty() {
                Ok(Verdict::Before(all_before_note(now.len())))
            } else {
                let old = now.len() - new.len();
                let mut note = new_failures_note(&new);
                if old > 0 {
                    note.push_str(&format!("; {old} more {} there before this session", were(old)));
                }
                Ok(Verdict::New(note))
            }
        }
        // The base named failures and now nothing is named: it fails another way (a build
        // that no longer compiles, a runner that no longer starts).
        (None, Some(before)) => Ok(Verdict::New(format!(
            "it fails another way than at the session's base, where {} failed",
            names(&before)
        ))),
        // Neither names anything: it fails at the base as well, and nothing says the change
        // added to it, unless it checks files this session added.
        (None, None) if !file_scoped || failure.changed.len() == at_base.len() => {
            Ok(Verdict::Before("it fails the same way at the session's base".into()))
        }
        (None, None) => Ok(Verdict::New("it fails, and it checks files this session added".into())),
        (Some(now), None) => Ok(Verdict::New(format!(
            "{}; the base fails too, but its output names no test to compare",
            new_failures_note(&now)
        ))),
    }
}

fn were(n: usize) -> &'static str {
    if n == 1 {
        "was"
    } else {
        "were"
    }
}

fn all_before_note(n: usize) -> String {
    match n {
        1 => "1 failure, there before this session".into(),
        n => format!("{n} failures, all there before this session"),
    }
}

fn new_failures_note(failing: &BTreeSet<String>) -> String {
    let what = if failing.len() == 1 { "1 new failure".to_string() } else { format!("{} new failures", failing.len()) };
    format!("{what}: {}", names(failing))
}

/// The first five names in backticks, and how many more.
fn names(failing: &BTreeSet<String>) -> String {
    let shown: Vec<String> = failing.iter().take(5).map(|n| format!("`{n}`")).collect();
    let more = failing.len().saturating_sub(shown.len());
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    format!("{}{more}", shown.join(", "))
}

/// The commit and tree of the session's base: checkpoint 0, or the workspace as the
/// latest update from it took it in.
async fn base(ws: &Workspace, id: &SessionId) -> Result<(git2::Oid, git2::Oid), String> {
    let sequence = kiln_records::store::sessions::base_sequence(&ws.pool, id.as_str()).await.map_err(|e| e.message)?;
    let commit = kiln_records::store::checkpoints::commit(&ws.pool, id.as_str(), Some(sequence))
        .await
        .map_err(|e| e.message)?
        .ok_or("the session has no starting point")?;
    let commit = git2::Oid::from_str(&commit).map_err(|e| e.to_string())?;
    let store = ws.open_store().map_err(|e| e.message)?;
    let tree = store.find_commit(commit).and_then(|c| c.tree()).map_err(|e| e.to_string())?.id();
    Ok((commit, tree))
}

/// Runs `command` in the base's scratch copy (made and set up on first use).
async fn run_at_base(
    ws: &Workspace,
    id: &SessionId,
    commit: git2::Oid,
    failure: &Failure<'_>,
    command: &str,
) -> Result<Baseline, String> {
    let _one = RUNNING.lock().await;
    let session_dir = ws.session_dir(id);
    let dir = ws.baseline_dir(id);
    let workdir = dir.join("workspace");
    prepare(ws, commit, &session_dir, &dir, &workdir).await?;
    let module_dir = kiln_runtime::paths::confine(&workdir, &failure.module.directory).map_err(|e| e.message)?;
    let timeout = Duration::from_secs(ws.config.session.gate_timeout_seconds.max(1));
    let scope = kiln_runtime::process::project_scope(
        &session_dir,
        &[&workdir],
        &[&module_dir, &workdir],
        &[],
        &ws.config.environment,
    )
    .map_err(|e| e.to_string())?;
    let ran = kiln_runtime::process::run_scoped(command, &module_dir, &scope, timeout, |_| {})
        .await
        .map_err(|e| e.to_string())?;
    if ran.timed_out {
        return Err(format!("the base run timed out after {} s", timeout.as_secs()));
    }
    let output = format!("{}\n{}", ran.head, ran.tail);
    let failing = if failure.template.contains("{changed") {
        Some(named_files(&output, failure.changed, &failure.module.directory))
    } else {
        failing_tests(&output)
    };
    let failing = failing.and_then(|set| serde_json::to_string(&set).ok());
    Ok(Baseline { passed: ran.passed(), failing, head: ran.head })
}

/// Makes the scratch copy of the base and runs the workspace's setup in it, once per tree.
/// A setup that fails at the base makes every comparison on it unsound, so it is an error.
async fn prepare(
    ws: &Workspace,
    commit: git2::Oid,
    session_dir: &Path,
    dir: &Path,
    workdir: &PathBuf,
) -> Result<(), String> {
    let marker = dir.join(SET_UP);
    if let Ok(text) = std::fs::read_to_string(&marker) {
        return match text.lines().next() {
            Some("passed") => Ok(()),
            _ => Err(format!("setup fails at the base: {}", text.lines().nth(1).unwrap_or("").trim())),
        };
    }
    // Whatever an interrupted run left is made again.
    if workdir.exists() {
        std::fs::remove_dir_all(workdir).map_err(|e| format!("clearing the base's copy: {e}"))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    {
        let _guard = ws.store_lock.lock().await;
        let store = ws.open_store().map_err(|e| e.message)?;
        kiln_records::materialize::materialize(&store, commit, workdir).map_err(|e| e.message)?;
    }
    ws.copy_session_files(workdir);
    let verdict = match crate::detect::setup(workdir, &ws.config, &ws.modules) {
        None => "passed\n".to_string(),
        Some(setup) => {
            let scope =
                kiln_runtime::process::project_scope(session_dir, &[workdir], &[workdir], &[], &ws.config.environment)
                    .map_err(|e| e.to_string())?;
            let ran = kiln_runtime::process::run_scoped(
                &setup.command,
                workdir,
                &scope,
                Duration::from_secs(15 * 60),
                |_| {},
            )
            .await
            .map_err(|e| e.to_string())?;
            if ran.passed() {
                "passed\n".to_string()
            } else {
                format!("failed\n{}\n", super::first_line(&format!("{}\n{}", ran.head, ran.tail)))
            }
        }
    };
    std::fs::write(&marker, &verdict).map_err(|e| e.to_string())?;
    match verdict.starts_with("passed") {
        true => Ok(()),
        false => Err(format!("setup fails at the base: {}", verdict.lines().nth(1).unwrap_or("").trim())),
    }
}
