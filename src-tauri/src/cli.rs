//! The command line: `kiln` opens the desktop app, `kiln serve` serves it over HTTP,
//! `kiln session …` lists and tidies sessions (a dry run unless `--apply`), `kiln
//! token …` makes, lists and revokes the access tokens a self-hosted server admits,
//! `kiln health` says which agent CLIs are found and whether commands are confined.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};
use kiln_engine::types::*;
use kiln_engine::{Engine, EngineOptions};

#[derive(Parser)]
#[command(name = "kiln", version, about = "Chat a change to your codebase with a coding agent.")]
pub struct Cli {
    /// The workspace to open in the desktop app.
    #[arg(long, env = "KILN_WORKSPACE")]
    pub workspace: Option<String>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand)]
pub enum Command {
    /// Serve the engine and the UI over HTTP (loopback unless told otherwise).
    Serve {
        /// The address to bind; anything but a loopback address runs self-hosted.
        #[arg(long, default_value = "127.0.0.1")]
        host: IpAddr,
        /// The port (0 picks a free one).
        #[arg(long, default_value_t = 4320)]
        port: u16,
        /// `loopback` trusts this machine; `self-hosted` admits only holders of an
        /// access token (`kiln token create`) and offers only bring-your-own-key drivers.
        #[arg(long, env = "KILN_MODE", value_enum)]
        mode: Option<Mode>,
        /// The workspace to open at start (required when self-hosted: it is the only one served).
        #[arg(long)]
        workspace: Option<String>,
        /// Self-hosted: let agents run shell commands (the tool loop's `run_command`).
        /// Off by default, because a command runs on this server: with it, an access
        /// token is worth a shell here (confined to the session, see SECURITY.md).
        #[arg(long)]
        allow_agent_commands: bool,
        /// Self-hosted: offer shell terminals in sessions. Off by default, because a
        /// terminal is a shell on this server for whoever holds an access token (confined
        /// to the session's working copy, as agents' commands are). Agent CLI terminals
        /// are never offered self-hosted. Loopback and the desktop always offer terminals.
        #[arg(long, env = "KILN_ALLOW_TERMINALS", value_parser = clap::builder::FalseyValueParser::new())]
        allow_terminals: bool,
        /// Serve the UI from this directory instead of the embedded copy.
        #[arg(long, env = "KILN_UI_DIR")]
        ui_dir: Option<PathBuf>,
        /// Loopback: open the server in the default browser, connected (through a file
        /// holding the link, so its token is on no command line).
        #[arg(long)]
        open: bool,
        /// Keep the workspace's records on this PostgreSQL database (`postgres://…`)
        /// instead of `.kiln/kiln.db`, so several hosts can serve one team's sessions.
        #[arg(long, env = "KILN_DATABASE_URL")]
        database: Option<String>,
        /// The database's password, read from this file's first line (a URL on the
        /// command line may not carry one: every process here can read a command line).
        #[arg(long, env = "KILN_DATABASE_PASSWORD_FILE")]
        database_password_file: Option<PathBuf>,
        /// Keep checkpoint objects, attachments and delivery artifacts in this
        /// S3-compatible bucket (`s3://bucket/prefix`; endpoint, region and credentials
        /// from the usual AWS_* variables), with `.kiln/store.git` a cache of it.
        #[arg(long, env = "KILN_OBJECTS_URL")]
        objects: Option<String>,
        /// Check the database, the bucket and the migrations, print what was found and
        /// exit (0 when all is well) instead of serving.
        #[arg(long)]
        check: bool,
    },
    /// Make, list and revoke the access tokens of self-hosted servers.
    Token {
        /// The tokens of a team's hosts, kept in their PostgreSQL database (the one they
        /// serve with `--database`) instead of this machine's `access.db`.
        #[arg(long, env = "KILN_DATABASE_URL", global = true)]
        database: Option<String>,
        /// The database's password, read from this file's first line.
        #[arg(long, env = "KILN_DATABASE_PASSWORD_FILE", global = true)]
        database_password_file: Option<PathBuf>,
        #[command(subcommand)]
        action: TokenAction,
    },
    /// Print what Kiln detects in a repository (modules, toolchains, the setup step and
    /// every gate command with its source) as a kiln.toml; writes nothing.
    Detect {
        /// The repository (default: the current directory).
        #[arg(long, default_value = ".")]
        workspace: String,
        /// Print the detection as JSON instead.
        #[arg(long)]
        json: bool,
    },
    /// Say what this machine offers: each agent CLI found (path and version) and
    /// whether the commands agents run are confined by the OS here.
    Health,
    /// List and tidy the sessions of a workspace (refused with WORKSPACE_IN_USE while the
    /// desktop app or `kiln serve` has it open).
    Session {
        /// The workspace (default: the current directory).
        #[arg(long, default_value = ".")]
        workspace: String,
        #[command(subcommand)]
        action: SessionAction,
    },
}

