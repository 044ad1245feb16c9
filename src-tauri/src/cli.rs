//! The command line: `kiln` opens the desktop app, `kiln serve` serves it over HTTP,
//! `kiln session …` lists and tidies sessions (a dry run unless `--apply`).

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
    /// Serve the engine and the UI over loopback HTTP.
    Serve {
        #[arg(long, default_value = "127.0.0.1")]
        host: IpAddr,
        #[arg(long, default_value_t = 4320)]
        port: u16,
        /// The workspace to open at start.
        #[arg(long)]
        workspace: Option<String>,
        /// Serve the UI from this directory instead of the embedded copy.
        #[arg(long, env = "KILN_UI_DIR")]
        ui_dir: Option<PathBuf>,
    },
    /// List and tidy the sessions of a workspace.
    Session {
        /// The workspace (default: the current directory).
        #[arg(long, default_value = ".")]
        workspace: String,
        #[command(subcommand)]
        action: SessionAction,
    },
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
}

/// Runs a `kiln session` action; returns the process exit code.
pub fn session(workspace: String, action: SessionAction) -> i32 {
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    runtime.block_on(async move {
        let engine = Engine::new(EngineOptions { config_dir: crate::config_dir(), transport: Transport::Serve, mode: kiln_engine::types::ServeMode::Loopback });
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
                let state = serde_json::to_value(s.state).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
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
    }
    Ok(())
}
