//! Gates (ARCHITECTURE.md: Gates): the project's own checks, from a fixed list. Once per working
//! copy: `module-schema`, and `spec-schema` in the specs workflow (or when asked for).
//! Once per module that holds changes: `dependencies`, `typecheck`, `tests`, `format`,
//! `lint`. Commands come from `kiln.toml`, else from the repository's own tooling
//! (`detect`), each with its source; they run the agent's code, so they run scoped
//! (`kiln_runtime::sandbox::Scope`: an allowlisted environment, the session's home, writing
//! only to the working copy) with the module's own binaries first on PATH, a timeout,
//! in their own process group. A gate with
//! no command is *not configured* (never a blocker); skipped is not success; a test
//! suite that ran no test fails. A failure is judged against the session's base
//! (`baseline`): one that was there before is *failing before*, never a blocker. When a
//! module's dependencies fail, its other gates are *not run: setup failed*, not failures
//! of their own.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::events::EventBus;
use crate::ids::SessionId;
use crate::modules::{ModuleInfo, Toolchain};
use crate::session::record;
use crate::workspace::{Context, Workspace};
use kiln_records::store::gate_results::{self, GateRecord};
use kiln_runtime::clock::now;
use kiln_runtime::process;
use kiln_types::error::Result;
use kiln_types::*;

mod baseline;
mod failures;

pub(crate) use crate::detect::MODULE_GATES;
/// Output a failed gate hands to the fix turn.
pub(crate) const FIX_OUTPUT: usize = 4000;
/// Output the transcript keeps whole; longer output keeps head and tail.
const SHOWN: usize = 6000;

/// What a gate run found.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub module: Option<String>,
    pub gate: String,
    pub command: String,
    /// Where the command came from (`kiln.toml`, `package.json scripts.test`…).
    pub source: String,
    pub status: GateStatus,
    pub exit_code: Option<i32>,
    pub duration_ms: i64,
    pub head: String,
    pub tail: String,
    /// Why, in words, when it failed or was skipped.
    pub note: Option<String>,
}

impl Outcome {
    fn checked(gate: &str, problems: Vec<String>) -> Outcome {
        let failed = !problems.is_empty();
        Outcome {
            module: None,
            gate: gate.into(),
            command: format!("(Kiln checks {gate})"),
            source: "Kiln".into(),
            status: if failed { GateStatus::Failed } else { GateStatus::Passed },
            exit_code: None,
            duration_ms: 0,
            head: problems.join("\n"),
            tail: String::new(),
            note: None,
        }
    }

    /// The output for a fix prompt: the first `FIX_OUTPUT` characters.
    pub fn output_start(&self) -> String {
        let all = if self.tail.is_empty() { self.head.clone() } else { format!("{}\n…\n{}", self.head, self.tail) };
        all.chars().take(FIX_OUTPUT).collect()
    }
}

/// The scope gates run in (`kiln_runtime::process::project_scope`): writing only to the working
/// copy, with the module's own binaries, then the working copy's, first on PATH.
fn scope(ws: &Workspace, id: &SessionId, workdir: &Path, dir: &Path) -> std::io::Result<kiln_runtime::sandbox::Scope> {
    process::project_scope(&ws.session_dir(id), &[workdir], &[dir, workdir], &[], &ws.config.environment)
}

