//! The `load` part of `scripts/bench`: `kiln serve` on loopback (the same `kiln_serve::serve`
//! the `kiln serve` command runs, in this process) against a generated git workspace, first
//! with no event stream open (the anchor), then with 50 event streams, each phase sending 200
//! API calls a second (reads of sessions, and renames that publish an event). Prints the p99
//! latency of both phases and whether every stream received every event published while it
//! was open, in order, none twice, none missing. Talks to 127.0.0.1 only; bounded in time
//! (`KILN_BENCH_LOAD_SECONDS` per phase, 15 by default) and so in count.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kiln_engine::types::*;
use kiln_engine::{Engine, EngineOptions};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const STREAMS: usize = 50;
const CALLS_PER_SECOND: u64 = 200;
const SESSIONS: usize = 5;
const GOAL_P99_MS: f64 = 50.0;
const LATENCY: &str = "kiln serve: 200 API calls/s with 50 event streams, p99 latency";
const DELIVERED: &str = "kiln serve: 200 API calls/s with 50 event streams, events delivered";

type Failure = Box<dyn std::error::Error + Send + Sync>;

fn main() {
    // `cargo bench` passes `--bench`; a filter would be meaningless here.
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => return unmeasured(&format!("no temporary directory: {e}")),
    };
    match run(dir.path()) {
        Ok((loaded, anchor, delivery)) => {
            let met = |ok: bool| if ok { "met" } else { "MISSED" };
            let latency_ok = loaded.errors == 0 && loaded.p99_ms() < GOAL_P99_MS;
            row(LATENCY, &loaded.describe(), &anchor.describe_anchor(), "p99 < 50 ms", met(latency_ok));
            row(
                DELIVERED,
                &delivery.describe(),
                &format!("{} events published", delivery.published),
                "no dropped event",
                met(delivery.complete()),
            );
        }
        Err(e) => unmeasured(&e.to_string()),
    }
    // The server's runtime is still serving; the process ending stops it.
    drop(dir);
    std::process::exit(0);
}

fn row(measure: &str, kiln: &str, anchor: &str, goal: &str, verdict: &str) {
    println!("bench-row\t{measure}\t{kiln}\t{anchor}\t{goal}\t{verdict}");
}

fn unmeasured(why: &str) {
    let why = why.replace(['\t', '\n'], " ");
    row(LATENCY, &format!("not measured: {why}"), "—", "p99 < 50 ms", "unmeasured");
    row(DELIVERED, &format!("not measured: {why}"), "—", "no dropped event", "unmeasured");
}

