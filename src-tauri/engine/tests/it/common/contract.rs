//! What the contract tests against real agents share (`contract_cli`, `contract_acp`): the
//! check that they run in a loopback-only network namespace, a session's working copy,
//! running one turn through a `Driver` (stopping it when asked), and reading its events
//! and the requests the scripted model server recorded.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kiln_engine::testing::drivers::events::{DriverEvent, Usage};
use kiln_engine::testing::drivers::{Driver, TurnRequest, TurnSink};
use kiln_engine::testing::process::Running;
use kiln_model_server::{ModelServer, RecordedRequest};
use tempfile::TempDir;
use tokio::sync::mpsc;

/// A turn that has not ended by then has hung: fail rather than block CI.
pub(crate) const TURN_TIMEOUT: Duration = Duration::from_secs(120);

/// Kiln's instructions for every turn here; the marker makes them easy to find in a
/// request body however the CLI wraps them.
pub(crate) const INSTRUCTIONS: &str = "Kiln session context (kiln-contract-7f3a): you are working in modules/cart.";
pub(crate) const HANDOFF: &str = "HANDOFF: none - done";
pub(crate) const NOTES: &str = "# Cart notes\n\nTotals are computed in cents.\n";
/// A distinctive provider message, so the test knows the error it sees is the scripted one.
pub(crate) const PROVIDER_ERROR: &str = "kiln-contract: the scripted provider refused this request";

/// `KILN_AGENT_CLI_DIR`, once sure the CLIs can reach nothing but loopback from here. A
/// contract test that cannot run must fail, never pass having checked nothing.
pub(crate) fn sandboxed_cli_dir(clis: &[&str]) -> PathBuf {
    // /proc/self/net/dev lists this process's namespace; /sys/class/net would not (it
    // shows the namespace sysfs was mounted in, so the host's interfaces).
    let table = std::fs::read_to_string("/proc/self/net/dev").expect("read /proc/self/net/dev");
    let interfaces: Vec<&str> = table.lines().skip(2).filter_map(|l| l.split(':').next()).map(str::trim).collect();
    assert_eq!(
        interfaces,
        ["lo"],
        "contract tests run the real agent CLIs only in a loopback-only network namespace \
         (`unshare -n sh -c 'ip link set lo up && exec cargo test ...'`, as scripts/test does)"
    );
    let dir = std::env::var_os("KILN_AGENT_CLI_DIR")
        .filter(|d| !d.is_empty())
        .expect("KILN_AGENT_CLI_DIR must name the directory scripts/deps installs the agent CLIs into");
    let dir = PathBuf::from(dir);
    for cli in clis {
        let binary = dir.join("node_modules/.bin").join(cli);
        assert!(binary.exists(), "{} is missing: run scripts/deps", binary.display());
    }
    dir
}

/// A session's working copy: a git repository with one module, as Kiln hands an agent.
pub(crate) struct Session {
    _dir: TempDir,
    pub root: PathBuf,
    pub module: PathBuf,
}

impl Session {
    pub(crate) fn new() -> Self {
        let dir = TempDir::new().unwrap();
        // Canonical, so paths compare equal to the ones the CLIs report.
        let root = dir.path().canonicalize().unwrap();
        let module = root.join("modules/cart");
        std::fs::create_dir_all(&module).unwrap();
        std::fs::write(module.join("README.md"), "# cart\n").unwrap();
        let repo = git2::Repository::init(&root).unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("modules/cart/README.md")).unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let who = git2::Signature::now("Kiln tests", "tests@kiln.invalid").unwrap();
        repo.commit(Some("HEAD"), &who, &who, "cart module", &tree, &[]).unwrap();
        Session { _dir: dir, root, module }
    }

    pub(crate) fn request(&self, model: &str, prompt: &str, resume_id: Option<String>) -> TurnRequest {
        TurnRequest {
            workdir: self.root.clone(),
            session_dir: self.root.with_extension("session"),
            prompt: prompt.into(),
            instructions: INSTRUCTIONS.into(),
            resume_id,
            model: Some(model.into()),
            read_only: false,
            environment: Default::default(),
            mcp: Vec::new(),
        }
    }
}

/// Runs one turn through the driver and returns its events, failing (and killing what
/// it started) if it does not end within `TURN_TIMEOUT`.
pub(crate) async fn run_turn(driver: &dyn Driver, request: TurnRequest, server: &ModelServer) -> Vec<DriverEvent> {
    run_turn_stopping(driver, request, server, |_| false).await
}