/// Refuses a secret written on the command line, where every process on the machine can
/// read it (`/proc/<pid>/cmdline`, `ps`): a URL with a password given as `--database` or
/// `--objects`. The same URL in `KILN_DATABASE_URL` (which Kiln hides from its own
/// `/proc/<pid>/environ`), or its password in a file, is fine.
pub fn no_secret_on_the_command_line(matches: &clap::ArgMatches) -> Result<(), String> {
    let Some((_, sub)) = matches.subcommand() else { return Ok(()) };
    for (id, variable) in [("database", "KILN_DATABASE_URL"), ("objects", "KILN_OBJECTS_URL")] {
        let Ok(Some(url)) = sub.try_get_one::<String>(id) else { continue };
        if sub.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
            && kiln_engine::backing::password(url).is_some()
        {
            return Err(format!(
                "--{id} {} carries a password on the command line, where every process on this machine can read it; \
                 give the URL in {variable} instead{}",
                kiln_engine::backing::shown(url),
                if id == "database" {
                    ", or leave the password out and give it with --database-password-file <file> or PostgreSQL's PGPASSFILE"
                } else {
                    ", or the bucket's keys in the AWS_* variables"
                }
            ));
        }
    }
    Ok(())
}

/// The database URL with the password from `password_file` (its first line) put in.
pub fn database_url(database: Option<String>, password_file: Option<PathBuf>) -> Result<Option<String>, String> {
    let (Some(url), Some(file)) = (&database, password_file) else { return Ok(database) };
    let text =
        std::fs::read_to_string(&file).map_err(|e| format!("--database-password-file {}: {e}", file.display()))?;
    let secret = text.lines().next().unwrap_or_default();
    if secret.is_empty() {
        return Err(format!("--database-password-file {}: the first line is empty", file.display()));
    }
    kiln_engine::backing::with_password(url, secret).map(Some).map_err(|e| format!("--database: {e}"))
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    Loopback,
    SelfHosted,
}

impl Mode {
    /// The mode a server on `host` runs in: a non-loopback address is always self-hosted.
    pub fn for_host(mode: Option<Mode>, host: IpAddr) -> Result<ServeMode, String> {
        match (mode, host.is_loopback()) {
            (Some(Mode::Loopback), false) => Err(format!(
                "--host {host} is not a loopback address, so the server runs self-hosted: drop `--mode loopback`"
            )),
            (Some(Mode::SelfHosted), _) | (None, false) => Ok(ServeMode::SelfHosted),
            (Some(Mode::Loopback), true) | (None, true) => Ok(ServeMode::Loopback),
        }
    }
}

#[derive(Subcommand)]
pub enum TokenAction {
    /// Make a token; it is printed once and stored only as a hash.
    Create {
        /// What the token is for, shown by `kiln token list`.
        #[arg(long, default_value = "token")]
        name: String,
        /// How long it lasts: 30d, 12h, 90m or 45s (default: until revoked).
        #[arg(long)]
        expires: Option<String>,
    },
    /// List tokens with their status.
    List,
    /// Revoke a token and end every browser session it opened.
    Revoke { id: String },
}

/// Runs a `kiln token` action; returns the process exit code.
pub fn token(database: Option<String>, action: TokenAction) -> i32 {
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    runtime.block_on(async move {
        match token_action(database.as_deref(), action).await {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("kiln: {} [{}]", e.message, e.code.as_str());
                1
            }
        }
    })
}