fn phase_length() -> Duration {
    let seconds = std::env::var("KILN_BENCH_LOAD_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(15u64);
    Duration::from_secs(seconds.clamp(1, 120))
}

/// Both phases against one server; the server and the clients each on a runtime of their own.
fn run(dir: &Path) -> Result<(Latencies, Latencies, Delivery), Failure> {
    // The machine's load, in the log: the other programs on it stretch the tail too.
    eprintln!("load: load average {}", std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim());
    let root = dir.join("app");
    generate_workspace(&root)?;
    let server = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let (engine, addr, token) = server.block_on(start(&root, &dir.join("config")))?;
    let client = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let result = client.block_on(async {
        let cookie = connect(addr, &token).await?;
        let mut sessions = Vec::new();
        for n in 0..SESSIONS {
            let (status, body) =
                call_once(addr, &cookie, "create_session", &format!(r#"{{"brief":"Load session {n}"}}"#)).await?;
            if status != 200 {
                return Err(format!("create_session answered {status}: {}", String::from_utf8_lossy(&body)).into());
            }
            let view: serde_json::Value = serde_json::from_slice(&body)?;
            sessions.push(view["id"].as_str().ok_or("a session without an id")?.to_string());
        }
        let length = phase_length();
        eprintln!("load: anchor phase, {CALLS_PER_SECOND} calls/s for {length:?}, no stream open");
        let anchor = send_calls(addr, &cookie, &sessions, length).await;
        eprintln!("load: anchor {}\n{}", anchor.describe(), anchor.per_command());

        // Every stream resumes from the same id, so each must then see the same events.
        let from = engine.events().last_id();
        let mut streams = Vec::new();
        for _ in 0..STREAMS {
            let cookie = connect(addr, &token).await?;
            streams.push(Stream::open(addr, &cookie, from).await?);
        }
        let readers: Vec<_> = streams.into_iter().map(|s| tokio::spawn(s.read_until_stopped())).collect();
        eprintln!("load: {STREAMS} streams open from event {from}; {CALLS_PER_SECOND} calls/s for {length:?}");
        let loaded = send_calls(addr, &cookie, &sessions, length).await;
        eprintln!("load: with streams {}\n{}", loaded.describe(), loaded.per_command());
        let last = engine.events().last_id();
        // Delivery is over once every stream has the last event, or after a bounded wait.
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline && !received_all(last) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        STOP.store(true, std::sync::atomic::Ordering::SeqCst);
        let mut delivery = Delivery { published: last - from, streams: Vec::new() };
        for reader in readers {
            delivery.streams.push(reader.await?.check(from, last));
        }
        eprintln!("load: delivery {}", delivery.describe());
        eprintln!("load: load average {}", std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim());
        Ok::<_, Failure>((loaded, anchor, delivery))
    });
    // Nothing the sessions started may outlive the bench.
    server.block_on(engine.shutdown());
    client.shutdown_timeout(Duration::from_secs(1));
    server.shutdown_timeout(Duration::from_secs(1));
    result
}

/// A git repository of one package with a few files, committed, that needs no setup step.
fn generate_workspace(root: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(root.join("src"))?;
    std::fs::write(root.join("package.json"), r#"{"name":"load","version":"1.0.0"}"#)?;
    std::fs::write(root.join("kiln.toml"), "[session]\nsetup = \"\"\n")?;
    for n in 0..50 {
        std::fs::write(root.join(format!("src/file{n}.js")), format!("export const n{n} = {n};\n"))?;
    }
    for args in [&["init", "-q", "-b", "main"][..], &["add", "-A"], &["commit", "-q", "-m", "load"]] {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .env("GIT_AUTHOR_NAME", "Bench")
            .env("GIT_AUTHOR_EMAIL", "bench@example.invalid")
            .env("GIT_COMMITTER_NAME", "Bench")
            .env("GIT_COMMITTER_EMAIL", "bench@example.invalid")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .map_err(|e| format!("git: {e}"))?;
        if !status.success() {
            return Err(format!("git {args:?} failed").into());
        }
    }
    Ok(())
}

/// Serves `root` on a free loopback port: the engine, the address and the server's token.
async fn start(root: &Path, config: &Path) -> Result<(Arc<Engine>, SocketAddr, String), Failure> {
    let engine = Arc::new(Engine::new(EngineOptions {
        config_dir: config.to_path_buf(),
        transport: Transport::Serve,
        mode: ServeMode::Loopback,
        allow_agent_commands: false,
        allow_terminals: false,
    }));
    engine.open_workspace(OpenWorkspaceArgs { path: root.display().to_string() }).await?;
    let access = Arc::new(kiln_serve::access::Access::open(config, None).await.map_err(|e| e.message)?);
    let assets = Arc::new(kiln_serve::DirAssets(std::env::temp_dir()));
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(kiln_serve::serve(
        engine.clone(),
        assets,
        "127.0.0.1:0".parse()?,
        ServeMode::Loopback,
        access,
        config.to_path_buf(),
        move |ready| {
            let _ = tx.send((ready.addr, ready.token.map(|t| t.secret().to_string()).unwrap_or_default()));
        },
    ));
    let (addr, token) = rx.await?;
    Ok((engine, addr, token))
}

/// One connection that sends requests one after another (HTTP/1.1 keep-alive, as a page does).
struct Connection {
    stream: BufReader<TcpStream>,
    port: u16,
}

impl Connection {
    async fn open(addr: SocketAddr) -> Result<Connection, Failure> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Connection { stream: BufReader::new(stream), port: addr.port() })
    }

    /// `POST /api/<command>`: the status, the `set-cookie` header if any, and the body.
    async fn post(
        &mut self,
        cookie: Option<&str>,
        command: &str,
        body: &str,
    ) -> Result<(u16, Option<String>, Vec<u8>), Failure> {
        let cookie = cookie.map(|c| format!("Cookie: {c}\r\n")).unwrap_or_default();
        let request = format!(
            "POST /api/{command} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nx-kiln: 1\r\n{cookie}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.port,
            body.len()
        );
        self.stream.get_mut().write_all(request.as_bytes()).await?;
        let mut line = String::new();
        self.stream.read_line(&mut line).await?;
        let status: u16 = line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).ok_or("no status line")?;
        let (mut length, mut set_cookie) = (None, None);
        loop {
            line.clear();
            if self.stream.read_line(&mut line).await? == 0 {
                return Err("the connection closed in the headers".into());
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').ok_or("a header without a colon")?;
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse::<usize>().ok(),
                "set-cookie" => set_cookie = value.trim().split(';').next().map(str::to_string),
                _ => {}
            }
        }
        let mut body = vec![0; length.ok_or("an answer without a content-length")?];
        self.stream.read_exact(&mut body).await?;
        Ok((status, set_cookie, body))
    }
}

/// Opens a browser session with the server's token; returns its cookie (`name=secret`).
async fn connect(addr: SocketAddr, token: &str) -> Result<String, Failure> {
    let body = serde_json::json!({ "token": token }).to_string();
    let (status, cookie, body) = Connection::open(addr).await?.post(None, "connect", &body).await?;
    match cookie {
        Some(cookie) if status == 200 => Ok(cookie),
        _ => Err(format!("connect answered {status}: {}", String::from_utf8_lossy(&body)).into()),
    }
}

async fn call_once(addr: SocketAddr, cookie: &str, command: &str, body: &str) -> Result<(u16, Vec<u8>), Failure> {
    let (status, _, body) = Connection::open(addr).await?.post(Some(cookie), command, body).await?;
    Ok((status, body))
}

/// What one phase measured: each call's latency, from when it was due to its whole answer.
struct Latencies {
    millis: Vec<f64>,
    /// Each call's command beside its latency, for the per-command lines of the log.
    by_command: Vec<(&'static str, f64)>,
    /// How many calls took over the goal, per second of the phase: a stall shows as a burst.
    slow_per_second: Vec<usize>,
    errors: usize,
    length: Duration,
}

impl Latencies {
    fn percentile(&self, p: f64) -> f64 {
        let mut sorted = self.millis.clone();
        sorted.sort_by(f64::total_cmp);
        if sorted.is_empty() {
            return f64::NAN;
        }
        sorted[((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1]
    }

    fn p99_ms(&self) -> f64 {
        self.percentile(0.99)
    }

    fn summary(&self) -> String {
        format!(
            "p50 {:.1} ms, max {:.1} ms; {} calls in {:.0} s, {} failed",
            self.percentile(0.5),
            self.percentile(1.0),
            self.millis.len() + self.errors,
            self.length.as_secs_f64(),
            self.errors
        )
    }

    fn describe(&self) -> String {
        format!("p99 {:.1} ms ({})", self.p99_ms(), self.summary())
    }

    /// One line per command: where the tail comes from (reads, or the renames that write).
    fn per_command(&self) -> String {
        let mut lines = Vec::new();
        for command in ["get_session", "list_sessions", "update_session"] {
            let millis = self.by_command.iter().filter(|(c, _)| *c == command).map(|(_, ms)| *ms).collect();
            let one = Latencies {
                millis,
                by_command: Vec::new(),
                slow_per_second: Vec::new(),
                errors: 0,
                length: self.length,
            };
            lines.push(format!(
                "  {command}: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
                one.percentile(0.5),
                one.p99_ms(),
                one.percentile(1.0)
            ));
        }
        lines.push(format!("  calls over {GOAL_P99_MS} ms, per second: {:?}", self.slow_per_second));
        lines.join("\n")
    }

    fn describe_anchor(&self) -> String {
        format!("p99 {:.1} ms with no stream open ({})", self.p99_ms(), self.summary())
    }
}

/// Sends `CALLS_PER_SECOND` calls a second for `length`, each due at its own instant
/// whether or not earlier ones have answered (an open loop, so a slow answer cannot hide
/// the calls queued behind it): 3 in 5 read a session, 1 in 5 lists them, 1 in 5 renames one.
async fn send_calls(addr: SocketAddr, cookie: &str, sessions: &[String], length: Duration) -> Latencies {
    let cpu_before = cpu_seconds();
    let idle: Arc<Mutex<Vec<Connection>>> = Arc::default();
    let interval = Duration::from_nanos(1_000_000_000 / CALLS_PER_SECOND);
    let count = (length.as_secs_f64() * CALLS_PER_SECOND as f64) as u64;
    let start = tokio::time::Instant::now();
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..count {
        let due = start + interval * n as u32;
        tokio::time::sleep_until(due).await;
        let session = &sessions[n as usize % sessions.len()];
        let (command, body) = match n % 5 {
            0 => ("list_sessions", "{}".to_string()),
            1 => ("update_session", format!(r#"{{"sessionId":"{session}","title":"Renamed {n}"}}"#)),
            _ => ("get_session", format!(r#"{{"sessionId":"{session}"}}"#)),
        };
        let (idle, cookie) = (idle.clone(), cookie.to_string());
        calls.spawn(async move {
            let taken = idle.lock().unwrap().pop();
            let mut connection = match taken {
                Some(c) => c,
                None => Connection::open(addr).await?,
            };
            let (status, _, body) = connection.post(Some(&cookie), command, &body).await?;
            let took = due.elapsed();
            idle.lock().unwrap().push(connection);
            if status != 200 {
                return Err(format!("{command} answered {status}: {}", String::from_utf8_lossy(&body)).into());
            }
            Ok::<_, Failure>((command, took, due - start))
        });
    }
    let slow_per_second = vec![0; length.as_secs() as usize + 1];
    let mut latencies = Latencies { millis: Vec::new(), by_command: Vec::new(), slow_per_second, errors: 0, length };
    while let Some(joined) = calls.join_next().await {
        match joined {
            Ok(Ok((command, took, due))) => {
                if took.as_secs_f64() * 1000.0 > GOAL_P99_MS {
                    latencies.slow_per_second[due.as_secs() as usize] += 1;
                }
                latencies.millis.push(took.as_secs_f64() * 1000.0);
                latencies.by_command.push((command, took.as_secs_f64() * 1000.0));
            }
            Ok(Err(e)) => {
                if latencies.errors < 5 {
                    eprintln!("load: a call failed: {e}");
                }
                latencies.errors += 1;
            }
            Err(e) => {
                eprintln!("load: a call panicked: {e}");
                latencies.errors += 1;
            }
        }
    }
    // Server and clients together: how much of the machine this phase needed.
    eprintln!("load: this process used {:.2} s of CPU in the {length:?} phase", cpu_seconds() - cpu_before);
    latencies
}

/// The CPU time (user and system) this process has used, from /proc/self/stat.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> =
        stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
    let ticks: f64 = fields.get(11..13).map(|t| t.iter().filter_map(|v| v.parse::<f64>().ok()).sum()).unwrap_or(0.0);
    ticks / 100.0
}

/// Raised when delivery is over: the readers stop.
static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// The last id each stream has received, for the wait for delivery to finish.
static RECEIVED: Mutex<Vec<Arc<std::sync::atomic::AtomicU64>>> = Mutex::new(Vec::new());

fn received_all(last: u64) -> bool {
    RECEIVED.lock().unwrap().iter().all(|r| r.load(std::sync::atomic::Ordering::SeqCst) >= last)
}

/// One `GET /api/events` (HTTP/1.0, so the body is the bare event stream).
struct Stream {
    socket: TcpStream,
    ids: Vec<u64>,
    resyncs: usize,
    latest: Arc<std::sync::atomic::AtomicU64>,
}

impl Stream {
    async fn open(addr: SocketAddr, cookie: &str, from: u64) -> Result<Stream, Failure> {
        let mut socket = TcpStream::connect(addr).await?;
        let request = format!(
            "GET /api/events HTTP/1.0\r\nHost: 127.0.0.1:{}\r\nCookie: {cookie}\r\nAccept: text/event-stream\r\nLast-Event-ID: {from}\r\n\r\n",
            addr.port()
        );
        socket.write_all(request.as_bytes()).await?;
        let latest = Arc::new(std::sync::atomic::AtomicU64::new(from));
        RECEIVED.lock().unwrap().push(latest.clone());
        Ok(Stream { socket, ids: Vec::new(), resyncs: 0, latest })
    }

    /// Reads events until `STOP`, keeping each one's id (and counting `resync`s, which say
    /// the stream fell behind and lost events).
    async fn read_until_stopped(mut self) -> Stream {
        let mut pending = String::new();
        let mut buf = vec![0u8; 64 * 1024];
        while !STOP.load(std::sync::atomic::Ordering::SeqCst) {
            let n = match tokio::time::timeout(Duration::from_millis(100), self.socket.read(&mut buf)).await {
                Err(_) => continue,
                Ok(Ok(0)) | Ok(Err(_)) => break,
                Ok(Ok(n)) => n,
            };
            pending.push_str(&String::from_utf8_lossy(&buf[..n]).replace("\r\n", "\n"));
            while let Some(end) = pending.find("\n\n") {
                let block: String = pending.drain(..end + 2).collect();
                if let Some(id) = block.lines().find_map(|l| l.strip_prefix("id: ")).and_then(|id| id.parse().ok()) {
                    self.ids.push(id);
                    self.latest.store(id, std::sync::atomic::Ordering::SeqCst);
                } else if block.contains(r#""type":"resync""#) {
                    self.resyncs += 1;
                }
            }
        }
        self
    }

    /// How this stream's events compare with `from + 1 ..= last`, every one once, in order.
    fn check(&self, from: u64, last: u64) -> StreamCheck {
        let expected: Vec<u64> = (from + 1..=last).collect();
        let received: std::collections::BTreeSet<u64> = self.ids.iter().copied().collect();
        StreamCheck {
            missing: expected.iter().filter(|id| !received.contains(id)).count(),
            duplicates: self.ids.len() - received.len(),
            out_of_order: self.ids.windows(2).filter(|w| w[1] <= w[0]).count(),
            resyncs: self.resyncs,
        }
    }
}

struct StreamCheck {
    missing: usize,
    duplicates: usize,
    out_of_order: usize,
    resyncs: usize,
}

struct Delivery {
    published: u64,
    streams: Vec<StreamCheck>,
}

impl Delivery {
    fn complete(&self) -> bool {
        self.published > 0
            && self.streams.len() == STREAMS
            && self.streams.iter().all(|s| s.missing + s.duplicates + s.out_of_order + s.resyncs == 0)
    }

    fn describe(&self) -> String {
        let sum = |f: fn(&StreamCheck) -> usize| self.streams.iter().map(f).sum::<usize>();
        let whole = self.streams.iter().filter(|s| s.missing + s.duplicates + s.out_of_order + s.resyncs == 0).count();
        format!(
            "{whole} of {} streams got all {} events in order; {} missing, {} twice, {} out of order, {} resyncs",
            self.streams.len(),
            self.published,
            sum(|s| s.missing),
            sum(|s| s.duplicates),
            sum(|s| s.out_of_order),
            sum(|s| s.resyncs)
        )
    }
}
