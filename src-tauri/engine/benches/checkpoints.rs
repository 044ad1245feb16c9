//! The checkpoint benchmark (`scripts/bench`): what sessions and checkpoints cost on a
//! workspace of realistic size, side by side with the two designs Kiln could have used
//! instead: a full copy of the working copy (`cp -a`) and plain git (`git worktree add`,
//! `git add -A && git commit` in a scratch clone).
//!
//! It builds a synthetic git workspace in a temp dir (20,000 files, ~200 MB: nested
//! source directories, a few large files, and an ignored `node_modules/`), drives the
//! engine through the same calls a turn makes, prints one table and whether the goals
//! are met, and removes the temp dir. `--files N` (or `KILN_BENCH_FILES`) scales it.
//!
//! For `scripts/bench` it also prints its rows of the performance table, one
//! `bench-row<TAB>measure<TAB>Kiln<TAB>anchor<TAB>goal<TAB>met|MISSED` line each.
//!
//! Goals (issue 19, measured side by side in one run): a checkpoint after 10 changed
//! files ≤ 0.5× git `add -A && commit` and ≥ 20× faster than `cp -a`; a checkpoint with
//! nothing changed < 10 ms; session creation ≤ 1.0× `git worktree add`; a restore 10
//! files away ≤ 1.0× `git reset --hard`; store growth ≤ 1.1× the changed bytes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kiln_engine::testing::ids::SessionId;
use kiln_engine::testing::workspace::Workspace;
use kiln_engine::testing::{checkpoint, working_copy};
use kiln_engine::types::*;
use kiln_engine::{Engine, EngineOptions};

const DEFAULT_FILES: usize = 20_000;
/// A measurement whose first run is under this is repeated and reported as the median
/// of three; a slower one is run once, so the whole bench stays within minutes.
const CHEAP: Duration = Duration::from_secs(2);
const CHANGED_PER_CHECKPOINT: usize = 10;
const DIFF_FILES: usize = 50;
const GROWTH_CHECKPOINTS: usize = 100;
/// `[session] max_checkpoints` of the bench's workspace: above the ~110 checkpoints the
/// rows before take, so pruning (which re-parents every kept checkpoint, runs
/// `git prune` and drops the stat caches) does not mix into them; it is timed on its own.
const MAX_CHECKPOINTS: i64 = 120;

fn main() {
    let files = file_count();
    let tmp = tempfile::Builder::new().prefix("kiln-bench-").tempdir().expect("a temp dir");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    // Set before any thread exists: git (CLI and libgit2 alike) reads no configuration
    // of this machine or user, and every commit has the same identity and dates.
    for (key, value) in [
        ("HOME", home.to_str().unwrap()),
        ("XDG_CONFIG_HOME", home.to_str().unwrap()),
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_AUTHOR_NAME", "Bench"),
        ("GIT_AUTHOR_EMAIL", "bench@example.invalid"),
        ("GIT_COMMITTER_NAME", "Bench"),
        ("GIT_COMMITTER_EMAIL", "bench@example.invalid"),
        ("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z"),
        ("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z"),
    ] {
        std::env::set_var(key, value);
    }
    // No automatic gc: one started in the background by a commit would repack (and
    // delete files) while the bench times its neighbours.
    std::fs::write(home.join(".gitconfig"), "[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n").unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(run(tmp.path(), files));
    drop(runtime);
    // Explicitly, so a failure to remove it is reported rather than ignored.
    tmp.close().expect("removing the bench's temp dir");
}

/// `--files N`, `--files=N` or `KILN_BENCH_FILES`; cargo's own `--bench` is ignored.
fn file_count() -> usize {
    let args: Vec<String> = std::env::args().collect();
    let mut from_args = None;
    for (i, arg) in args.iter().enumerate() {
        if arg == "--files" {
            from_args = args.get(i + 1).cloned();
        } else if let Some(n) = arg.strip_prefix("--files=") {
            from_args = Some(n.to_string());
        }
    }
    let text = from_args.or_else(|| std::env::var("KILN_BENCH_FILES").ok().filter(|s| !s.is_empty()));
    match text {
        None => DEFAULT_FILES,
        Some(t) => match t.parse::<usize>() {
            Ok(n) if n >= 500 => n,
            _ => panic!("--files wants a number of at least 500, not `{t}`"),
        },
    }
}

// ---------------------------------------------------------------------------------
// Measurements

#[derive(Clone, Copy)]
struct Measure {
    time: Duration,
    runs: usize,
}

