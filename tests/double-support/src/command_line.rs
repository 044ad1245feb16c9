//! What the doubles' binaries share: reading `--port`, reporting bad arguments, the line
//! `listening on http://127.0.0.1:PORT` that browser and desktop tests wait for, and the
//! request log on stderr for whoever runs a double by hand.

use std::process::ExitCode;
use std::time::Duration;

/// The value after `--port` (0 for any free port).
pub fn port_value(value: Option<String>) -> Result<u16, String> {
    let value = value.ok_or("--port needs a value")?;
    value.parse().map_err(|_| format!("--port: not a port: {value}"))
}

/// Reports bad arguments followed by the binary's `usage` line; exits with 2.
pub fn usage_error(message: &str, usage: &str) -> ExitCode {
    eprintln!("{message}\nusage: {usage}");
    ExitCode::from(2)
}

/// Prints `listening on <base_url>` once the double has `started`, then writes the `line`
/// of each request to stderr as it arrives, until the process is killed. When it could not
/// start, says why the binary `name` cannot listen on 127.0.0.1:`port` and fails.
pub fn serve_until_killed<D, R>(
    name: &str,
    port: u16,
    started: std::io::Result<D>,
    base_url: impl FnOnce(&D) -> String,
    requests: impl Fn(&D) -> Vec<R>,
    line: impl Fn(&R) -> String,
) -> ExitCode {
    let double = match started {
        Ok(double) => double,
        Err(error) => {
            eprintln!("{name}: cannot listen on 127.0.0.1:{port}: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!("listening on {}", base_url(&double));
    // Polling keeps the doubles free of logging hooks; a manual run needs no more.
    let mut seen = 0;
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let requests = requests(&double);
        for request in &requests[seen..] {
            eprintln!("{}", line(request));
        }
        seen = requests.len();
    }
}

// The rest is covered through the doubles' own tests; the binaries' argument parsing is not.
#[cfg(test)]
mod tests {
    use super::port_value;

    #[test]
    fn port_values() {
        assert_eq!(port_value(Some("8123".into())), Ok(8123));
        assert_eq!(port_value(None), Err("--port needs a value".into()));
        assert_eq!(port_value(Some("http".into())), Err("--port: not a port: http".into()));
    }
}