async fn token_action(database: Option<&str>, action: TokenAction) -> kiln_serve::errors::Result<()> {
    use kiln_serve::access::{now, parse_lifetime, rfc3339, Access};
    let access = Access::open(&crate::config_dir(), database).await?;
    match action {
        TokenAction::Create { name, expires } => {
            let lifetime = expires.as_deref().map(parse_lifetime).transpose()?;
            let (info, token) = access.create_token(&name, lifetime).await?;
            // The token alone on stdout, so scripts can capture it; the rest for people.
            println!("{token}");
            let until =
                info.expires_at.map(|e| format!("until {}", rfc3339(e))).unwrap_or_else(|| "until revoked".into());
            eprintln!("Created token {} \"{}\", valid {until}. It is shown only this once.", info.id, info.name);
            eprintln!(
                "It starts agents' turns. On a server run with --allow-agent-commands those run shell commands \
                 there, so the token is worth a shell on that server (confined to a session's working copy)."
            );
        }
        TokenAction::List => {
            let tokens = access.list_tokens().await?;
            if tokens.is_empty() {
                eprintln!("No tokens. Make one with `kiln token create`.");
            }
            let now = now();
            for t in tokens {
                let expires = t.expires_at.map(rfc3339).unwrap_or_else(|| "never".into());
                println!(
                    "{}  {}  {}  created {}  expires {expires}",
                    t.id,
                    t.name,
                    t.status(now),
                    rfc3339(t.created_at)
                );
            }
        }
        TokenAction::Revoke { id } => {
            access.revoke_token(&id).await?;
            eprintln!("Revoked token {id}; the browser sessions it opened have ended.");
        }
    }
    Ok(())
}

/// Runs `kiln health`: one line per agent CLI, one for the confinement and one for how
/// commands are supervised; exit code 0.
pub fn health() -> i32 {
    println!("kiln {}", env!("CARGO_PKG_VERSION"));
    for name in ["claude", "codex"] {
        match kiln_engine::find_agent_cli(name, None) {
            Ok(path) => match cli_version(&path) {
                Some(version) => println!("{name}: {} ({version})", path.display()),
                None => println!("{name}: {}", path.display()),
            },
            Err(e) => println!("{name}: {}", e.message),
        }
    }
    let support = kiln_engine::sandbox_support();
    let how = match support.abi {
        Some(abi) => format!("{} (ABI {abi}, {})", support.mechanism, support.enforcement.as_str()),
        None => support.mechanism.to_string(),
    };
    println!("confinement: {how}: {}", support.detail);
    println!("processes: {}", kiln_engine::process_supervision());
    0
}

/// The first line `<binary> --version` prints, if it answers within a few seconds.
fn cli_version(binary: &std::path::Path) -> Option<String> {
    let mut child = std::process::Command::new(binary)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while child.try_wait().ok()?.is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take()?, &mut out).ok()?;
    out.lines().next().map(|l| l.trim().to_string()).filter(|l| !l.is_empty())
}

/// Runs `kiln detect`; returns the process exit code.
pub fn detect(workspace: String, json: bool) -> i32 {
    match kiln_engine::detect_path(std::path::Path::new(&workspace)) {
        Err(e) => {
            eprintln!("kiln: {} [{}]", e.message, e.code.as_str());
            1
        }
        Ok(view) if json => {
            println!("{}", serde_json::to_string_pretty(&view).expect("a detection is JSON"));
            0
        }
        Ok(view) => {
            print!("{}", detection_text(&view));
            0
        }
    }
}

/// The detection as kiln.toml, with what the TOML cannot say (toolchains, the modules'
/// toolchains, gates with nothing detected) as comments at the top.
pub fn detection_text(view: &DetectionView) -> String {
    let mut out = format!("# Kiln detected in {}:\n", view.root);
    for t in &view.toolchains {
        let found = t.found.as_deref().unwrap_or("missing");
        let wanted = t.required.as_deref().map(|r| format!(" (the repository asks for {r})")).unwrap_or_default();
        let problem = t.message.as_deref().map(|m| format!(" — {m}")).unwrap_or_default();
        out.push_str(&format!("#   toolchain {}: {found}{wanted}{problem}\n", t.name));
    }
    for m in &view.modules {
        let toolchain =
            serde_json::to_value(m.toolchain).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        out.push_str(&format!("#   module {} in {} ({toolchain})\n", m.id, m.directory));
        for g in m.gates.iter().filter(|g| g.command.is_none()) {
            out.push_str(&format!(
                "#     {}: not configured — {}\n",
                g.gate,
                g.hint.as_deref().unwrap_or("nothing detected")
            ));
        }
    }
    // What setup, gates and the preview get of the user's environment (names; a secret's
    // value is never printed).
    for v in &view.environment {
        let value = v.value.as_deref().map(|x| format!("={x}")).unwrap_or_else(|| " (value hidden)".into());
        out.push_str(&format!("#   environment {}{value} — from {}\n", v.name, v.source));
    }
    for f in &view.config_files {
        out.push_str(&format!("#   reads {f} (a copy; never written)\n"));
    }
    out.push('\n');
    out.push_str(&view.toml);
    out
}

