//! Server-sent events over a real socket: changes stream live, and a client that
//! reconnects with `Last-Event-ID` gets exactly what it missed; a terminal's output streams
//! from `/api/terminal_stream` to a connected browser only.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use kiln_engine::types::*;
use kiln_engine::Engine;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Serves `engine` on a free loopback port; returns the address and a connection cookie.
async fn start(engine: Arc<Engine>, config: &std::path::Path) -> (SocketAddr, String) {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let assets = Arc::new(kiln_serve::DirAssets(std::env::temp_dir()));
    let access = Arc::new(kiln_serve::access::Access::open(config, None).await.unwrap());
    tokio::spawn(kiln_serve::serve(
        engine,
        assets,
        "127.0.0.1:0".parse().unwrap(),
        ServeMode::Loopback,
        access,
        config.to_path_buf(),
        move |ready| {
            let _ = tx.send((ready.addr, ready.token.expect("a loopback server's token").secret().to_string()));
        },
    ));
    let (addr, token) = rx.await.unwrap();
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let body = format!("{{\"token\":\"{token}\"}}");
    let request = format!(
        "POST /api/connect HTTP/1.0\r\nHost: 127.0.0.1:{}\r\nx-kiln: 1\r\nContent-Length: {}\r\n\r\n{body}",
        addr.port(),
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let cookie = response
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .and_then(|c| c.split(';').next())
        .unwrap_or_else(|| panic!("no cookie in {response}"));
    (addr, cookie.to_string())
}

/// Opens `/api/events` (HTTP/1.0, so the body is not chunked) and reads until `count` events arrived; returns their ids and bodies.
async fn read_events(addr: SocketAddr, cookie: String, last_id: Option<u64>, count: usize) -> Vec<(u64, KilnEvent)> {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let resume = last_id.map(|id| format!("Last-Event-ID: {id}\r\n")).unwrap_or_default();
    let request = format!(
        "GET /api/events HTTP/1.0\r\nHost: 127.0.0.1:{}\r\nCookie: {cookie}\r\nAccept: text/event-stream\r\n{resume}\r\n",
        addr.port()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut text = String::new();
    let mut buf = [0u8; 8192];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let events: Vec<(u64, KilnEvent)> = text
            .split("\n\n")
            .filter_map(|block| {
                let id = block.lines().find_map(|l| l.strip_prefix("id: "))?.trim().parse().ok()?;
                let data = block.lines().find_map(|l| l.strip_prefix("data: "))?;
                Some((id, serde_json::from_str(data).ok()?))
            })
            .collect();
        if events.len() >= count {
            return events;
        }
        let n = tokio::time::timeout_at(deadline, stream.read(&mut buf)).await.expect("events in time").unwrap();
        assert!(n > 0, "stream closed after: {text}");
        text.push_str(&String::from_utf8_lossy(&buf[..n]).replace("\r\n", "\n"));
    }
}

/// A one-package workspace (not opened yet) and a loopback engine. No install step: its
/// transcript entries would interleave with the ones the tests count.
fn app() -> (tempfile::TempDir, std::path::PathBuf, Arc<Engine>) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("app");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("package.json"), r#"{"name":"app"}"#).unwrap();
    std::fs::write(root.join("kiln.toml"), "[session]\nsetup = \"\"\n").unwrap();
    let engine = Arc::new(Engine::new(kiln_test_support::options(&tmp.path().join("config"), Transport::Serve)));
    (tmp, root, engine)
}

#[tokio::test]
async fn events_stream_live_and_resume_from_the_last_id() {
    let (tmp, root, engine) = app();
    let (addr, cookie) = start(engine.clone(), &tmp.path().join("config")).await;

    let live = tokio::spawn(read_events(addr, cookie.clone(), None, 3));
    tokio::time::sleep(Duration::from_millis(300)).await; // subscribed before anything happens
    engine.open_workspace(OpenWorkspaceArgs { path: root.display().to_string() }).await.unwrap();
    let session = engine
        .create_session(CreateSessionArgs {
            brief: "Make it faster".into(),
            title: None,
            create_modules: None,
            issue: None,
        })
        .await
        .unwrap();
    let live = live.await.unwrap();
    let ids: Vec<u64> = live.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, vec![1, 2, 3]);
    assert!(matches!(live[0].1.body, EventBody::Workspace { .. }));
    match &live[1].1.body {
        EventBody::Transcript { entry } => {
            assert_eq!(entry.session_id, session.id);
            assert_eq!(entry.kind, EntryKind::System);
        }
        other => panic!("expected the planner entry, got {other:?}"),
    }
    assert!(matches!(&live[2].1.body, EventBody::Session { session: s } if s.id == session.id));

    // A client that saw event 1 reconnects: it gets 2 and 3, then live ones.
    let resumed = read_events(addr, cookie, Some(1), 2).await;
    assert_eq!(resumed.iter().map(|(id, _)| *id).collect::<Vec<_>>(), vec![2, 3]);
}

/// `POST /api/<command>` with `body` over a connection with `cookie`: the status and the JSON answer.
async fn post(addr: SocketAddr, cookie: &str, command: &str, body: serde_json::Value) -> (u16, serde_json::Value) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let body = body.to_string();
    let request = format!(
        "POST /api/{command} HTTP/1.0\r\nHost: 127.0.0.1:{}\r\nx-kiln: 1\r\nCookie: {cookie}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        addr.port(),
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let status = response.split_whitespace().nth(1).unwrap().parse().unwrap();
    let json = response.split("\r\n\r\n").nth(1).unwrap();
    (status, serde_json::from_str(json).unwrap())
}

