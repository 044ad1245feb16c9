//! A tiny raw HTTP/1.1 client for the hostile-input suites. It writes a request byte for
//! byte (so a test can omit `Host`, send odd Hosts, NUL bytes or unnormalized paths) to
//! 127.0.0.1 only, and reads one response with `Connection: close`, or keeps reading a
//! stream of server-sent events on a thread of its own.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a response may take. A server that waits for a body it should refuse
/// unread runs into it.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Clone, Debug)]
pub(crate) enum Body {
    /// Sent as is, with a `Content-Length` unless the request sets one itself.
    Bytes(Vec<u8>),
    /// Only `Content-Length: n` is sent; the body never is.
    Declared(u64),
    /// Sent with `Transfer-Encoding: chunked`, in 64 KiB chunks.
    Chunked(Vec<u8>),
}

#[derive(Clone, Debug)]
pub(crate) struct Req {
    pub method: String,
    pub target: String,
    /// In the order written; `Host` is an ordinary entry, so it can be left out.
    pub headers: Vec<(String, String)>,
    pub body: Body,
    /// The client address to connect from (another loopback address), else the default.
    pub source: Option<Ipv4Addr>,
}

impl Req {
    pub(crate) fn new(method: &str, target: &str) -> Req {
        Req {
            method: method.into(),
            target: target.into(),
            headers: Vec::new(),
            body: Body::Bytes(Vec::new()),
            source: None,
        }
    }

    /// Sets a header, replacing any of the same name.
    pub(crate) fn header(mut self, name: &str, value: &str) -> Req {
        self = self.without(name);
        self.headers.push((name.into(), value.into()));
        self
    }

    pub(crate) fn without(mut self, name: &str) -> Req {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    pub(crate) fn json(self, value: &serde_json::Value) -> Req {
        self.header("Content-Type", "application/json").body(value.to_string().into_bytes())
    }

    pub(crate) fn body(mut self, bytes: Vec<u8>) -> Req {
        self.body = Body::Bytes(bytes);
        self
    }

    pub(crate) fn declared(mut self, length: u64) -> Req {
        self.body = Body::Declared(length);
        self
    }

    pub(crate) fn chunked(mut self, bytes: Vec<u8>) -> Req {
        self.body = Body::Chunked(bytes);
        self
    }

    pub(crate) fn source_addr(mut self, source: Ipv4Addr) -> Req {
        self.source = Some(source);
        self
    }

    fn head(&self) -> Vec<u8> {
        let mut head = format!("{} {} HTTP/1.1\r\n", self.method, self.target).into_bytes();
        let has = |name: &str| self.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
        for (name, value) in &self.headers {
            head.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        match &self.body {
            Body::Bytes(b)
                if !has("content-length") && !(b.is_empty() && (self.method == "GET" || self.method == "HEAD")) =>
            {
                head.extend_from_slice(format!("Content-Length: {}\r\n", b.len()).as_bytes())
            }
            Body::Declared(n) => head.extend_from_slice(format!("Content-Length: {n}\r\n").as_bytes()),
            Body::Chunked(_) => head.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
            _ => {}
        }
        head.extend_from_slice(b"Connection: close\r\n\r\n");
        head
    }

    fn connect(&self, port: u16) -> std::io::Result<TcpStream> {
        let to = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port);
        let stream = match self.source {
            None => TcpStream::connect(to)?,
            Some(source) => {
                let socket = tokio::net::TcpSocket::new_v4()?;
                socket.bind(SocketAddr::new(IpAddr::V4(source), 0))?;
                let stream = crate::snapshot::rt().block_on(socket.connect(to))?.into_std()?;
                stream.set_nonblocking(false)?;
                stream
            }
        };
        stream.set_read_timeout(Some(READ_TIMEOUT))?;
        Ok(stream)
    }

    /// Writes the request (the body from a thread of its own, so a server that answers
    /// before reading it all is still heard) and reads the response.
    pub(crate) fn send(&self, port: u16) -> Result<Resp, String> {
        let mut stream = self.connect(port).map_err(|e| format!("connect: {e}"))?;
        stream.write_all(&self.head()).map_err(|e| format!("write: {e}"))?;
        let writer = match &self.body {
            Body::Bytes(b) if !b.is_empty() => Some(write_later(&stream, b.clone(), false)),
            Body::Chunked(b) => Some(write_later(&stream, b.clone(), true)),
            _ => None,
        };
        let response = read_response(&mut stream);
        drop(writer);
        response
    }

    /// Sends the request and keeps reading its answer on a thread of its own until the
    /// server ends it (or the `Streaming` is dropped).
    pub(crate) fn open(&self, port: u16) -> Result<Streaming, String> {
        let mut stream = self.connect(port).map_err(|e| format!("connect: {e}"))?;
        stream.write_all(&self.head()).map_err(|e| format!("write: {e}"))?;
        if let Body::Bytes(b) = &self.body {
            stream.write_all(b).map_err(|e| format!("write: {e}"))?;
        }
        stream.set_read_timeout(None).map_err(|e| e.to_string())?;
        let state = Arc::new(Mutex::new(Received::default()));
        let (mut reader, into) = (stream.try_clone().map_err(|e| e.to_string())?, state.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 16 * 1024];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => into.lock().unwrap().bytes.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    // A reset ends the answer as surely as a close does.
                    Err(_) => break,
                }
            }
            into.lock().unwrap().ended = true;
        });
        Ok(Streaming { stream, state })
    }

    /// Sends the request and collects whatever arrives for `duration` (a stream of
    /// server-sent events never ends by itself): the raw bytes, head included.
    pub(crate) fn stream_for(&self, port: u16, duration: Duration) -> Result<Vec<u8>, String> {
        let mut stream = self.connect(port).map_err(|e| format!("connect: {e}"))?;
        stream.write_all(&self.head()).map_err(|e| format!("write: {e}"))?;
        if let Body::Bytes(b) = &self.body {
            stream.write_all(b).map_err(|e| format!("write: {e}"))?;
        }
        let deadline = Instant::now() + duration;
        let mut out = Vec::new();
        let mut buf = [0u8; 16 * 1024];
        while Instant::now() < deadline {
            stream.set_read_timeout(Some(Duration::from_millis(200))).ok();
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) => return Err(format!("read: {e}")),
            }
        }
        Ok(out)
    }
}

