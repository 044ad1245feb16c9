//! The preview gateway against real upstreams started here on 127.0.0.1 (a hyper
//! application that records what reaches it, streams, redirects, sets cookies and
//! accepts a WebSocket; a connected application that records what the bridge sends
//! it): admission by secret and cookie, the Host check, streaming, redirects, WebSocket
//! upgrades, cookie isolation between previews and from Kiln, the starting and
//! not-answering pages, bridge composition, static files, and `stop`.

use std::convert::Infallible;
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::service::service_fn;
use hyper::{HeaderMap, Request, Response};
use hyper_util::rt::TokioIo;
use kiln_engine::testing::preview::gateway::{Activity, BridgeTarget, Gateway, GatewayOptions, Upstream};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};

type FixtureBody = UnsyncBoxBody<Bytes, Infallible>;

/// A request as a fixture saw it.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    target: String,
    headers: HeaderMap,
}

type Log = Arc<Mutex<Vec<Seen>>>;

fn seen_at(log: &Log, target: &str) -> Vec<Seen> {
    log.lock().unwrap().iter().filter(|seen| seen.target == target).cloned().collect()
}

async fn bind() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

/// Serves `handler` on `listener` with hyper, upgrades allowed.
fn serve<H, F>(listener: TcpListener, handler: H)
where
    H: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<FixtureBody>> + Send + 'static,
{
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let handler = handler.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request| {
                    let handler = handler.clone();
                    async move { Ok::<_, Infallible>(handler(request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .with_upgrades()
                    .await;
            });
        }
    });
}

fn answer(status: u16, headers: &[(&str, &str)], body: impl Into<Bytes>) -> Response<FixtureBody> {
    let mut builder = Response::builder().status(status);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(Full::new(body.into()).boxed_unsync()).unwrap()
}

/// The session's application.
struct App {
    port: u16,
    seen: Log,
    /// Lets `/sse` send its second event.
    release: Arc<Notify>,
}