#[tokio::test]
async fn a_terminal_streams_its_output_to_a_connected_browser_until_it_exits() {
    use base64::Engine as _;
    let (tmp, root, engine) = app();
    let (addr, cookie) = start(engine.clone(), &tmp.path().join("config")).await;
    engine.open_workspace(OpenWorkspaceArgs { path: root.display().to_string() }).await.unwrap();
    let session = engine
        .create_session(CreateSessionArgs {
            brief: "Make it faster".into(),
            title: None,
            create_modules: None,
            issue: None,
        })
        .await
        .unwrap();
    let (status, opened) =
        post(addr, &cookie, "open_terminal", serde_json::json!({ "sessionId": session.id, "kind": "shell" })).await;
    assert_eq!(status, 200, "{opened}");
    let id = opened["id"].as_str().unwrap().to_string();
    assert_eq!(opened["state"], "running");

    let get = |cookie: Option<&str>| {
        let cookie = cookie.map(|c| format!("Cookie: {c}\r\n")).unwrap_or_default();
        format!(
            "GET /api/terminal_stream?terminalId={id} HTTP/1.0\r\nHost: 127.0.0.1:{}\r\n{cookie}Accept: text/event-stream\r\n\r\n",
            addr.port()
        )
    };
    // Without the connection cookie: refused, like /api/events.
    let mut refused = TcpStream::connect(addr).await.unwrap();
    refused.write_all(get(None).as_bytes()).await.unwrap();
    let mut answer = String::new();
    refused.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.0 401") && answer.contains("NOT_CONNECTED"), "{answer}");

    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(get(Some(&cookie)).as_bytes()).await.unwrap();
    let typed =
        |data: &str| post(addr, &cookie, "write_terminal", serde_json::json!({ "terminalId": id, "data": data }));
    assert_eq!(typed("echo kiln-$((6*7))\r").await.0, 200);
    assert_eq!(typed("exit 5\r").await.0, 200);
    // Read to the end: the stream ends after the exit chunk.
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut raw))
        .await
        .expect("the stream ended")
        .unwrap();
    let text = String::from_utf8_lossy(&raw).replace("\r\n", "\n");
    assert!(text.contains("content-type: text/event-stream"), "{text}");
    let chunks: Vec<TerminalChunk> = text
        .split("\n\n")
        .filter_map(|block| block.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect();
    let mut output = String::new();
    for chunk in &chunks[..chunks.len() - 1] {
        let TerminalChunk::Output { data } = chunk else { panic!("output before the exit: {chunks:?}") };
        output.push_str(&String::from_utf8_lossy(&base64::engine::general_purpose::STANDARD.decode(data).unwrap()));
    }
    assert!(output.contains("kiln-42"), "{output:?}");
    assert_eq!(chunks.last(), Some(&TerminalChunk::Exit { exit_code: Some(5) }));

    // A browser that disconnects loses its stream; the terminal runs on.
    let (_, second) =
        post(addr, &cookie, "open_terminal", serde_json::json!({ "sessionId": session.id, "kind": "shell" })).await;
    let second = second["id"].as_str().unwrap().to_string();
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = get(Some(&cookie)).replace(&id, &second);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = [0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut head)).await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&head[..n]).starts_with("HTTP/1.0 200"));
    assert_eq!(post(addr, &cookie, "disconnect", serde_json::json!({})).await.0, 200);
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut rest))
        .await
        .expect("the stream ended")
        .unwrap();
    let listed = engine.list_terminals(SessionIdArgs { session_id: session.id.clone() }).await.unwrap();
    assert!(listed.iter().any(|t| t.id == second && t.state == TerminalState::Running), "{listed:?}");
    engine.shutdown().await;
}

/// A client cut off again and again while a session is renamed without pause: each time it
/// resumes from the last id it read, it gets every event after that one, once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_off_while_events_keep_coming_resumes_with_no_gap_and_no_duplicate() {
    let (tmp, root, engine) = app();
    let (addr, cookie) = start(engine.clone(), &tmp.path().join("config")).await;
    engine.open_workspace(OpenWorkspaceArgs { path: root.display().to_string() }).await.unwrap();
    let session = engine
        .create_session(CreateSessionArgs { brief: "Rename me".into(), title: None, create_modules: None, issue: None })
        .await
        .unwrap();
    let from = engine.events().last_id();
    let publishing = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let publisher = tokio::spawn({
        let (engine, publishing) = (engine.clone(), publishing.clone());
        async move {
            let mut renames = 0u64;
            while publishing.load(std::sync::atomic::Ordering::SeqCst) {
                let title = Some(format!("Renamed {renames}"));
                let args = UpdateSessionArgs { session_id: session.id.clone(), auto_continue: None, title };
                engine.update_session(args).await.unwrap();
                renames += 1;
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            renames
        }
    });

    // Each read drops its connection with whatever else was on the way still unread.
    let mut seen: Vec<u64> = Vec::new();
    for cut_after in [3, 40, 1, 90, 12, 60, 25] {
        let resume = seen.last().copied().unwrap_or(from);
        seen.extend(read_events(addr, cookie.clone(), Some(resume), cut_after).await.iter().map(|(id, _)| *id));
    }
    publishing.store(false, std::sync::atomic::Ordering::SeqCst);
    let renames = publisher.await.unwrap();
    let last = engine.events().last_id();
    let resume = *seen.last().unwrap();
    seen.extend(read_events(addr, cookie, Some(resume), (last - resume) as usize).await.iter().map(|(id, _)| *id));

    assert!(renames >= 231, "the events kept coming during the reads: {renames} renames");
    assert_eq!(last - from, renames, "one event per rename");
    let expected: Vec<u64> = (from + 1..=last).collect();
    assert_eq!(seen, expected, "every event once, in order, across 7 cut-offs");
    engine.shutdown().await;
}
