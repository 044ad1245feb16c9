//! A session's terminals, with real pseudo-terminals and real shells: typing and reading
//! back, resizing, replay to a view that attaches later, a program's own exit, stop, the
//! session's archive and delete ending them, the limits, the self-hosted refusals, an
//! agent CLI's terminal, and bad input changing nothing.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use kiln_engine::types::*;
use kiln_engine::{Engine, EngineOptions, ErrorCode, TerminalAttachment};

use crate::common::*;

const LIMIT: Duration = Duration::from_secs(20);

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    engine: Arc<Engine>,
}

/// The shop workspace (without its npm setup) open in an engine of `options`' mode.
async fn fixture_with(mode: ServeMode, allow_terminals: bool) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = shop_copy(tmp.path());
    let config = root.join("kiln.toml");
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("setup = \"npm ci --offline --no-audit --no-fund\"", "setup = \"\"");
    std::fs::write(&config, text).unwrap();
    let options = kiln_test_support::options(&tmp.path().join("config"), Transport::Serve);
    let engine = Arc::new(Engine::new(EngineOptions { mode, allow_terminals, ..options }));
    open(&engine, &root).await;
    Fixture { _tmp: tmp, root, engine }
}

async fn fixture() -> Fixture {
    fixture_with(ServeMode::Loopback, false).await
}

async fn session(engine: &Engine) -> SessionView {
    create(engine, "Add a wishlist to @shop/catalog").await
}

fn shell_args(session_id: &str) -> OpenTerminalArgs {
    OpenTerminalArgs { session_id: session_id.into(), kind: TerminalKind::Shell, cols: None, rows: None }
}

async fn shell(engine: &Engine, session_id: &str) -> TerminalView {
    engine.open_terminal(shell_args(session_id)).await.unwrap()
}

async fn type_in(engine: &Engine, id: &str, data: &str) {
    engine.write_terminal(TerminalInputArgs { terminal_id: id.into(), data: data.into() }).await.unwrap();
}

/// What a view of the terminal has read so far, and whether it saw the exit.
#[derive(Default)]
struct Screen {
    text: String,
    exit: Option<Option<i32>>,
    chunks: usize,
}

impl Screen {
    /// Reads chunks until `done` holds (or the stream ends); fails after `LIMIT`.
    async fn read_until(&mut self, attachment: &mut TerminalAttachment, done: impl Fn(&Screen) -> bool) {
        let deadline = Instant::now() + LIMIT;
        while !done(self) {
            let left = deadline.saturating_duration_since(Instant::now());
            let chunk = tokio::time::timeout(left, attachment.next())
                .await
                .unwrap_or_else(|_| panic!("waited in vain; the terminal showed {:?}", self.text));
            match chunk {
                Some(TerminalChunk::Output { data }) => {
                    let bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
                    self.text.push_str(&String::from_utf8_lossy(&bytes));
                    self.chunks += 1;
                }
                Some(TerminalChunk::Exit { exit_code }) => self.exit = Some(exit_code),
                None => break,
            }
        }
    }

    async fn until_text(&mut self, attachment: &mut TerminalAttachment, needle: &str) {
        self.read_until(attachment, |s| s.text.contains(needle)).await;
        assert!(self.text.contains(needle), "no {needle:?} in {:?}", self.text);
    }
}

/// Whether `pid` is a live process (a zombie is not).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

