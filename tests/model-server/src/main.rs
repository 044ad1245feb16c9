//! `kiln-model-server --port N --script FILE.json [--aside MARKER=TEXT]... [--record FILE]`: the
//! scripted model server on its own, for pointing a CLI at it by hand; each `--aside` answers the
//! requests holding MARKER with TEXT beside the script (`kiln_model_server::Aside`). Logs each
//! request to stderr, and with `--record` appends each one whole (JSON, one line: method, path,
//! headers, body) to FILE, for a test in another process to read what the agent was sent.
//! Ctrl-C stops it.

use std::path::PathBuf;
use std::process::ExitCode;

use kiln_double_support::command_line::{port_value, serve_until_killed, usage_error};
use kiln_model_server::{load_script, Aside, ModelServer, Step};

const USAGE: &str = "kiln-model-server [--port N] --script FILE.json [--aside MARKER=TEXT]... [--record FILE]";

fn main() -> ExitCode {
    let (port, script, asides, record) = match parse_args(std::env::args().skip(1)) {
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
        |request| {
            if let Some(record) = &record {
                append(record, request);
            }
            format!("{} {}", request.method, request.path)
        },
    )
}

/// Appends `request` to the record file as one JSON line (a test polls it).
fn append(record: &std::path::Path, request: &kiln_model_server::RecordedRequest) {
    use std::io::Write;
    let line = match serde_json::to_string(request) {
        Ok(line) => line,
        Err(e) => return eprintln!("kiln-model-server: recording a request: {e}"),
    };
    let written =
        std::fs::OpenOptions::new().create(true).append(true).open(record).and_then(|mut f| writeln!(f, "{line}"));
    if let Err(e) = written {
        eprintln!("kiln-model-server: writing {}: {e}", record.display());
    }
}

type Args = (u16, PathBuf, Vec<Aside>, Option<PathBuf>);

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut port = 0;
    let mut record = None;
    let mut script = None;
    let mut asides = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => port = port_value(args.next())?,
            "--script" => script = Some(PathBuf::from(args.next().ok_or("--script needs a file")?)),
            "--record" => record = Some(PathBuf::from(args.next().ok_or("--record needs a file")?)),
            "--aside" => {
                let value = args.next().ok_or("--aside needs MARKER=TEXT")?;
                let (marker, text) = value.split_once('=').ok_or("--aside needs MARKER=TEXT")?;
                asides.push(Aside::new(marker, Step::text(text)));
            }
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    Ok((port, script.ok_or("--script is required")?, asides, record))
}