impl Measure {
    fn cell(&self) -> String {
        let how = if self.runs == 1 { "1 run".to_string() } else { format!("median of {}", self.runs) };
        format!("{} ({how})", fmt_duration(self.time))
    }
}

fn median(mut times: Vec<Duration>) -> Measure {
    times.sort();
    Measure { time: times[times.len() / 2], runs: times.len() }
}

/// Runs `f` (which times its own work, leaving out its setup) once, and twice more when
/// that was cheap.
fn measure_sync(mut f: impl FnMut() -> Duration) -> Measure {
    let first = f();
    let mut times = vec![first];
    if first < CHEAP {
        times.push(f());
        times.push(f());
    }
    median(times)
}

fn fmt_duration(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.2} ms")
    } else if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}

fn fmt_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.1} KB", b / 1e3)
    }
}

fn progress(text: &str) {
    eprintln!("  … {text}");
}

// ---------------------------------------------------------------------------------
// The synthetic workspace

/// SplitMix64: a fixed seed gives the same workspace and the same changes every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "const",
    "let",
    "function",
    "return",
    "import",
    "export",
    "from",
    "value",
    "items",
    "count",
    "index",
    "result",
    "error",
    "async",
    "await",
    "config",
    "options",
    "user",
    "order",
    "cart",
    "price",
    "total",
    "update",
    "render",
    "state",
    "props",
    "this",
    "null",
    "true",
    "false",
    "if",
    "else",
    "for",
    "while",
    "new",
    "map",
    "filter",
    "reduce",
    "=",
    "=>",
    "+",
    "(",
    ")",
    "{",
    "}",
    ";",
    "id",
    "name",
    "list",
    "fetch",
    "response",
    "request",
    "handler",
    "module",
    "string",
    "number",
    "type",
    "interface",
    "default",
    "catch",
    "throw",
    "length",
];

/// Code-like text of about `len` bytes: lines of tokens, indented, as source files are,
/// so it compresses roughly as source code does.
fn text(rng: &mut Rng, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 80);
    while out.len() < len {
        for _ in 0..rng.below(4) {
            out.extend_from_slice(b"  ");
        }
        let words = 3 + rng.below(9);
        for w in 0..words {
            if w > 0 {
                out.push(b' ');
            }
            out.extend_from_slice(WORDS[rng.below(WORDS.len())].as_bytes());
            if rng.below(6) == 0 {
                out.extend_from_slice(rng.below(1000).to_string().as_bytes());
            }
        }
        out.push(b'\n');
    }
    out
}

fn binary(rng: &mut Rng, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        out.extend_from_slice(&rng.next().to_le_bytes());
    }
    out.truncate(len);
    out
}

enum Content {
    Text(usize),
    Binary(usize),
}

struct Spec {
    rel: String,
    content: Content,
    seed: u64,
}

struct Layout {
    specs: Vec<Spec>,
    /// Small tracked text files: the ones the benchmark changes.
    small: Vec<String>,
    ignored: usize,
}

/// The workspace's files: 15% in `node_modules/`, 0.15% large (3–7 MB, half binary
/// assets, half text fixtures), the rest small source files 20 to a directory, five
/// directory levels deep, every 50th of them 20–60 KB.
fn layout(files: usize) -> Layout {
    let mut rng = Rng(0x6b69_6c6e);
    let mut specs = Vec::with_capacity(files);
    let mut small = Vec::new();
    let mut push = |rel: String, content: Content, rng: &mut Rng| specs.push(Spec { rel, content, seed: rng.next() });
    push(".gitignore".into(), Content::Text(0), &mut rng);
    push("package.json".into(), Content::Text(0), &mut rng);
    push("README.md".into(), Content::Text(2_000), &mut rng);
    let ignored = files * 15 / 100;
    let large = (files * 3 / 2000).max(1);
    let sources = files - 3 - ignored - large;
    for k in 0..ignored {
        let rel = format!("node_modules/dep{:03}/lib/part{}/file{:02}.js", k / 20, k % 20 / 5, k % 20);
        let size = 300 + rng.below(3_000);
        push(rel, Content::Text(size), &mut rng);
    }
    for k in 0..large {
        let size = 3_000_000 + rng.below(4_000_000);
        if k % 2 == 0 {
            push(format!("assets/media/blob{k:03}.bin"), Content::Binary(size), &mut rng);
        } else {
            push(format!("fixtures/data/fixture{k:03}.json"), Content::Text(size), &mut rng);
        }
    }
    const EXT: &[&str] = &["ts", "tsx", "js", "json", "md", "css"];
    for k in 0..sources {
        let leaf = k / 20;
        let rel = format!(
            "packages/pkg{:02}/src/mod{}/part{}/file{:05}.{}",
            leaf / 100,
            leaf / 10 % 10,
            leaf % 10,
            k,
            EXT[k % EXT.len()]
        );
        let size = if k % 50 == 0 { 20_000 + rng.below(40_000) } else { 400 + rng.below(4_000) };
        small.push(rel.clone());
        push(rel, Content::Text(size), &mut rng);
    }
    Layout { specs, small, ignored }
}