/// Runs one module gate; `changed` are the repository-relative files the session
/// changed (for commands that check only those).
pub async fn run_module_gate(
    ws: &Workspace,
    id: &SessionId,
    module: &ModuleInfo,
    gate: &str,
    changed: &[String],
) -> Outcome {
    let workdir = ws.session_workdir(id);
    let outcome = |command: String, source: String, status: GateStatus, head: String, note: Option<String>| Outcome {
        module: Some(module.id.clone()),
        gate: gate.into(),
        command,
        source,
        status,
        exit_code: None,
        duration_ms: 0,
        head,
        tail: String::new(),
        note,
    };
    // The module's directory is the agent's to change: one replaced by a link leading
    // out of the working copy fails the gate instead of running a command out there.
    let module_dir = match kiln_runtime::paths::confine(&workdir, &module.directory) {
        Ok(dir) => dir,
        Err(e) => {
            let note = Some("the module's directory leads outside the working copy".into());
            return outcome(String::new(), String::new(), GateStatus::Failed, e.message, note);
        }
    };
    // kiln.toml's command, else the one detected in the working copy, with its source.
    let detected = crate::detect::gate(&workdir, &ws.config, module, gate);
    let Some(template) = detected.command else {
        let hint = detected.hint.unwrap_or_else(|| format!("no {gate} command applies to this module"));
        return outcome(String::new(), detected.source, GateStatus::NotConfigured, hint.clone(), Some(hint));
    };
    // A file-scoped gate checks the module's own changed files, not another module's.
    let changed = module_files(changed, &module.directory);
    let Some(command) = crate::detect::with_changed(&template, &changed) else {
        let note = Some("none of the files it checks changed".to_string());
        return outcome(template, detected.source, GateStatus::Passed, String::new(), note);
    };
    let timeout = Duration::from_secs(ws.config.session.gate_timeout_seconds.max(1));
    let result = match scope(ws, id, &workdir, &module_dir) {
        Ok(scope) => {
            process::run_scoped(&command, &module_dir, &scope, timeout, |running| {
                // A stop of the session kills the gate's group too.
                ws.busy.run(id.as_str(), running);
            })
            .await
        }
        Err(e) => Err(e),
    };
    ws.busy.end(id.as_str());
    match result {
        Err(e) => outcome(
            command,
            detected.source,
            GateStatus::Failed,
            format!("could not start: {e}"),
            Some("could not start".into()),
        ),
        Ok(o) => {
            let mut status = if o.passed() { GateStatus::Passed } else { GateStatus::Failed };
            let mut note = if o.timed_out { Some(format!("timed out after {} s", timeout.as_secs())) } else { None };
            if gate == "tests" && status == GateStatus::Passed && ran_no_test(&format!("{}\n{}", o.head, o.tail)) {
                status = GateStatus::Failed;
                note = Some("the test suite ran no test".into());
            }
            if gate == "tests" && o.exit_code == Some(5) && command.contains("pytest") {
                note = Some("pytest collected no test".into());
            }
            Outcome {
                module: Some(module.id.clone()),
                gate: gate.into(),
                command,
                source: detected.source,
                status,
                exit_code: o.exit_code,
                duration_ms: o.duration.as_millis() as i64,
                head: o.head,
                tail: o.tail,
                note,
            }
        }
    }
}

/// Whether a passing test command's output says it ran nothing: cargo test's summaries
/// all "0 passed", node's runner reporting "tests 0".
pub(crate) fn ran_no_test(output: &str) -> bool {
    let cargo: Vec<&str> = output.lines().filter(|l| l.trim_start().starts_with("test result:")).collect();
    if !cargo.is_empty() {
        return cargo.iter().all(|l| l.contains(" 0 passed") && l.contains(" 0 failed"));
    }
    // go test: every package says `[no test files]` and none says `ok`.
    let go: Vec<&str> = output
        .lines()
        .filter(|l| l.contains("[no test files]") || l.starts_with("ok ") || l.starts_with("ok\t"))
        .collect();
    if !go.is_empty() {
        return go.iter().all(|l| l.contains("[no test files]"));
    }
    let node = regex::Regex::new(r"(?m)^\s*(#|ℹ)\s*tests\s+(\d+)\s*$").unwrap();
    let counts: Vec<u64> = node.captures_iter(output).filter_map(|c| c[2].parse().ok()).collect();
    if !counts.is_empty() {
        return counts.iter().all(|&n| n == 0);
    }
    false
}

/// `spec-schema`: every module's specification has front matter with a `status:` and a title.
pub fn spec_schema(ws: &Workspace, id: &SessionId, modules: &[SessionModule]) -> Outcome {
    let workdir = ws.session_workdir(id);
    let mut problems = Vec::new();
    for m in modules {
        let path = Path::new(&m.directory).join(&ws.config.modules.spec);
        let confined = match kiln_runtime::paths::confine(&workdir, &path.to_string_lossy()) {
            Ok(confined) => confined,
            Err(e) => {
                problems.push(format!("{}: {}", path.display(), e.message));
                continue;
            }
        };
        match std::fs::read_to_string(confined) {
            Err(_) if m.kind == ModuleChange::New => {} // written by its first turn
            Err(_) => problems.push(format!("{}: missing", path.display())),
            Ok(text) => {
                if crate::modules::spec_status(&text).is_none() {
                    problems.push(format!("{}: no front matter with a `status:` line", path.display()));
                }
                if !text.lines().any(|l| l.starts_with("# ")) {
                    problems.push(format!("{}: no `# ` title", path.display()));
                }
            }
        }
    }
    Outcome::checked("spec-schema", problems)
}

