//! Forwarding to the application on `127.0.0.1:<app port>`, one hyper client connection
//! per request (nothing pooled outlives the gateway). Bodies stream both ways as hyper
//! frames them, so server-sent events arrive as they are sent. An HTTP/1.1 Upgrade
//! (WebSockets: the application's hot reload) is forwarded, and on 101 the two upgraded
//! connections are spliced.

use std::net::{Ipv4Addr, SocketAddr};

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{
    HeaderMap, HeaderName, HeaderValue, CONNECTION, HOST, LOCATION, PROXY_AUTHENTICATE, PROXY_AUTHORIZATION, TE,
    TRAILER, TRANSFER_ENCODING, UPGRADE,
};
use hyper::{Request, Response, StatusCode, Uri, Version};
use hyper_util::rt::TokioIo;

use super::reply::{self, Body};
use super::{cookies, Shared};

const X_FORWARDED_HOST: HeaderName = HeaderName::from_static("x-forwarded-host");
const X_FORWARDED_PROTO: HeaderName = HeaderName::from_static("x-forwarded-proto");
const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

/// The request sent on to the application: `Ok` with its answer, or `Err` with the
/// gateway's own page when it did not answer. `host` is the browser's (already
/// checked to be the gateway's own).
pub(super) async fn forward(
    shared: &Shared,
    peer: SocketAddr,
    host: &str,
    app_port: u16,
    mut request: Request<Incoming>,
) -> Result<Response<Body>, Response<Body>> {
    let upgrade = upgrade_protocol(request.headers());
    let browser_side = upgrade.is_some().then(|| hyper::upgrade::on(&mut request));

    let (mut parts, body) = request.into_parts();
    remove_hop_by_hop(&mut parts.headers);
    if let Some(protocol) = &upgrade {
        parts.headers.insert(CONNECTION, HeaderValue::from_static("upgrade"));
        parts.headers.insert(UPGRADE, protocol.clone());
    }
    // The Host stays the browser's, so the application's absolute URLs name the gateway.
    let host_value = HeaderValue::from_str(host).expect("checked host");
    parts.headers.insert(HOST, host_value.clone());
    parts.headers.insert(X_FORWARDED_HOST, host_value);
    parts.headers.insert(X_FORWARDED_PROTO, HeaderValue::from_static("http"));
    parts.headers.insert(X_FORWARDED_FOR, HeaderValue::from_str(&peer.ip().to_string()).expect("an IP address"));
    parts.uri = parts.uri.path_and_query().map(|pq| Uri::from(pq.clone())).unwrap_or_else(|| Uri::from_static("/"));
    parts.version = Version::HTTP_11;
    let request = Request::from_parts(parts, body);

    let mut answer = match send(shared, app_port, request).await {
        Ok(answer) => answer,
        Err(e) => {
            tracing::debug!("preview gateway: the application on port {app_port} did not answer: {e}");
            return Err(reply::page(
                StatusCode::BAD_GATEWAY,
                "Not answering",
                "The preview is not answering. Trying again…",
                true,
            ));
        }
    };

    if answer.status() == StatusCode::SWITCHING_PROTOCOLS {
        let Some(browser_side) = browser_side else {
            // A 101 nobody asked for cannot be relayed.
            return Err(reply::page(StatusCode::BAD_GATEWAY, "Not answering", "The preview answered oddly.", false));
        };
        let app_side = hyper::upgrade::on(&mut answer);
        shared.spawn(async move {
            // The browser's side completes once hyper has sent it the 101 below.
            let (Ok(browser_side), Ok(app_side)) = tokio::join!(browser_side, app_side) else { return };
            let _ = tokio::io::copy_bidirectional(&mut TokioIo::new(browser_side), &mut TokioIo::new(app_side)).await;
        });
        let protocol = answer.headers().get(UPGRADE).cloned();
        remove_hop_by_hop(answer.headers_mut());
        answer.headers_mut().insert(CONNECTION, HeaderValue::from_static("upgrade"));
        if let Some(protocol) = protocol {
            answer.headers_mut().insert(UPGRADE, protocol);
        }
    } else {
        remove_hop_by_hop(answer.headers_mut());
    }
    rewrite_location(answer.headers_mut(), app_port, host);
    cookies::from_app(answer.headers_mut(), shared.port);
    Ok(answer.map(|body| body.map_err(Into::into).boxed_unsync()))
}

