//! Starting a session: the working copy from the workspace's snapshot (checkpoint 0),
//! the planner's classification (its rules, then the planner agent when one is on),
//! and the setup step that installs dependencies before the first turn.

use std::sync::Arc;
use std::time::Duration;

use crate::events::EventBus;
use crate::ids::SessionId;
use crate::planner::{self, Rules};
use crate::session::{publish, record, MAX_TITLE};
use crate::workspace::{Context, Workspace};
use kiln_records::snapshot::{self, Source};
use kiln_records::store::gate_results::{self, GateRecord};
use kiln_records::store::sessions::{self as records, NewSession};
use kiln_runtime::clock::now;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

const MAX_BRIEF: usize = 20_000;

const SETUP_TIMEOUT: Duration = Duration::from_secs(15 * 60);

pub(crate) async fn create(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    args: CreateSessionArgs,
) -> Result<SessionView> {
    create_from(ws, events, args, None).await
}

/// [`create`] for a session that starts from a GitHub issue (already read into the brief),
/// linked to it so the session shows it and its pull request closes it.
pub(crate) async fn create_from(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    args: CreateSessionArgs,
    issue: Option<IssueLink>,
) -> Result<SessionView> {
    let brief = args.brief.trim();
    if brief.is_empty() {
        return Err(ApiError::invalid("the brief is empty: say what should change"));
    }
    if brief.chars().count() > MAX_BRIEF {
        return Err(ApiError::invalid(format!("the brief is longer than {MAX_BRIEF} characters")));
    }
    let title = match args.title.as_deref().map(str::trim) {
        Some(t) if !t.is_empty() => t.to_string(),
        _ => title_from(brief),
    };
    if title.chars().count() > MAX_TITLE {
        return Err(ApiError::invalid(format!("the title is longer than {MAX_TITLE} characters")));
    }
    let rules = Rules { modules: &ws.modules, id_pattern: ws.id_pattern.as_ref(), globs: &ws.config.modules.globs };
    let create = args.create_modules.as_deref().unwrap_or(&[]);
    let selected = match ws.config.workflow() {
        Workflow::Direct => rules.classify_direct(brief, create)?,
        Workflow::Specs => rules.classify_with(brief, create)?,
    };

    let id = SessionId::new();
    let at = now();
    let workdir = ws.session_workdir(&id);
    let base = {
        let _guard = ws.store_lock.lock().await;
        let ws2 = ws.clone();
        let id2 = id.clone();
        tokio::task::spawn_blocking(move || {
            let base = base_snapshot(&ws2, &id2)?;
            // Watched from now on, so its first checkpoint may read only what changed.
            crate::working_copy::watch_materialized(&ws2.open_store()?, &ws2.session_workdir(&id2), base);
            Ok(base)
        })
        .await
        .map_err(|e| ApiError::internal("snapshot", e))?
    };
    let base = match base {
        Ok(base) => base,
        Err(e) => {
            let _ = std::fs::remove_dir_all(ws.session_dir(&id));
            return Err(e);
        }
    };
    // With a bucket, the start is in it before any record names the session; a bucket
    // that does not take it refuses the session (nothing of it is kept).
    if let Err(e) = crate::checkpoint::upload(ws, &id).await {
        let _guard = ws.store_lock.lock().await;
        if let Ok(store) = ws.open_store() {
            let _ = snapshot::remove_session_refs(&store, id.as_str());
        }
        let _ = std::fs::remove_dir_all(ws.session_dir(&id));
        return Err(e);
    }
    ws.copy_session_files(&workdir);

    let modules: Vec<SessionModule> = selected
        .iter()
        .map(|s| SessionModule {
            id: s.id.clone(),
            directory: s.directory.clone(),
            kind: s.kind,
            joined_at: at.clone(),
            base_sequence: 0,
        })
        .collect();
    let new = modules.first().is_some_and(|m| m.kind == ModuleChange::New);
    let kind = if new { SessionKind::NewModule } else { SessionKind::EditModule };
    let inserted = records::insert(
        &ws.pool,
        NewSession {
            id: id.as_str(),
            kind,
            title: &title,
            brief,
            modules: &modules,
            at: &at,
            base_commit: &base.to_string(),
        },
    )
    .await;
    if let Err(e) = inserted {
        let _ = std::fs::remove_dir_all(ws.session_dir(&id));
        return Err(e);
    }
    // On a team's database the host that makes a session owns it from the start, before
    // anything of it runs, so no other host takes it for one left behind (`api::team`).
    if let kiln_records::store::Db::Postgres(pool) = &ws.pool {
        kiln_records::store::hosts::take(pool, id.as_str(), &ws.hosts.id, crate::hosts::LEASE_MS, &at).await?;
    }
    if let Some(issue) = &issue {
        records::set_issue(&ws.pool, id.as_str(), issue).await?;
    }
    // The planner agent runs when it is on and a driver can answer; else the rules alone.
    let agent = match crate::settings::planner_agent(ws).await? {
        true => crate::drivers::registry::resolve(ws, None).await.ok(),
        false => None,
    };
    let primary = modules.first().map(|m| m.id.as_str());
    record(ws, events, &id, EntryKind::System, primary, &planner::describe(&selected, agent.is_some())).await?;
    match agent {
        Some(driver) => crate::planner_agent::start(
            ws.clone(),
            events.clone(),
            id.clone(),
            driver,
            brief.to_string(),
            args.title.as_deref().is_some_and(|t| !t.trim().is_empty()),
        ),
        None => records::set_state(&ws.pool, id.as_str(), SessionState::Editing, &now()).await?,
    }
    setup(ws, events, &id).await?;
    publish(ws, events, &id).await
}

