//! Named pause points for the crash tests: a place in the engine where a test may stop
//! the process on purpose, to kill it (SIGKILL) at exactly that moment and check what
//! the next start makes of it. A point does nothing unless the process was started with
//! `KILN_PAUSE_AT` naming it; then it writes the file `KILN_PAUSE_MARKER` names (so the
//! test knows the process got there) and blocks its thread for good. Kiln itself never
//! sets either variable, and the processes it starts never see them (their environment
//! is an allowlist).

use std::sync::OnceLock;

/// The point this process should stop at and the marker to write there, read once.
fn wanted() -> Option<&'static (String, std::path::PathBuf)> {
    static WANTED: OnceLock<Option<(String, std::path::PathBuf)>> = OnceLock::new();
    WANTED
        .get_or_init(|| {
            let at = std::env::var("KILN_PAUSE_AT").ok().filter(|a| !a.is_empty())?;
            let marker = std::env::var_os("KILN_PAUSE_MARKER")?;
            Some((at, marker.into()))
        })
        .as_ref()
}

/// Stops the process here, forever, when it was asked to stop at `name`.
pub(crate) fn pause_point(name: &str) {
    let Some((at, marker)) = wanted() else { return };
    if at != name {
        return;
    }
    let stop = || -> ! {
        // A moment for the rest of the process (the tasks this one woke, queued writes)
        // to go on as it would have, then the test is told and may kill it.
        std::thread::sleep(std::time::Duration::from_millis(300));
        let _ = std::fs::write(marker, name);
        tracing::warn!("paused at `{name}` for a crash test");
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    };
    // On a multi-threaded runtime the worker's queue moves to another thread first, so
    // the tasks this one woke are not stuck behind it.
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(stop)
        }
        _ => stop(),
    }
}