#[derive(Default)]
struct Received {
    bytes: Vec<u8>,
    ended: bool,
}

/// An answer being read as it arrives (see `Req::open`).
pub(crate) struct Streaming {
    stream: TcpStream,
    state: Arc<Mutex<Received>>,
}

impl Streaming {
    /// Everything received so far, head included.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.state.lock().unwrap().bytes).into_owned()
    }

    /// Whether the server ended the answer (closed or reset the connection).
    pub(crate) fn ended(&self) -> bool {
        self.state.lock().unwrap().ended
    }

    /// Waits until what was received satisfies `done`, or the answer ended, or `within`
    /// passed; returns whether `done` holds.
    pub(crate) fn wait_for(&self, within: Duration, done: impl Fn(&str) -> bool) -> bool {
        let deadline = Instant::now() + within;
        loop {
            let text = self.text();
            if done(&text) {
                return true;
            }
            if self.ended() || Instant::now() > deadline {
                return done(&self.text());
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Waits until the server ends the answer, at most `within`; returns whether it did.
    pub(crate) fn wait_ended(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while !self.ended() {
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        true
    }
}

impl Drop for Streaming {
    fn drop(&mut self) {
        // Ends the reading thread too.
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

/// Connects and writes `bytes` as they are, and nothing else: the start of a request
/// that never finishes, or no request at all.
pub(crate) fn partial(port: u16, bytes: &[u8]) -> std::io::Result<TcpStream> {
    let mut stream = TcpStream::connect(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port))?;
    stream.write_all(bytes)?;
    Ok(stream)
}

/// Waits until the server closes `stream` (or resets it) without having written a byte,
/// at most `within`: `Ok(())` then, else what happened instead.
pub(crate) fn closed_unanswered(stream: &mut TcpStream, within: Duration) -> Result<(), String> {
    let deadline = Instant::now() + within;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!("still open after {within:?}; received {:?}", String::from_utf8_lossy(&got)));
        }
        stream.set_read_timeout(Some(left.min(Duration::from_millis(500)))).map_err(|e| e.to_string())?;
        match stream.read(&mut buf) {
            Ok(0) if got.is_empty() => return Ok(()),
            Ok(0) => return Err(format!("closed after an answer: {:?}", String::from_utf8_lossy(&got))),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(e)
                if got.is_empty() && matches!(e.kind(), ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted) =>
            {
                return Ok(())
            }
            Err(e) => return Err(format!("read: {e}; received {:?}", String::from_utf8_lossy(&got))),
        }
    }
}

/// The security headers SECURITY.md promises on every answer that `resp` lacks (and
/// `Cache-Control: no-store` on an answer of the API).
pub(crate) fn missing_security_headers(resp: &Resp, api: bool) -> Vec<&'static str> {
    let mut missing = Vec::new();
    if !resp.header("content-security-policy").is_some_and(|v| v.contains("frame-ancestors 'none'")) {
        missing.push("Content-Security-Policy");
    }
    if resp.header("x-content-type-options") != Some("nosniff") {
        missing.push("X-Content-Type-Options: nosniff");
    }
    if !resp.header("x-frame-options").is_some_and(|v| v.eq_ignore_ascii_case("deny")) {
        missing.push("X-Frame-Options: DENY");
    }
    if resp.header("referrer-policy") != Some("no-referrer") {
        missing.push("Referrer-Policy: no-referrer");
    }
    if api && !resp.header("cache-control").is_some_and(|v| v.contains("no-store")) {
        missing.push("Cache-Control: no-store");
    }
    missing
}