/// Starts the session's install step in the background when the repository has one
/// (kiln.toml's, else the one detected from its own tooling, so the agent can run the
/// tests during its turn); a missing toolchain is recorded as the setup's failure.
/// Returns whether there was a step.
async fn setup(ws: &Arc<Workspace>, events: &Arc<EventBus>, id: &SessionId) -> Result<bool> {
    let workdir = ws.session_workdir(id);
    let Some(setup) = crate::detect::setup(&workdir, &ws.config, &ws.modules) else { return Ok(false) };
    let missing = if ws.config.session.setup.is_some() {
        None
    } else {
        crate::detect::toolchains::blocking(&crate::detect::toolchains::check(&workdir, &ws.modules))
    };
    match missing {
        None => start_setup(ws.clone(), events.clone(), id.clone(), setup.command, setup.source).await?,
        Some(message) => {
            let text = format!(
                "**dependencies** failed: {message} [{}]. Install it, then send a message to go on.",
                ErrorCode::ToolchainMissing.as_str()
            );
            let end =
                SetupEnd { passed: false, text, exit_code: None, duration_ms: 0, head: message, tail: String::new() };
            record_setup(ws, events, id, &setup.command, &setup.source, end).await?;
        }
    }
    Ok(true)
}

/// Runs the session's setup again, as creation does, after a rebuilt working copy lost
/// its dependencies or Kiln stopped during the setup. Returns whether there was a step.
pub(crate) async fn setup_again(ws: &Arc<Workspace>, events: &Arc<EventBus>, id: &SessionId) -> Result<bool> {
    if ws.busy.runs_command(id.as_str()) {
        return Ok(false);
    }
    setup(ws, events, id).await
}

/// `retry_setup`: the setup that failed, run again on the operator's word (after they
/// installed a missing toolchain, fixed their registry settings, or the agent fixed the
/// lockfile).
pub(crate) async fn retry_setup(cx: &Context, args: SessionIdArgs) -> Result<SessionView> {
    let Context { ws, events } = cx;
    let (id, session) = crate::session::live(ws, &args.session_id).await?;
    crate::session::refuse_closed(&session)?;
    if ws.is_running(id.as_str()) {
        return Err(ApiError::new(ErrorCode::SessionRunning, "retry the setup when the session stops"));
    }
    if session.setup != SetupState::Failed {
        return Err(ApiError::invalid("the session's setup did not fail: there is nothing to retry"));
    }
    if !setup(ws, events, &id).await? {
        return Err(ApiError::invalid("the session has no setup step (nothing to install was detected)"));
    }
    crate::session::view(ws, &id).await
}

