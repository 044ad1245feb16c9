//! The hostile-input suite (issue 5, ARCHITECTURE.md: Security): a real `kiln serve` on a loopback port,
//! in both modes, fed requests a page on another site, another local process or a
//! stranger to a self-hosted Kiln could send. Each table row names the status and code
//! expected per mode, and the database rows and the `.kiln` tree (with the workspace
//! and the directories outside it) are hashed before and after to show nothing changed.
//! Also: cookies that are forged, revoked, expired or disconnected; failed connects
//! rate-limited; sealed secrets never shown, sealed afresh each time, and a tampered one
//! refused with `SECRET_UNREADABLE`; a self-hosted server offers no local CLI drivers; a
//! non-loopback `--host` serves self-hosted; every answer, refusals by the guard included,
//! carries the security headers. Traffic goes to 127.0.0.1 only. What the transport
//! does with streams, slow clients and signals is in tests/hostile_transport.rs.
//!
//! The contract these tests encode is SECURITY.md's "`kiln serve`" section (issue 5).

#[path = "hostile/api.rs"]
mod api;
// Shared with tests/hostile_transport.rs, which uses parts this suite does not.
#[allow(dead_code)]
#[path = "hostile/http.rs"]
mod http;
#[allow(dead_code)]
#[path = "hostile/server.rs"]
mod server;
#[path = "hostile/snapshot.rs"]
mod snapshot;

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use api::{connect_req, cookie_of, host, max_age_of, page_req};
use base64::Engine as _;
use http::{Req, Resp};
use serde_json::{json, Value};
use server::{create_token, fixture, kiln, token_id, Fixture, Server};
use snapshot::Scope;

const OPENAI_SECRET: &str = "sk-hostile-SECRET-123";
const BRIDGE_SECRET: &str = "bridge-hostile-SECRET-456";
/// Sent only in requests that must be refused: it must not be stored or echoed either.
const REFUSED_SECRET: &str = "sk-hostile-REFUSED-789";
const BRIEF: &str = "Add a wishlist to @shop/catalog";
const UNKNOWN_V4: &str = "5b0f8c1e-2f4c-4d8e-9a3b-1c2d3e4f5a6b";
const MIB: usize = 1024 * 1024;
/// `# hi` as a markdown attachment.
const MD_BASE64: &str = "IyBoaQo=";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Loopback,
    SelfHosted,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Loopback => "loopback",
            Mode::SelfHosted => "self-hosted",
        }
    }
    fn other(self) -> &'static str {
        match self {
            Mode::Loopback => "self-hosted",
            Mode::SelfHosted => "loopback",
        }
    }
}

/// What a request must get back.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// This status and this error code.
    Code(u16, &'static str),
    /// This status and one of these codes (where the contract leaves the code open).
    ErrOneOf(u16, &'static [&'static str]),
    /// This status.
    Status(u16),
    /// Any 4xx.
    Refused,
    /// Any answer: the `After` check is what matters.
    Any,
    /// Not sent in this mode.
    Skip,
}

use Expect::*;
const HOST: Expect = Code(403, "HOST_NOT_ALLOWED");
const CROSS: Expect = Code(403, "CROSS_SITE_REFUSED");
const NOT_CONNECTED: Expect = Code(401, "NOT_CONNECTED");
const BAD_ID: Expect = Code(400, "INVALID_SESSION_ID");
const TOO_LARGE: Expect = Code(413, "BODY_TOO_LARGE");
const INVALID: Expect = Code(400, "INVALID_INPUT");
const NOT_IN_MODE: Expect = Code(403, "NOT_ALLOWED_IN_MODE");
const ATTACHMENT_TYPE: Expect = Code(415, "ATTACHMENT_TYPE");

