//! The `kiln` binary: the desktop app by default, `kiln serve`, `kiln session …`, `kiln token …`.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use clap::{CommandFactory, FromArgMatches};
use kiln_app::cli::{Cli, Command};

/// Prints `message` as Kiln's refusal of its command line and exits with 2.
fn refuse(message: &str) -> ! {
    eprintln!("kiln: {message}");
    std::process::exit(2)
}

fn main() {
    // SAFETY: the first thing the process does, before any thread starts.
    unsafe { kiln_engine::own_environment::conceal() };
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("KILN_LOG").unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .init();
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let Err(e) = kiln_app::cli::no_secret_on_the_command_line(&matches) {
        refuse(&e);
    }
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
            open,
            database,
            database_password_file,
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
                open,
                backing: kiln_engine::backing::Backing {
                    database: kiln_app::cli::database_url(database, database_password_file)
                        .unwrap_or_else(|e| refuse(&e)),
                    objects,
                },
                check,
            }),
            Err(e) => refuse(&e),
        },
        Some(Command::Token { database, database_password_file, action }) => {
            let database = kiln_app::cli::database_url(database, database_password_file).unwrap_or_else(|e| refuse(&e));
            std::process::exit(kiln_app::cli::token(database, action))
        }
        Some(Command::Session { workspace, action }) => std::process::exit(kiln_app::cli::session(workspace, action)),
        Some(Command::Detect { workspace, json }) => std::process::exit(kiln_app::cli::detect(workspace, json)),
        Some(Command::Health) => std::process::exit(kiln_app::cli::health()),
    };
    if let Err(e) = result {
        eprintln!("kiln: {e}");
        std::process::exit(1);
    }
}