/// `module-schema`: every module manifest parses and names the module.
pub fn module_schema(ws: &Workspace, id: &SessionId, modules: &[SessionModule]) -> Outcome {
    let workdir = ws.session_workdir(id);
    let mut problems = Vec::new();
    for m in modules {
        // Each manifest is confined to the working copy: a link leading out is a problem
        // to name, never a file to read (a parse error would quote it).
        let manifest = |name: &str| kiln_runtime::paths::confine(&workdir, &format!("{}/{name}", m.directory));
        let (package, cargo) = match (manifest("package.json"), manifest("Cargo.toml")) {
            (Ok(package), Ok(cargo)) => (package, cargo),
            (Err(e), _) | (_, Err(e)) => {
                problems.push(format!("{}: {}", m.directory, e.message));
                continue;
            }
        };
        if package.is_file() {
            match std::fs::read_to_string(&package)
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            {
                None => problems.push(format!("{}/package.json: not valid JSON", m.directory)),
                Some(v) if !v["name"].is_string() => problems.push(format!("{}/package.json: no `name`", m.directory)),
                Some(_) => {}
            }
        }
        if cargo.is_file() {
            if let Err(e) = std::fs::read_to_string(&cargo)
                .map_err(|e| e.to_string())
                .and_then(|t| toml::from_str::<toml::Value>(&t).map_err(|e| e.to_string()))
            {
                problems.push(format!("{}/Cargo.toml: {e}", m.directory));
            }
        }
    }
    Outcome::checked("module-schema", problems)
}

/// Runs the working-copy gates and every module gate of `modules`, recording each
/// result and its transcript entry; returns them in order.
pub(crate) async fn run_all(
    ws: &Arc<Workspace>,
    events: &EventBus,
    id: &SessionId,
    session: &SessionView,
    modules: &[SessionModule],
) -> Result<Vec<Outcome>> {
    // The files the gates run on, before they run (a gate that rewrites a file leaves
    // results of the files it found, not of what it left).
    let judged = files_now(ws, id).await;
    let mut outcomes = Vec::new();
    if ws.config.checks_specs() {
        outcomes.push(spec_schema(ws, id, &session.modules));
    }
    outcomes.push(module_schema(ws, id, &session.modules));
    let changed = session_changes(ws, id).await;
    let workdir = ws.session_workdir(id);
    for m in modules {
        // A module the session creates is read from the working copy, where it exists.
        let info = ws.module(&m.id).cloned().unwrap_or_else(|| {
            let workdir = ws.session_workdir(id);
            match kiln_runtime::paths::confine(&workdir, &m.directory) {
                Ok(_) => crate::modules::describe_new(&workdir, &m.id, &m.directory, &ws.config),
                Err(_) => ModuleInfo {
                    id: m.id.clone(),
                    directory: m.directory.clone(),
                    toolchain: Toolchain::Generic,
                    spec_status: None,
                },
            }
        });
        // Why the module's gates cannot run: its dependencies did not install.
        let mut setup_failed: Option<String> = None;
        for gate in MODULE_GATES {
            if let Some(why) = &setup_failed {
                outcomes.push(not_run(ws, &workdir, &info, gate, why));
                continue;
            }
            let mut outcome = run_module_gate(ws, id, &info, gate, &changed).await;
            if outcome.status == GateStatus::Failed {
                let template = crate::detect::gate(&workdir, &ws.config, &info, gate).command.unwrap_or_default();
                let own = module_files(&changed, &info.directory);
                let failure = baseline::Failure { module: &info, template: &template, changed: &own };
                baseline::judge(ws, id, failure, &mut outcome).await;
            }
            if *gate == "dependencies" && matches!(outcome.status, GateStatus::Failed | GateStatus::FailingBefore) {
                setup_failed = Some(first_line(&format!("{}\n{}", outcome.head, outcome.tail)));
            }
            outcomes.push(outcome);
        }
    }
    for o in &outcomes {
        save(ws, events, id, o, judged.as_deref().unwrap_or("")).await?;
    }
    publish(ws, events, id).await;
    Ok(outcomes)
}

