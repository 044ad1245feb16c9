//! The preview gateway: one loopback HTTP server per running preview that admits only
//! Kiln's own view (a per-preview secret turned into an HttpOnly cookie) and forwards
//! to the session's application, or serves a static root.
//!
//! Every request goes through, in order: the Host check (DNS rebinding), the entry
//! (`/__kiln/enter` turns the secret into the cookie) or the cookie check, the cookie
//! isolation (`cookies`), then the upstream: the application (`proxy`, composed with
//! the connected application by `bridge` under `/api/`) or the files (`static_files`).
//! Documents loaded into a frame or a tab get the picking script's tag (`pick`).
//! HTTP is parsed by hyper on both sides; nothing here reads raw bytes. A client gets
//! `listening::HEADER_READ_TIMEOUT` to send its headers, and a gateway keeps at most
//! `listening::MAX_CONNECTIONS` connections open.

mod bridge;
mod cookies;
mod pick;
mod proxy;
mod reply;
mod static_files;

use std::convert::Infallible;
use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::header::{HeaderValue, CACHE_CONTROL, HOST, LOCATION, REFERRER_POLICY, SET_COOKIE};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use subtle::ConstantTimeEq;
use tokio::sync::{mpsc, watch};

use kiln_runtime::paths::beneath::Beneath;
use kiln_types::error::Result;
use reply::Body;

/// What the gateway answers from.
pub enum Upstream {
    /// The application on `127.0.0.1:<port>`; `None` while it is starting or restarting.
    App(tokio::sync::watch::Receiver<Option<u16>>),
    /// Files under this directory of the session's working copy, held open.
    Static(Arc<Beneath>),
}

impl Upstream {
    /// Static files under `dir` (Kiln's own path to it), held open from now on.
    #[cfg(feature = "test-support")]
    pub fn files(dir: &std::path::Path) -> std::io::Result<Upstream> {
        Ok(Upstream::Static(Arc::new(Beneath::open(dir)?)))
    }
}

/// The connected application, for `data = "bridge"`.
#[derive(Clone)]
pub struct BridgeTarget {
    /// Its base URL, e.g. `http://127.0.0.1:4310`.
    pub url: String,
    /// Sent as `Authorization: Bearer …`, to this URL only.
    pub token: Option<String>,
}

/// What the gateway saw, for idleness and the UI.
#[derive(Default)]
pub struct Activity {
    /// Unix milliseconds of the last request; 0 before the first.
    pub last_request_ms: AtomicI64,
    pub forwarded: AtomicU64,
    pub unavailable: AtomicU64,
    pub refused: AtomicU64,
}

impl Activity {
    pub fn touch(&self) {
        self.last_request_ms
            .store(time::OffsetDateTime::now_utc().unix_timestamp_nanos() as i64 / 1_000_000, Ordering::Relaxed);
    }
}

pub struct GatewayOptions {
    pub upstream: Upstream,
    pub bridge: Option<BridgeTarget>,
    pub activity: Arc<Activity>,
}

pub struct Gateway {
    pub port: u16,
    pub secret: String,
    /// Dropping it (in `stop`, or with the gateway) ends every task of this gateway:
    /// they all wait on a receiver of it.
    stop: watch::Sender<()>,
    accept: tokio::task::JoinHandle<()>,
    /// `recv` answers `None` once every task (each holds a sender) has ended.
    alive: mpsc::Receiver<()>,
}

/// The path that turns the secret into the cookie.
const ENTER_PATH: &str = "/__kiln/enter";

/// How long `stop` waits for the connections to close after they were told to.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// What every request handler and task of one gateway shares.
struct Shared {
    port: u16,
    secret: String,
    upstream: Upstream,
    bridge: Option<bridge::Bridge>,
    activity: Arc<Activity>,
    stop: watch::Receiver<()>,
    alive: mpsc::Sender<()>,
}