/// What must hold after the request, besides its status.
#[derive(Clone, Debug)]
enum After {
    /// Nothing changed: rows, `.kiln`, the workspace, the outside directories.
    Unchanged,
    /// Unchanged, and the answer does not contain this text.
    UnchangedLacks(String),
    /// Unchanged, and a `mode` in the answer is not this one.
    UnchangedNotMode(&'static str),
    /// Stored under exactly this name, inside its session; nothing else changed.
    Attachment { session: String, name: String },
    /// The session's directory went, and only it: nothing outside `.kiln` changed.
    Deleted { session: String },
    /// `GET /api/state` unconnected: the error and the mode, nothing else.
    StateOnly,
    /// A state answer in this mode, connected or not; unchanged.
    State { mode: &'static str, connected: bool },
}

struct Case {
    name: String,
    req: Req,
    loopback: Expect,
    self_hosted: Expect,
    after: After,
}

fn case(name: impl Into<String>, req: Req, loopback: Expect, self_hosted: Expect) -> Case {
    Case { name: name.into(), req, loopback, self_hosted, after: After::Unchanged }
}

fn both(name: impl Into<String>, req: Req, expect: Expect) -> Case {
    case(name, req, expect, expect)
}

impl Case {
    fn after(mut self, after: After) -> Case {
        self.after = after;
        self
    }
}

/// One server in one mode, with its fixture, sessions and a record of the run.
struct Run {
    mode: Mode,
    fx: Fixture,
    server: Server,
    scope: Scope,
    port: u16,
    /// `kiln_session_<port>=<secret>`.
    cookie: String,
    /// The main token (self-hosted), or none.
    token: Option<String>,
    /// Sessions: for ids and attachments; with a link planted in its working copy;
    /// whose directory is replaced by a link; whose attachments folder is a link.
    s_main: String,
    s_linked: String,
    s_dir_link: String,
    s_attach_link: String,
    /// Every byte every response carried, for the leak scans.
    seen: Vec<u8>,
    failures: Vec<String>,
}

impl Run {
    fn start(mode: Mode) -> Run {
        let fx = fixture();
        let access_token = (mode == Mode::SelfHosted).then(|| create_token(&fx.config, "hostile-main", None));
        let server = Server::start(&fx, mode.name());
        assert_eq!(server.mode, mode.name(), "the mode `kiln serve` reports");
        // Loopback connects with the server's own token, self-hosted with an access token.
        let token = access_token.or_else(|| server.token.clone());
        assert!(token.is_some(), "a loopback server prints a link with its token");
        let port = server.port;
        let resp = connect_req(port, token.as_deref()).send(port).unwrap();
        assert_eq!(resp.status, 200, "connect: {}", resp.text());
        let body = resp.json();
        assert_eq!(body["connected"], true, "{body}");
        assert_eq!(body["mode"], mode.name(), "{body}");
        assert!(body["expiresAt"].as_str().is_some_and(|t| t.contains('T')), "expiresAt: {body}");
        let cookie = cookie_of(&resp, port).unwrap();
        let victim = fx.tmp.path().join("victim");
        std::fs::create_dir_all(&victim).unwrap();
        std::fs::write(victim.join("victim.txt"), "a directory a session link points to\n").unwrap();
        let scope = Scope {
            workspace: fx.workspace.clone(),
            outside: vec![
                ("outside".into(), fx.outside.clone()),
                ("victim".into(), victim),
                ("ui".into(), fx.ui.clone()),
            ],
        };
        let mut run = Run {
            mode,
            fx,
            server,
            scope,
            port,
            cookie,
            token,
            s_main: String::new(),
            s_linked: String::new(),
            s_dir_link: String::new(),
            s_attach_link: String::new(),
            seen: Vec::new(),
            failures: Vec::new(),
        };
        run.prepare_sessions();
        run
    }

    fn api(&self, op: &str, body: Value) -> Req {
        page_req(self.port, op, &body).header("Cookie", &self.cookie)
    }

    fn anon(&self, op: &str, body: Value) -> Req {
        page_req(self.port, op, &body)
    }

    fn get(&self, target: &str) -> Req {
        Req::new("GET", target).header("Host", &host(self.port))
    }

    /// A call that must succeed; its answer.
    fn call(&mut self, op: &str, body: Value) -> Value {
        let resp = self.api(op, body.clone()).send(self.port).unwrap_or_else(|e| panic!("{op}: {e}"));
        self.seen.extend(resp.raw());
        assert_eq!(resp.status, 200, "{op} {body}: {}", resp.text());
        resp.json()
    }

    fn send(&mut self, req: &Req) -> Resp {
        let resp = req.send(self.port).unwrap_or_else(|e| panic!("{} {}: {e}", req.method, req.target));
        self.seen.extend(resp.raw());
        resp
    }

    fn session_dir(&self, id: &str) -> PathBuf {
        self.fx.workspace.join(".kiln/sessions").join(id)
    }

    fn fail(&mut self, message: String) {
        eprintln!("FAIL [{}] {message}", self.mode.name());
        self.failures.push(format!("[{}] {message}", self.mode.name()));
    }

    /// Sessions to aim at, and the links planted in them.
    fn prepare_sessions(&mut self) {
        // The planner agent would write to the database in the background.
        self.call("update_settings", json!({ "plannerAgent": false }));
        let mut ids = Vec::new();
        for title in ["target", "linked working copy", "linked directory", "linked attachments"] {
            let s = self.call("create_session", json!({ "brief": BRIEF, "title": title }));
            ids.push(s["id"].as_str().unwrap().to_string());
        }
        let [main, linked, dir_link, attach_link]: [String; 4] = ids.try_into().unwrap();
        (self.s_main, self.s_linked, self.s_dir_link, self.s_attach_link) = (main, linked, dir_link, attach_link);
        // An attachment added and removed, so its folders exist before the table runs.
        let a = self
            .call("add_attachment", json!({ "sessionId": self.s_main, "name": "seed.md", "dataBase64": MD_BASE64 }));
        self.call("remove_attachment", json!({ "sessionId": self.s_main, "attachmentId": a["id"] }));

        // Links in a working copy leading out of the workspace (what an agent could leave).
        let work = self.session_dir(&self.s_linked).join("workspace");
        std::os::unix::fs::symlink(&self.fx.outside, work.join("escape-dir")).unwrap();
        std::os::unix::fs::symlink(self.fx.outside.join("keep.txt"), work.join("escape-file")).unwrap();
        std::os::unix::fs::symlink(&self.fx.outside, work.join("modules/escape-in-module")).unwrap();
        // A session directory replaced by a link to a directory outside.
        let dir = self.session_dir(&self.s_dir_link);
        std::fs::rename(&dir, self.fx.tmp.path().join("moved-session")).unwrap();
        std::os::unix::fs::symlink(self.fx.tmp.path().join("victim"), &dir).unwrap();
        // The working copy's attachments folder a link to a directory outside.
        let reference = self.session_dir(&self.s_attach_link).join("workspace/reference");
        std::fs::create_dir_all(&reference).unwrap();
        std::os::unix::fs::symlink(&self.fx.outside, reference.join("attachments")).unwrap();

        // Nothing runs in the background any more: two snapshots in a row agree.
        let mut last = snapshot::take(&self.scope);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            std::thread::sleep(Duration::from_millis(200));
            let now = snapshot::take(&self.scope);
            if now == last {
                break;
            }
            assert!(Instant::now() < deadline, "the workspace keeps changing: {:?}", last.changes(&now));
            last = now;
        }
    }

    /// Sends one row of the table and checks it.
    fn run(&mut self, case: Case) {
        let expect = match self.mode {
            Mode::Loopback => case.loopback,
            Mode::SelfHosted => case.self_hosted,
        };
        if let Skip = expect {
            return;
        }
        let before = snapshot::take(&self.scope);
        let started = Instant::now();
        let answer = case.req.send(self.port);
        let after = snapshot::take(&self.scope);
        let name = &case.name;
        let resp = match answer {
            Ok(r) => r,
            Err(e) => {
                return self.fail(format!("{name}: no answer ({e}) after {:?}", started.elapsed()));
            }
        };
        self.seen.extend(resp.raw());
        let code = resp.code();
        eprintln!(
            "[{}] {name}: expected {expect:?}, got {} {}",
            self.mode.name(),
            resp.status,
            code.as_deref().unwrap_or("-")
        );
        let got = format!("{} {} {}", resp.status, code.as_deref().unwrap_or("-"), truncate(&resp.text(), 300));
        let status_ok = match expect {
            Code(status, c) => resp.status == status && code.as_deref() == Some(c),
            ErrOneOf(status, codes) => resp.status == status && code.as_deref().is_some_and(|c| codes.contains(&c)),
            Status(status) => resp.status == status,
            Refused => (400..500).contains(&resp.status),
            Any | Skip => true,
        };
        if !status_ok {
            self.fail(format!("{name}: expected {expect:?}, got {got}"));
        }
        if matches!(expect, Code(..) | ErrOneOf(..)) && status_ok {
            let body = resp.json();
            if body["error"]["message"].as_str().is_none_or(|m| m.trim().is_empty()) {
                self.fail(format!("{name}: an error without a message: {got}"));
            }
        }
        if let Some(acao) = resp.header("access-control-allow-origin") {
            self.fail(format!("{name}: answers with Access-Control-Allow-Origin: {acao}"));
        }
        let missing = http::missing_security_headers(&resp, case.req.target.starts_with("/api/"));
        if !missing.is_empty() {
            self.fail(format!("{name}: the answer ({}) lacks the security headers {missing:?}", resp.status));
        }
        let changes = before.changes(&after);
        match &case.after {
            After::Unchanged => self.expect_unchanged(name, &changes),
            After::UnchangedLacks(text) => {
                self.expect_unchanged(name, &changes);
                if resp.raw().windows(text.len()).any(|w| w == text.as_bytes()) {
                    self.fail(format!("{name}: the answer contains `{text}`: {got}"));
                }
            }
            After::UnchangedNotMode(other) => {
                self.expect_unchanged(name, &changes);
                if resp.json()["mode"] == *other {
                    self.fail(format!("{name}: the answer reports mode {other}: {got}"));
                }
            }
            After::State { mode, connected } => {
                self.expect_unchanged(name, &changes);
                let body = resp.json();
                if body["mode"] != *mode || body["connected"] != *connected {
                    self.fail(format!("{name}: expected mode {mode}, connected {connected}: {got}"));
                }
            }
            After::StateOnly => {
                self.expect_unchanged(name, &changes);
                let body = resp.json();
                let keys: Vec<&String> = body.as_object().map(|o| o.keys().collect()).unwrap_or_default();
                let error_keys: Vec<&String> =
                    body["error"].as_object().map(|o| o.keys().collect()).unwrap_or_default();
                if keys != ["error", "mode"] || error_keys != ["code", "message"] || body["mode"] != self.mode.name() {
                    self.fail(format!("{name}: expected only the error and the mode: {got}"));
                }
                let root = self.fx.workspace.display().to_string();
                if resp.text().contains(&root) || resp.text().contains("@shop") {
                    self.fail(format!("{name}: the unconnected answer names the workspace: {got}"));
                }
            }
            After::Attachment { session, name: want } => {
                let stored_name = resp.json()["name"].as_str().unwrap_or_default().to_string();
                if resp.status != 200 || &stored_name != want {
                    self.fail(format!("{name}: expected it stored as `{want}`, got {got}"));
                }
                let id = resp.json()["id"].as_str().unwrap_or_default().to_string();
                // The two copies and the rows that record them (the transcript notes it).
                let allowed = [
                    format!("added kiln:sessions/{session}/attachments/{id}-{want}"),
                    format!("added kiln:sessions/{session}/workspace/reference/attachments/{want}"),
                    "changed db:attachments".into(),
                    "changed db:transcript_entries".into(),
                    "changed db:sqlite_sequence".into(),
                    "changed db:sessions".into(),
                ];
                let stray: Vec<&String> = changes.iter().filter(|c| !allowed.contains(c)).collect();
                if !stray.is_empty() || !allowed[..3].iter().all(|a| changes.contains(a)) {
                    self.fail(format!(
                        "{name}: expected only the two copies of `{want}` inside the session; changes: {changes:?}"
                    ));
                }
                if !id.is_empty() {
                    // Leave room for the next rows (a session holds at most 10).
                    let resp =
                        self.send(&self.api("remove_attachment", json!({ "sessionId": session, "attachmentId": id })));
                    assert_eq!(resp.status, 200, "removing {want}: {}", resp.text());
                }
            }
            After::Deleted { session } => {
                let inside = |c: &String| {
                    c.contains(&format!("kiln:sessions/{session}"))
                        || c.starts_with("changed db:")
                        || c.contains("kiln:store.git/")
                };
                let stray: Vec<&String> = changes.iter().filter(|c| !inside(c)).collect();
                if !stray.is_empty() {
                    self.fail(format!("{name}: changed outside the session: {stray:?}"));
                }
                if self.session_dir(session).exists() {
                    self.fail(format!("{name}: the session directory is still there"));
                }
                let keep = self.fx.outside.join("keep.txt");
                if std::fs::read_to_string(&keep).ok().as_deref() != Some("outside the workspace: must survive\n")
                    || !self.fx.outside.join("nested/deep.txt").exists()
                {
                    self.fail(format!("{name}: the directory the link pointed to was touched"));
                }
            }
        }
    }

    fn expect_unchanged(&mut self, name: &str, changes: &[String]) {
        if !changes.is_empty() {
            self.fail(format!("{name}: changed {changes:?}"));
        }
    }

    fn run_all(&mut self, cases: Vec<Case>) {
        for c in cases {
            self.run(c);
        }
    }

    /// Wrong Host headers (not connected, so a self-hosted server that accepts the
    /// name still refuses for want of a connection).
    fn host_cases(&self) -> Vec<Case> {
        let p = self.port;
        let create = json!({ "brief": BRIEF });
        let req = |h: Option<String>| {
            let r = self.anon("create_session", create.clone());
            match h {
                Some(h) => r.header("Host", &h),
                None => r.without("Host"),
            }
        };
        let mut out = Vec::new();
        // A name a self-hosted server may be reached by (behind a proxy): it still needs a connection.
        for (name, h) in [
            ("another local port", format!("127.0.0.1:{}", p + 1)),
            ("localhost on another port", format!("localhost:{}", p + 1)),
            ("no port", "127.0.0.1".to_string()),
            ("another name", format!("evil.example:{p}")),
            ("a name that starts with localhost", format!("localhost.evil.example:{p}")),
            ("localhost with a trailing dot", format!("localhost.:{p}")),
            ("IPv4 literal 127.1", format!("127.1:{p}")),
            ("IPv4 literal as a decimal number", format!("2130706433:{p}")),
            ("IPv4 literal in hex", format!("0x7f000001:{p}")),
            ("IPv4 literal in octal", format!("0177.0.0.1:{p}")),
            ("another loopback address", format!("127.0.0.2:{p}")),
            ("the any address", format!("0.0.0.0:{p}")),
            ("IPv4-mapped IPv6 literal", format!("[::ffff:127.0.0.1]:{p}")),
            ("IPv6 loopback written in full", format!("[0:0:0:0:0:0:0:1]:{p}")),
            ("IPv6 loopback without the port", "[::1]".to_string()),
            ("the port with a leading zero", format!("127.0.0.1:0{p}")),
        ] {
            out.push(case(format!("Host: {name} ({h})"), req(Some(h)), HOST, NOT_CONNECTED));
        }
        // Not a host[:port] at all: refused in both modes.
        for (name, h) in [
            ("with user info", format!("127.0.0.1:{p}@evil.example")),
            ("with a path", format!("127.0.0.1:{p}/api")),
            ("with a space", format!("127.0.0.1 :{p}")),
            ("empty", String::new()),
        ] {
            out.push(both(format!("Host: {name} ({h:?})"), req(Some(h)), HOST));
        }
        out.push(both("Host: absent", req(None), HOST));
        out.push(both("Host: absent, connected", self.api("create_session", create.clone()).without("Host"), HOST));
        // Connected, so only the Host check stands between the request and a new session.
        out.push(case(
            "Host: another name, connected",
            self.api("create_session", create.clone()).header("Host", &format!("evil.example:{p}")),
            HOST,
            Skip,
        ));
        out.push(case(
            "Host: another local port, connected",
            self.api("create_session", create.clone()).header("Host", &format!("127.0.0.1:{}", p + 1)),
            HOST,
            Skip,
        ));
        out.push(case(
            "Host: IPv4-mapped IPv6, connected",
            self.api("create_session", create.clone()).header("Host", &format!("[::ffff:127.0.0.1]:{p}")),
            HOST,
            Skip,
        ));
        // Controls: the names the server does answer to reach the connection check.
        for h in [format!("localhost:{p}"), format!("LOCALHOST:{p}"), format!("[::1]:{p}")] {
            out.push(both(format!("Host: {h} is accepted (then not connected)"), req(Some(h)), NOT_CONNECTED));
        }
        out
    }

    /// Mutations that did not come from Kiln's own page, unconnected and connected:
    /// refused before the connection check and before the body is read.
    fn cross_site_cases(&self) -> Vec<Case> {
        let p = self.port;
        let create = json!({ "brief": BRIEF });
        let mut out = Vec::new();
        for connected in [false, true] {
            let base = || self.anon("create_session", create.clone());
            let tag = if connected { ", connected" } else { "" };
            let rows: Vec<(&str, Req)> = vec![
                ("no x-kiln", base().without("x-kiln")),
                ("x-kiln: 0", base().header("x-kiln", "0")),
                ("x-kiln: true", base().header("x-kiln", "true")),
                ("Origin: another site", base().header("Origin", "http://evil.example")),
                ("Origin: another local port", base().header("Origin", &format!("http://127.0.0.1:{}", p + 1))),
                ("Origin: localhost on another port", base().header("Origin", &format!("http://localhost:{}", p + 1))),
                ("Origin: null", base().header("Origin", "null")),
                (
                    "Origin: this host as the prefix of another name",
                    base().header("Origin", &format!("http://127.0.0.1:{p}.evil.example")),
                ),
                ("Origin: this host on another scheme", base().header("Origin", &format!("ftp://127.0.0.1:{p}"))),
                ("Origin: another name for this server", base().header("Origin", &format!("http://localhost:{p}"))),
                ("Sec-Fetch-Site: cross-site", base().header("Sec-Fetch-Site", "cross-site")),
                ("Sec-Fetch-Site: same-site", base().header("Sec-Fetch-Site", "same-site")),
                (
                    "a cross-site form post (application/x-www-form-urlencoded)",
                    base()
                        .without("x-kiln")
                        .header("Origin", "http://evil.example")
                        .header("Sec-Fetch-Site", "cross-site")
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .body(b"brief=Add+a+wishlist+to+%40shop%2Fcatalog".to_vec()),
                ),
                (
                    "a cross-site form post (text/plain carrying JSON)",
                    base()
                        .without("x-kiln")
                        .header("Origin", "http://evil.example")
                        .header("Sec-Fetch-Site", "cross-site")
                        .header("Content-Type", "text/plain")
                        .body(create.to_string().into_bytes()),
                ),
                (
                    "a form post without Origin (text/plain)",
                    base().without("x-kiln").header("Content-Type", "text/plain").body(create.to_string().into_bytes()),
                ),
                (
                    "a form post with x-kiln from another site (multipart)",
                    base()
                        .header("Origin", "http://evil.example")
                        .header("Content-Type", "multipart/form-data; boundary=x")
                        .body(b"--x\r\nContent-Disposition: form-data; name=\"brief\"\r\n\r\nhi\r\n--x--\r\n".to_vec()),
                ),
                ("no x-kiln, with a body declared but never sent", base().without("x-kiln").declared(100)),
                (
                    "a CORS preflight from another site",
                    Req::new("OPTIONS", "/api/create_session")
                        .header("Host", &host(p))
                        .header("Origin", "http://evil.example")
                        .header("Access-Control-Request-Method", "POST")
                        .header("Access-Control-Request-Headers", "x-kiln, content-type"),
                ),
                ("DELETE without x-kiln", {
                    let mut r = base().without("x-kiln");
                    r.method = "DELETE".into();
                    r
                }),
                ("PUT without x-kiln", {
                    let mut r = base().without("x-kiln");
                    r.method = "PUT".into();
                    r
                }),
            ];
            let csrf_connect = connect_req(p, self.token.as_deref())
                .header("Origin", "http://evil.example")
                .header("Sec-Fetch-Site", "cross-site");
            for (name, req) in rows.into_iter().chain([("a cross-site connect (login CSRF)", csrf_connect)]) {
                let req = if connected { req.header("Cookie", &self.cookie) } else { req };
                out.push(both(format!("{name}{tag}"), req, CROSS));
            }
        }
        out.push(both(
            "a cross-site disconnect",
            self.api("disconnect", json!({})).header("Origin", "http://evil.example"),
            CROSS,
        ));
        out.push(both(
            "a cross-site delete of a session",
            self.api("delete_session", json!({ "sessionId": self.s_main, "keepTranscript": false })).without("x-kiln"),
            CROSS,
        ));
        // Controls: what the contract allows reaches the operation.
        out.push(both(
            "Origin https://<Host> and Sec-Fetch-Site: same-origin are accepted",
            self.api("list_sessions", json!({}))
                .header("Origin", &format!("https://{}", host(p)))
                .header("Sec-Fetch-Site", "same-origin"),
            Status(200),
        ));
        out.push(both(
            "Origin http://<Host> and Sec-Fetch-Site: none are accepted",
            self.api("list_sessions", json!({}))
                .header("Origin", &format!("http://{}", host(p)))
                .header("Sec-Fetch-Site", "none"),
            Status(200),
        ));
        out
    }

    fn body_limit_cases(&self) -> Vec<Case> {
        // A valid create_session, so one let through would leave a new session behind.
        let big = |size: usize| {
            let mut body = format!("{{\"brief\":\"{BRIEF} ").into_bytes();
            body.resize(size - 2, b'x');
            body.extend_from_slice(b"\"}");
            body
        };
        let mut out = Vec::new();
        for connected in [false, true] {
            let tag = if connected { ", connected" } else { "" };
            let base = |op: &str| if connected { self.api(op, json!({})) } else { self.anon(op, json!({})) };
            out.push(both(
                format!("Content-Length of 1 MiB + 1 (body never sent){tag}"),
                base("create_session").declared(MIB as u64 + 1),
                TOO_LARGE,
            ));
            out.push(both(
                format!("Content-Length of 1 GiB (body never sent){tag}"),
                base("create_session").declared(1 << 30),
                TOO_LARGE,
            ));
            out.push(both(
                format!("a body of 1 MiB + 1 sent whole{tag}"),
                base("create_session").body(big(MIB + 1)),
                TOO_LARGE,
            ));
            // A chunked body's size is only known by reading it, and a stranger's body is
            // never read: unconnected, the connection check answers first.
            let chunked = if connected { TOO_LARGE } else { NOT_CONNECTED };
            out.push(both(
                format!("a chunked body of 1 MiB + 64 KiB{tag}"),
                base("create_session").chunked(big(MIB + 64 * 1024)),
                chunked,
            ));
            out.push(both(
                format!("add_attachment with Content-Length of 7 MiB + 64 KiB + 1{tag}"),
                base("add_attachment").declared((7 * MIB + 64 * 1024 + 1) as u64),
                TOO_LARGE,
            ));
        }
        // Controls: at the limit is fine; an attachment has a larger limit of its own.
        let mut at_limit = b"{}".to_vec();
        at_limit.resize(MIB, b' ');
        out.push(both(
            "a body of exactly 1 MiB is read",
            self.api("list_sessions", json!({})).body(at_limit),
            Status(200),
        ));
        let attachment = json!({ "sessionId": "../x", "name": "a.md", "dataBase64": "A".repeat(2 * MIB) });
        out.push(both(
            "add_attachment with a 2 MiB body passes the general limit",
            self.api("add_attachment", attachment),
            BAD_ID,
        ));
        out
    }

    /// Requests without a connection (the right Host, from Kiln's own page).
    fn connection_cases(&self) -> Vec<Case> {
        let p = self.port;
        vec![
            both("list_sessions, not connected", self.anon("list_sessions", json!({})), NOT_CONNECTED),
            both("get_settings, not connected", self.anon("get_settings", json!({})), NOT_CONNECTED),
            both(
                "update_settings, not connected",
                self.anon("update_settings", json!({ "plannerAgent": true })),
                NOT_CONNECTED,
            ),
            both(
                "create_session, not connected",
                self.anon("create_session", json!({ "brief": BRIEF })),
                NOT_CONNECTED,
            ),
            both(
                "delete_session, not connected",
                self.anon("delete_session", json!({ "sessionId": self.s_main, "keepTranscript": false })),
                NOT_CONNECTED,
            ),
            both(
                "add_attachment, not connected",
                self.anon(
                    "add_attachment",
                    json!({ "sessionId": self.s_main, "name": "x.md", "dataBase64": MD_BASE64 }),
                ),
                NOT_CONNECTED,
            ),
            both("an unknown operation, not connected", self.anon("no_such_op", json!({})), NOT_CONNECTED),
            both("GET /api/events, not connected", self.get("/api/events?since=0"), NOT_CONNECTED),
            both(
                "GET /api/terminal_stream, not connected",
                self.get("/api/terminal_stream?terminalId=00000000-0000-4000-8000-000000000000"),
                NOT_CONNECTED,
            ),
            both("GET /api/anything, not connected", self.get("/api/get_settings"), NOT_CONNECTED),
            // Loopback is no trust boundary: an unconnected page learns only that it must connect.
            both("GET /api/state, not connected", self.get("/api/state"), NOT_CONNECTED).after(After::StateOnly),
            both("POST /api/get_state, not connected", self.anon("get_state", json!({})), NOT_CONNECTED),
            both("the UI needs no connection", Req::new("GET", "/").header("Host", &host(p)), Status(200)),
            both("an unknown operation, connected", self.api("no_such_op", json!({})), Code(404, "UNKNOWN_COMMAND")),
            case(
                "GET /api/state, connected",
                self.get("/api/state").header("Cookie", &self.cookie),
                Status(200),
                Status(200),
            )
            .after(After::State { mode: self.mode.name(), connected: true }),
        ]
    }

    /// Session ids that are not canonical UUID v4s, through operations that build paths.
    fn session_id_cases(&self) -> Vec<Case> {
        let real = self.s_main.clone();
        let ids: Vec<(&str, Value)> = vec![
            ("../x", json!("../x")),
            ("%2e%2e%2f", json!("%2e%2e%2f")),
            ("..%2f..%2f.kiln", json!("..%2f..%2f.kiln")),
            ("an absolute path", json!("/etc/passwd")),
            ("the real id then /../ and itself", json!(format!("{real}/../{real}"))),
            ("overlong (the real id and 4,000 more characters)", json!(format!("{real}{}", "0".repeat(4000)))),
            ("a UUID v1", json!("0f8fad5b-d9cb-169f-a165-70867728950e")),
            ("the nil UUID", json!("00000000-0000-0000-0000-000000000000")),
            ("the real id in uppercase", json!(real.to_uppercase())),
            ("the real id without hyphens", json!(real.replace('-', ""))),
            ("the real id in braces", json!(format!("{{{real}}}"))),
            ("the real id with a NUL in place of its last character", json!(format!("{}\0", &real[..35]))),
            ("the real id followed by NUL", json!(format!("{real}\0"))),
            ("the real id followed by a newline", json!(format!("{real}\n"))),
            ("the real id with Unicode hyphens", json!(real.replace('-', "\u{2010}"))),
            ("empty", json!("")),
        ];
        let mut out = Vec::new();
        for (label, id) in &ids {
            for (op, body) in [
                ("get_session", json!({ "sessionId": id })),
                ("delete_session", json!({ "sessionId": id, "keepTranscript": false })),
                ("archive_session", json!({ "sessionId": id })),
                ("add_attachment", json!({ "sessionId": id, "name": "x.md", "dataBase64": MD_BASE64 })),
            ] {
                out.push(both(format!("{op} with session id {label}"), self.api(op, body), BAD_ID));
            }
        }
        out.push(both(
            "get_session with a session id that is a number",
            self.api("get_session", json!({ "sessionId": 7 })),
            INVALID,
        ));
        for (label, id) in
            [("../x", json!("../x")), ("%2e%2e%2f", json!("%2e%2e%2f")), ("with NUL", json!(format!("{UNKNOWN_V4}\0")))]
        {
            out.push(both(
                format!("remove_attachment with attachment id {label}"),
                self.api("remove_attachment", json!({ "sessionId": self.s_main, "attachmentId": id })),
                Status(400),
            ));
        }
        // Commands named by odd paths: whatever they answer, s_main is not deleted.
        let delete = json!({ "sessionId": self.s_main, "keepTranscript": false });
        for target in [
            "/api/%2e%2e%2fdelete_session",
            "/api/..%2fapi%2fdelete_session",
            "/api/../api/delete_session",
            "/api/delete_session/..",
            "/api/delete_session%00",
            "/api//delete_session",
        ] {
            let mut r = self.api("delete_session", delete.clone());
            r.target = target.into();
            out.push(both(format!("POST {target}"), r, Refused));
        }
        // Controls: a well-formed unknown id is looked up; the real one is found.
        out.push(both(
            "get_session with an unknown v4 id",
            self.api("get_session", json!({ "sessionId": UNKNOWN_V4 })),
            Code(404, "SESSION_NOT_FOUND"),
        ));
        out.push(both(
            "get_session with the real id",
            self.api("get_session", json!({ "sessionId": real })),
            Status(200),
        ));
        out
    }

    /// Attachment names that try to leave the session: stored under a safe name inside
    /// it, or refused.
    fn attachment_cases(&self) -> Vec<Case> {
        let s = self.s_main.clone();
        let stored = |name: &str| After::Attachment { session: s.clone(), name: name.into() };
        let add =
            |name: &str| self.api("add_attachment", json!({ "sessionId": s, "name": name, "dataBase64": MD_BASE64 }));
        let long = format!("{}.md", "a".repeat(296));
        let rows: Vec<(&str, String, Expect, After)> = vec![
            ("with /", "sub/dir/evil.md".into(), Status(200), stored("evil.md")),
            ("with ../..", "../../escape.md".into(), Status(200), stored("escape.md")),
            ("with backslashes", "..\\..\\win.md".into(), Status(200), stored("win.md")),
            ("absolute", "/etc/passwd.md".into(), Status(200), stored("passwd.md")),
            ("into .git", ".git/hooks/pre-commit.md".into(), Status(200), stored("pre-commit.md")),
            ("with a leading dot", ".hidden.md".into(), Status(200), stored("hidden.md")),
            ("..", "..".into(), ATTACHMENT_TYPE, After::Unchanged),
            ("../.md", "../.md".into(), ATTACHMENT_TYPE, After::Unchanged),
            ("of the secret key", ".kiln/secret.key".into(), ATTACHMENT_TYPE, After::Unchanged),
            ("of 300 characters", long, Status(200), stored(&format!("{}.md", "a".repeat(125)))),
            ("with NUL", "notes\0.md".into(), Status(200), stored("notes.md")),
            ("with a newline", "a\nb.md".into(), Status(200), stored("a-b.md")),
            ("with a one-dot leader for the dot", "readme\u{2024}md".into(), ATTACHMENT_TYPE, After::Unchanged),
            ("in fullwidth letters", "ｒｅａｄｍｅ．ｍｄ".into(), ATTACHMENT_TYPE, After::Unchanged),
            ("with division slashes for /", "..\u{2215}..\u{2215}x.md".into(), Status(200), stored("x.md")),
            ("with fullwidth solidus for /", "..\u{ff0f}..\u{ff0f}y.md".into(), Status(200), stored("y.md")),
            ("with a Cyrillic look-alike", "r\u{0435}adme.md".into(), Status(200), stored("r-adme.md")),
            ("with a right-to-left override", "photo\u{202e}gnp.md".into(), Status(200), stored("photo-gnp.md")),
        ];
        rows.into_iter()
            .map(|(label, name, expect, after)| {
                both(format!("attachment name {label}"), add(&name), expect).after(after)
            })
            .collect()
    }

    /// Links leading out of a session, then operations that write or delete there.
    fn link_cases(&self) -> Vec<Case> {
        vec![
            both(
                "a link to outside planted in a working copy, then delete_session",
                self.api("delete_session", json!({ "sessionId": self.s_linked, "keepTranscript": false })),
                Status(200),
            )
            .after(After::Deleted { session: self.s_linked.clone() }),
            both(
                "a session directory replaced by a link to outside, then delete_session",
                self.api("delete_session", json!({ "sessionId": self.s_dir_link, "keepTranscript": false })),
                ErrOneOf(400, &["PATH_NOT_ALLOWED", "INVALID_SESSION_ID"]),
            ),
            both(
                "the working copy's attachments folder a link to outside, then add_attachment",
                self.api(
                    "add_attachment",
                    json!({ "sessionId": self.s_attach_link, "name": "planted.md", "dataBase64": MD_BASE64 }),
                ),
                Code(400, "PATH_NOT_ALLOWED"),
            ),
        ]
    }

    /// The mode is chosen on the command line only.
    fn mode_cases(&self) -> Vec<Case> {
        let other = self.mode.other();
        vec![
            both("update_settings {mode}", self.api("update_settings", json!({ "mode": other })), INVALID),
            both("update_settings {serveMode}", self.api("update_settings", json!({ "serveMode": other })), INVALID),
            both(
                "an operation named set_mode",
                self.api("set_mode", json!({ "mode": other })),
                Code(404, "UNKNOWN_COMMAND"),
            ),
            both(
                "GET /api/state?mode=… with X-Kiln-Mode",
                self.get(&format!("/api/state?mode={other}"))
                    .header("Cookie", &self.cookie)
                    .header("X-Kiln-Mode", other),
                Status(200),
            )
            .after(After::State { mode: self.mode.name(), connected: true }),
            both("get_state {mode}", self.api("get_state", json!({ "mode": other })), Any)
                .after(After::UnchangedNotMode(other)),
            // (In self-hosted this may count as a failed connect: `cookies` stays under the limit.)
            both(
                "connect {mode}",
                connect_req(self.port, self.token.as_deref()).json(&json!({ "token": self.token, "mode": other })),
                INVALID,
            ),
        ]
    }

    /// Asset paths that try to leave the UI directory.
    fn asset_cases(&self) -> Vec<Case> {
        let marker = server::UI_NEIGHBOUR_MARKER.to_string();
        [
            "/../ui-neighbour.txt",
            "/%2e%2e/ui-neighbour.txt",
            "/%2e%2e%2fui-neighbour.txt",
            "/..%2fui-neighbour.txt",
            "/.hidden.txt",
            "/%2ehidden.txt",
            "/./.hidden.txt",
        ]
        .into_iter()
        .map(|t| {
            both(format!("GET {t}"), Req::new("GET", t).header("Host", &host(self.port)), Any)
                .after(After::UnchangedLacks(marker.clone()))
        })
        .collect()
    }

    /// Settings requests once secrets are stored.
    fn settings_cases(&self) -> Vec<Case> {
        let lacks = |s: &str| After::UnchangedLacks(s.to_string());
        vec![
            both("bridgeUrl changed without bridgeToken", self.api("update_settings", json!({ "bridgeUrl": "http://127.0.0.1:10/bridge" })), INVALID),
            both("openaiBaseUrl changed without openaiKey", self.api("update_settings", json!({ "openaiBaseUrl": "http://127.0.0.1:10/v1" })), INVALID),
            both(
                "both addresses changed, only the key given: nothing applies",
                self.api(
                    "update_settings",
                    json!({ "openaiBaseUrl": "http://127.0.0.1:10/v1", "openaiKey": REFUSED_SECRET, "bridgeUrl": "http://127.0.0.1:10/bridge", "plannerAgent": true }),
                ),
                INVALID,
            )
            .after(lacks(REFUSED_SECRET)),
            both(
                "a refused update does not echo its key",
                self.api("update_settings", json!({ "openaiKey": REFUSED_SECRET, "defaultDriver": "nope" })),
                INVALID,
            )
            .after(lacks(REFUSED_SECRET)),
            both(
                "a refused update does not echo its bridge token",
                self.api("update_settings", json!({ "bridgeToken": REFUSED_SECRET, "bridgeUrl": "javascript:alert(1)" })),
                INVALID,
            )
            .after(lacks(REFUSED_SECRET)),
            // Self-hosted: only bring-your-own-key drivers.
            case("defaultDriver claude", self.api("update_settings", json!({ "defaultDriver": "claude" })), Skip, NOT_IN_MODE),
            case("defaultDriver codex", self.api("update_settings", json!({ "defaultDriver": "codex" })), Skip, NOT_IN_MODE),
            case("claudePath", self.api("update_settings", json!({ "claudePath": "/usr/local/bin/claude" })), Skip, NOT_IN_MODE),
            case("codexPath", self.api("update_settings", json!({ "codexPath": "/usr/local/bin/codex" })), Skip, NOT_IN_MODE),
            case(
                "a turn on claude",
                self.api("send_message", json!({ "sessionId": self.s_main, "text": "hello", "driver": "claude" })),
                Skip,
                NOT_IN_MODE,
            ),
            case(
                "a turn on codex",
                self.api("send_message", json!({ "sessionId": self.s_main, "text": "hello", "driver": "codex" })),
                Skip,
                NOT_IN_MODE,
            ),
            case(
                "open_workspace of another directory",
                self.api("open_workspace", json!({ "path": self.fx.outside.display().to_string() })),
                Skip,
                NOT_IN_MODE,
            ),
            case(
                "open_workspace of a missing directory",
                self.api("open_workspace", json!({ "path": self.fx.tmp.path().join("missing").display().to_string() })),
                Code(404, "WORKSPACE_NOT_FOUND"),
                NOT_IN_MODE,
            ),
        ]
    }

    /// Stores a key and a bridge token, then reads them back through every API that
    /// touches settings: only fingerprints come back.
    fn secrets(&mut self) {
        let set = self.call(
            "update_settings",
            json!({
                "openaiBaseUrl": "http://127.0.0.1:9/v1", "openaiModel": "hostile-model", "openaiKey": OPENAI_SECRET,
                "bridgeUrl": "http://127.0.0.1:9/bridge", "bridgeToken": BRIDGE_SECRET,
            }),
        );
        let fp = regex::Regex::new(r"^[0-9a-f]{8}$").unwrap();
        for (field, secret) in [("openaiKeyFingerprint", OPENAI_SECRET), ("bridgeTokenFingerprint", BRIDGE_SECRET)] {
            let got = set[field].as_str().unwrap_or_default().to_string();
            if !fp.is_match(&got) || got != kiln_engine::testing::secrets::fingerprint(secret) {
                self.fail(format!("update_settings: {field} is {:?}, not the 8-hex fingerprint", set[field]));
            }
        }
        if set["bridgeUrl"] != "http://127.0.0.1:9/bridge" {
            self.fail(format!("update_settings: bridgeUrl {:?}", set["bridgeUrl"]));
        }

        // The key file: a regular file of 32 bytes, private to the user.
        use std::os::unix::fs::PermissionsExt;
        let key = self.fx.workspace.join(".kiln/secret.key");
        let meta = std::fs::symlink_metadata(&key).expect("the secret key file exists");
        assert!(meta.is_file(), "secret.key is not a regular file");
        assert_eq!(meta.permissions().mode() & 0o777, 0o600, "the mode of secret.key");
        assert_eq!(meta.len(), 32, "the size of secret.key");

        // Stored sealed; sealing the same key again gives another ciphertext.
        let db = self.fx.workspace.join(".kiln/kiln.db");
        let sealed_key = || snapshot::query_strings(&db, "SELECT value FROM settings WHERE key = 'driver.openai.key'");
        let first = sealed_key();
        assert!(first.len() == 1 && first[0].starts_with("v1:"), "the stored key is not sealed: {first:?}");
        let sealed: Vec<String> = snapshot::query_strings(&db, "SELECT value FROM settings WHERE value LIKE 'v1:%'");
        assert!(sealed.len() >= 2, "the key and the bridge token are both sealed in settings: {sealed:?}");
        let again = self.call("update_settings", json!({ "openaiKey": OPENAI_SECRET }));
        let second = sealed_key();
        assert_ne!(first, second, "the same key sealed twice gave the same ciphertext");
        assert_eq!(again["openaiKeyFingerprint"], set["openaiKeyFingerprint"]);

        // Every read of settings and state.
        let settings = self.call("get_settings", json!({}));
        let ids: Vec<&str> =
            settings["drivers"].as_array().unwrap().iter().map(|d| d["id"].as_str().unwrap()).collect();
        match self.mode {
            Mode::SelfHosted => {
                assert_eq!(ids, ["openai-compatible"], "a self-hosted server offers only bring-your-own-key drivers")
            }
            Mode::Loopback => assert!(
                ids.contains(&"claude") && ids.contains(&"codex") && ids.contains(&"openai-compatible"),
                "{ids:?}"
            ),
        }
        assert_eq!(settings["openaiKeyFingerprint"], set["openaiKeyFingerprint"]);
        assert_eq!(settings["bridgeTokenFingerprint"], set["bridgeTokenFingerprint"]);
        self.call("get_state", json!({}));
        self.call("list_sessions", json!({ "includeArchived": true }));
        self.call("get_session", json!({ "sessionId": self.s_main }));
        let state = self.send(&self.get("/api/state").header("Cookie", &self.cookie));
        assert_eq!(state.status, 200);
        let events = self
            .get("/api/events?since=0")
            .header("Cookie", &self.cookie)
            .stream_for(self.port, Duration::from_millis(1500))
            .unwrap();
        assert!(
            events.starts_with(b"HTTP/1.1 200"),
            "events: {}",
            String::from_utf8_lossy(&events[..events.len().min(200)])
        );
        self.seen.extend(events);
    }

    /// Cookies: forged, for another port, revoked, expired, after disconnect.
    fn cookies(&mut self) {
        let p = self.port;
        let works =
            |run: &mut Run, cookie: &str| run.send(&run.anon("list_sessions", json!({})).header("Cookie", cookie));
        let cfg = self.fx.config.clone();

        let expiring = create_token(&cfg, "hostile-expiring", Some("2s"));
        let created = Instant::now();
        let resp = self.send(&connect_req(p, Some(&expiring)));
        assert_eq!(resp.status, 200, "connect with a fresh 2-second token: {}", resp.text());
        let c_expiring = cookie_of(&resp, p).unwrap();
        let max_age = max_age_of(&resp, p).unwrap_or(i64::MAX);
        if max_age > 3 {
            self.fail(format!("a session of a 2-second token has Max-Age {max_age}"));
        }
        let revocable = create_token(&cfg, "hostile-revoked", None);
        let resp = self.send(&connect_req(p, Some(&revocable)));
        assert_eq!(resp.status, 200, "connect: {}", resp.text());
        let c_revoked = cookie_of(&resp, p).unwrap();
        let resp = self.send(&connect_req(p, self.token.as_deref()));
        assert_eq!(resp.status, 200, "connect: {}", resp.text());
        let c_disconnect = cookie_of(&resp, p).unwrap();
        for c in [&c_revoked, &c_disconnect] {
            let r = works(self, c);
            assert_eq!(r.status, 200, "a fresh cookie does not work: {}", r.text());
        }

        // Revoked.
        let id = token_id(&cfg, "hostile-revoked");
        let (code, _, err) = kiln(&cfg, &["token", "revoke", &id], &[]);
        assert_eq!(code, 0, "kiln token revoke: {err}");
        let (_, list, _) = kiln(&cfg, &["token", "list"], &[]);
        assert!(list.lines().any(|l| l.contains("hostile-revoked") && l.contains("revoked")), "{list}");
        let (code, _, err) = kiln(&cfg, &["token", "revoke", "no-such-token"], &[]);
        assert!(code == 1 && err.trim_end().ends_with("[TOKEN_INVALID]"), "revoking an unknown id: exit {code}, {err}");

        let expect_401 = |run: &mut Run, what: &str, cookie: &str| {
            let r = works(run, cookie);
            if r.status != 401 || r.code().as_deref() != Some("NOT_CONNECTED") {
                run.fail(format!("{what}: expected 401 NOT_CONNECTED, got {} {}", r.status, r.text()));
            }
        };
        expect_401(self, "a cookie of a revoked token", &c_revoked);

        // Disconnected.
        let resp = self.send(&self.api("disconnect", json!({})).header("Cookie", &c_disconnect));
        assert_eq!(resp.status, 200, "disconnect: {}", resp.text());
        assert_eq!(resp.json()["connected"], false);
        if max_age_of(&resp, p) != Some(0) {
            self.fail(format!("disconnect does not clear the cookie: {:?}", resp.headers));
        }
        expect_401(self, "a cookie after disconnect", &c_disconnect);

        // Forged.
        let secret = self.cookie.split_once('=').unwrap().1.to_string();
        let mut altered = secret.clone();
        let last = altered.pop().unwrap();
        altered.push(if last == 'A' { 'B' } else { 'A' });
        let random: String = (0..43)
            .map(|i| b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[(i * 37 + 11) % 64] as char)
            .collect();
        for (what, cookie) in [
            ("a forged random cookie", format!("kiln_session_{p}={random}")),
            ("the real cookie with its last character changed", format!("kiln_session_{p}={altered}")),
            ("the real secret under another port's cookie name", format!("kiln_session_{}={secret}", p + 1)),
            ("an empty cookie", format!("kiln_session_{p}=")),
            (
                "the access token as the cookie",
                format!("kiln_session_{p}={}", self.token.clone().unwrap_or(revocable.clone())),
            ),
        ] {
            expect_401(self, what, &cookie);
        }

        // Expired (the token's end, not the 12 hours).
        std::thread::sleep(Duration::from_secs(3).saturating_sub(created.elapsed()));
        expect_401(self, "a cookie whose token expired", &c_expiring);

        // Connects with tokens that no longer open anything (four failures: under the limit).
        let bogus = format!("kiln_{}", "A".repeat(43));
        for (what, token) in [
            ("revoked", Some(revocable.as_str())),
            ("expired", Some(expiring.as_str())),
            ("unknown", Some(bogus.as_str())),
        ] {
            let r = self.send(&connect_req(p, token));
            if r.status != 401 || r.code().as_deref() != Some("TOKEN_INVALID") {
                self.fail(format!(
                    "connect with a {what} token: expected 401 TOKEN_INVALID, got {} {}",
                    r.status,
                    r.text()
                ));
            }
            if !r.headers_named("set-cookie").is_empty() {
                self.fail(format!("connect with a {what} token sets a cookie: {:?}", r.headers));
            }
        }
        // Loopback is no trust boundary: without a token, neither mode connects.
        let r = self.send(&connect_req(p, None));
        if r.status != 401 || r.code().as_deref() != Some("TOKEN_INVALID") {
            self.fail(format!("connect without a token: expected 401 TOKEN_INVALID, got {} {}", r.status, r.text()));
        }

        // The main connection outlived all of that (and the cross-site disconnect).
        let main = self.cookie.clone();
        let r = works(self, &main);
        assert_eq!(r.status, 200, "the main cookie stopped working: {}", r.text());

        // Only hashes at rest: no token and no cookie secret in the config directory.
        let mut secrets =
            vec![expiring.clone(), revocable.clone(), secret, c_revoked.split_once('=').unwrap().1.to_string()];
        secrets.extend(self.token.clone());
        // A loopback server's own token is in its file by design (the user's scripts read
        // it there), and nowhere else.
        let own_file = cfg.join(format!("loopback-{p}.token"));
        let server_token = if self.mode == Mode::Loopback { self.token.clone() } else { None };
        for s in secrets {
            let mut found = snapshot::files_containing(&cfg, s.as_bytes());
            if server_token.as_ref() == Some(&s) {
                assert!(found.contains(&own_file), "the server's token is not in {}", own_file.display());
                found.retain(|f| *f != own_file);
            }
            if !found.is_empty() {
                self.fail(format!("a token or cookie secret is stored in plain text in {found:?}"));
            }
        }
    }

    /// No secret in any answer seen, any file under `.kiln` (the database and its
    /// side files included), the config directory, or the server's output.
    fn leak_scan(&mut self) {
        for secret in [OPENAI_SECRET, BRIDGE_SECRET, REFUSED_SECRET] {
            if self.seen.windows(secret.len()).any(|w| w == secret.as_bytes()) {
                self.fail(format!("`{secret}` appeared in an answer"));
            }
            for dir in [self.fx.workspace.join(".kiln"), self.fx.config.clone()] {
                let found = snapshot::files_containing(&dir, secret.as_bytes());
                if !found.is_empty() {
                    self.fail(format!("`{secret}` is stored in plain text in {found:?}"));
                }
            }
            let db = self.fx.workspace.join(".kiln/kiln.db");
            let rows = snapshot::query_strings(&db, "SELECT key || '=' || value FROM settings");
            if rows.iter().any(|r| r.contains(secret)) {
                self.fail(format!("`{secret}` is in the settings rows"));
            }
            if self.server.output().contains(secret) {
                self.fail(format!("`{secret}` appeared in the server's output"));
            }
        }
    }

    fn finish(self) {
        assert!(
            self.failures.is_empty(),
            "{} hostile case(s) failed:\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

fn hostile_suite(mode: Mode) {
    let mut run = Run::start(mode);
    let mut cases = run.host_cases();
    cases.extend(run.cross_site_cases());
    cases.extend(run.body_limit_cases());
    cases.extend(run.connection_cases());
    cases.extend(run.session_id_cases());
    cases.extend(run.attachment_cases());
    cases.extend(run.link_cases());
    cases.extend(run.mode_cases());
    cases.extend(run.asset_cases());
    run.run_all(cases);

    // The mode is still the one given on the command line.
    let state = run.send(&run.get("/api/state").header("Cookie", &run.cookie));
    assert_eq!(state.json()["mode"], mode.name(), "{}", state.text());

    run.secrets();
    let settings = run.settings_cases();
    run.run_all(settings);
    run.cookies();
    run.leak_scan();
    run.finish();
}

#[test]
fn hostile_requests_change_nothing_loopback() {
    hostile_suite(Mode::Loopback);
}

#[test]
fn hostile_requests_change_nothing_self_hosted() {
    hostile_suite(Mode::SelfHosted);
}

/// After 5 failed connects from one address, even a valid token gets 429 with
/// `Retry-After`, from that address only.
#[test]
fn failed_connects_are_rate_limited() {
    let fx = fixture();
    let token = create_token(&fx.config, "hostile-rate", None);
    let server = Server::start(&fx, "self-hosted");
    let p = server.port;
    for i in 0..5 {
        let r = connect_req(p, Some(&format!("kiln_{}{i}", "B".repeat(42)))).send(p).unwrap();
        assert_eq!((r.status, r.code().as_deref()), (401, Some("TOKEN_INVALID")), "failed connect {i}: {}", r.text());
    }
    for what in ["a valid token", "an invalid token"] {
        let t = if what == "a valid token" { token.clone() } else { format!("kiln_{}", "C".repeat(43)) };
        let r = connect_req(p, Some(&t)).send(p).unwrap();
        assert_eq!(
            (r.status, r.code().as_deref()),
            (429, Some("RATE_LIMITED")),
            "{what} after 5 failures: {}",
            r.text()
        );
        let retry: u64 = r
            .header("retry-after")
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no numeric Retry-After: {:?}", r.headers));
        assert!((1..=60).contains(&retry), "Retry-After {retry}");
        assert!(r.headers_named("set-cookie").is_empty(), "a refused connect sets a cookie");
    }
    // Counted per client address: another loopback address still connects.
    let r = connect_req(p, Some(&token)).source_addr(Ipv4Addr::new(127, 0, 0, 2)).send(p).unwrap();
    assert_eq!(r.status, 200, "a connect from 127.0.0.2: {}", r.text());
}

/// A sealed secret altered in the database, or sealed under another key, is refused
/// with `SECRET_UNREADABLE` and a message that says so; it is never sent on.
#[test]
fn a_tampered_sealed_secret_is_refused() {
    let fx = fixture();
    let db = fx.workspace.join(".kiln/kiln.db");
    let start = |fx: &Fixture| -> (Server, String) {
        let server = Server::start(fx, "loopback");
        let r = connect_req(server.port, server.token.as_deref()).send(server.port).unwrap();
        assert_eq!(r.status, 200, "connect: {}", r.text());
        let cookie = cookie_of(&r, server.port).unwrap();
        (server, cookie)
    };
    let call = |server: &Server, cookie: &str, op: &str, body: Value| {
        page_req(server.port, op, &body).header("Cookie", cookie).send(server.port).unwrap()
    };

    let (server, cookie) = start(&fx);
    let r = call(
        &server,
        &cookie,
        "update_settings",
        json!({ "openaiBaseUrl": "http://127.0.0.1:9/v1", "openaiModel": "m", "openaiKey": OPENAI_SECRET }),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    server.stop();

    // Flip one bit of the ciphertext, as stored.
    let sealed = snapshot::query_strings(&db, "SELECT value FROM settings WHERE key = 'driver.openai.key'")
        .pop()
        .expect("the key is stored");
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut bytes = b64.decode(sealed.strip_prefix("v1:").expect("v1: format")).unwrap();
    let at = bytes.len() - 5;
    bytes[at] ^= 0x10;
    let tampered = format!("v1:{}", b64.encode(&bytes));
    write_setting(&db, "driver.openai.key", &tampered);

    let check = |fx: &Fixture, what: &str| {
        let (server, cookie) = start(fx);
        let r = call(&server, &cookie, "get_settings", json!({}));
        assert_eq!((r.status, r.code().as_deref()), (500, Some("SECRET_UNREADABLE")), "{what}: {}", r.text());
        let message = r.json()["error"]["message"].as_str().unwrap_or_default().to_ascii_lowercase();
        assert!(message.contains("secret") || message.contains("seal"), "{what}: an unclear message: {message}");
        assert!(
            !r.text().contains(OPENAI_SECRET) && !r.text().contains(&tampered[3..20]),
            "{what}: the message leaks: {}",
            r.text()
        );
        // The rest of the server still works.
        let r = call(&server, &cookie, "list_sessions", json!({}));
        assert_eq!(r.status, 200, "{what}: {}", r.text());
        server.stop();
    };
    check(&fx, "a flipped bit");

    // The original ciphertext back, under a different key.
    write_setting(&db, "driver.openai.key", &sealed);
    let key = fx.workspace.join(".kiln/secret.key");
    std::fs::write(&key, [0x5a; 32]).unwrap();
    check(&fx, "another key");
}

fn write_setting(db: &Path, key: &str, value: &str) {
    use sqlx::{ConnectOptions, Connection};
    snapshot::rt().block_on(async {
        let mut conn = sqlx::sqlite::SqliteConnectOptions::new().filename(db).connect().await.unwrap();
        let done = sqlx::query("UPDATE settings SET value = ? WHERE key = ?")
            .bind(value)
            .bind(key)
            .execute(&mut conn)
            .await
            .unwrap();
        assert_eq!(done.rows_affected(), 1);
        conn.close().await.unwrap();
    });
}

/// The engine's sealer: a fresh nonce per seal, and an altered text fails clearly.
#[test]
fn sealing_is_randomized_and_tamper_evident() {
    let dir = tempfile::tempdir().unwrap();
    let sealer = kiln_engine::testing::secrets::Sealer::open_or_create(dir.path()).unwrap();
    let (a, b) = (sealer.seal(OPENAI_SECRET.as_bytes()), sealer.seal(OPENAI_SECRET.as_bytes()));
    assert_ne!(a, b, "two seals of one plaintext");
    assert!(!a.contains(OPENAI_SECRET));
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut bytes = b64.decode(&a[3..]).unwrap();
    bytes[20] ^= 1;
    let err = sealer.open(&format!("v1:{}", b64.encode(&bytes))).unwrap_err();
    assert!(err.message.contains("altered"), "{}", err.message);
    assert_eq!(sealer.open(&b).unwrap(), OPENAI_SECRET.as_bytes());
}

/// A non-loopback `--host` serves self-hosted: unconnected, even at 127.0.0.1,
/// state and operations answer 401.
#[test]
fn a_non_loopback_host_serves_self_hosted() {
    let fx = fixture();
    let ws = fx.workspace.display().to_string();
    let server =
        Server::spawn(&fx.config, &["serve", "--host", "0.0.0.0", "--port", "0", "--workspace", &ws], &[]).unwrap();
    assert_eq!((server.host.as_str(), server.mode.as_str()), ("0.0.0.0", "self-hosted"));
    let p = server.port;
    let r = Req::new("GET", "/api/state").header("Host", &host(p)).send(p).unwrap();
    assert_eq!((r.status, r.code().as_deref()), (401, Some("NOT_CONNECTED")), "{}", r.text());
    assert_eq!(r.json()["mode"], "self-hosted");
    let r = page_req(p, "list_sessions", &json!({})).send(p).unwrap();
    assert_eq!((r.status, r.code().as_deref()), (401, Some("NOT_CONNECTED")), "{}", r.text());
}

/// The mode comes from `--mode` or `KILN_MODE`; contradictions and a self-hosted
/// server without a workspace are refused at start.
#[test]
fn the_mode_is_chosen_on_the_command_line() {
    let fx = fixture();
    let ws = fx.workspace.display().to_string();
    let server =
        Server::spawn(&fx.config, &["serve", "--port", "0", "--workspace", &ws], &[("KILN_MODE", "self-hosted")])
            .unwrap();
    assert_eq!(server.mode, "self-hosted", "KILN_MODE=self-hosted");
    let r = Req::new("GET", "/api/state").header("Host", &host(server.port)).send(server.port).unwrap();
    assert_eq!(r.status, 401, "{}", r.text());
    drop(server);
    let server = Server::spawn(&fx.config, &["serve", "--port", "0", "--workspace", &ws], &[]).unwrap();
    assert_eq!(server.mode, "loopback", "the default mode");
    drop(server);
    for (what, args) in [
        (
            "--mode loopback with a non-loopback host",
            vec!["serve", "--host", "0.0.0.0", "--mode", "loopback", "--port", "0", "--workspace", &ws],
        ),
        ("self-hosted without --workspace", vec!["serve", "--mode", "self-hosted", "--port", "0"]),
        ("an unknown mode", vec!["serve", "--mode", "open", "--port", "0", "--workspace", &ws]),
    ] {
        let (code, out, err) = kiln(&fx.config, &args, &[]);
        assert_eq!(code, 2, "{what}: exit {code}, stdout {out:?}, stderr {err:?}");
        assert!(!out.contains("Kiln is serving"), "{what}: it served");
        assert!(!err.trim().is_empty(), "{what}: no error message");
    }
}