/// A title from a brief's (or an issue title's) first line, at most 72 characters.
pub(crate) fn title_from(brief: &str) -> String {
    let line = brief.lines().next().unwrap_or(brief).trim();
    if line.chars().count() <= 72 {
        line.to_string()
    } else {
        let cut: String = line.chars().take(71).collect();
        format!("{}…", cut.trim_end())
    }
}

/// Snapshots the workspace as checkpoint 0, materializes the session's working copy
/// (unchanged files taken from the host's own) and primes its stat cache.
fn base_snapshot(ws: &Workspace, id: &SessionId) -> Result<git2::Oid> {
    let store = ws.open_store()?;
    let (tree, host_files, host_start) = match &ws.git {
        Some(git) => {
            let host = git2::Repository::open(&git.workdir)?;
            let git_dir = host.path().to_path_buf();
            // Which host files can be reused is read from its index beside the snapshot.
            let (tree, files) = std::thread::scope(|scope| {
                let files = scope.spawn(|| kiln_records::materialize::host_files(&git.workdir, &git_dir, &git.prefix));
                let tree = snapshot::snapshot(&store, Source::Git { repo: &host, prefix: &git.prefix });
                Ok::<_, ApiError>((tree?, files.join().ok().flatten()))
            })?;
            let identity = host
                .config()
                .ok()
                .and_then(|c| Some((c.get_string("user.name").ok()?, c.get_string("user.email").ok()?)));
            // A workspace in a sub-directory of its repository has no history of its own.
            let head = git.prefix.is_empty().then(|| host.head().ok().and_then(|h| h.target())).flatten();
            (tree, files, Some(kiln_records::checkout::HostStart { objects: &git.objects, head, identity }))
        }
        None => (snapshot::snapshot(&store, Source::Plain { root: &ws.root, skip: &[] })?, None, None),
    };
    let commit = snapshot::commit(&store, tree, None, "the starting point", &format!("refs/kiln/{id}/0"))?;
    let made = kiln_records::materialize::working_copy(&store, commit, &ws.session_workdir(id), host_files.as_ref())?;
    if let Err(e) = kiln_records::prime::stat_cache(&store, &made, &ws.session_dir(id).join("index")) {
        // Only slower: the first checkpoint reads every file once.
        tracing::warn!("priming the stat cache of {id}: {}", e.message);
    }
    let workdir = ws.session_workdir(id);
    if let Err(e) =
        kiln_records::checkout::create(&store, &workdir, id.as_str(), commit, host_start.as_ref(), &made.entries)
    {
        // The session works without it (git there then answers for what holds the
        // workspace, as before); a half-made one is not left to confuse it.
        tracing::warn!("making the git checkout of {id}: {}", e.message);
        let _ = std::fs::remove_dir_all(workdir.join(".git"));
    }
    Ok(commit)
}

async fn start_setup(
    ws: Arc<Workspace>,
    events: Arc<EventBus>,
    id: SessionId,
    command: String,
    source: String,
) -> Result<()> {
    records::set_setup(&ws.pool, id.as_str(), SetupState::Running, &now()).await?;
    // Marked running before the task starts, so a delete issued right now is refused.
    ws.busy.hold(id.as_str());
    record(
        &ws,
        &events,
        &id,
        EntryKind::System,
        None,
        &format!("Installing dependencies: `{command}` (from {source})"),
    )
    .await?;
    let owner = ws.clone();
    owner.background.spawn(async move {
        let dir = ws.session_workdir(&id);
        let ws_for_start = ws.clone();
        let key = id.to_string();
        // The install runs the repository's scripts (npm's, a setup.py), which the agent
        // may have written: scoped like gates, writing only to the working copy and the
        // package caches.
        let scope = kiln_runtime::sandbox::Scope::new(&ws.session_dir(&id), &[&dir], &[], &[], &ws.config.environment);
        let outcome = match scope {
            Ok(scope) => {
                kiln_runtime::process::run_scoped(&command, &dir, &scope, SETUP_TIMEOUT, move |running| {
                    if let Err(stopped) = ws_for_start.busy.started(&key, running) {
                        // Stopped before it even started: it goes at once.
                        stopped.kill();
                    }
                    crate::pause::pause_point("setup.started");
                })
                .await
            }
            Err(e) => Err(e),
        };
        let was_stopped = ws.busy.end(id.as_str()).is_none();
        if let Err(e) = finish_setup(&ws, &events, &id, &command, &source, outcome, was_stopped).await {
            tracing::error!("recording the setup of {id}: {e}");
        }
    });
    Ok(())
}

