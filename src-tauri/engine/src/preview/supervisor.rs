//! The preview process's supervisor: runs `[preview] command` in the session's working
//! copy with a free `$PORT`, waits for `ready` (an HTTP path answering below 400, a log
//! line matching `re:<regex>`, or else the port accepting connections), points the
//! gateway at it, and starts it again when it exits. Quick failures back off (1, 2, 4 s)
//! and the third in a row is a crash, shown with the log rather than retried forever.
//! The process runs in its own group, which is killed whole, and dies with Kiln. It is
//! the agent's code, so it runs scoped like gates (`kiln_runtime::sandbox::Scope`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::watch;

use super::Preview;
use crate::events::EventBus;
use crate::ids::SessionId;
use crate::workspace::Workspace;
use kiln_runtime::process::{Child, Command, Env};
use kiln_types::{PreviewState, SetupState};

/// A run shorter than this counts as a failure towards a crash.
const SHORT_RUN: Duration = Duration::from_secs(10);
/// Failures in a row before giving up.
const MAX_FAILURES: u32 = 3;
/// How long a stopped process gets to exit before its group is killed.
const GRACE: Duration = Duration::from_secs(3);

pub(super) struct Job {
    pub ws: Arc<Workspace>,
    pub events: Arc<EventBus>,
    pub preview: Arc<Preview>,
    pub session_id: SessionId,
    pub command: String,
    pub ready: Option<String>,
    pub idle: Duration,
    pub ready_timeout: Duration,
    pub workdir: PathBuf,
    pub port: watch::Sender<Option<u16>>,
    pub stop: watch::Receiver<bool>,
}

/// How one run of the process ended.
enum Ended {
    Stopped,
    Exited { code: Option<i32>, ran: Duration, was_ready: bool },
    NeverReady,
    Idle,
}

pub(super) async fn run(mut job: Job) {
    let preview = job.preview.clone();
    let _done = Done(preview.clone());
    if !wait_for_setup(&mut job).await {
        return;
    }
    let mut failures = 0u32;
    loop {
        let ended = match once(&mut job).await {
            Ok(ended) => ended,
            Err(e) => {
                preview.log_line(format!("kiln: cannot start the preview: {e}"));
                preview.set(&job.events, |s| {
                    s.state = PreviewState::Crashed;
                    s.message = Some(format!("the preview could not start: {e}"));
                });
                return;
            }
        };
        let _ = job.port.send(None);
        match ended {
            Ended::Stopped => return,
            Ended::Idle => {
                let minutes = (job.idle.as_secs_f64() / 60.0).round().max(1.0);
                retire(&job, format!("stopped after {minutes} minutes without a visit")).await;
                return;
            }
            Ended::NeverReady => {
                let how = match job.ready.as_deref() {
                    Some(r) if r.starts_with("re:") => format!("it never printed a line matching `{}`", &r[3..]),
                    Some(path) => format!("{path} never answered with a status below 400"),
                    None => "nothing listened on $PORT".into(),
                };
                preview.set(&job.events, |s| {
                    s.state = PreviewState::Crashed;
                    s.port = None;
                    s.message = Some(format!(
                        "the preview did not become ready within {} s: {how} (does it listen on the port Kiln gives it in $PORT?)",
                        job.ready_timeout.as_secs()
                    ));
                });
                return;
            }
            Ended::Exited { code, ran, was_ready } => {
                failures = if !was_ready || ran < SHORT_RUN { failures + 1 } else { 1 };
                let how = code.map(|c| format!("exit code {c}")).unwrap_or_else(|| "killed by a signal".into());
                if failures >= MAX_FAILURES {
                    preview.set(&job.events, |s| {
                        s.state = PreviewState::Crashed;
                        s.port = None;
                        s.message = Some(format!("the preview exited {failures} times in a row ({how}); see its log"));
                    });
                    return;
                }
                let backoff = Duration::from_secs(1 << (failures - 1).min(3));
                preview.log_line(format!(
                    "kiln: the preview exited ({how}); starting it again in {} s",
                    backoff.as_secs()
                ));
                preview.set(&job.events, |s| {
                    s.state = PreviewState::Restarting;
                    s.port = None;
                    s.message = Some(format!("exited ({how}); restarting"));
                    s.restarts += 1;
                });
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = stopped(&mut job.stop) => return,
                }
            }
        }
    }
}

