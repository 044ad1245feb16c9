//! `kiln serve --open`: the user's browser, opened on a loopback server already connected.
//! The link holds the server's token, so it goes to the browser inside a file (mode 0600,
//! beside the token's own file) that redirects to it, never on `xdg-open`'s command line,
//! which every process of the machine can read. The file goes when the server stops.

use std::path::{Path, PathBuf};

/// Removes the redirect file when dropped.
pub struct Opened(PathBuf);

impl Drop for Opened {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Writes the redirect to `link` and asks the desktop's default browser to open it. Says on
/// stderr when it cannot; the link printed before is then the way in.
pub fn open(config_dir: &Path, port: u16, link: &str) -> Option<Opened> {
    let file = config_dir.join(format!("loopback-{port}.html"));
    let escaped = link.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;");
    let page = format!(
        "<!doctype html>\n<meta charset=\"utf-8\">\n<meta http-equiv=\"refresh\" content=\"0;url={escaped}\">\n\
         <title>Kiln</title>\n<p><a href=\"{escaped}\">Open Kiln</a></p>\n"
    );
    if let Err(e) = kiln_serve::server_token::write_private(&file, page.as_bytes()) {
        eprintln!("kiln: could not open a browser ({}: {e}); open the link above", file.display());
        return None;
    }
    let opened = Opened(file.clone());
    let started = std::process::Command::new("xdg-open")
        .arg(format!("file://{}", file.display()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn();
    match started {
        // xdg-open hands the file to the browser and ends; reaped off the server's way.
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
        }
        Err(e) => eprintln!("kiln: could not open a browser (xdg-open: {e}); open the link above"),
    }
    Some(opened)
}