async fn start_app() -> App {
    let (listener, port) = bind().await;
    let seen: Log = Arc::default();
    let release = Arc::new(Notify::new());
    let (log, gate) = (seen.clone(), release.clone());
    serve(listener, move |mut request: Request<Incoming>| {
        let (log, gate) = (log.clone(), gate.clone());
        async move {
            let target = request.uri().to_string();
            log.lock().unwrap().push(Seen {
                method: request.method().to_string(),
                target,
                headers: request.headers().clone(),
            });
            match request.uri().path() {
                "/echo" => answer(200, &[("content-type", "text/plain")], "ok"),
                "/upload" => {
                    let body = request.into_body().collect().await.unwrap().to_bytes();
                    answer(200, &[], format!("got {}", String::from_utf8_lossy(&body)))
                }
                "/redirect" => answer(302, &[("location", &format!("http://127.0.0.1:{port}/landed"))], ""),
                "/redirect-localhost" => answer(302, &[("location", &format!("http://localhost:{port}/x?y=1"))], ""),
                "/set-cookie" => answer(
                    200,
                    &[
                        ("set-cookie", "sid=abc; Domain=127.0.0.1; Path=/; HttpOnly"),
                        ("set-cookie", "theme=dark; Path=/"),
                    ],
                    "set",
                ),
                "/sse" => {
                    let (events, receiver) = tokio::sync::mpsc::channel::<&'static str>(2);
                    tokio::spawn(async move {
                        let _ = events.send("data: one\n\n").await;
                        gate.notified().await;
                        let _ = events.send("data: two\n\n").await;
                    });
                    let frames = futures_util::stream::unfold(receiver, |mut receiver| async move {
                        let event = receiver.recv().await?;
                        Some((Ok::<_, Infallible>(Frame::data(Bytes::from_static(event.as_bytes()))), receiver))
                    });
                    let mut response = Response::new(StreamBody::new(frames).boxed_unsync());
                    response.headers_mut().insert("content-type", "text/event-stream".parse().unwrap());
                    response
                }
                "/api/own" => answer(200, &[("content-type", "application/json")], r#"{"from":"session"}"#),
                "/ws" => {
                    let upgrade = hyper::upgrade::on(&mut request);
                    tokio::spawn(async move {
                        let mut io = TokioIo::new(upgrade.await.unwrap());
                        // An unmasked text frame "hello", as a dev server's hot reload pushes.
                        io.write_all(&[0x81, 5, b'h', b'e', b'l', b'l', b'o']).await.unwrap();
                        let mut buf = [0u8; 256];
                        while let Ok(n) = io.read(&mut buf).await {
                            if n == 0 || io.write_all(&buf[..n]).await.is_err() {
                                break;
                            }
                        }
                    });
                    answer(
                        101,
                        &[
                            ("upgrade", "websocket"),
                            ("connection", "Upgrade"),
                            ("sec-websocket-accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
                        ],
                        "",
                    )
                }
                _ => answer(404, &[("content-type", "text/plain")], "not here"),
            }
        }
    });
    App { port, seen, release }
}

/// The connected application: answers every request and records it.
async fn start_bridge() -> (u16, Log) {
    let (listener, port) = bind().await;
    let seen: Log = Arc::default();
    let log = seen.clone();
    serve(listener, move |request: Request<Incoming>| {
        let log = log.clone();
        async move {
            let target = request.uri().to_string();
            log.lock().unwrap().push(Seen {
                method: request.method().to_string(),
                target,
                headers: request.headers().clone(),
            });
            answer(
                200,
                &[("content-type", "application/json"), ("set-cookie", "bridge_sid=1; Path=/")],
                r#"{"from":"bridge"}"#,
            )
        }
    });
    (port, seen)
}

/// A port nothing listens on.
async fn closed_port() -> u16 {
    let (listener, port) = bind().await;
    drop(listener);
    port
}

async fn gateway(upstream: Upstream, bridge: Option<BridgeTarget>) -> (Gateway, Arc<Activity>) {
    let activity = Arc::new(Activity::default());
    let gateway = Gateway::start(GatewayOptions { upstream, bridge, activity: activity.clone() }).await.unwrap();
    (gateway, activity)
}

fn app_upstream(port: u16) -> (Upstream, watch::Sender<Option<u16>>) {
    let (sender, receiver) = watch::channel(Some(port));
    (Upstream::App(receiver), sender)
}

/// The browser's side: one hyper client connection per request, the Host given.
async fn send_to(
    port: u16,
    host: &str,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Response<Incoming> {
    let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.unwrap();
    tokio::spawn(connection);
    let mut request = Request::builder().method(method).uri(target).header("host", host);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    sender.send_request(request.body(Full::new(Bytes::from(body.to_string()))).unwrap()).await.unwrap()
}

struct Reply {
    status: u16,
    headers: HeaderMap,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> &str {
        self.headers.get(name).map(|v| v.to_str().unwrap()).unwrap_or("")
    }
}

async fn fetch(port: u16, method: &str, target: &str, headers: &[(&str, &str)]) -> Reply {
    let response = send_to(port, &format!("127.0.0.1:{port}"), method, target, headers, "").await;
    let (parts, body) = response.into_parts();
    let body = String::from_utf8(body.collect().await.unwrap().to_bytes().to_vec()).unwrap();
    Reply { status: parts.status.as_u16(), headers: parts.headers, body }
}

/// Enters like Kiln's view does and answers the cookie the browser would send back.
async fn enter(gateway: &Gateway) -> String {
    let url = gateway.enter_url("/");
    let target = url.strip_prefix(&gateway.origin()).unwrap();
    let reply = fetch(gateway.port, "GET", target, &[]).await;
    assert_eq!(reply.status, 302);
    reply.header("set-cookie").split(';').next().unwrap().to_string()
}

#[tokio::test]
async fn entering_sets_the_cookie_and_redirects_only_within_the_preview() {
    let app = start_app().await;
    let (upstream, _port) = app_upstream(app.port);
    let (gateway, activity) = gateway(upstream, None).await;
    assert_eq!(activity.last_request_ms.load(Ordering::Relaxed), 0);
    assert_eq!(gateway.secret.len(), 43, "256 bits in base64url");

    let target = gateway.enter_url("/shop/cart?x=1").strip_prefix(&gateway.origin()).unwrap().to_string();
    let reply = fetch(gateway.port, "GET", &target, &[]).await;
    assert_eq!(reply.status, 302);
    assert_eq!(reply.header("location"), "/shop/cart?x=1");
    assert_eq!(
        reply.header("set-cookie"),
        format!("kiln_preview_{}={}; HttpOnly; SameSite=Lax; Path=/", gateway.port, gateway.secret)
    );
    assert_eq!(reply.header("cache-control"), "no-store");
    assert!(activity.last_request_ms.load(Ordering::Relaxed) > 0);

    for foreign in ["//evil.example/", "https://evil.example/", "/%5Cevil.example/", "/%09/evil.example", "nowhere"] {
        let target = format!("/__kiln/enter?secret={}&to={foreign}", gateway.secret);
        let reply = fetch(gateway.port, "GET", &target, &[]).await;
        assert_eq!((reply.status, reply.header("location")), (302, "/"), "to={foreign}");
    }

    let cookie = enter(&gateway).await;
    let reply = fetch(gateway.port, "GET", "/echo", &[("cookie", &cookie)]).await;
    assert_eq!((reply.status, reply.body.as_str()), (200, "ok"));
    // The gateway's cookie is the gateway's: the application never sees the secret.
    let seen = &seen_at(&app.seen, "/echo")[0];
    assert!(seen.headers.get("cookie").is_none());
    gateway.stop().await;
}

#[tokio::test]
async fn without_the_secret_nothing_reaches_the_app() {
    let app = start_app().await;
    let (upstream, _port) = app_upstream(app.port);
    let (gateway, activity) = gateway(upstream, None).await;
    let port = gateway.port;
    let wrong = format!("kiln_preview_{port}=not-the-secret");
    let other_port = format!("kiln_preview_{}={}", port + 1, gateway.secret);
    for cookie in ["", wrong.as_str(), other_port.as_str()] {
        let reply = fetch(port, "GET", "/echo", &[("cookie", cookie)]).await;
        assert_eq!(reply.status, 401, "cookie {cookie:?}");
        assert!(reply.header("content-type").starts_with("text/html"));
        assert!(reply.body.contains("Kiln"));
        assert_eq!(reply.header("cache-control"), "no-store");
    }
    for target in
        ["/__kiln/enter?secret=wrong&to=/", "/__kiln/enter?to=/", &format!("/__kiln/enter?secret={}x", gateway.secret)]
    {
        let reply = fetch(port, "GET", target, &[]).await;
        assert_eq!(reply.status, 401, "{target}");
        assert!(reply.headers.get("set-cookie").is_none());
    }
    assert!(app.seen.lock().unwrap().is_empty(), "nothing was forwarded");
    assert_eq!(activity.last_request_ms.load(Ordering::Relaxed), 0, "refused requests are not use");
    gateway.stop().await;
}

#[tokio::test]
async fn a_foreign_host_is_refused_even_with_the_cookie() {
    let app = start_app().await;
    let (upstream, _port) = app_upstream(app.port);
    let (gateway, _) = gateway(upstream, None).await;
    let port = gateway.port;
    let cookie = enter(&gateway).await;
    let enter_target = format!("/__kiln/enter?secret={}&to=/", gateway.secret);
    for host in
        ["rebound.example:".to_string() + &port.to_string(), format!("127.0.0.1:{}", port + 1), "127.0.0.1".into()]
    {
        let response = send_to(port, &host, "GET", "/echo", &[("cookie", &cookie)], "").await;
        assert_eq!(response.status(), 403, "host {host}");
        assert_eq!(response.headers()["cache-control"], "no-store");
        let response = send_to(port, &host, "GET", &enter_target, &[], "").await;
        assert_eq!(response.status(), 403, "enter through host {host}");
        assert!(response.headers().get("set-cookie").is_none());
    }
    let response = send_to(port, &format!("localhost:{port}"), "GET", "/echo", &[("cookie", &cookie)], "").await;
    assert_eq!(response.status(), 200, "localhost is the gateway's own name too");
    assert_eq!(seen_at(&app.seen, "/echo").len(), 1);
    gateway.stop().await;
}

#[tokio::test]
async fn bodies_stream_both_ways_and_headers_are_forwarded() {
    let app = start_app().await;
    let (upstream, _port) = app_upstream(app.port);
    let (gateway, _) = gateway(upstream, None).await;
    let cookie = enter(&gateway).await;
    let host = format!("127.0.0.1:{}", gateway.port);

    // The second event is only sent once the first has arrived: a buffering proxy
    // would never deliver the first, and the timeout fails the test.
    let response = send_to(gateway.port, &host, "GET", "/sse", &[("cookie", &cookie)], "").await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();
    let first = tokio::time::timeout(Duration::from_secs(5), body.frame())
        .await
        .expect("the first event streams")
        .unwrap()
        .unwrap();
    assert_eq!(first.into_data().unwrap(), "data: one\n\n");
    app.release.notify_one();
    let rest = tokio::time::timeout(Duration::from_secs(5), body.collect()).await.unwrap().unwrap().to_bytes();
    assert_eq!(rest, "data: two\n\n");

    let response = send_to(
        gateway.port,
        &host,
        "POST",
        "/upload",
        &[("cookie", &cookie), ("connection", "x-hop"), ("x-hop", "1"), ("x-forwarded-for", "6.6.6.6")],
        "payload",
    )
    .await;
    assert_eq!(response.into_body().collect().await.unwrap().to_bytes(), "got payload");
    let seen = &seen_at(&app.seen, "/upload")[0];
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.headers["host"], host.as_str(), "the browser's Host is kept");
    assert_eq!(seen.headers["x-forwarded-host"], host.as_str());
    assert_eq!(seen.headers["x-forwarded-proto"], "http");
    assert_eq!(seen.headers["x-forwarded-for"], "127.0.0.1", "the peer, not what the request claimed");
    assert!(seen.headers.get("x-hop").is_none(), "a header named by Connection is one hop's");
    gateway.stop().await;
}

#[tokio::test]
async fn redirects_to_the_app_point_at_the_gateway() {
    let app = start_app().await;
    let (upstream, _port) = app_upstream(app.port);
    let (gateway, _) = gateway(upstream, None).await;
    let cookie = enter(&gateway).await;
    let reply = fetch(gateway.port, "GET", "/redirect", &[("cookie", &cookie)]).await;
    assert_eq!(reply.status, 302);
    assert_eq!(reply.header("location"), format!("http://127.0.0.1:{}/landed", gateway.port));
    let response = send_to(
        gateway.port,
        &format!("localhost:{}", gateway.port),
        "GET",
        "/redirect-localhost",
        &[("cookie", &cookie)],
        "",
    )
    .await;
    assert_eq!(response.headers()["location"], format!("http://localhost:{}/x?y=1", gateway.port).as_str());
    gateway.stop().await;
}

/// Reads from a raw stream until the end of the response head; answers the head and
/// whatever came after it.
async fn read_head(stream: &mut TcpStream) -> (String, Vec<u8>) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut chunk)).await.unwrap().unwrap();
        assert!(n > 0, "closed before the head ended");
        buffer.extend_from_slice(&chunk[..n]);
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buffer.split_off(end + 4);
            return (String::from_utf8(buffer).unwrap(), rest);
        }
    }
}

