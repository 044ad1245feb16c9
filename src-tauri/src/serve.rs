//! `kiln serve`: the engine and the embedded UI over HTTP, in loopback or self-hosted mode.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use kiln_engine::types::{OpenWorkspaceArgs, ServeMode, Transport};
use kiln_engine::{Engine, EngineOptions};
use kiln_serve::access::Access;

pub struct ServeOptions {
    pub host: IpAddr,
    pub port: u16,
    pub mode: ServeMode,
    pub workspace: Option<String>,
    /// Self-hosted: let agents run commands (`--allow-agent-commands`).
    pub allow_agent_commands: bool,
    /// Self-hosted: offer shell terminals (`--allow-terminals`).
    pub allow_terminals: bool,
    /// Serve the UI from this directory instead of the copy embedded in the binary.
    pub ui_dir: Option<std::path::PathBuf>,
    /// Loopback: open the server in the default browser (`--open`).
    pub open: bool,
    /// Where the workspace's records and objects live (`--database`, `--objects`).
    pub backing: kiln_engine::backing::Backing,
    /// `--check`: verify the backing stores, print what was found and exit.
    pub check: bool,
}

pub fn run(options: ServeOptions) -> Result<(), Box<dyn std::error::Error>> {
    if options.mode == ServeMode::SelfHosted && options.workspace.is_none() {
        eprintln!("kiln: a self-hosted server serves one workspace: give it with --workspace DIR");
        std::process::exit(2);
    }
    let runtime = tokio::runtime::Runtime::new()?;
    if options.check {
        let found = runtime.block_on(kiln_engine::check_backing(&options.backing));
        for finding in &found {
            println!("{} {}", if finding.ok { "ok    " } else { "FAILED" }, finding.line);
        }
        std::process::exit(if found.iter().all(|f| f.ok) { 0 } else { 1 });
    }
    runtime.block_on(async move {
        let config_dir = crate::config_dir();
        let token_dir = config_dir.clone();
        let access = Arc::new(Access::open(&config_dir, options.backing.database.as_deref())
                .await
                .map_err(|e| format!("the access store: {} [{}]", e.message, e.code.as_str()))?);
        let recent = Arc::new(crate::recent::RecentFile::in_dir(config_dir.clone()));
        let engine = Arc::new(
            Engine::new(EngineOptions {
                config_dir,
                transport: Transport::Serve,
                mode: options.mode,
                allow_agent_commands: options.allow_agent_commands,
                allow_terminals: options.allow_terminals,
            })
            .remembering_in(recent)
            .backed_by(options.backing.clone()),
        );
        if let Some(path) = options.workspace {
            engine
                .open_workspace(OpenWorkspaceArgs { path })
                .await
                .map_err(|e| format!("could not open the workspace: {} [{}]", e.message, e.code.as_str()))?;
            // On a team's database, this host joins the others serving it (leases, events, work).
            engine
                .join_team()
                .await
                .map_err(|e| format!("could not join the team's hosts: {} [{}]", e.message, e.code.as_str()))?;
        }
        let assets: Arc<dyn kiln_serve::Assets> = match options.ui_dir {
            Some(dir) => Arc::new(kiln_serve::DirAssets(dir)),
            None => crate::desktop::embedded_assets(),
        };
        let addr = SocketAddr::new(options.host, options.port);
        let mode = options.mode;
        let agent_commands = options.allow_agent_commands;
        let terminals = options.allow_terminals;
        let open = options.open;
        let mut opener = None;
        kiln_serve::serve(engine, assets, addr, mode, access, token_dir.clone(), |ready| {
            let bound = ready.addr;
            let host = if bound.ip().is_ipv6() { format!("[{}]", bound.ip()) } else { bound.ip().to_string() };
            let base = format!("http://{host}:{}/", bound.port());
            let name = if mode == ServeMode::SelfHosted { "self-hosted" } else { "loopback" };
            println!("Kiln is serving {base} ({name})");
            if let Some(token) = ready.token {
                // Its own line, so a terminal makes it a link and a script can take it whole.
                println!("Open this link to connect a browser (it holds the server's token):");
                println!("{}", token.link(&base));
                if let Some(file) = token.file() {
                    println!("Scripts connect with the token in {} (POST /api/connect {{\"token\": …}}).", file.display());
                }
                if open {
                    opener = crate::browser::open(&token_dir, bound.port(), &token.link(&base));
                }
            }
            if mode == ServeMode::SelfHosted {
                println!("Browsers connect with an access token (`kiln token create`); serve it over https, as its cookie is Secure.");
                if agent_commands {
                    println!("Agents may run commands (--allow-agent-commands): a token is worth a shell on this server, confined to a session.");
                } else {
                    println!("Agents run no commands here; start with --allow-agent-commands to let them.");
                }
                if terminals {
                    println!("Sessions offer shell terminals (--allow-terminals): a token is worth a shell on this server, confined to a session.");
                }
            }
        })
        .await?;
        drop(opener);
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}