/// Resolves when the preview is told to stop (dropping the guard `wait_for` holds).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stop| *stop).await;
}

/// Marks the supervisor finished however it ends, so a stop can wait for it.
struct Done(Arc<Preview>);

impl Drop for Done {
    fn drop(&mut self) {
        self.0.finished.send_replace(true);
    }
}

/// Waits until the supervisor (and so the process) is gone.
pub(super) async fn wait_stopped(preview: &Preview) {
    let mut finished = preview.finished.subscribe();
    let _ = finished.wait_for(|done| *done).await;
}

/// A preview command usually needs the session's dependencies: wait for its setup.
async fn wait_for_setup(job: &mut Job) -> bool {
    let mut said = false;
    loop {
        let setting_up =
            matches!(crate::session::view(&job.ws, &job.session_id).await, Ok(s) if s.setup == SetupState::Running);
        if !setting_up {
            return true;
        }
        if !said {
            job.preview.set(&job.events, |s| s.message = Some("waiting for the session's setup to finish".into()));
            said = true;
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(300)) => {}
            _ = stopped(&mut job.stop) => return false,
        }
    }
}

/// Stops an idle preview: process (already gone) and gateway. The record stays, so
/// the view can say why it stopped until it is started again.
async fn retire(job: &Job, why: String) {
    let gateway = job.preview.gateway.lock().unwrap().take();
    if let Some(gateway) = gateway {
        gateway.stop().await;
    }
    job.preview.set(&job.events, |s| {
        s.state = PreviewState::Stopped;
        s.port = None;
        s.message = Some(why);
    });
}

/// One run: start, wait for ready, serve until it exits or is stopped.
async fn once(job: &mut Job) -> std::io::Result<Ended> {
    let port = free_port()?;
    // The server is the agent's code: scoped like gates, writing only to the working copy.
    let extra = [("PORT".to_string(), port.to_string())];
    let session_dir = job.ws.session_dir(&job.session_id);
    let scope = kiln_runtime::process::project_scope(
        &session_dir,
        &[&job.workdir],
        &[&job.workdir],
        &extra,
        &job.ws.config.environment,
    )?;
    let mut child = spawn(&job.command, &job.workdir, &scope)?;
    let started = Instant::now();
    job.preview.set(&job.events, |s| {
        s.state = PreviewState::Starting;
        s.port = Some(port);
        s.message = None;
    });
    job.preview.log_line(format!("kiln: $ {} (PORT={port})", job.command));

    let pattern = job.ready.as_deref().and_then(|r| r.strip_prefix("re:")).and_then(|r| regex::Regex::new(r).ok());
    let (matched_tx, matched_rx) = watch::channel(false);
    let matched_tx = Arc::new(matched_tx);
    for stream in [child.inner.stdout.take().map(boxed), child.inner.stderr.take().map(boxed)].into_iter().flatten() {
        tokio::spawn(pump(stream, job.preview.clone(), pattern.clone(), matched_tx.clone()));
    }

    let ready = wait_ready(job.ready.as_deref(), port, matched_rx);
    let became_ready = tokio::select! {
        ok = tokio::time::timeout(job.ready_timeout, ready) => ok.is_ok(),
        status = child.wait() => {
            return Ok(Ended::Exited { code: status.ok().and_then(|s| s.code()), ran: started.elapsed(), was_ready: false });
        }
        _ = stopped(&mut job.stop) => {
            end(&mut child).await;
            return Ok(Ended::Stopped);
        }
    };
    if !became_ready {
        end(&mut child).await;
        return Ok(Ended::NeverReady);
    }
    let _ = job.port.send(Some(port));
    job.preview.set(&job.events, |s| s.state = PreviewState::Ready);
    let ready_at = Instant::now();

    let tick = (job.idle / 4).clamp(Duration::from_millis(200), Duration::from_secs(30));
    loop {
        tokio::select! {
            status = child.wait() => {
                end(&mut child).await;
                return Ok(Ended::Exited { code: status.ok().and_then(|s| s.code()), ran: ready_at.elapsed(), was_ready: true });
            }
            _ = stopped(&mut job.stop) => {
                end(&mut child).await;
                return Ok(Ended::Stopped);
            }
            _ = tokio::time::sleep(tick) => {
                let last = job.preview.activity.last_request_ms.load(std::sync::atomic::Ordering::Relaxed);
                let now = time::OffsetDateTime::now_utc().unix_timestamp_nanos() as i64 / 1_000_000;
                if now - last > job.idle.as_millis() as i64 {
                    end(&mut child).await;
                    return Ok(Ended::Idle);
                }
            }
        }
    }
}