async fn read_exactly(stream: &mut TcpStream, mut have: Vec<u8>, len: usize) -> Vec<u8> {
    let mut chunk = [0u8; 256];
    while have.len() < len {
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut chunk)).await.unwrap().unwrap();
        assert!(n > 0, "closed early");
        have.extend_from_slice(&chunk[..n]);
    }
    have
}

#[tokio::test]
async fn a_websocket_upgrade_passes_through_and_stop_closes_it() {
    let app = start_app().await;
    let (upstream, _port) = app_upstream(app.port);
    let (gateway, _) = gateway(upstream, None).await;
    let cookie = enter(&gateway).await;
    let port = gateway.port;

    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let handshake = format!(
        "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {cookie}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    stream.write_all(handshake.as_bytes()).await.unwrap();
    let (head, rest) = read_head(&mut stream).await;
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    let lower = head.to_ascii_lowercase();
    assert!(lower.contains("upgrade: websocket") && lower.contains("connection: upgrade"), "{head}");
    assert!(lower.contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="), "{head}");

    // The frame the application pushes, then bytes both ways through the splice.
    let frame = read_exactly(&mut stream, rest, 7).await;
    assert_eq!(frame, [0x81, 5, b'h', b'e', b'l', b'l', b'o']);
    stream.write_all(b"ping").await.unwrap();
    assert_eq!(read_exactly(&mut stream, Vec::new(), 4).await, b"ping");

    let seen = &seen_at(&app.seen, "/ws")[0];
    assert_eq!(seen.headers["upgrade"], "websocket");
    assert_eq!(seen.headers["sec-websocket-key"], "dGhlIHNhbXBsZSBub25jZQ==");
    assert!(seen.headers.get("cookie").is_none());

    tokio::time::timeout(Duration::from_secs(10), gateway.stop()).await.expect("stop returns");
    let mut buf = [0u8; 16];
    let closed =
        tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf)).await.expect("stop closes the socket");
    assert!(matches!(closed, Ok(0) | Err(_)), "the upgraded connection is closed after stop");
}