#[derive(Subcommand)]
pub enum SessionAction {
    /// List sessions (`--all` includes archived, rejected and deleted ones).
    List {
        #[arg(long)]
        all: bool,
    },
    /// Archive a session.
    Archive {
        id: String,
        /// Do it; without this flag only say what would happen.
        #[arg(long)]
        apply: bool,
        /// Stop a running session first.
        #[arg(long)]
        stop: bool,
    },
    /// Delete a session's working copy and checkpoints, keeping its transcript.
    Delete {
        id: String,
        #[arg(long)]
        apply: bool,
        #[arg(long)]
        stop: bool,
        /// Remove the record and transcript too.
        #[arg(long)]
        purge: bool,
    },
    /// Deliver a session: print its delivery plan, and with `--apply` run it and wait for the
    /// result. `--anyway "reason"` delivers past failing gates (never past a missing review
    /// or a conflict); the reason goes into the transcript and the pull request.
    Deliver {
        id: String,
        /// `workspace` or `git-pr`; default: the workspace's `[delivery] default`.
        #[arg(long)]
        target: Option<String>,
        /// Deliver past the plan's gate blockers, for this reason.
        #[arg(long, value_name = "REASON")]
        anyway: Option<String>,
        #[arg(long)]
        apply: bool,
    },
    /// Remove the working copies of archived and rejected sessions, keeping their
    /// checkpoints (a copy with unsaved changes gets one first), attachments and
    /// transcripts; a copy is rebuilt from its checkpoint when the session is used again.
    CleanUp {
        /// Do it; without this flag only list what would be removed.
        #[arg(long)]
        apply: bool,
    },
}

/// Runs a `kiln session` action; returns the process exit code.
pub fn session(workspace: String, action: SessionAction) -> i32 {
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    runtime.block_on(async move {
        let engine = Engine::new(EngineOptions {
            config_dir: crate::config_dir(),
            transport: Transport::Serve,
            mode: kiln_engine::types::ServeMode::Loopback,
            allow_agent_commands: false,
            allow_terminals: false,
        })
        .remembering_in(std::sync::Arc::new(crate::recent::RecentFile::in_dir(crate::config_dir())))
        .held_by(kiln_engine::HolderKind::Cli);
        match session_action(&engine, workspace, action).await {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("kiln: {} [{}]", e.message, e.code.as_str());
                1
            }
        }
    })
}

