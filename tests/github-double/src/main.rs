//! `kiln-github-double --token T --repo OWNER/NAME[=GIT_DIR] [--port N] [--login L] [--read-only] [--issues FILE]`:
//! the GitHub double on its own, for pointing a client at it by hand (or a browser test).
//! `--issues` seeds issues from a JSON array of `{repo: "owner/name", title, body?, author?,
//! labels?, closed?, createdAt?, comments?: [{author, body, createdAt?}]}`. Logs each request
//! with its status to stderr; Ctrl-C stops it.

use std::process::ExitCode;

use kiln_double_support::command_line::{port_value, serve_until_killed, usage_error};
use kiln_github_double::{CommentSeed, Config, GithubDouble, IssueSeed, RepoConfig};
use serde_json::Value;

const USAGE: &str =
    "kiln-github-double --token T --repo OWNER/NAME[=GIT_DIR]... [--port N] [--login L] [--read-only] [--issues FILE]";

fn main() -> ExitCode {
    let (port, config, issues) = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => return usage_error(&message, USAGE),
    };
    let seeds = match issues.map(|path| read_seeds(&path)).transpose() {
        Ok(seeds) => seeds.unwrap_or_default(),
        Err(message) => return usage_error(&message, USAGE),
    };
    let started = GithubDouble::spawn_on(port, config).inspect(|double| {
        for seed in seeds {
            seed(double);
        }
    });
    serve_until_killed("kiln-github-double", port, started, GithubDouble::base_url, GithubDouble::requests, |request| {
        let query = request.query.as_deref().map(|q| format!("?{q}")).unwrap_or_default();
        format!("{} {}{query} -> {}", request.method, request.path, request.status)
    })
}

/// One issue to add once the double runs.
type Seed = Box<dyn FnOnce(&GithubDouble)>;

/// The issues of `--issues FILE`, checked before anything is served.
fn read_seeds(path: &str) -> Result<Vec<Seed>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("--issues {path}: {e}"))?;
    let list: Vec<Value> = serde_json::from_str(&text).map_err(|e| format!("--issues {path}: {e}"))?;
    let text_of = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    list.iter()
        .map(|item| {
            let repo = text_of(item, "repo").ok_or("--issues: an issue without `repo`")?;
            let (owner, name) = repo.split_once('/').ok_or(format!("--issues: not OWNER/NAME: {repo}"))?;
            let (owner, name) = (owner.to_owned(), name.to_owned());
            let mut issue = IssueSeed::new(text_of(item, "title").ok_or("--issues: an issue without `title`")?);
            issue.body = text_of(item, "body");
            issue.author = text_of(item, "author");
            issue.created_at = text_of(item, "createdAt");
            issue.open = !item.get("closed").and_then(Value::as_bool).unwrap_or(false);
            issue.labels = item
                .get("labels")
                .and_then(Value::as_array)
                .map(|labels| labels.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default();
            let comments: Vec<CommentSeed> = item
                .get("comments")
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .map(|c| CommentSeed {
                            author: text_of(c, "author").unwrap_or_else(|| "octocat".into()),
                            body: text_of(c, "body").unwrap_or_default(),
                            created_at: text_of(c, "createdAt"),
                        })
                        .collect()
                })
                .unwrap_or_default();
            let seed: Seed = Box::new(move |double: &GithubDouble| {
                let number = double.add_issue(&owner, &name, issue);
                for comment in comments {
                    double.add_comment(&owner, &name, number, comment);
                }
            });
            Ok(seed)
        })
        .collect()
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<(u16, Config, Option<String>), String> {
    let mut port = 0;
    let mut issues = None;
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
            "--issues" => issues = Some(args.next().ok_or("--issues needs a file")?),
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
    Ok((port, config, issues))
}