/// The `gates` event: the session's latest results, as `get_gates` answers now, to every view.
/// The results are recorded whatever happens here: a view left untold (the session went
/// meanwhile) asks when it shows them.
pub(crate) async fn publish(ws: &Workspace, events: &EventBus, id: &SessionId) {
    match latest(ws, id).await {
        Ok(gates) => {
            events.emit(EventBody::Gates { session_id: id.to_string(), gates });
        }
        Err(e) => tracing::warn!("telling the views of {id}'s gates: {}", e.message),
    }
}

/// The working copy's files now, as a checkpoint would keep them (the tree's id): what a
/// gate result judged, so after a restore the results of exactly those files are found
/// again. `None` when the copy cannot be read.
async fn files_now(ws: &Workspace, id: &SessionId) -> Option<String> {
    let _guard = ws.store_lock.lock().await;
    let store = ws.open_store().ok()?;
    match crate::working_copy::snapshot_workdir(&store, &ws.session_workdir(id)) {
        Ok(tree) => Some(tree.to_string()),
        // A copy cleaned up or not rebuilt yet: its results say nothing of it.
        Err(e) => {
            tracing::debug!("reading the working copy of {id} for its gates: {e}");
            None
        }
    }
}

/// Of the session's changed files (repository-relative), those inside the module's directory.
pub(crate) fn module_files(changed: &[String], directory: &str) -> Vec<String> {
    let dir = directory.trim_start_matches("./").trim_end_matches('/');
    if dir.is_empty() || dir == "." {
        return changed.to_vec();
    }
    let prefix = format!("{dir}/");
    changed.iter().filter(|f| f.starts_with(&prefix)).cloned().collect()
}

/// A gate that did not run because the module's dependencies failed to install: skipped
/// (not success), with setup's error in one line, rather than a failure of its own
/// (`vitest: not found`, an import of another copy of the package).
fn not_run(ws: &Workspace, workdir: &Path, module: &ModuleInfo, gate: &str, why: &str) -> Outcome {
    let detected = crate::detect::gate(workdir, &ws.config, module, gate);
    let status = if detected.command.is_some() { GateStatus::Skipped } else { GateStatus::NotConfigured };
    let note = match status {
        GateStatus::Skipped => format!("not run: setup failed: {why}"),
        _ => detected.hint.clone().unwrap_or_default(),
    };
    Outcome {
        module: Some(module.id.clone()),
        gate: gate.into(),
        command: detected.command.unwrap_or_default(),
        source: detected.source,
        status,
        exit_code: None,
        duration_ms: 0,
        head: note.clone(),
        tail: String::new(),
        note: Some(note),
    }
}

/// The line of a command's output that says most about why it failed: the first that
/// reads like an error, else the last that is not empty.
pub(crate) fn first_line(output: &str) -> String {
    let lines: Vec<&str> = output.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let error = lines.iter().find(|l| {
        let lower = l.to_ascii_lowercase();
        lower.starts_with("error") || lower.contains(" err!") || lower.contains("error:") || lower.starts_with("fatal")
    });
    let line = error.or(lines.last()).copied().unwrap_or("it exited with an error");
    line.chars().take(200).collect()
}

/// The files the session has now that differ from its base (added, modified, renamed
/// to), repository-relative: what format and lint check.
async fn session_changes(ws: &Arc<Workspace>, id: &SessionId) -> Vec<String> {
    let args = GetDiffArgs { session_id: id.to_string(), module_id: None };
    match crate::diff::changes(ws, args).await {
        Ok(diff) => {
            let mut files: Vec<String> = diff
                .modules
                .iter()
                .flat_map(|m| m.files.iter())
                .filter(|f| f.status != FileStatus::Deleted)
                .map(|f| f.path.clone())
                .collect();
            files.sort();
            files.dedup();
            files
        }
        Err(e) => {
            tracing::error!("listing the session's changes for its gates: {e}");
            Vec::new()
        }
    }
}