async fn session_action(engine: &Engine, workspace: String, action: SessionAction) -> kiln_engine::Result<()> {
    engine.open_workspace(OpenWorkspaceArgs { path: workspace }).await?;
    match action {
        SessionAction::List { all } => {
            let sessions = engine.list_sessions(ListSessionsArgs { include_archived: Some(all) }).await?;
            if sessions.is_empty() {
                println!("No sessions.");
            }
            for s in sessions {
                let modules: Vec<&str> = s.modules.iter().map(|m| m.id.as_str()).collect();
                let flag = if s.deleted_at.is_some() {
                    " (deleted)"
                } else if s.archived_at.is_some() {
                    " (archived)"
                } else if s.rejected_at.is_some() {
                    " (rejected)"
                } else {
                    ""
                };
                let state =
                    serde_json::to_value(s.state).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
                println!("{}  {:<18} {}  [{}]{flag}", s.id, state, s.title, modules.join(", "));
            }
        }
        SessionAction::Archive { id, apply, stop } => {
            let session = engine.get_session(SessionIdArgs { session_id: id.clone() }).await?;
            if !apply {
                println!("Would archive {} \"{}\". Run again with --apply to do it.", session.id, session.title);
                return Ok(());
            }
            engine.archive_session(StopArgs { session_id: id, stop: Some(stop) }).await?;
            println!("Archived {} \"{}\".", session.id, session.title);
        }
        SessionAction::Delete { id, apply, stop, purge } => {
            let session = engine.get_session(SessionIdArgs { session_id: id.clone() }).await?;
            if !apply {
                let what = if purge { "its record and transcript too" } else { "keeping its transcript" };
                println!(
                    "Would delete {} \"{}\": its working copy and {} checkpoint(s), {what}. Run again with --apply to do it.",
                    session.id,
                    session.title,
                    session.checkpoints.len()
                );
                return Ok(());
            }
            engine
                .delete_session(DeleteSessionArgs { session_id: id, stop: Some(stop), keep_transcript: Some(!purge) })
                .await?;
            println!("Deleted {} \"{}\".", session.id, session.title);
        }
        SessionAction::Deliver { id, target, anyway, apply } => {
            let target = match target.as_deref() {
                None => None,
                Some(t) => {
                    Some(serde_json::from_value::<DeliveryTarget>(serde_json::Value::String(t.into())).map_err(
                        |_| kiln_engine::ApiError::invalid(format!("unknown target `{t}`: workspace or git-pr")),
                    )?)
                }
            };
            let plan = engine.plan_delivery(PlanDeliveryArgs { session_id: id.clone(), target }).await?;
            print!("{}", plan_text(&plan));
            if !apply {
                println!("Run again with --apply to deliver.");
                return Ok(());
            }
            let args = DeliverArgs { session_id: id.clone(), target: plan.target, plan_id: plan.plan_id, anyway };
            engine.deliver(args).await?;
            // The run goes on in the background: wait for its end, reading it back.
            let run = loop {
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                match engine.get_delivery(SessionIdArgs { session_id: id.clone() }).await? {
                    Some(run) if run.state != DeliveryState::Running => break run,
                    _ => {}
                }
            };
            for step in &run.steps {
                println!("{:?}: {}", step.state, step.title);
            }
            match (&run.pull_request, &run.error) {
                (_, Some(e)) => return Err(kiln_engine::ApiError::new(e.code, e.message.clone())),
                (Some(pr), None) => println!("Delivered as {} (branch {}).", pr.url, pr.branch),
                (None, None) => println!("Delivered into the workspace: {} files landed.", run.landed.len()),
            }
        }
        SessionAction::CleanUp { apply } => {
            let done = engine.clean_up(CleanUpArgs { apply: Some(apply) }).await?;
            print!("{}", clean_up_text(&done));
        }
    }
    Ok(())
}

/// A delivery plan as `kiln session deliver` prints it.
fn plan_text(plan: &DeliveryPlan) -> String {
    let target =
        serde_json::to_value(plan.target).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    let mut out = format!("Delivery of {} to {target}", plan.session_id);
    if let Some(branch) = &plan.branch {
        out.push_str(&format!(" (branch {branch})"));
    }
    out.push('\n');
    for m in &plan.modules {
        let count = m.added.len() + m.overwritten.len() + m.deleted.len();
        out.push_str(&format!("  {}: {count} files\n", m.module_id));
    }
    for b in &plan.blockers {
        let kind = if b.overridable { "gate blocker (--anyway delivers past it)" } else { "blocker" };
        out.push_str(&format!("  {kind}: {}\n", b.message));
    }
    out
}

/// What `kiln session clean-up` prints: a line per working copy, the skipped sessions
/// and why, and the total.
pub fn clean_up_text(done: &CleanUpView) -> String {
    let size = kiln_engine::human_bytes;
    let mut out = String::new();
    for s in &done.sessions {
        let kept = if s.checkpoint_taken { " (its changes kept in a new checkpoint)" } else { "" };
        let verb = if done.applied { "Removed" } else { "Would remove" };
        out.push_str(&format!(
            "{verb} the working copy of {} \"{}\": {}, rebuilt from checkpoint {}{kept}\n",
            s.session_id,
            s.title,
            size(s.bytes),
            s.checkpoint
        ));
    }
    for s in &done.skipped {
        out.push_str(&format!("Skipped {} \"{}\": {}\n", s.session_id, s.title, s.reason));
    }
    match (done.sessions.is_empty(), done.applied) {
        (true, _) => out.push_str("No archived or rejected session has a working copy to remove.\n"),
        (false, true) => out.push_str(&format!("Freed {} in all.\n", size(done.freed_bytes))),
        (false, false) => {
            out.push_str(&format!("Would free {} in all. Run again with --apply to do it.\n", size(done.freed_bytes)))
        }
    }
    out
}