#[tokio::test]
async fn cookies_are_isolated_between_previews_and_from_kiln() {
    let app = start_app().await;
    let (upstream_a, _a) = app_upstream(app.port);
    let (upstream_b, _b) = app_upstream(app.port);
    let (a, _) = gateway(upstream_a, None).await;
    let (b, _) = gateway(upstream_b, None).await;
    let (cookie_a, cookie_b) = (enter(&a).await, enter(&b).await);
    let (pa, pb) = (a.port, b.port);
    // What the browser holds for 127.0.0.1: Kiln's session, both previews' cookies.
    let jar =
        format!("kiln_session_4320=KILN-SESSION; {cookie_a}; {cookie_b}; kp{pa}_sid=mine; kp{pb}_sid=theirs; plain=x");

    fetch(pa, "GET", "/echo", &[("cookie", &jar)]).await;
    fetch(pb, "GET", "/echo", &[("cookie", &jar)]).await;
    fetch(pa, "GET", "/echo", &[("cookie", &format!("kiln_session_4320=KILN-SESSION; {cookie_a}"))]).await;
    let seen: Vec<Option<String>> = seen_at(&app.seen, "/echo")
        .iter()
        .map(|s| s.headers.get("cookie").map(|v| v.to_str().unwrap().to_string()))
        .collect();
    assert_eq!(seen, [Some("sid=mine".to_string()), Some("sid=theirs".to_string()), None]);
    for seen in app.seen.lock().unwrap().iter() {
        let all = format!("{:?}", seen.headers);
        assert!(!all.contains("KILN-SESSION") && !all.contains(&a.secret) && !all.contains(&b.secret), "{all}");
    }

    let reply = fetch(pa, "GET", "/set-cookie", &[("cookie", &cookie_a)]).await;
    let set: Vec<&str> = reply.headers.get_all("set-cookie").iter().map(|v| v.to_str().unwrap()).collect();
    assert_eq!(set, [format!("kp{pa}_sid=abc; Path=/; HttpOnly"), format!("kp{pa}_theme=dark; Path=/")]);
    // The browser sends it back under the prefixed name; the app sees its own.
    fetch(pa, "GET", "/upload", &[("cookie", &format!("{cookie_a}; kp{pa}_sid=abc"))]).await;
    assert_eq!(seen_at(&app.seen, "/upload")[0].headers["cookie"], "sid=abc");
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn starting_then_forwarding_then_not_answering() {
    let app = start_app().await;
    let (port_sender, port_receiver) = watch::channel(None);
    let (gateway, _) = gateway(Upstream::App(port_receiver), None).await;
    let cookie = enter(&gateway).await;

    let reply = fetch(gateway.port, "GET", "/echo", &[("cookie", &cookie)]).await;
    assert_eq!(reply.status, 503);
    assert!(reply.body.contains("The preview is starting"));
    assert!(reply.body.contains(r#"<meta http-equiv="refresh" content="1">"#));
    assert_eq!(reply.header("cache-control"), "no-store");

    port_sender.send(Some(app.port)).unwrap();
    assert_eq!(fetch(gateway.port, "GET", "/echo", &[("cookie", &cookie)]).await.status, 200);

    port_sender.send(Some(closed_port().await)).unwrap();
    let reply = fetch(gateway.port, "GET", "/echo", &[("cookie", &cookie)]).await;
    assert_eq!(reply.status, 502);
    assert!(reply.body.contains("The preview is not answering"));
    assert!(reply.body.contains(r#"http-equiv="refresh""#));
    assert_eq!(reply.header("cache-control"), "no-store");
    gateway.stop().await;
}

#[tokio::test]
async fn the_bridge_answers_reads_the_app_lacks_and_nothing_else() {
    let app = start_app().await;
    let (bridge_port, bridge_seen) = start_bridge().await;
    let (upstream, _port) = app_upstream(app.port);
    let target = BridgeTarget { url: format!("http://127.0.0.1:{bridge_port}/"), token: Some("tok-SECRET-123".into()) };
    let (gateway, activity) = gateway(upstream, Some(target)).await;
    let cookie = enter(&gateway).await;
    let browser = format!("{cookie}; kiln_session_4320=KILN-SESSION; kp{}_sid=mine", gateway.port);
    let headers = [("cookie", browser.as_str()), ("authorization", "Basic YnJvd3Nlcg==")];

    let own = fetch(gateway.port, "GET", "/api/own", &headers).await;
    assert_eq!((own.status, own.header("x-kiln-source"), own.body.as_str()), (200, "session", r#"{"from":"session"}"#));

    let bridged = fetch(gateway.port, "GET", "/api/products?page=2", &headers).await;
    assert_eq!(
        (bridged.status, bridged.header("x-kiln-source"), bridged.body.as_str()),
        (200, "bridge", r#"{"from":"bridge"}"#)
    );
    assert!(bridged.headers.get("set-cookie").is_none(), "the bridge's cookies stay with it");
    assert!(!format!("{:?}{}", bridged.headers, bridged.body).contains("tok-SECRET-123"));
    let asked = &seen_at(&bridge_seen, "/api/products?page=2")[0];
    assert_eq!(asked.method, "GET");
    assert_eq!(asked.headers["authorization"], "Bearer tok-SECRET-123");
    assert!(asked.headers.get("cookie").is_none(), "no browser cookie reaches the connected application");
    assert_eq!(seen_at(&app.seen, "/api/products?page=2").len(), 1, "the session's application is asked first");

    let post = fetch(gateway.port, "POST", "/api/products", &headers).await;
    assert_eq!((post.status, post.header("x-kiln-source")), (405, "bridge-refused"));
    assert!(post.header("content-type").starts_with("application/json"));
    assert_eq!(seen_at(&app.seen, "/api/products").len(), 1, "the POST went to the session's application");

    for auth in ["/api/auth/x", "/api/auth", "/api/%61uth/x"] {
        let reply = fetch(gateway.port, "GET", auth, &headers).await;
        assert_eq!((reply.status, reply.body.as_str()), (404, "not here"), "{auth}: the application's own answer");
    }
    let not_api = fetch(gateway.port, "GET", "/nowhere", &headers).await;
    assert_eq!((not_api.status, not_api.header("x-kiln-source")), (404, ""));

    assert_eq!(bridge_seen.lock().unwrap().len(), 1, "only the one GET reached the connected application");
    assert_eq!(activity.forwarded.load(Ordering::Relaxed), 1);
    assert_eq!(activity.refused.load(Ordering::Relaxed), 4);
    assert_eq!(activity.unavailable.load(Ordering::Relaxed), 0);
    gateway.stop().await;
}

#[tokio::test]
async fn a_bridge_that_is_down_is_marked_unavailable() {
    let app = start_app().await;
    let (upstream, _port) = app_upstream(app.port);
    let target =
        BridgeTarget { url: format!("http://127.0.0.1:{}", closed_port().await), token: Some("tok-SECRET-123".into()) };
    let (gateway, activity) = gateway(upstream, Some(target)).await;
    let cookie = enter(&gateway).await;
    let reply = fetch(gateway.port, "GET", "/api/products", &[("cookie", &cookie)]).await;
    assert_eq!(reply.status, 502);
    assert_eq!(reply.header("x-kiln-source"), "bridge-unavailable");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&reply.body).unwrap(),
        serde_json::json!({"error": "the connected application is unavailable"})
    );
    assert!(!format!("{:?}{}", reply.headers, reply.body).contains("tok-SECRET-123"));
    // The preview itself keeps working.
    assert_eq!(fetch(gateway.port, "GET", "/api/own", &[("cookie", &cookie)]).await.status, 200);
    assert_eq!(activity.unavailable.load(Ordering::Relaxed), 1);
    assert_eq!(activity.forwarded.load(Ordering::Relaxed), 0);
    gateway.stop().await;
}

#[tokio::test]
async fn static_files_stay_inside_their_root() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "outside").unwrap();
    let site = tempfile::tempdir().unwrap();
    let root = site.path().join("public");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join("index.html"), "<h1>home</h1>").unwrap();
    std::fs::write(root.join("app.js"), "console.log(1)").unwrap();
    std::fs::write(root.join("sub/index.html"), "<h1>sub</h1>").unwrap();
    std::fs::write(root.join(".git/config"), "[core]").unwrap();
    std::fs::write(site.path().join("beside.txt"), "beside").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), root.join("leak.txt")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("linkdir")).unwrap();
    // A directory whose index.html is a link leading out.
    std::fs::create_dir_all(root.join("trap")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), root.join("trap/index.html")).unwrap();

    let (gateway, _) = gateway(Upstream::files(&root).unwrap(), None).await;
    let port = gateway.port;
    assert_eq!(fetch(port, "GET", "/", &[]).await.status, 401, "the same admission rules");
    let cookie = enter(&gateway).await;
    let with = [("cookie", cookie.as_str())];

    let home = fetch(port, "GET", "/", &with).await;
    assert_eq!((home.status, home.body.as_str()), (200, "<h1>home</h1>"));
    assert_eq!(home.header("content-type"), "text/html; charset=utf-8");
    assert_eq!(home.header("cache-control"), "no-store");
    let script = fetch(port, "GET", "/app.js", &with).await;
    assert_eq!((script.status, script.header("content-type")), (200, "text/javascript; charset=utf-8"));
    let head = fetch(port, "HEAD", "/app.js", &with).await;
    assert_eq!((head.status, head.header("content-length"), head.body.as_str()), (200, "14", ""));
    let moved = fetch(port, "GET", "/sub?x=1", &with).await;
    assert_eq!((moved.status, moved.header("location")), (302, "./sub/?x=1"));
    assert_eq!(fetch(port, "GET", "/sub/", &with).await.body, "<h1>sub</h1>");
    assert_eq!(fetch(port, "GET", "/%61pp.js", &with).await.status, 200, "the path is percent-decoded");

    for refused in [
        "/../beside.txt",
        "/%2e%2e/beside.txt",
        "/sub/..%2f..%2fbeside.txt",
        "/leak.txt",
        "/linkdir/secret.txt",
        "/trap/",
        "/.git/config",
        "/missing",
    ] {
        let reply = fetch(port, "GET", refused, &with).await;
        assert_eq!(reply.status, 404, "{refused}");
        assert!(!reply.body.contains("outside") && !reply.body.contains("beside") && !reply.body.contains("[core]"));
    }
    let post = fetch(port, "POST", "/", &with).await;
    assert_eq!((post.status, post.header("allow")), (405, "GET, HEAD"));
    gateway.stop().await;
}