fn boxed(stream: impl AsyncRead + Unpin + Send + 'static) -> Box<dyn AsyncRead + Unpin + Send> {
    Box::new(stream)
}

async fn pump(
    stream: Box<dyn AsyncRead + Unpin + Send>,
    preview: Arc<Preview>,
    pattern: Option<regex::Regex>,
    matched: Arc<watch::Sender<bool>>,
) {
    let mut lines = BufReader::new(stream).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if pattern.as_ref().is_some_and(|p| p.is_match(&line)) {
            matched.send_replace(true);
        }
        preview.log_line(line);
    }
}

/// Resolves when the application is ready by the workspace's definition.
async fn wait_ready(ready: Option<&str>, port: u16, mut matched: watch::Receiver<bool>) {
    match ready {
        Some(r) if r.starts_with("re:") => {
            let _ = matched.wait_for(|m| *m).await;
        }
        Some(path) => {
            let client =
                reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(2)).build().expect("an HTTP client");
            let url = format!("http://127.0.0.1:{port}/{}", path.trim_start_matches('/'));
            loop {
                if let Ok(response) = client.get(&url).send().await {
                    if response.status().as_u16() < 400 {
                        return;
                    }
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
        None => loop {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        },
    }
}

fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A simple command is `exec`ed by the shell, so the server itself carries the
/// parent-death signal below (it survives an `execve`, not a `fork`): killed outright,
/// Kiln still leaves no server behind. A compound command keeps its shell.
fn shell_line(command: &str) -> String {
    let compound = command.chars().any(|c| matches!(c, ';' | '&' | '|' | '\n' | '(' | ')' | '`'))
        || command.trim_start().starts_with("exec ");
    if compound {
        command.to_string()
    } else {
        format!("exec {command}")
    }
}

fn spawn(command: &str, dir: &std::path::Path, scope: &kiln_runtime::sandbox::Scope) -> std::io::Result<Child> {
    let prepared = scope.confinement().prepare()?;
    // Confined after the parent-death signal is set; the ruleset lives until the spawn
    // returns.
    Command::shell(&shell_line(command), dir, Env::Only(scope.env())).killed_with_kiln().spawn(Some(&prepared))
}

/// Asks the group to exit, then kills whatever is left of it.
async fn end(child: &mut Child) {
    child.group().terminate();
    let _ = tokio::time::timeout(GRACE, child.wait()).await;
    child.kill();
    let _ = child.wait().await;
}

#[cfg(test)]
mod tests {
    #[test]
    fn simple_commands_are_execed() {
        assert_eq!(super::shell_line("node shell/server.js --port $PORT"), "exec node shell/server.js --port $PORT");
        assert_eq!(super::shell_line("npm run dev && echo done"), "npm run dev && echo done");
        assert_eq!(super::shell_line("exec node x"), "exec node x");
        assert_eq!(super::shell_line("a | b"), "a | b");
    }
}