impl Shared {
    /// Spawns a task that ends when the gateway stops, whatever it is doing then:
    /// dropping it closes the sockets it owns, upgraded WebSockets included.
    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        let stop = self.stop.clone();
        let alive = self.alive.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = task => {}
                _ = stopped(stop) => {}
            }
            drop(alive);
        });
    }
}

/// Resolves once the gateway's `stop` sender is gone (nothing is ever sent on it).
async fn stopped(mut stop: watch::Receiver<()>) {
    while stop.changed().await.is_ok() {}
}

impl Gateway {
    /// Binds a free loopback port and starts serving.
    pub async fn start(options: GatewayOptions) -> Result<Gateway> {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let port = listener.local_addr()?.port();
        let secret = random_secret();
        let bridge = options.bridge.map(bridge::Bridge::new).transpose()?;
        let (stop_tx, stop_rx) = watch::channel(());
        let (alive_tx, alive_rx) = mpsc::channel(1);
        let shared = Arc::new(Shared {
            port,
            secret: secret.clone(),
            upstream: options.upstream,
            bridge,
            activity: options.activity,
            stop: stop_rx.clone(),
            alive: alive_tx,
        });
        // The listener lives in this task only, so when it ends the port is closed.
        let accept = tokio::spawn(async move {
            tokio::select! {
                _ = accept_loop(listener, shared) => {}
                _ = stopped(stop_rx) => {}
            }
        });
        Ok(Gateway { port, secret, stop: stop_tx, accept, alive: alive_rx })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The first URL to load: it carries the secret, which the gateway turns into its
    /// cookie before redirecting to `path` (which must start with `/`).
    pub fn enter_url(&self, path: &str) -> String {
        format!("{}{ENTER_PATH}?secret={}&to={}", self.origin(), self.secret, urlencode(path))
    }

    /// Stops listening and closes every connection, upgraded ones included.
    pub async fn stop(self) {
        let Gateway { stop, accept, mut alive, .. } = self;
        drop(stop);
        let _ = accept.await;
        let _ = tokio::time::timeout(STOP_GRACE, alive.recv()).await;
    }
}

async fn accept_loop(listener: tokio::net::TcpListener, shared: Arc<Shared>) {
    let slots = kiln_runtime::listening::ConnectionSlots::new();
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors and the like: wait rather than spin.
                tracing::debug!("preview gateway accept: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Some(slot) = slots.take() else {
            tracing::debug!(
                "preview gateway: {} connections open, closing one from {peer}",
                kiln_runtime::listening::max_connections()
            );
            continue;
        };
        let _ = stream.set_nodelay(true);
        let for_requests = shared.clone();
        let service = service_fn(move |request| {
            let shared = for_requests.clone();
            async move { Ok::<_, Infallible>(handle(shared, peer, request).await) }
        });
        shared.spawn(async move {
            let connection = kiln_runtime::listening::http1_builder()
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            if let Err(e) = connection.await {
                tracing::debug!("preview gateway connection: {e}");
            }
            drop(slot);
        });
    }
}

async fn handle(shared: Arc<Shared>, peer: SocketAddr, mut request: Request<Incoming>) -> Response<Body> {
    let Some(host) = allowed_host(&request, shared.port) else {
        return reply::page(StatusCode::FORBIDDEN, "Not allowed", "This address is not the preview's.", false);
    };
    if request.uri().path() == ENTER_PATH {
        return enter(&shared, &request);
    }
    if !cookies::admitted(request.headers(), shared.port, &shared.secret) {
        return reply::page(
            StatusCode::UNAUTHORIZED,
            "Open the preview from Kiln",
            "This preview only opens from Kiln: use the Preview card of the session.",
            false,
        );
    }
    // Only admitted requests count as use, so a foreign page cannot keep it running.
    shared.activity.touch();
    if request.uri().path() == pick::SCRIPT_PATH {
        return pick::script();
    }
    cookies::for_app(request.headers_mut(), shared.port);
    let document = pick::wants_script(request.method(), request.headers());
    if document {
        pick::ask_identity(request.headers_mut());
    }
    let answer = upstream(&shared, peer, &host, request).await;
    if document {
        pick::inject(answer)
    } else {
        answer
    }
}

