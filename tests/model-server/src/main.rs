//! `kiln-model-server --port N --script FILE.json`: the scripted model server on its
//! own, for pointing a CLI at it by hand. Logs each request to stderr; Ctrl-C stops it.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use kiln_model_server::{load_script, ModelServer};

fn main() -> ExitCode {
    let (port, script) = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}\nusage: kiln-model-server [--port N] --script FILE.json");
            return ExitCode::from(2);
        }
    };
    let steps = match load_script(&script) {
        Ok(steps) => steps,
        Err(message) => {
            eprintln!("kiln-model-server: {message}");
            return ExitCode::from(2);
        }
    };
    let server = match ModelServer::spawn_on(port, steps) {
        Ok(server) => server,
        Err(error) => {
            eprintln!("kiln-model-server: cannot listen on 127.0.0.1:{port}: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!("listening on {}", server.base_url());

    // Polling keeps the library free of logging hooks; a manual run needs no more.
    let mut seen = 0;
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let requests = server.requests();
        for request in &requests[seen..] {
            eprintln!("{} {}", request.method, request.path);
        }
        seen = requests.len();
    }
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<(u16, PathBuf), String> {
    let mut port = 0;
    let mut script = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                let value = args.next().ok_or("--port needs a value")?;
                port = value
                    .parse()
                    .map_err(|_| format!("--port: not a port: {value}"))?;
            }
            "--script" => script = Some(PathBuf::from(args.next().ok_or("--script needs a file")?)),
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    Ok((port, script.ok_or("--script is required")?))
}
