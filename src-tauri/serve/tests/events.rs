//! Server-sent events over a real socket: changes stream live, and a client that
//! reconnects with `Last-Event-ID` gets exactly what it missed.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use kiln_engine::types::*;
use kiln_engine::{Engine, EngineOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Serves `engine` on a free loopback port; returns the address and a connection cookie.
async fn start(engine: Arc<Engine>, config: &std::path::Path) -> (SocketAddr, String) {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let assets = Arc::new(kiln_serve::DirAssets(std::env::temp_dir()));
    let access = Arc::new(kiln_serve::access::Access::open(config).await.unwrap());
    tokio::spawn(kiln_serve::serve(
        engine,
        assets,
        "127.0.0.1:0".parse().unwrap(),
        ServeMode::Loopback,
        access,
        move |addr| {
            let _ = tx.send(addr);
        },
    ));
    let addr = rx.await.unwrap();
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST /api/connect HTTP/1.0\r\nHost: 127.0.0.1:{}\r\nx-kiln: 1\r\nContent-Length: 2\r\n\r\n{{}}",
        addr.port()
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

#[tokio::test]
async fn events_stream_live_and_resume_from_the_last_id() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("app");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("package.json"), r#"{"name":"app"}"#).unwrap();
    // No install step: its transcript entries would interleave with the ones counted here.
    std::fs::write(root.join("kiln.toml"), "[session]\nsetup = \"\"\n").unwrap();
    let engine = Arc::new(Engine::new(EngineOptions {
        config_dir: tmp.path().join("config"),
        transport: Transport::Serve,
        mode: ServeMode::Loopback,
        allow_agent_commands: false,
        allow_terminals: false,
    }));
    let (addr, cookie) = start(engine.clone(), &tmp.path().join("config")).await;

    let live = tokio::spawn(read_events(addr, cookie.clone(), None, 3));
    tokio::time::sleep(Duration::from_millis(300)).await; // subscribed before anything happens
    engine.open_workspace(OpenWorkspaceArgs { path: root.display().to_string() }).await.unwrap();
    let session = engine
        .create_session(CreateSessionArgs { brief: "Make it faster".into(), title: None, create_modules: None })
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