fn content(spec: &Spec) -> Vec<u8> {
    let mut rng = Rng(spec.seed);
    match (spec.rel.as_str(), &spec.content) {
        (".gitignore", _) => b"node_modules/\n*.log\n".to_vec(),
        ("package.json", _) => b"{ \"name\": \"bench-app\", \"version\": \"1.0.0\", \"private\": true }\n".to_vec(),
        (_, Content::Text(len)) => text(&mut rng, *len),
        (_, Content::Binary(len)) => binary(&mut rng, *len),
    }
}

/// Writes every file, generating contents on every core; returns the bytes written.
fn write_tree(root: &Path, specs: &[Spec]) -> u64 {
    let dirs: BTreeSet<&Path> = specs.iter().filter_map(|s| Path::new(&s.rel).parent()).collect();
    for dir in dirs {
        std::fs::create_dir_all(root.join(dir)).unwrap();
    }
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).max(2);
    let total = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|scope| {
        for w in 0..workers {
            let total = &total;
            scope.spawn(move || {
                for spec in specs.iter().skip(w).step_by(workers) {
                    let bytes = content(spec);
                    total.fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
                    std::fs::write(root.join(&spec.rel), bytes).unwrap();
                }
            });
        }
    });
    total.into_inner()
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().expect("running git");
    assert!(out.status.success(), "git {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
}

fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().expect("running git");
    assert!(out.status.success(), "git {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Commits every tracked file of `specs` (already on disk) as the repository's one
/// commit through `git fast-import`, which writes a pack straight away: a real
/// repository's objects are packed, and `git add` would first write (and gc then
/// delete) a loose object per file. `git reset` then builds the index from it.
fn import_commit(root: &Path, specs: &[Spec]) {
    use std::io::Write;
    let config = Spec { rel: "kiln.toml".into(), content: Content::Text(0), seed: 0 };
    let tracked: Vec<&Spec> = specs.iter().filter(|s| !s.rel.starts_with("node_modules/")).chain([&config]).collect();
    let mut child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["fast-import", "--quiet", "--date-format=raw"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("running git fast-import");
    {
        let mut stream = std::io::BufWriter::with_capacity(1 << 20, child.stdin.take().unwrap());
        for (i, spec) in tracked.iter().enumerate() {
            let bytes = std::fs::read(root.join(&spec.rel)).unwrap();
            write!(stream, "blob\nmark :{}\ndata {}\n", i + 1, bytes.len()).unwrap();
            stream.write_all(&bytes).unwrap();
            stream.write_all(b"\n").unwrap();
        }
        // 2026-01-02T03:04:05Z, as every other commit of the bench.
        let who = "Bench <bench@example.invalid> 1767323045 +0000";
        write!(stream, "commit refs/heads/main\nauthor {who}\ncommitter {who}\ndata 7\ninitial\n").unwrap();
        for (i, spec) in tracked.iter().enumerate() {
            writeln!(stream, "M 100644 :{} {}", i + 1, spec.rel).unwrap();
        }
        stream.write_all(b"\n").unwrap();
        stream.flush().unwrap();
    }
    assert!(child.wait().unwrap().success(), "git fast-import failed");
    git(root, &["reset", "-q"]);
}

/// Wall-clock time of git commands run one after the other, each of which must succeed.
fn time_git(dir: &Path, commands: &[&[&str]]) -> Duration {
    let start = Instant::now();
    for args in commands {
        git(dir, args);
    }
    start.elapsed()
}

/// `cp -a` of `sources` into a new directory `dest`, which is left for the caller.
fn cp_a(sources: &[PathBuf], dest: &Path) -> Duration {
    std::fs::create_dir_all(dest).unwrap();
    let start = Instant::now();
    let status = Command::new("cp").arg("-a").args(sources).arg(dest).status().expect("running cp");
    let took = start.elapsed();
    assert!(status.success(), "cp -a failed");
    took
}

fn du_sb(path: &Path) -> u64 {
    let out = Command::new("du").arg("-sb").arg(path).output().expect("running du");
    String::from_utf8_lossy(&out.stdout).split_whitespace().next().and_then(|n| n.parse().ok()).expect("du -sb output")
}

/// Waits for the next whole second. The stat cache treats files modified in the second
/// it was written as possibly changed ("racily clean") and reads them again; a real turn
/// takes seconds, so the bench leaves that second behind, as a turn would.
fn next_second() {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    std::thread::sleep(Duration::from_nanos(1_000_000_000 - now.subsec_nanos() as u64 + 5_000_000));
}

// ---------------------------------------------------------------------------------
// Changes, applied alike to the session's working copy and to the scratch clone

struct Changes {
    rng: Rng,
    order: Vec<String>,
    next: usize,
    /// Bytes of new text written by every change so far.
    bytes: u64,
}

impl Changes {
    fn new(mut small: Vec<String>) -> Changes {
        let mut rng = Rng(0x6368_616e_6765);
        for i in (1..small.len()).rev() {
            let j = rng.below(i + 1);
            small.swap(i, j);
        }
        Changes { rng, order: small, next: 0, bytes: 0 }
    }

    /// The next `n` files (distinct until every small file was used), each with a few
    /// KB of new text in place of a block in its middle, as an edit would.
    fn next_batch(&mut self, n: usize, workdir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut batch = Vec::with_capacity(n);
        for _ in 0..n {
            let rel = self.order[self.next % self.order.len()].clone();
            self.next += 1;
            let old = std::fs::read(workdir.join(&rel)).unwrap();
            let len = 2_000 + self.rng.below(3_000);
            let added = text(&mut self.rng, len);
            let cut = line_start(&old, old.len() / 3);
            let resume = line_start(&old, old.len() * 2 / 3);
            let mut new = Vec::with_capacity(old.len() + added.len());
            new.extend_from_slice(&old[..cut]);
            new.extend_from_slice(&added);
            new.extend_from_slice(&old[resume..]);
            self.bytes += added.len() as u64;
            batch.push((rel, new));
        }
        batch
    }
}

fn line_start(bytes: &[u8], at: usize) -> usize {
    bytes[..at].iter().rposition(|&b| b == b'\n').map(|p| p + 1).unwrap_or(0)
}

fn apply(root: &Path, batch: &[(String, Vec<u8>)]) {
    for (rel, bytes) in batch {
        std::fs::write(root.join(rel), bytes).unwrap();
    }
}

// ---------------------------------------------------------------------------------
// The engine, called as a turn calls it

struct Session {
    ws: Arc<Workspace>,
    events: Arc<kiln_engine::testing::events::EventBus>,
    id: SessionId,
    module: String,
    workdir: PathBuf,
}

struct Timed {
    snapshot: Duration,
    take: Duration,
    sequence: i64,
}

/// A turn's checkpoint: the working copy snapshotted under the store's lock on a
/// blocking thread (through the stat cache in `sessions/<id>/index`), then recorded.
async fn engine_checkpoint(s: &Session, label: &str) -> Timed {
    let start = Instant::now();
    let tree = {
        let _guard = s.ws.store_lock.lock().await;
        let ws = s.ws.clone();
        let dir = s.workdir.clone();
        tokio::task::spawn_blocking(move || {
            ws.open_store().and_then(|store| working_copy::snapshot_workdir(&store, &dir))
        })
        .await
        .unwrap()
        .expect("snapshotting the working copy")
    };
    let snapshot = start.elapsed();
    let sequence = checkpoint::take(&s.ws, &s.events, &s.id, tree, label, Some("bench"), Some(&s.module))
        .await
        .expect("taking a checkpoint");
    Timed { snapshot, take: start.elapsed() - snapshot, sequence }
}

/// One row of the performance table (`scripts/bench`): Kiln's figure beside its anchor.
struct BenchRow {
    measure: String,
    kiln: String,
    anchor: String,
    goal: String,
    met: bool,
}

struct Row {
    operation: String,
    kiln: String,
    copy: String,
    git: String,
}

fn row(operation: &str, kiln: String, copy: String, git: String) -> Row {
    Row { operation: operation.into(), kiln, copy, git }
}

async fn run(tmp: &Path, files: usize) {
    let total_start = Instant::now();
    let root = tmp.join("workspace");
    eprintln!("kiln checkpoint bench: building a {files}-file workspace in {}", tmp.display());

    // ---- the workspace ----
    let started = Instant::now();
    let plan = layout(files);
    let bytes = write_tree(&root, &plan.specs);
    progress(&format!("wrote {} files, {} in {}", plan.specs.len(), fmt_bytes(bytes), fmt_duration(started.elapsed())));
    let started = Instant::now();
    std::fs::write(root.join("kiln.toml"), format!("[session]\nmax_checkpoints = {MAX_CHECKPOINTS}\n")).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    import_commit(&root, &plan.specs);
    progress(&format!("git fast-import + git reset (one packed commit): {}", fmt_duration(started.elapsed())));
    assert_eq!(git_out(&root, &["status", "--porcelain"]), "", "the workspace must be clean after its commit");
    let tracked = git_out(&root, &["ls-files"]).lines().count();
    assert_eq!(tracked, plan.specs.len() - plan.ignored + 1, "node_modules/ must be ignored (kiln.toml is tracked)");

    let engine = Engine::new(EngineOptions {
        config_dir: tmp.join("config"),
        transport: Transport::Serve,
        mode: ServeMode::Loopback,
        allow_agent_commands: false,
        allow_terminals: false,
    });
    engine.open_workspace(OpenWorkspaceArgs { path: root.display().to_string() }).await.unwrap();
    // No planner agent: a session must be idle at once, or a restore would be refused.
    engine.update_settings(UpdateSettingsArgs { planner_agent: Some(false), ..Default::default() }).await.unwrap();
    let ws = engine.workspace().unwrap();
    let store_path = ws.store_path();
    let mut rows = Vec::new();

    // ---- session creation ----
    progress("session creation: create_session, cp -a, git worktree add");
    // The three are interleaved, and nothing made here is deleted before the bench ends:
    // on some file systems (ext4 without a journal) creating files soon after deleting
    // many is much slower, and no column should pay for another's clean-up.
    let top_level: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !matches!(p.file_name().and_then(|n| n.to_str()), Some(".git") | Some(".kiln")))
        .collect();
    let (mut create, mut copy_create, mut worktree_create) = (Vec::new(), Vec::new(), Vec::new());
    let mut session_id = String::new();
    for round in 0..3 {
        if round == 0 || create[0] < CHEAP {
            let start = Instant::now();
            let view = engine
                .create_session(CreateSessionArgs {
                    brief: "Benchmark the checkpoints".into(),
                    title: None,
                    create_modules: None,
                    issue: None,
                })
                .await
                .unwrap();
            create.push(start.elapsed());
            session_id = view.id;
        }
        if round == 0 || copy_create[0] < CHEAP {
            copy_create.push(cp_a(&top_level, &tmp.join(format!("copy{round}"))));
        }
        if round == 0 || worktree_create[0] < CHEAP {
            let dest = tmp.join(format!("worktree{round}"));
            worktree_create
                .push(time_git(&root, &[&["worktree", "add", "-q", "--detach", dest.to_str().unwrap(), "HEAD"]]));
        }
    }
    let (create, copy_create, worktree_create) = (median(create), median(copy_create), median(worktree_create));
    let creation_ratio = create.time.as_secs_f64() / worktree_create.time.as_secs_f64();
    let view = engine.get_session(SessionIdArgs { session_id }).await.unwrap();
    rows.push(row(
        "session creation (snapshot + materialize)",
        create.cell(),
        copy_create.cell(),
        format!("{} (worktree add)", worktree_create.cell()),
    ));

    let session = Session {
        id: SessionId::parse(&view.id).unwrap(),
        module: view.modules[0].id.clone(),
        workdir: ws.session_workdir(&SessionId::parse(&view.id).unwrap()),
        ws: ws.clone(),
        events: engine.events().clone(),
    };
    let workdir_files = git_out(&root, &["ls-files"]).lines().count();

    // ---- the first checkpoint fills the stat cache ----
    next_second();
    let cold = engine_checkpoint(&session, "cold").await;
    rows.push(row(
        "first checkpoint (stat cache empty: reads every file)",
        Measure { time: cold.snapshot + cold.take, runs: 1 }.cell(),
        "—".into(),
        "—".into(),
    ));

    // The scratch clone the git column commits in, its index refreshed a second after
    // checkout so git, too, starts from a clean stat cache.
    let clone = tmp.join("clone");
    git(tmp, &["clone", "-q", root.to_str().unwrap(), clone.to_str().unwrap()]);
    next_second();
    git(&clone, &["update-index", "-q", "--refresh"]);

    // ---- a checkpoint after 10 changed files ----
    progress("checkpoints after 10 changed files: engine, cp -a, git add + commit");
    let mut changes = Changes::new(plan.small.clone());
    let mut incremental = Vec::new();
    let mut git_incremental = Vec::new();
    let mut git_commits = Vec::new();
    let mut sequences = Vec::new();
    let mut breakdown = Vec::new();
    for _ in 0..3 {
        let batch = changes.next_batch(CHANGED_PER_CHECKPOINT, &session.workdir);
        apply(&session.workdir, &batch);
        let t = engine_checkpoint(&session, "ten files").await;
        incremental.push(t.snapshot + t.take);
        breakdown.push((t.snapshot, t.take));
        sequences.push(t.sequence);
        apply(&clone, &batch);
        git_incremental.push(time_git(&clone, &[&["add", "-A"], &["commit", "-q", "-m", "ten files"]]));
        git_commits.push(git_out(&clone, &["rev-parse", "HEAD"]));
    }
    let incremental = median(incremental);
    let git_incremental = median(git_incremental);
    let mut copies = 0;
    let copy_checkpoint = measure_sync(|| {
        copies += 1;
        cp_a(std::slice::from_ref(&session.workdir), &tmp.join(format!("checkpoint-copy{copies}")))
    });
    rows.push(row(
        "checkpoint after 10 changed files",
        incremental.cell(),
        format!("{} (copy per checkpoint)", copy_checkpoint.cell()),
        format!("{} (add -A + commit)", git_incremental.cell()),
    ));

    // ---- a checkpoint with nothing changed ----
    let mut nothing = Vec::new();
    let mut git_nothing = Vec::new();
    for _ in 0..3 {
        let t = engine_checkpoint(&session, "nothing changed").await;
        nothing.push(t.snapshot + t.take);
        git_nothing.push(time_git(&clone, &[&["add", "-A"], &["commit", "-q", "--allow-empty", "-m", "nothing"]]));
    }
    let nothing = median(nothing);
    let git_nothing = median(git_nothing);
    rows.push(row(
        "checkpoint with nothing changed",
        nothing.cell(),
        format!("{} (same copy)", copy_checkpoint.cell()),
        format!("{} (add -A + commit --allow-empty)", git_nothing.cell()),
    ));

    // ---- restore a checkpoint 10 files away, back and forth ----
    progress("restore_checkpoint, get_diff");
    let (before, after) = (sequences[1], sequences[2]);
    let mut restores = Vec::new();
    let mut git_restores = Vec::new();
    for (target, commit) in [(before, &git_commits[1]), (after, &git_commits[2]), (before, &git_commits[1])] {
        let start = Instant::now();
        engine
            .restore_checkpoint(RestoreCheckpointArgs { session_id: view.id.clone(), sequence: target })
            .await
            .unwrap();
        restores.push(start.elapsed());
        git_restores.push(time_git(&clone, &[&["reset", "-q", "--hard", commit]]));
    }
    let (restore, git_restore) = (median(restores), median(git_restores));
    rows.push(row(
        "restore_checkpoint, 10 files away",
        restore.cell(),
        "—".into(),
        format!("{} (reset --hard)", git_restore.cell()),
    ));

    // ---- get_diff of 50 changed files ----
    // The working copy is at the second checkpoint: 20 files differ from the start.
    let batch = changes.next_batch(DIFF_FILES - 2 * CHANGED_PER_CHECKPOINT, &session.workdir);
    apply(&session.workdir, &batch);
    let mut diffs = Vec::new();
    let mut shown = 0;
    for (run, (rel, bytes)) in batch.iter().take(3).enumerate() {
        if run > 0 {
            // One more line in a file already changed: still 50 files, but a working
            // copy the cache has not seen, so the view is computed again.
            let mut bytes = bytes.clone();
            bytes.extend_from_slice(format!("edit {run}\n").as_bytes());
            std::fs::write(session.workdir.join(rel), bytes).unwrap();
        }
        let computed = ws.diffs.computed();
        let start = Instant::now();
        let view = engine.get_diff(GetDiffArgs { session_id: view.id.clone(), module_id: None }).await.unwrap();
        diffs.push(start.elapsed());
        assert_eq!(ws.diffs.computed(), computed + 1, "the diff must be computed, not cached");
        shown = view.modules.iter().map(|m| m.files.len()).sum::<usize>();
    }
    assert_eq!(shown, DIFF_FILES, "the diff should hold exactly {DIFF_FILES} files");
    rows.push(row(
        &format!("get_diff of {DIFF_FILES} changed files (uncached)"),
        median(diffs).cell(),
        "—".into(),
        "—".into(),
    ));

    // ---- store growth over 100 checkpoints of 10 files ----
    progress(&format!(
        "store growth: {GROWTH_CHECKPOINTS} checkpoints of {CHANGED_PER_CHECKPOINT} files, engine and git"
    ));
    engine_checkpoint(&session, "the diff's changes").await;
    apply(&clone, &changes_now(&session.workdir, &batch));
    git(&clone, &["add", "-A"]);
    git(&clone, &["commit", "-q", "-m", "the diff's changes"]);
    let store_before = du_sb(&store_path);
    let git_before = du_sb(&clone.join(".git"));
    let changed_before = changes.bytes;
    let mut loop_times = Vec::new();
    let mut git_loop_times = Vec::new();
    let mut loop_last_sequence = 0;
    for i in 0..GROWTH_CHECKPOINTS {
        let batch = changes.next_batch(CHANGED_PER_CHECKPOINT, &session.workdir);
        apply(&session.workdir, &batch);
        let t = engine_checkpoint(&session, &format!("growth {i}")).await;
        loop_times.push(t.snapshot + t.take);
        loop_last_sequence = t.sequence;
        apply(&clone, &batch);
        git_loop_times.push(time_git(&clone, &[&["add", "-A"], &["commit", "-q", "-m", "growth"]]));
    }
    assert!(loop_last_sequence < MAX_CHECKPOINTS, "no prune may happen during the growth checkpoints");
    let changed = changes.bytes - changed_before;
    let store_growth = du_sb(&store_path) - store_before;
    let git_growth = du_sb(&clone.join(".git")) - git_before;
    let copy_bytes = du_sb(&session.workdir);
    let ratio = store_growth as f64 / changed as f64;
    rows.push(row(
        &format!(
            "store growth, {GROWTH_CHECKPOINTS} checkpoints × {CHANGED_PER_CHECKPOINT} files ({} changed)",
            fmt_bytes(changed)
        ),
        format!("{} ({ratio:.2}× changed)", fmt_bytes(store_growth)),
        format!(
            "{} (computed: {GROWTH_CHECKPOINTS} × {})",
            fmt_bytes(copy_bytes * GROWTH_CHECKPOINTS as u64),
            fmt_bytes(copy_bytes)
        ),
        format!("{} ({:.2}× changed; .git, loose objects)", fmt_bytes(git_growth), git_growth as f64 / changed as f64),
    ));
    let loop_median = median(loop_times.clone());
    let loop_git = median(git_loop_times);
    rows.push(row(
        "  …its checkpoints, each after 10 changed files",
        format!("{} (median of {})", fmt_duration(loop_median.time), loop_median.runs),
        "—".into(),
        format!("{} (median of {})", fmt_duration(loop_git.time), loop_git.runs),
    ));

    // ---- the checkpoint that goes over the cap, and the one after it ----
    progress("a checkpoint over max_checkpoints (pruning), and the next one");
    let mut last = loop_last_sequence;
    while last < MAX_CHECKPOINTS - 1 {
        let batch = changes.next_batch(1, &session.workdir);
        apply(&session.workdir, &batch);
        last = engine_checkpoint(&session, "filler").await.sequence;
    }
    let mut over_cap = Vec::new();
    for label in ["over the cap", "after the prune"] {
        let batch = changes.next_batch(CHANGED_PER_CHECKPOINT, &session.workdir);
        apply(&session.workdir, &batch);
        let t = engine_checkpoint(&session, label).await;
        over_cap.push(Measure { time: t.snapshot + t.take, runs: 1 });
    }
    let kept = engine.get_session(SessionIdArgs { session_id: view.id.clone() }).await.unwrap().checkpoints.len();
    assert_eq!(kept as i64, MAX_CHECKPOINTS, "the prune should keep max_checkpoints");
    rows.push(row(
        &format!("checkpoint over max_checkpoints = {MAX_CHECKPOINTS} (prune: re-parent, git prune)"),
        over_cap[0].cell(),
        "—".into(),
        "—".into(),
    ));
    rows.push(row(
        "the next checkpoint (the prune dropped the stat cache)",
        over_cap[1].cell(),
        "—".into(),
        "—".into(),
    ));

    // ---- the table ----
    println!();
    println!(
        "Kiln checkpoint bench: {} files ({} ignored in node_modules/), {}; session working copy {} files, {}.",
        plan.specs.len(),
        plan.ignored,
        fmt_bytes(bytes),
        workdir_files,
        fmt_bytes(copy_bytes)
    );
    println!(
        "Wall-clock times; a measurement is the median of 3 runs when its first run took under {}, else 1 run.",
        fmt_duration(CHEAP)
    );
    println!();
    print_table(&rows);
    println!();
    let (snap, take): (Vec<_>, Vec<_>) = breakdown.into_iter().unzip();
    println!(
        "Checkpoint after 10 files, split: snapshot_workdir (walk + stat + stat cache + trees) {}, checkpoint::take (commit, ref, SQLite) {} (medians).",
        fmt_duration(median(snap).time),
        fmt_duration(median(take).time)
    );
    println!("For session creation cp -a copies the workspace as it is (node_modules/ too); the engine and git leave ignored files out.");
    println!();

    // ---- the goals ----
    let speedup = copy_checkpoint.time.as_secs_f64() / incremental.time.as_secs_f64();
    let git_ratio = incremental.time.as_secs_f64() / git_incremental.time.as_secs_f64();
    let restore_ratio = restore.time.as_secs_f64() / git_restore.time.as_secs_f64();
    let goals = [
        BenchRow {
            measure: "checkpoint after 10 changed files".into(),
            kiln: format!("{} ({git_ratio:.2}× git, {speedup:.0}× faster than cp -a)", fmt_duration(incremental.time)),
            anchor: format!(
                "git add -A && commit {}; cp -a {}",
                fmt_duration(git_incremental.time),
                fmt_duration(copy_checkpoint.time)
            ),
            goal: "≤ 0.5× git, and ≥ 20× faster than cp -a".into(),
            met: git_ratio <= 0.5 && speedup >= 20.0,
        },
        BenchRow {
            measure: "checkpoint with nothing changed".into(),
            kiln: fmt_duration(nothing.time),
            anchor: format!("git add -A && commit --allow-empty {}", fmt_duration(git_nothing.time)),
            goal: "< 10 ms".into(),
            met: nothing.time < Duration::from_millis(10),
        },
        BenchRow {
            measure: "session creation (snapshot + materialize)".into(),
            kiln: format!("{} ({creation_ratio:.2}× git)", fmt_duration(create.time)),
            anchor: format!("git worktree add {}", fmt_duration(worktree_create.time)),
            goal: "≤ 1.0× git worktree add".into(),
            met: creation_ratio <= 1.0,
        },
        BenchRow {
            measure: "restore 10 files away".into(),
            kiln: format!("{} ({restore_ratio:.2}× git)", fmt_duration(restore.time)),
            anchor: format!("git reset --hard {}", fmt_duration(git_restore.time)),
            goal: "≤ 1.0× git".into(),
            met: restore_ratio <= 1.0,
        },
        BenchRow {
            measure: format!("store growth, {GROWTH_CHECKPOINTS} checkpoints × {CHANGED_PER_CHECKPOINT} files"),
            kiln: format!("{} ({ratio:.2}× the changed bytes)", fmt_bytes(store_growth)),
            anchor: format!("the changed bytes {}", fmt_bytes(changed)),
            goal: "≤ 1.1×".into(),
            met: ratio <= 1.1,
        },
    ];
    println!("Goals:");
    for g in &goals {
        let verdict = if g.met { "met" } else { "MISSED" };
        println!("  [{verdict:<6}] {}: {} against {} (goal {})", g.measure, g.kiln, g.anchor, g.goal);
    }
    println!();
    // The rows of the performance table, for scripts/bench.
    for g in &goals {
        let verdict = if g.met { "met" } else { "MISSED" };
        println!("bench-row\t{}\t{}\t{}\t{}\t{verdict}", g.measure, g.kiln, g.anchor, g.goal);
    }
    eprintln!("  … done in {}; removing {}", fmt_duration(total_start.elapsed()), tmp.display());
    drop(session);
    drop(ws);
    drop(engine);
}

/// The current content of each file of `batch` in `workdir` (the diff runs edited some).
fn changes_now(workdir: &Path, batch: &[(String, Vec<u8>)]) -> Vec<(String, Vec<u8>)> {
    batch.iter().map(|(rel, _)| (rel.clone(), std::fs::read(workdir.join(rel)).unwrap())).collect()
}

fn print_table(rows: &[Row]) {
    let header = row("operation", "Kiln engine".into(), "cp -a".into(), "git".into());
    let width = |f: fn(&Row) -> &str| rows.iter().chain([&header]).map(|r| f(r).chars().count()).max().unwrap();
    let widths = [width(|r| &r.operation), width(|r| &r.kiln), width(|r| &r.copy), width(|r| &r.git)];
    let line = |r: &Row| {
        let cells = [&r.operation, &r.kiln, &r.copy, &r.git];
        let padded: Vec<String> =
            cells.iter().zip(widths).map(|(c, w)| format!("{c}{}", " ".repeat(w - c.chars().count()))).collect();
        format!("| {} |", padded.join(" | "))
    };
    println!("{}", line(&header));
    println!("|{}|", widths.iter().map(|w| "-".repeat(w + 2)).collect::<Vec<_>>().join("|"));
    for r in rows {
        println!("{}", line(r));
    }
}