#[tokio::test]
async fn a_directory_without_its_slash_moves_within_the_preview_never_to_another_host() {
    let site = tempfile::tempdir().unwrap();
    let root = site.path().join("public");
    std::fs::create_dir_all(root.join("evil.example")).unwrap();
    std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
    std::fs::write(root.join("evil.example/index.html"), "<h1>a directory</h1>").unwrap();

    let (gateway, _) = gateway(Upstream::files(&root).unwrap(), None).await;
    let port = gateway.port;
    let cookie = enter(&gateway).await;
    let with = [("cookie", cookie.as_str())];
    // `//evil.example/` as a location is another host to a browser; `./evil.example/` is
    // this page's own directory.
    for (target, location) in [
        ("//evil.example", "./evil.example/"),
        ("///evil.example", "./evil.example/"),
        ("//evil.example?next=1", "./evil.example/?next=1"),
        ("/evil.example", "./evil.example/"),
        ("/sub/deeper", "./deeper/"),
        ("//sub//deeper", "./deeper/"),
    ] {
        let moved = fetch(port, "GET", target, &with).await;
        assert_eq!((moved.status, moved.header("location")), (302, location), "{target}");
        assert_eq!(moved.header("cache-control"), "no-store", "{target}");
    }
    // Where the browser lands, resolving `./evil.example/` against `//evil.example`.
    let landed = fetch(port, "GET", "//evil.example/", &with).await;
    assert_eq!((landed.status, landed.body.as_str()), (200, "<h1>a directory</h1>"));
    gateway.stop().await;
}

