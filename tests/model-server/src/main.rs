//! `kiln-model-server --port N --script FILE.json`: the scripted model server on its
//! own, for pointing a CLI at it by hand. Logs each request to stderr; Ctrl-C stops it.

use std::path::PathBuf;
use std::process::ExitCode;

use kiln_double_support::command_line::{port_value, serve_until_killed, usage_error};
use kiln_model_server::{load_script, ModelServer};

const USAGE: &str = "kiln-model-server [--port N] --script FILE.json";

fn main() -> ExitCode {
    let (port, script) = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => return usage_error(&message, USAGE),
    };
    let steps = match load_script(&script) {
        Ok(steps) => steps,
        Err(message) => {
            eprintln!("kiln-model-server: {message}");
            return ExitCode::from(2);
        }
    };
    serve_until_killed(
        "kiln-model-server",
        port,
        ModelServer::spawn_on(port, steps),
        ModelServer::base_url,
        ModelServer::requests,
        |request| format!("{} {}", request.method, request.path),
    )
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<(u16, PathBuf), String> {
    let mut port = 0;
    let mut script = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => port = port_value(args.next())?,
            "--script" => script = Some(PathBuf::from(args.next().ok_or("--script needs a file")?)),
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    Ok((port, script.ok_or("--script is required")?))
}