/// The answer of the application (composed with the bridge) or of the static files.
async fn upstream(shared: &Arc<Shared>, peer: SocketAddr, host: &str, request: Request<Incoming>) -> Response<Body> {
    match &shared.upstream {
        Upstream::Static(dir) => static_files::serve(dir, &request).await,
        Upstream::App(app_port) => {
            let Some(app_port) = *app_port.borrow() else {
                return reply::page(StatusCode::SERVICE_UNAVAILABLE, "Starting", "The preview is starting…", true);
            };
            let composed = shared.bridge.as_ref().filter(|_| bridge::applies(request.uri().path()));
            let Some(bridge) = composed else {
                return proxy::forward(shared, peer, host, app_port, request).await.unwrap_or_else(|page| page);
            };
            let asked = bridge::Asked::of(&request);
            match proxy::forward(shared, peer, host, app_port, request).await {
                Ok(answer) => bridge.compose(&shared.activity, asked, answer).await,
                Err(page) => page,
            }
        }
    }
}

/// The Host the request names when it is this gateway's own (`127.0.0.1:<port>` or
/// `localhost:<port>`): a rebound DNS name reaches the same socket with another Host.
fn allowed_host(request: &Request<Incoming>, port: u16) -> Option<String> {
    let mut hosts = request.headers().get_all(HOST).iter();
    let host = hosts.next()?.to_str().ok()?;
    if hosts.next().is_some() {
        return None;
    }
    let (name, given_port) = host.rsplit_once(':')?;
    let ours = (name == "127.0.0.1" || name.eq_ignore_ascii_case("localhost")) && given_port == port.to_string();
    ours.then(|| host.to_ascii_lowercase())
}

/// `/__kiln/enter?secret=S&to=/path`: the secret becomes the gateway's cookie and the
/// browser goes on to `to`.
fn enter(shared: &Shared, request: &Request<Incoming>) -> Response<Body> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return reply::page(StatusCode::METHOD_NOT_ALLOWED, "Not allowed", "Open the preview from Kiln.", false);
    }
    let mut secret = None;
    let mut to = None;
    for (key, value) in form_urlencoded::parse(request.uri().query().unwrap_or("").as_bytes()) {
        match &*key {
            "secret" if secret.is_none() => secret = Some(value.into_owned()),
            "to" if to.is_none() => to = Some(value.into_owned()),
            _ => {}
        }
    }
    if !secret.is_some_and(|given| same_secret(&given, &shared.secret)) {
        return reply::page(
            StatusCode::UNAUTHORIZED,
            "Open the preview from Kiln",
            "This link is not valid for this preview: open it again from Kiln.",
            false,
        );
    }
    shared.activity.touch();
    let target = to.as_deref().and_then(local_target).unwrap_or_else(|| HeaderValue::from_static("/"));
    let cookie = format!("{}={}; HttpOnly; SameSite=Lax; Path=/", cookies::gateway_cookie(shared.port), shared.secret);
    let mut response = reply::empty_response(StatusCode::FOUND);
    let headers = response.headers_mut();
    headers.insert(LOCATION, target);
    headers.insert(SET_COOKIE, HeaderValue::from_str(&cookie).expect("base64url and ASCII"));
    // The entry URL carries the secret: never let it travel on as a referrer.
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `to` as a Location on this origin, or `None`: it must be a path (`/…`), and not one
/// a browser reads as another host (`//host`, `/\host`; browsers drop tabs and line
/// breaks first, so control characters are refused outright).
fn local_target(to: &str) -> Option<HeaderValue> {
    if !to.starts_with('/') || to.starts_with("//") || to.starts_with("/\\") || to.chars().any(char::is_control) {
        return None;
    }
    // Non-ASCII and spaces cannot go in a header as they are.
    const UNSAFE: &percent_encoding::AsciiSet =
        &percent_encoding::CONTROLS.add(b' ').add(b'"').add(b'<').add(b'>').add(b'`');
    HeaderValue::from_str(&percent_encoding::utf8_percent_encode(to, UNSAFE).to_string()).ok()
}