#[tokio::test]
async fn after_stop_the_port_refuses_connections() {
    let app = start_app().await;
    let (upstream, _port) = app_upstream(app.port);
    let (gateway, _) = gateway(upstream, None).await;
    let port = gateway.port;
    let cookie = enter(&gateway).await;
    // A kept-alive connection open across the stop.
    let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.unwrap();
    let driver = tokio::spawn(connection);
    let request = Request::get("/echo").header("host", format!("127.0.0.1:{port}")).header("cookie", &cookie);
    let response = sender.send_request(request.body(Full::new(Bytes::new())).unwrap()).await.unwrap();
    assert_eq!(response.status(), 200);
    response.into_body().collect().await.unwrap();

    tokio::time::timeout(Duration::from_secs(10), gateway.stop()).await.expect("stop returns");
    let refused = TcpStream::connect(("127.0.0.1", port)).await.unwrap_err();
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
    tokio::time::timeout(Duration::from_secs(5), driver)
        .await
        .expect("the kept-alive connection is closed")
        .unwrap()
        .ok();
}

#[test]
fn the_gateway_can_be_held_across_threads() {
    fn held<T: Send + Sync>() {}
    held::<Gateway>();
    held::<Activity>();
}

/// Streams a body the app sends only after the browser's first chunk arrived, so a
/// gateway that buffers the request body fails here.
#[tokio::test]
async fn request_bodies_stream_to_the_app() {
    let (listener, app_port) = bind().await;
    serve(listener, |request: Request<Incoming>| async move {
        let mut body = request.into_body();
        let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
        answer(200, &[], first)
    });
    let (upstream, _port) = app_upstream(app_port);
    let (gateway, _) = gateway(upstream, None).await;
    let cookie = enter(&gateway).await;

    let stream = TcpStream::connect(("127.0.0.1", gateway.port)).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.unwrap();
    tokio::spawn(connection);
    let (chunks, receiver) = tokio::sync::mpsc::channel::<Bytes>(1);
    let frames = futures_util::stream::unfold(receiver, |mut receiver| async move {
        let chunk = receiver.recv().await?;
        Some((Ok::<_, Infallible>(Frame::data(chunk)), receiver))
    });
    let request = Request::post("/upload")
        .header("host", format!("127.0.0.1:{}", gateway.port))
        .header("cookie", &cookie)
        .body(StreamBody::new(frames))
        .unwrap();
    chunks.send(Bytes::from_static(b"first")).await.unwrap();
    // The body is still open (the sender is alive) when the answer must come back.
    let response = tokio::time::timeout(Duration::from_secs(5), sender.send_request(request))
        .await
        .expect("streamed, not buffered")
        .unwrap();
    let answered =
        tokio::time::timeout(Duration::from_secs(5), response.into_body().collect()).await.unwrap().unwrap().to_bytes();
    assert_eq!(answered, "first");
    drop(chunks);
    gateway.stop().await;
}