/// One connection to the application, driven by a task of the gateway (so `stop`
/// ends it), upgrades allowed.
async fn send(
    shared: &Shared,
    app_port: u16,
    request: Request<Incoming>,
) -> Result<Response<Incoming>, super::reply::BoxError> {
    let stream = tokio::net::TcpStream::connect((Ipv4Addr::LOCALHOST, app_port)).await?;
    let _ = stream.set_nodelay(true);
    let (mut sender, connection) = hyper::client::conn::http1::Builder::new().handshake(TokioIo::new(stream)).await?;
    shared.spawn(async move {
        let _ = connection.with_upgrades().await;
    });
    Ok(sender.send_request(request).await?)
}

/// The protocol asked for when the request is an HTTP/1.1 Upgrade
/// (`Connection: upgrade` with `Upgrade: …`).
fn upgrade_protocol(headers: &HeaderMap) -> Option<HeaderValue> {
    let asks = headers
        .get_all(CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|token| token.trim().eq_ignore_ascii_case("upgrade"));
    asks.then(|| headers.get(UPGRADE).cloned()).flatten()
}

/// Drops the headers that describe one hop (RFC 9110 §7.6.1), and any the
/// `Connection` header names, so they are not passed on as if end to end.
pub(super) fn remove_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|token| HeaderName::from_bytes(token.trim().as_bytes()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in [CONNECTION, TE, TRAILER, TRANSFER_ENCODING, UPGRADE, PROXY_AUTHENTICATE, PROXY_AUTHORIZATION] {
        headers.remove(name);
    }
    let proxy: Vec<HeaderName> = headers.keys().filter(|name| name.as_str().starts_with("proxy-")).cloned().collect();
    for name in proxy {
        headers.remove(name);
    }
    headers.remove("keep-alive");
}

/// A redirect to the application's own address (`http://127.0.0.1:<app port>` or
/// `http://localhost:<app port>`) goes to the gateway instead: the browser cannot
/// (and must not) reach the application directly.
fn rewrite_location(headers: &mut HeaderMap, app_port: u16, host: &str) {
    let Some(location) = headers.get(LOCATION).and_then(|value| value.to_str().ok()) else { return };
    for app in [format!("http://127.0.0.1:{app_port}"), format!("http://localhost:{app_port}")] {
        let Some(rest) = strip_prefix_ignore_case(location, &app) else { continue };
        if rest.is_empty() || rest.starts_with(['/', '?', '#']) {
            let rewritten = format!("http://{host}{}", if rest.is_empty() { "/" } else { rest });
            if let Ok(value) = HeaderValue::from_str(&rewritten) {
                headers.insert(LOCATION, value);
            }
            return;
        }
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &text[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn location_after(location: &'static str) -> String {
        let mut headers = HeaderMap::new();
        headers.insert(LOCATION, HeaderValue::from_static(location));
        rewrite_location(&mut headers, 3000, "127.0.0.1:5000");
        headers[LOCATION].to_str().unwrap().to_string()
    }

    #[test]
    fn redirects_to_the_app_go_to_the_gateway() {
        assert_eq!(location_after("http://127.0.0.1:3000/login?next=/"), "http://127.0.0.1:5000/login?next=/");
        assert_eq!(location_after("http://localhost:3000"), "http://127.0.0.1:5000/");
        assert_eq!(location_after("http://127.0.0.1:30001/x"), "http://127.0.0.1:30001/x");
        assert_eq!(location_after("https://example.com/"), "https://example.com/");
        assert_eq!(location_after("/relative"), "/relative");
    }

    #[test]
    fn hop_by_hop_headers_are_dropped() {
        let mut headers = HeaderMap::new();
        for (name, value) in [
            ("connection", "keep-alive, x-secret-hop"),
            ("keep-alive", "timeout=5"),
            ("x-secret-hop", "1"),
            ("proxy-connection", "keep-alive"),
            ("te", "trailers"),
            ("transfer-encoding", "chunked"),
            ("upgrade", "websocket"),
            ("content-type", "text/plain"),
        ] {
            headers.append(name, HeaderValue::from_static(value));
        }
        remove_hop_by_hop(&mut headers);
        assert_eq!(headers.keys().map(|k| k.as_str()).collect::<Vec<_>>(), ["content-type"]);
        assert!(upgrade_protocol(&headers).is_none());
    }
}
