//! `kiln-model-server --port N --script FILE.json [--aside MARKER=TEXT]...`: the scripted
//! model server on its own, for pointing a CLI at it by hand; each `--aside` answers the
//! requests holding MARKER with TEXT beside the script (`kiln_model_server::Aside`). Logs each request to stderr; Ctrl-C stops it.

use std::path::PathBuf;
use std::process::ExitCode;

use kiln_double_support::command_line::{port_value, serve_until_killed, usage_error};
use kiln_model_server::{load_script, Aside, ModelServer, Step};

const USAGE: &str = "kiln-model-server [--port N] --script FILE.json [--aside MARKER=TEXT]...";

fn main() -> ExitCode {
    let (port, script, asides) = match parse_args(std::env::args().skip(1)) {
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
        ModelServer::spawn_with_asides(port, steps, asides),
        ModelServer::base_url,
        ModelServer::requests,
        |request| format!("{} {}", request.method, request.path),
    )
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<(u16, PathBuf, Vec<Aside>), String> {
    let mut port = 0;
    let mut script = None;
    let mut asides = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => port = port_value(args.next())?,
            "--script" => script = Some(PathBuf::from(args.next().ok_or("--script needs a file")?)),
            "--aside" => {
                let value = args.next().ok_or("--aside needs MARKER=TEXT")?;
                let (marker, text) = value.split_once('=').ok_or("--aside needs MARKER=TEXT")?;
                asides.push(Aside::new(marker, Step::text(text)));
            }
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    Ok((port, script.ok_or("--script is required")?, asides))
}