/// An application for the picking script: an HTML page, one that streams its head in
/// pieces, one under a Content-Security-Policy, one compressed unless asked for identity,
/// one compressed whatever it is asked, JSON, a script and an image.
async fn start_pick_app() -> (u16, Log) {
    let (listener, port) = bind().await;
    let seen: Log = Arc::default();
    let log = seen.clone();
    serve(listener, move |request: Request<Incoming>| {
        let log = log.clone();
        async move {
            log.lock().unwrap().push(Seen {
                method: request.method().to_string(),
                target: request.uri().to_string(),
                headers: request.headers().clone(),
            });
            let html = [("content-type", "text/html; charset=utf-8")];
            let identity = request.headers().get("accept-encoding").is_some_and(|v| v == "identity");
            match request.uri().path() {
                "/page" => answer(200, &html, PAGE),
                "/csp" => answer(
                    200,
                    &[
                        ("content-type", "text/html"),
                        ("content-security-policy", "default-src 'self'; script-src 'nonce-app'; img-src *"),
                    ],
                    PAGE,
                ),
                "/compressed" if identity => answer(200, &html, PAGE),
                "/compressed" | "/always-compressed" => {
                    answer(200, &[("content-type", "text/html"), ("content-encoding", "gzip")], "GZIPPED")
                }
                "/streamed" => {
                    let pieces =
                        ["<!doctype html><html><he", "ad lang=\"en\"><title>t</title></head>", "<body>x</body>"];
                    let frames = futures_util::stream::iter(pieces)
                        .map(|p| Ok::<_, Infallible>(Frame::data(Bytes::from_static(p.as_bytes()))));
                    let mut response = Response::new(StreamBody::new(frames).boxed_unsync());
                    response.headers_mut().insert("content-type", "text/html".parse().unwrap());
                    response
                }
                "/data.json" => answer(200, &[("content-type", "application/json")], r#"{"<head>":1}"#),
                "/app.js" => answer(200, &[("content-type", "text/javascript")], "let head = '<head>';"),
                "/logo.png" => answer(200, &[("content-type", "image/png")], "\u{89}PNG<head>"),
                _ => answer(404, &[("content-type", "text/plain")], "not here"),
            }
        }
    });
    (port, seen)
}

const PAGE: &str = "<!doctype html><html><head><title>Shop</title></head><body><button>Buy</button></body></html>";
const TAG: &str = r#"<script src="/__kiln/pick.js"></script>"#;

fn with_tag(page: &str, after: &str) -> String {
    let at = page.find(after).unwrap() + after.len();
    format!("{}{TAG}{}", &page[..at], &page[at..])
}

#[tokio::test]
async fn the_picking_script_is_added_to_documents_and_nothing_else() {
    let (app_port, seen) = start_pick_app().await;
    let (upstream, _port) = app_upstream(app_port);
    let (gateway, _) = gateway(upstream, None).await;
    let port = gateway.port;
    let cookie = enter(&gateway).await;
    let frame = [("cookie", cookie.as_str()), ("sec-fetch-dest", "iframe")];

    let page = fetch(port, "GET", "/page", &frame).await;
    assert_eq!(page.body, with_tag(PAGE, "<head>"));
    assert_eq!(page.header("content-length"), page.body.len().to_string(), "the length counts the tag");
    let tab = fetch(port, "GET", "/page", &[("cookie", &cookie), ("sec-fetch-dest", "document")]).await;
    assert_eq!(tab.body, with_tag(PAGE, "<head>"));
    // The application's own reads of the page (fetch, XHR) get it as it is.
    let read = fetch(port, "GET", "/page", &[("cookie", &cookie), ("sec-fetch-dest", "empty")]).await;
    assert_eq!(read.body, PAGE);
    // A webview that sends no Sec-Fetch-Dest: a navigation asks for HTML first, a fetch does not.
    let navigation = [("cookie", cookie.as_str()), ("accept", "text/html,application/xhtml+xml,*/*;q=0.8")];
    assert_eq!(fetch(port, "GET", "/page", &navigation).await.body, with_tag(PAGE, "<head>"));
    assert_eq!(fetch(port, "GET", "/page", &[("cookie", &cookie), ("accept", "*/*")]).await.body, PAGE);

    let streamed = fetch(port, "GET", "/streamed", &frame).await;
    assert_eq!(
        streamed.body,
        format!("<!doctype html><html><head lang=\"en\">{TAG}<title>t</title></head><body>x</body>")
    );

    for (path, body) in
        [("/data.json", r#"{"<head>":1}"#), ("/app.js", "let head = '<head>';"), ("/missing", "not here")]
    {
        let reply = fetch(port, "GET", path, &frame).await;
        assert_eq!(reply.body, body, "{path}");
    }
    let image = fetch(port, "GET", "/logo.png", &frame).await;
    assert!(!image.body.contains("pick.js"));

    // A document is asked for uncompressed; an application that compresses anyway is passed on.
    let compressed = fetch(port, "GET", "/compressed", &[("accept-encoding", "gzip, br"), frame[0], frame[1]]).await;
    assert_eq!((compressed.header("content-encoding"), compressed.body.clone()), ("", with_tag(PAGE, "<head>")));
    let asked = seen_at(&seen, "/compressed");
    assert_eq!(asked[0].headers["accept-encoding"], "identity");
    let always = fetch(port, "GET", "/always-compressed", &frame).await;
    assert_eq!((always.header("content-encoding"), always.body.as_str()), ("gzip", "GZIPPED"));

    // A policy that limits scripts lets this one in by a nonce, and nothing else changes.
    let csp = fetch(port, "GET", "/csp", &frame).await;
    let policy = csp.header("content-security-policy").to_string();
    let nonce = policy.split("'nonce-").nth(2).and_then(|n| n.split('\'').next()).expect(&policy).to_string();
    assert_eq!(policy, format!("default-src 'self'; script-src 'nonce-app' 'nonce-{nonce}'; img-src *"));
    assert!(csp.body.contains(&format!(r#"<script src="/__kiln/pick.js" nonce="{nonce}"></script>"#)), "{}", csp.body);
    assert_eq!(csp.header("content-length"), csp.body.len().to_string());
    gateway.stop().await;
}

#[tokio::test]
async fn the_picking_script_is_the_gateways_own_and_only_for_its_view() {
    let (app_port, seen) = start_pick_app().await;
    let (upstream, _port) = app_upstream(app_port);
    let (gateway, _) = gateway(upstream, None).await;
    let refused = fetch(gateway.port, "GET", "/__kiln/pick.js", &[]).await;
    assert_eq!(refused.status, 401);
    assert!(!refused.body.contains("postMessage"));
    let cookie = enter(&gateway).await;
    let script = fetch(gateway.port, "GET", "/__kiln/pick.js", &[("cookie", &cookie)]).await;
    assert_eq!((script.status, script.header("content-type")), (200, "text/javascript; charset=utf-8"));
    assert!(script.body.contains("window.parent.postMessage"), "{}", script.body);
    assert!(seen_at(&seen, "/__kiln/pick.js").is_empty(), "never asked of the application");
    gateway.stop().await;
}

#[tokio::test]
async fn static_documents_get_the_picking_script_too() {
    let site = tempfile::tempdir().unwrap();
    std::fs::write(site.path().join("index.html"), PAGE).unwrap();
    std::fs::write(site.path().join("app.js"), "let head = '<head>';").unwrap();
    let (gateway, _) = gateway(Upstream::files(site.path()).unwrap(), None).await;
    let cookie = enter(&gateway).await;
    let frame = [("cookie", cookie.as_str()), ("sec-fetch-dest", "iframe")];
    let home = fetch(gateway.port, "GET", "/", &frame).await;
    assert_eq!(home.body, with_tag(PAGE, "<head>"));
    assert_eq!(home.header("content-length"), home.body.len().to_string());
    assert_eq!(fetch(gateway.port, "GET", "/app.js", &frame).await.body, "let head = '<head>';");
    assert_eq!(std::fs::read_to_string(site.path().join("index.html")).unwrap(), PAGE, "the file is untouched");
    gateway.stop().await;
}