/// `run_turn`, stopping the turn (the operator's Stop: `TurnSink::stop`) as soon as the
/// events so far satisfy `stop_when`. Nothing here kills the agent then: the driver must
/// end the turn by itself.
pub(crate) async fn run_turn_stopping(
    driver: &dyn Driver,
    request: TurnRequest,
    server: &ModelServer,
    stop_when: impl Fn(&[DriverEvent]) -> bool,
) -> Vec<DriverEvent> {
    let (sender, mut receiver) = mpsc::unbounded_channel();
    let group = Arc::new(AtomicI32::new(0));
    let on_process = {
        let group = group.clone();
        Box::new(move |running: Running| group.store(running.pgid, Ordering::SeqCst))
    };
    let sink = TurnSink::new(sender, on_process);
    let stop = sink.stop.clone();
    let started = Instant::now();
    let run = driver.run(request, sink);
    tokio::pin!(run);
    let deadline = tokio::time::sleep(TURN_TIMEOUT);
    tokio::pin!(deadline);
    let mut events = Vec::new();
    let outcome = loop {
        tokio::select! {
            result = &mut run => break Some(result),
            Some(event) = receiver.recv() => {
                events.push(event);
                if !stop.is_cancelled() && stop_when(&events) {
                    stop.cancel();
                }
            }
            _ = &mut deadline => break None,
        }
    };
    while let Ok(event) = receiver.try_recv() {
        events.push(event);
    }
    // Shown with a failure (or --nocapture): how near a slow turn came to the timeout.
    eprintln!("{} turn took {:.1?}", driver.id(), started.elapsed());
    match outcome {
        Some(Ok(())) => events,
        Some(Err(error)) => {
            panic!("the {} driver could not run the turn: {error}; {}", driver.id(), explain(&events, server))
        }
        None => {
            Running { pgid: group.load(Ordering::SeqCst) }.kill();
            panic!("the {} turn did not end within {TURN_TIMEOUT:?}; {}", driver.id(), explain(&events, server))
        }
    }
}

/// The session id the turn started with; there must be exactly one.
pub(crate) fn started(events: &[DriverEvent], server: &ModelServer) -> String {
    let ids: Vec<&String> = events
        .iter()
        .filter_map(|e| if let DriverEvent::SessionStarted { resume_id, .. } = e { Some(resume_id) } else { None })
        .collect();
    assert_eq!(ids.len(), 1, "one SessionStarted; {}", explain(events, server));
    ids[0].clone()
}

/// The final text of a turn that must have ended well, as its last event.
pub(crate) fn ended_well(events: &[DriverEvent], server: &ModelServer) -> String {
    match events.last() {
        Some(DriverEvent::TurnEnded { is_error: false, final_text: Some(text), error: None, .. }) => text.clone(),
        _ => panic!("the turn should end well with a final text; {}", explain(events, server)),
    }
}

/// The error of a turn that must have ended as failed, as its last event.
pub(crate) fn ended_badly(events: &[DriverEvent], server: &ModelServer) -> String {
    match events.last() {
        Some(DriverEvent::TurnEnded { is_error: true, error: Some(error), .. }) => error.clone(),
        _ => panic!("the turn should end with an error; {}", explain(events, server)),
    }
}

pub(crate) fn usage(events: &[DriverEvent]) -> Usage {
    let usages: Vec<&Usage> =
        events.iter().filter_map(|e| if let DriverEvent::Usage(u) = e { Some(u) } else { None }).collect();
    assert_eq!(usages.len(), 1, "one Usage per turn: {events:#?}");
    usages[0].clone()
}

/// The model requests to `path`, in order.
pub(crate) fn model_requests(server: &ModelServer, path: &str) -> Vec<RecordedRequest> {
    server.requests().into_iter().filter(|r| r.method == "POST" && r.path == path).collect()
}

/// What happened, for a failure message: the events and a line per recorded request.
pub(crate) fn explain(events: &[DriverEvent], server: &ModelServer) -> String {
    let requests: Vec<String> = server.requests().iter().map(summary).collect();
    format!("events: {events:#?}\nrequests:\n  {}", requests.join("\n  "))
}

pub(crate) fn summary(request: &RecordedRequest) -> String {
    let body = &request.body;
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["name"].as_str().or(t["type"].as_str()).unwrap_or("?"))
        .collect();
    let model = body["model"].as_str().unwrap_or("-");
    let query = request.query.as_deref().map(|q| format!("?{q}")).unwrap_or_default();
    format!(
        "{} {}{query} model={model} stream={} tools=[{}]",
        request.method,
        request.path,
        body["stream"],
        tools.join(",")
    )
}