async fn finish_setup(
    ws: &Workspace,
    events: &EventBus,
    id: &SessionId,
    command: &str,
    source: &str,
    outcome: std::io::Result<kiln_runtime::process::Outcome>,
    was_stopped: bool,
) -> Result<()> {
    let end = match outcome {
        Ok(o) => {
            let verdict = if o.passed() {
                "passed".to_string()
            } else if o.timed_out {
                format!("failed: timed out after {} s", o.duration.as_secs())
            } else if was_stopped || o.killed {
                "failed: stopped".to_string()
            } else {
                format!("failed with exit code {}", o.exit_code.map(|c| c.to_string()).unwrap_or_else(|| "?".into()))
            };
            let mut text = format!("**dependencies** {verdict} in {:.1} s — `{command}`", o.duration.as_secs_f64());
            let shown = if o.tail.is_empty() { o.head.clone() } else { format!("{}\n…\n{}", o.head, o.tail) };
            let shown = shown.trim_matches(['\n', '\r']);
            if !shown.trim().is_empty() {
                text.push_str(&format!("\n\n```\n{}\n```", shown.trim_end()));
            }
            SetupEnd {
                passed: o.passed(),
                text,
                exit_code: o.exit_code,
                duration_ms: o.duration.as_millis() as i64,
                head: o.head,
                tail: o.tail,
            }
        }
        Err(e) => SetupEnd {
            passed: false,
            text: format!("**dependencies** could not start `{command}`: {e}"),
            exit_code: None,
            duration_ms: 0,
            head: e.to_string(),
            tail: String::new(),
        },
    };
    // A session deleted while its setup ran has no record left to write to.
    if records::load(&ws.pool, id.as_str(), false).await.map(|s| s.deleted_at.is_some()).unwrap_or(true) {
        return Ok(());
    }
    record_setup(ws, events, id, command, source, end).await?;
    publish(ws, events, id).await?;
    Ok(())
}

/// How a session's setup ended, as its `dependencies` result and transcript entry say.
struct SetupEnd {
    passed: bool,
    text: String,
    exit_code: Option<i32>,
    duration_ms: i64,
    head: String,
    tail: String,
}

/// Records the setup's end: its gate result, its transcript entry and the session's setup state.
async fn record_setup(
    ws: &Workspace,
    events: &EventBus,
    id: &SessionId,
    command: &str,
    source: &str,
    end: SetupEnd,
) -> Result<()> {
    let at = now();
    let status = if end.passed { "passed" } else { "failed" };
    let row = GateRecord {
        session: id.as_str(),
        module: None,
        gate: "dependencies",
        command,
        source,
        status,
        exit_code: end.exit_code,
        duration_ms: end.duration_ms,
        head: &end.head,
        tail: &end.tail,
        at: &at,
        note: "",
        // The session's start, not its change: no gate the change's files answer to.
        digest: "",
    };
    gate_results::insert(&ws.pool, row).await?;
    record(ws, events, id, EntryKind::Gate, None, &end.text).await?;
    records::set_setup(&ws.pool, id.as_str(), if end.passed { SetupState::Passed } else { SetupState::Failed }, &at)
        .await?;
    crate::gates::publish(ws, events, id).await;
    Ok(())
}