/// Compares in constant time, so the answer's timing says nothing of the secret.
fn same_secret(given: &str, secret: &str) -> bool {
    given.as_bytes().ct_eq(secret.as_bytes()).into()
}

/// 256 random bits from the OS, base64url (as `access.rs` makes its secrets).
fn random_secret() -> String {
    use aes_gcm::aead::rand_core::RngCore;
    use base64::Engine as _;
    let mut bytes = [0u8; 32];
    aes_gcm::aead::OsRng.fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_local_paths_are_entry_targets() {
        assert_eq!(local_target("/shop?x=1").unwrap(), "/shop?x=1");
        assert_eq!(local_target("/caf\u{e9} x").unwrap(), "/caf%C3%A9%20x");
        for foreign in
            ["https://evil.example/", "//evil.example/", "/\\evil.example/", "/\t/evil.example", "relative", ""]
        {
            assert!(local_target(foreign).is_none(), "{foreign:?} must not be a target");
        }
    }

    async fn static_gateway() -> (tempfile::TempDir, Gateway) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.html"), "<p>hi</p>").unwrap();
        let options = GatewayOptions {
            upstream: Upstream::files(dir.path()).unwrap(),
            bridge: None,
            activity: Default::default(),
        };
        (dir, Gateway::start(options).await.unwrap())
    }

    /// Reads until the gateway closes the connection: what it wrote first, if anything.
    async fn until_closed(stream: &mut tokio::net::TcpStream, within: Duration) -> Option<Vec<u8>> {
        use tokio::io::AsyncReadExt;
        let mut got = Vec::new();
        let read = tokio::time::timeout(within, async {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stream.read(&mut buf).await {
                got.extend_from_slice(&buf[..n]);
            }
        });
        read.await.ok().map(|_| got)
    }

    /// Cut off at `HEADER_READ_TIMEOUT` (hyper's own default, 30 s, would fail the wait).
    #[tokio::test]
    async fn a_client_that_never_finishes_its_headers_is_cut_off() {
        use tokio::io::AsyncWriteExt;
        let (_dir, gateway) = static_gateway().await;
        let mut slow = tokio::net::TcpStream::connect(("127.0.0.1", gateway.port)).await.unwrap();
        slow.write_all(format!("GET / HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nX-Half: ", gateway.port).as_bytes())
            .await
            .unwrap();
        let within = kiln_runtime::listening::HEADER_READ_TIMEOUT + Duration::from_secs(10);
        let written = until_closed(&mut slow, within).await.expect("still open long after the header timeout");
        assert!(written.is_empty(), "{}", String::from_utf8_lossy(&written));
    }

    #[tokio::test]
    async fn connections_over_the_cap_are_closed() {
        use tokio::io::AsyncWriteExt;
        let (_dir, gateway) = static_gateway().await;
        let mut held = Vec::new();
        for _ in 0..kiln_runtime::listening::MAX_CONNECTIONS {
            held.push(tokio::net::TcpStream::connect(("127.0.0.1", gateway.port)).await.unwrap());
        }
        // Accepted in the order they connected: this one finds every place taken.
        let mut over = tokio::net::TcpStream::connect(("127.0.0.1", gateway.port)).await.unwrap();
        over.write_all(
            format!("GET / HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n", gateway.port).as_bytes(),
        )
        .await
        .unwrap();
        let written =
            until_closed(&mut over, Duration::from_secs(20)).await.expect("a connection over the cap stays open");
        assert!(written.is_empty(), "answered over the cap: {}", String::from_utf8_lossy(&written));
        drop(held);
        gateway.stop().await;
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abd", "abc"));
        assert!(!same_secret("ab", "abc"));
        assert!(!same_secret("", "abc"));
        assert_eq!(random_secret().len(), 43);
        assert_ne!(random_secret(), random_secret());
    }
}