fn write_later(stream: &TcpStream, bytes: Vec<u8>, chunked: bool) -> std::thread::JoinHandle<()> {
    let mut out = stream.try_clone().expect("clone the stream");
    std::thread::spawn(move || {
        // A server that refuses the body may close the connection mid-way: not an error here.
        if chunked {
            for chunk in bytes.chunks(64 * 1024) {
                if out.write_all(format!("{:x}\r\n", chunk.len()).as_bytes()).is_err()
                    || out.write_all(chunk).is_err()
                    || out.write_all(b"\r\n").is_err()
                {
                    return;
                }
            }
            let _ = out.write_all(b"0\r\n\r\n");
        } else {
            let _ = out.write_all(&bytes);
        }
    })
}

#[derive(Clone, Debug)]
pub(crate) struct Resp {
    pub status: u16,
    /// Names in lowercase.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == &name.to_ascii_lowercase()).map(|(_, v)| v.as_str())
    }

    pub(crate) fn headers_named(&self, name: &str) -> Vec<&str> {
        self.headers.iter().filter(|(n, _)| n == &name.to_ascii_lowercase()).map(|(_, v)| v.as_str()).collect()
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// The stable error code of an error body.
    pub(crate) fn code(&self) -> Option<String> {
        self.json()["error"]["code"].as_str().map(str::to_string)
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Everything received, for leak scans.
    pub(crate) fn raw(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (n, v) in &self.headers {
            out.extend_from_slice(format!("{n}: {v}\n").as_bytes());
        }
        out.extend_from_slice(&self.body);
        out
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Reads until the response is complete (by `Content-Length`, chunked framing or the
/// end of the connection).
fn read_response(stream: &mut TcpStream) -> Result<Resp, String> {
    let mut data = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let mut closed = false;
    loop {
        if let Some(resp) = parse(&data, closed)? {
            return Ok(resp);
        }
        if closed {
            return Err(format!(
                "the connection closed mid-response after {} bytes: {:?}",
                data.len(),
                String::from_utf8_lossy(&data)
            ));
        }
        match stream.read(&mut buf) {
            Ok(0) => closed = true,
            Ok(n) => data.extend_from_slice(&buf[..n]),
            // A reset after the response arrived (the server closed with our body unread).
            Err(e) if e.kind() == ErrorKind::ConnectionReset => closed = true,
            Err(e) => return Err(format!("read ({} bytes so far): {e}", data.len())),
        }
    }
}

/// `Ok(None)` while more bytes are needed.
fn parse(data: &[u8], closed: bool) -> Result<Option<Resp>, String> {
    let Some(end) = find(data, b"\r\n\r\n") else { return Ok(None) };
    let head = String::from_utf8_lossy(&data[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status: u16 = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("not an HTTP status line: {status_line:?}"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let rest = &data[end + 4..];
    let get = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let body = if get("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        match dechunk(rest) {
            Some(body) => body,
            None if closed => return Err("a chunked body cut short".into()),
            None => return Ok(None),
        }
    } else if let Some(len) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
        if rest.len() < len {
            return if closed { Err(format!("a body cut short: {} of {len} bytes", rest.len())) } else { Ok(None) };
        }
        rest[..len].to_vec()
    } else if status == 204 || status == 304 || (100..200).contains(&status) {
        Vec::new()
    } else if closed {
        rest.to_vec()
    } else {
        return Ok(None);
    };
    Ok(Some(Resp { status, headers, body }))
}

fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = find(data, b"\r\n")?;
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        if data.len() < size + 2 {
            return None;
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}
