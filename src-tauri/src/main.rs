//! The `kiln` binary: the desktop app by default, `kiln serve`, `kiln session …`, `kiln token …`.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use clap::Parser;
use kiln_app::cli::{Cli, Command};

fn main() {
    // SAFETY: the first thing the process does, before any thread starts.
    unsafe { kiln_engine::own_environment::conceal() };
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("KILN_LOG").unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        None => kiln_app::desktop::run(cli.workspace),
        Some(Command::Serve {
            host,
            port,
            mode,
            workspace,
            allow_agent_commands,
            allow_terminals,
            ui_dir,
            database,
            objects,
            check,
        }) => match kiln_app::cli::Mode::for_host(mode, host) {
            Ok(mode) => kiln_app::serve::run(kiln_app::serve::ServeOptions {
                host,
                port,
                mode,
                workspace,
                allow_agent_commands,
                allow_terminals,
                ui_dir,
                backing: kiln_engine::backing::Backing { database, objects },
                check,
            }),
            Err(e) => {
                eprintln!("kiln: {e}");
                std::process::exit(2);
            }
        },
        Some(Command::Token { database, action }) => std::process::exit(kiln_app::cli::token(database, action)),
        Some(Command::Session { workspace, action }) => std::process::exit(kiln_app::cli::session(workspace, action)),
        Some(Command::Detect { workspace, json }) => std::process::exit(kiln_app::cli::detect(workspace, json)),
        Some(Command::Health) => std::process::exit(kiln_app::cli::health()),
    };
    if let Err(e) = result {
        eprintln!("kiln: {e}");
        std::process::exit(1);
    }
}
