//! `kiln-github-double --token T --repo OWNER/NAME[=GIT_DIR] [--port N] [--login L] [--read-only]`:
//! the GitHub double on its own, for pointing a client at it by hand. Logs each request
//! with its status to stderr; Ctrl-C stops it.

use std::process::ExitCode;

use kiln_double_support::command_line::{port_value, serve_until_killed, usage_error};
use kiln_github_double::{Config, GithubDouble, RepoConfig};

const USAGE: &str = "kiln-github-double --token T --repo OWNER/NAME[=GIT_DIR]... [--port N] [--login L] [--read-only]";

fn main() -> ExitCode {
    let (port, config) = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => return usage_error(&message, USAGE),
    };
    serve_until_killed(
        "kiln-github-double",
        port,
        GithubDouble::spawn_on(port, config),
        GithubDouble::base_url,
        GithubDouble::requests,
        |request| {
            let query = request.query.as_deref().map(|q| format!("?{q}")).unwrap_or_default();
            format!("{} {}{query} -> {}", request.method, request.path, request.status)
        },
    )
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<(u16, Config), String> {
    let mut port = 0;
    let mut token = None;
    let mut login = None;
    let mut read_only = false;
    let mut repos = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => port = port_value(args.next())?,
            "--token" => token = Some(args.next().ok_or("--token needs a value")?),
            "--login" => login = Some(args.next().ok_or("--login needs a value")?),
            "--read-only" => read_only = true,
            "--repo" => {
                let value = args.next().ok_or("--repo needs OWNER/NAME")?;
                let (name, git_dir) = match value.split_once('=') {
                    Some((name, dir)) => (name.to_owned(), Some(dir.to_owned())),
                    None => (value.clone(), None),
                };
                let (owner, name) = name
                    .split_once('/')
                    .filter(|(owner, name)| !owner.is_empty() && !name.is_empty())
                    .ok_or(format!("--repo: not OWNER/NAME: {value}"))?;
                let mut repo = RepoConfig::new(owner, name);
                if let Some(dir) = git_dir {
                    repo = repo.git_dir(dir);
                }
                repos.push(repo);
            }
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    let mut config = Config::new(token.ok_or("--token is required")?);
    if let Some(login) = login {
        config = config.login(login);
    }
    for repo in repos {
        config = config.repo(if read_only { repo.read_only() } else { repo });
    }
    Ok((port, config))
}