async fn gone(pid: i32) {
    let deadline = Instant::now() + LIMIT;
    while alive(pid) {
        assert!(Instant::now() < deadline, "process {pid} outlived its terminal");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The pid of the terminal's shell and of a `sleep` it started in the background.
async fn shell_and_job(engine: &Engine, terminal: &TerminalView) -> (i32, i32) {
    let mut view = engine.attach_terminal(&terminal.id).unwrap();
    let mut screen = Screen::default();
    // The typed line is echoed too: the pattern matches only what printf prints.
    let pids = regex::Regex::new(r"pids-(\d+)-(\d+)-end").unwrap();
    type_in(engine, &terminal.id, "sleep 1000 &\rprintf 'pids-%s-%s-end\\n' $$ $!\r").await;
    screen.read_until(&mut view, |s| pids.is_match(&s.text)).await;
    let found = pids.captures(&screen.text).unwrap_or_else(|| panic!("no pids in {:?}", screen.text));
    let (shell, job) = (found[1].parse().unwrap(), found[2].parse().unwrap());
    assert!(alive(shell) && alive(job));
    (shell, job)
}

/// The next `Terminal` event (other events are skipped).
async fn next_terminal_event(events: &mut tokio::sync::broadcast::Receiver<KilnEvent>) -> TerminalView {
    let deadline = Instant::now() + LIMIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = tokio::time::timeout(left, events.recv()).await.expect("a terminal event in time").unwrap();
        if let EventBody::Terminal { terminal } = event.body {
            return terminal;
        }
    }
}

fn workdir(root: &Path, session_id: &str) -> PathBuf {
    root.join(".kiln/sessions").join(session_id).join("workspace").canonicalize().unwrap()
}

#[tokio::test]
async fn a_shell_runs_in_the_working_copy_echoes_input_and_replays_to_a_later_view() {
    let f = fixture().await;
    let s = session(&f.engine).await;
    let mut events = f.engine.subscribe(None).receiver;
    let t = shell(&f.engine, &s.id).await;
    assert_eq!((t.cols, t.rows, t.state, t.exit_code), (80, 24, TerminalState::Running, None));
    assert_eq!(t.session_id, s.id);
    assert!(!t.title.is_empty());
    assert_eq!(next_terminal_event(&mut events).await.id, t.id);

    let mut view = f.engine.attach_terminal(&t.id).unwrap();
    let mut screen = Screen::default();
    type_in(&f.engine, &t.id, "echo kiln-$((6*7))\r").await;
    screen.until_text(&mut view, "kiln-42").await;
    // It works in the session's working copy, with a terminal's variables.
    type_in(&f.engine, &t.id, "echo \"at:$(pwd -P):$TERM:$COLORTERM\"\r").await;
    let at = format!("at:{}:xterm-256color:truecolor", workdir(&f.root, &s.id).display());
    screen.until_text(&mut view, &at).await;

    // Detached, it runs on; a view attaching later gets what it printed meanwhile first.
    drop(view);
    type_in(&f.engine, &t.id, "echo while-$((2+3))-away\r").await;
    let deadline = Instant::now() + LIMIT;
    loop {
        let mut later = f.engine.attach_terminal(&t.id).unwrap();
        let mut replayed = Screen::default();
        replayed.read_until(&mut later, |s| s.chunks >= 1).await;
        if replayed.text.contains("while-5-away") {
            assert!(replayed.text.contains("kiln-42"), "the replay keeps the earlier output too");
            break;
        }
        assert!(Instant::now() < deadline, "never replayed: {:?}", replayed.text);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let listed = f.engine.list_terminals(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert_eq!(listed.iter().map(|t| (&t.id, t.state)).collect::<Vec<_>>(), vec![(&t.id, TerminalState::Running)]);
    f.engine.shutdown().await;
}

#[tokio::test]
async fn the_shell_writes_only_where_a_sessions_commands_may() {
    if !kiln_engine::sandbox_support().available {
        eprintln!("no Landlock here: nothing to check");
        return;
    }
    let f = fixture().await;
    let s = session(&f.engine).await;
    let t = shell(&f.engine, &s.id).await;
    let mut view = f.engine.attach_terminal(&t.id).unwrap();
    let mut screen = Screen::default();
    let outside = f.root.join("escaped.txt");
    let line = format!(
        "echo in > inside.txt && echo wrote-inside; echo out > {} || echo refused-$((1+1)); cat {}/kiln.db >/dev/null 2>&1 || echo hidden-$((2+2))\r",
        outside.display(),
        f.root.join(".kiln").display()
    );
    type_in(&f.engine, &t.id, &line).await;
    screen.until_text(&mut view, "hidden-4").await;
    assert!(screen.text.contains("wrote-inside") && screen.text.contains("refused-2"), "{}", screen.text);
    assert!(workdir(&f.root, &s.id).join("inside.txt").exists());
    assert!(!outside.exists());
    f.engine.shutdown().await;
}

#[tokio::test]
async fn the_last_resize_is_what_the_program_sees() {
    let f = fixture().await;
    let s = session(&f.engine).await;
    let t = f
        .engine
        .open_terminal(OpenTerminalArgs {
            session_id: s.id.clone(),
            kind: TerminalKind::Shell,
            cols: Some(90),
            rows: Some(20),
        })
        .await
        .unwrap();
    assert_eq!((t.cols, t.rows), (90, 20));
    let mut events = f.engine.subscribe(None).receiver;
    let resize = |cols, rows| ResizeTerminalArgs { terminal_id: t.id.clone(), cols, rows };
    f.engine.resize_terminal(resize(120, 40)).await.unwrap();
    let resized = f.engine.resize_terminal(resize(100, 30)).await.unwrap();
    assert_eq!((resized.cols, resized.rows), (100, 30));
    let first = next_terminal_event(&mut events).await;
    assert_eq!((first.cols, first.rows), (120, 40));
    let second = next_terminal_event(&mut events).await;
    assert_eq!((second.cols, second.rows), (100, 30));

    let mut view = f.engine.attach_terminal(&t.id).unwrap();
    let mut screen = Screen::default();
    type_in(&f.engine, &t.id, "stty size\r").await;
    screen.until_text(&mut view, "30 100").await;
    f.engine.shutdown().await;
}

#[tokio::test]
async fn a_program_that_exits_leaves_an_exited_terminal_with_its_code() {
    let f = fixture().await;
    let s = session(&f.engine).await;
    let t = shell(&f.engine, &s.id).await;
    let mut events = f.engine.subscribe(None).receiver;
    let mut view = f.engine.attach_terminal(&t.id).unwrap();
    let mut screen = Screen::default();
    type_in(&f.engine, &t.id, "echo bye-$((3*3)); exit 3\r").await;
    screen.read_until(&mut view, |s| s.exit.is_some()).await;
    assert_eq!(screen.exit, Some(Some(3)));
    assert!(screen.text.contains("bye-9"), "the output before the exit comes first: {:?}", screen.text);
    assert!(view.next().await.is_none(), "the stream ends after the exit");

    let exited = next_terminal_event(&mut events).await;
    assert_eq!(exited.state, TerminalState::Exited);
    assert_eq!((exited.id.as_str(), exited.exit_code), (t.id.as_str(), Some(3)));
    assert!(exited.ended_at.is_some());
    let listed = f.engine.list_terminals(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert_eq!(listed, vec![exited.clone()]);

    // An exited terminal takes no input, and attaching to it gives its replay, then its exit.
    let typed = f.engine.write_terminal(TerminalInputArgs { terminal_id: t.id.clone(), data: "ls\r".into() }).await;
    assert_eq!(typed.unwrap_err().code, ErrorCode::TerminalExited);
    let mut late = f.engine.attach_terminal(&t.id).unwrap();
    let mut replay = Screen::default();
    replay.read_until(&mut late, |s| s.exit.is_some()).await;
    assert!(replay.text.contains("bye-9") && replay.exit == Some(Some(3)), "{:?}", replay.text);
    // Stopping it again answers the same exited view.
    let stopped = f.engine.stop_terminal(TerminalArgs { terminal_id: t.id.clone() }).await.unwrap();
    assert_eq!(stopped, exited);
}

#[tokio::test]
async fn stop_kills_the_terminal_and_everything_it_started() {
    let f = fixture().await;
    let s = session(&f.engine).await;
    let t = shell(&f.engine, &s.id).await;
    let (shell_pid, job) = shell_and_job(&f.engine, &t).await;
    let stopped = f.engine.stop_terminal(TerminalArgs { terminal_id: t.id.clone() }).await.unwrap();
    assert_eq!(stopped.state, TerminalState::Exited);
    assert!(stopped.ended_at.is_some());
    gone(shell_pid).await;
    gone(job).await;
}

#[tokio::test]
async fn archiving_and_deleting_a_session_end_its_terminals() {
    let f = fixture().await;
    let s = session(&f.engine).await;
    let other = session(&f.engine).await;
    let kept = shell(&f.engine, &other.id).await;
    let t = shell(&f.engine, &s.id).await;
    let (shell_pid, job) = shell_and_job(&f.engine, &t).await;
    f.engine.archive_session(StopArgs { session_id: s.id.clone(), stop: Some(false) }).await.unwrap();
    gone(shell_pid).await;
    gone(job).await;
    let listed = f.engine.list_terminals(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert_eq!(listed[0].state, TerminalState::Exited);
    // An archived session opens none.
    let refused = f.engine.open_terminal(shell_args(&s.id)).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::SessionArchived);

    f.engine.restore_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    let t = shell(&f.engine, &s.id).await;
    let (shell_pid, job) = shell_and_job(&f.engine, &t).await;
    f.engine
        .delete_session(DeleteSessionArgs { session_id: s.id.clone(), keep_transcript: Some(true), stop: Some(false) })
        .await
        .unwrap();
    gone(shell_pid).await;
    gone(job).await;
    // The other session's terminal runs on.
    let others = f.engine.list_terminals(SessionIdArgs { session_id: other.id.clone() }).await.unwrap();
    assert_eq!(others.iter().map(|t| (&t.id, t.state)).collect::<Vec<_>>(), vec![(&kept.id, TerminalState::Running)]);
    f.engine.shutdown().await;
    let after = f.engine.list_terminals(SessionIdArgs { session_id: other.id.clone() }).await.unwrap();
    assert_eq!(after[0].state, TerminalState::Exited, "shutdown stops every terminal");
}

#[tokio::test]
async fn eight_run_per_session_and_thirty_two_in_all() {
    let f = fixture().await;
    let mut sessions = Vec::new();
    for _ in 0..5 {
        sessions.push(session(&f.engine).await);
    }
    let mut first = Vec::new();
    for _ in 0..8 {
        first.push(shell(&f.engine, &sessions[0].id).await);
    }
    let ninth = f.engine.open_terminal(shell_args(&sessions[0].id)).await.unwrap_err();
    assert_eq!(ninth.code, ErrorCode::TerminalLimit);
    for s in &sessions[1..4] {
        for _ in 0..8 {
            shell(&f.engine, &s.id).await;
        }
    }
    let over = f.engine.open_terminal(shell_args(&sessions[4].id)).await.unwrap_err();
    assert_eq!(over.code, ErrorCode::TerminalLimit);
    assert!(f.engine.list_terminals(SessionIdArgs { session_id: sessions[4].id.clone() }).await.unwrap().is_empty());
    // An exited terminal counts no more.
    f.engine.stop_terminal(TerminalArgs { terminal_id: first[0].id.clone() }).await.unwrap();
    shell(&f.engine, &sessions[4].id).await;
    f.engine.shutdown().await;
}

#[tokio::test]
async fn a_self_hosted_server_offers_shells_only_when_allowed_and_agent_clis_never() {
    let f = fixture_with(ServeMode::SelfHosted, false).await;
    let state = f.engine.get_state(EmptyArgs {}).await.unwrap();
    assert!(!state.terminals && !state.agent_terminals);
    let s = session(&f.engine).await;
    let refused = f.engine.open_terminal(shell_args(&s.id)).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::NotAllowedInMode);
    assert!(f.engine.list_terminals(SessionIdArgs { session_id: s.id.clone() }).await.unwrap().is_empty());

    let f = fixture_with(ServeMode::SelfHosted, true).await;
    let state = f.engine.get_state(EmptyArgs {}).await.unwrap();
    assert!(state.terminals && !state.agent_terminals);
    let s = session(&f.engine).await;
    for kind in [TerminalKind::Claude, TerminalKind::Codex] {
        let args = OpenTerminalArgs { session_id: s.id.clone(), kind, cols: None, rows: None };
        assert_eq!(f.engine.open_terminal(args).await.unwrap_err().code, ErrorCode::NotAllowedInMode);
    }
    shell(&f.engine, &s.id).await;
    f.engine.shutdown().await;

    let loopback = fixture().await;
    let state = loopback.engine.get_state(EmptyArgs {}).await.unwrap();
    assert!(state.terminals && state.agent_terminals);
}

#[tokio::test]
async fn an_agent_terminal_runs_its_cli_as_the_driver_would() {
    let f = fixture().await;
    let s = session(&f.engine).await;
    let claude = f.root.join("..").join("fake-claude");
    let settings =
        |path: &Path| UpdateSettingsArgs { claude_path: Some(path.display().to_string()), ..Default::default() };
    let args = OpenTerminalArgs { session_id: s.id.clone(), kind: TerminalKind::Claude, cols: None, rows: None };
    // A CLI that is not there is the drivers' error.
    f.engine.update_settings(settings(&f.root.join("..").join("no-such-claude"))).await.unwrap();
    assert_eq!(f.engine.open_terminal(args.clone()).await.unwrap_err().code, ErrorCode::DriverNotFound);
    assert!(f.engine.list_terminals(SessionIdArgs { session_id: s.id.clone() }).await.unwrap().is_empty());
    write(&claude, "#!/bin/sh\necho \"args:[$*] term:$TERM telemetry:$DISABLE_TELEMETRY at:$(pwd -P)\"\nsleep 30\n");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    f.engine.update_settings(settings(&claude)).await.unwrap();
    let t = f.engine.open_terminal(args).await.unwrap();
    assert_eq!(t.title, "claude");
    let mut view = f.engine.attach_terminal(&t.id).unwrap();
    let mut screen = Screen::default();
    let expected = format!("args:[] term:xterm-256color telemetry:1 at:{}", workdir(&f.root, &s.id).display());
    screen.until_text(&mut view, &expected).await;
    f.engine.shutdown().await;
}

#[tokio::test]
async fn bad_ids_sizes_and_input_are_refused_and_change_nothing() {
    let f = fixture().await;
    let s = session(&f.engine).await;
    let open = |cols, rows| OpenTerminalArgs { session_id: s.id.clone(), kind: TerminalKind::Shell, cols, rows };
    for (cols, rows) in [(Some(1), None), (Some(1001), None), (None, Some(0)), (None, Some(501))] {
        assert_eq!(f.engine.open_terminal(open(cols, rows)).await.unwrap_err().code, ErrorCode::InvalidInput);
    }
    let bad_session = OpenTerminalArgs { session_id: "nope".into(), kind: TerminalKind::Shell, cols: None, rows: None };
    assert_eq!(f.engine.open_terminal(bad_session).await.unwrap_err().code, ErrorCode::InvalidSessionId);
    let unknown = uuid::Uuid::new_v4().to_string();
    let missing = OpenTerminalArgs { session_id: unknown.clone(), kind: TerminalKind::Shell, cols: None, rows: None };
    assert_eq!(f.engine.open_terminal(missing).await.unwrap_err().code, ErrorCode::SessionNotFound);
    assert!(f.engine.list_terminals(SessionIdArgs { session_id: s.id.clone() }).await.unwrap().is_empty());

    for id in ["not-an-id", unknown.as_str()] {
        let code = if id == unknown { ErrorCode::TerminalNotFound } else { ErrorCode::InvalidInput };
        let write = TerminalInputArgs { terminal_id: id.into(), data: "x".into() };
        assert_eq!(f.engine.write_terminal(write).await.unwrap_err().code, code);
        let resize = ResizeTerminalArgs { terminal_id: id.into(), cols: 80, rows: 24 };
        assert_eq!(f.engine.resize_terminal(resize).await.unwrap_err().code, code);
        assert_eq!(f.engine.stop_terminal(TerminalArgs { terminal_id: id.into() }).await.unwrap_err().code, code);
        assert_eq!(f.engine.attach_terminal(id).err().unwrap().code, code);
    }

    let t = shell(&f.engine, &s.id).await;
    for (cols, rows) in [(0, 24), (80, 0), (1001, 24), (80, 501)] {
        let resize = ResizeTerminalArgs { terminal_id: t.id.clone(), cols, rows };
        assert_eq!(f.engine.resize_terminal(resize).await.unwrap_err().code, ErrorCode::InvalidInput);
    }
    let too_much = TerminalInputArgs { terminal_id: t.id.clone(), data: "x".repeat(64 * 1024 + 1) };
    assert_eq!(f.engine.write_terminal(too_much).await.unwrap_err().code, ErrorCode::InvalidInput);
    let listed = f.engine.list_terminals(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert_eq!(listed, vec![t.clone()], "the size and state are as they were");
    f.engine.shutdown().await;
}