async fn save(ws: &Workspace, events: &EventBus, id: &SessionId, o: &Outcome, digest: &str) -> Result<()> {
    let status = match o.status {
        GateStatus::Passed => "passed",
        GateStatus::Failed => "failed",
        GateStatus::FailingBefore => "failing-before",
        GateStatus::Skipped => "skipped",
        GateStatus::NotConfigured => "not-configured",
    };
    gate_results::insert(
        &ws.pool,
        GateRecord {
            session: id.as_str(),
            module: o.module.as_deref(),
            gate: &o.gate,
            command: &o.command,
            source: &o.source,
            status,
            exit_code: o.exit_code,
            duration_ms: o.duration_ms,
            head: &o.head,
            tail: &o.tail,
            at: &now(),
            note: o.note.as_deref().unwrap_or(""),
            digest,
        },
    )
    .await?;
    let whom = o.module.as_deref().map(|m| format!(" in `{m}`")).unwrap_or_default();
    let shown_status = match o.status {
        GateStatus::NotConfigured => "not configured",
        GateStatus::FailingBefore => "failing before",
        GateStatus::Skipped if o.note.as_deref().is_some_and(|n| n.starts_with("not run")) => "",
        _ => status,
    };
    let mut text = format!("**{}** {shown_status}{whom}", shown_name(&o.gate)).replace("  ", " ");
    if let Some(note) = &o.note {
        text.push_str(&format!(": {note}"));
    }
    if !o.command.is_empty() {
        text.push_str(&format!(" — `{}` ({:.1} s)", o.command, o.duration_ms as f64 / 1000.0));
    }
    // A gate with no command has its hint as the note; "from not detected" says nothing.
    if !o.source.is_empty() && o.source != "Kiln" && o.status != GateStatus::NotConfigured {
        text.push_str(&format!(" · from {}", o.source));
    }
    let output = if o.tail.is_empty() { o.head.clone() } else { format!("{}\n…\n{}", o.head, o.tail) };
    let output = output.trim_matches(['\n', '\r']);
    if o.status == GateStatus::Failed && !output.trim().is_empty() {
        let shown: String = if output.chars().count() > SHOWN {
            output.chars().take(SHOWN).collect::<String>() + "\n…"
        } else {
            output.to_string()
        };
        text.push_str(&format!("\n\n```\n{}\n```", shown.trim_end()));
    }
    record(ws, events, id, EntryKind::Gate, o.module.as_deref(), &text).await?;
    Ok(())
}

/// A gate's name in the chat: Kiln's own checks by what they check, the project's by the
/// gate (the id stays in the record and the API).
fn shown_name(gate: &str) -> &str {
    match gate {
        "module-schema" => "manifests",
        "spec-schema" => "specifications",
        other => other,
    }
}

/// The latest result of every gate of a session, preferring those of the files as they
/// are now (after a restore: the results as of the restored checkpoint), each saying
/// whether it judged them.
pub(crate) async fn latest(ws: &Workspace, id: &SessionId) -> Result<Vec<GateResultView>> {
    crate::session::view(ws, id).await?;
    let now = files_now(ws, id).await;
    gate_results::latest(&ws.pool, id.as_str(), now.as_deref()).await
}

/// The latest result of every gate of the session (`get_gates`).
pub(crate) async fn get(cx: &Context, args: SessionIdArgs) -> Result<Vec<GateResultView>> {
    latest(&cx.ws, &SessionId::parse(&args.session_id)?).await
}

/// "Run gates" (`check_modules`): every gate of every module of the session, now.
pub(crate) async fn check_modules(cx: &Context, args: SessionIdArgs) -> Result<Vec<GateResultView>> {
    let Context { ws, events } = cx;
    let (id, session) = crate::session::live(ws, &args.session_id).await?;
    if ws.is_running(id.as_str()) {
        return Err(kiln_types::error::ApiError::new(
            kiln_types::error::ErrorCode::SessionRunning,
            "check the modules when the session stops",
        ));
    }
    run_all(ws, events, &id, &session, &session.modules).await?;
    crate::session::publish(ws, events, &id).await?;
    latest(ws, &id).await
}

#[cfg(test)]
mod tests {
    use super::ran_no_test;

    #[test]
    fn an_empty_suite_is_recognised() {
        assert!(ran_no_test("running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored\n"));
        assert!(!ran_no_test("test result: ok. 0 passed; 0 failed;\ntest result: ok. 3 passed; 0 failed;\n"));
        assert!(ran_no_test("ℹ tests 0\nℹ suites 0\nℹ pass 0\n"));
        assert!(ran_no_test("# tests 0\n# pass 0\n"));
        assert!(!ran_no_test("ℹ tests 6\nℹ pass 6\n"));
        assert!(!ran_no_test("all good\n"));
    }
}
