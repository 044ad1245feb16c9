//! What the double remembers of each request, the check that a token travels only in
//! `Authorization`, and the server's lifetime (it serves while a test blocks, stops when dropped).

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;

use kiln_github_double::{Config, GithubDouble, RepoConfig};
use reqwest::Method;
use serde_json::json;
use support::{api, create_pull, double, send, with, TOKEN};

#[tokio::test]
async fn every_request_is_recorded_with_query_headers_body_and_status() {
    let github = double().await;
    let body = json!({"title": "kiln: add cart", "head": "kiln/cart-1a2b", "base": "main", "body": "Gates: 3 passed"});
    create_pull(&github, "acme/shop", body.clone()).await;
    send(api(&github, Method::GET, "/repos/acme/shop/pulls?head=acme%3Akiln%2Fcart-1a2b&state=open")).await;
    send(api(&github, Method::GET, "/nowhere")).await;

    let requests = github.requests();
    let seen: Vec<(&str, &str, u16)> =
        requests.iter().map(|r| (r.method.as_str(), r.path.as_str(), r.status)).collect();
    assert_eq!(
        seen,
        [("POST", "/repos/acme/shop/pulls", 201), ("GET", "/repos/acme/shop/pulls", 200), ("GET", "/nowhere", 404)]
    );
    assert_eq!(requests[0].body, body);
    assert!(requests[0].raw_body.contains("Gates: 3 passed"));
    assert_eq!(requests[0].header("User-Agent"), Some("kiln-tests/0.1"));
    assert_eq!(requests[0].header("accept"), Some("application/vnd.github+json"));
    assert_eq!(requests[0].headers["x-github-api-version"], "2022-11-28");
    assert_eq!(requests[0].header("authorization"), Some(format!("Bearer {TOKEN}").as_str()));
    assert_eq!(requests[1].query.as_deref(), Some("head=acme%3Akiln%2Fcart-1a2b&state=open"));
    assert_eq!(requests[1].query_param("head").as_deref(), Some("acme:kiln/cart-1a2b"));
    assert_eq!(requests[1].body, serde_json::Value::Null);
    assert_eq!(github.requests_to("post", "/repos/acme/shop/pulls").len(), 1);
}

#[tokio::test]
async fn a_token_sent_only_as_the_credential_passes_the_leak_check() {
    let github = double().await;
    create_pull(&github, "acme/shop", json!({"title": "t", "head": "kiln/a", "base": "main"})).await;
    send(api(&github, Method::GET, "/repos/acme/shop/pulls?head=acme:kiln/a")).await;
    send(with(api(&github, Method::GET, "/user"), "authorization", format!("token {TOKEN}"))).await;
    assert!(github.token_leaks(TOKEN).is_empty());
    github.assert_token_only_in_authorization(TOKEN);
}

#[tokio::test]
async fn a_token_anywhere_else_is_reported_with_its_place() {
    let github = double().await;
    // In the query (percent-encoded), the body, another header, the path.
    send(api(&github, Method::GET, &format!("/repos/acme/shop/pulls?access_token={}", TOKEN.replace('_', "%5F"))))
        .await;
    create_pull(
        &github,
        "acme/shop",
        json!({"title": "t", "head": "kiln/a", "base": "main", "body": format!("remote https://x:{TOKEN}@github.com")}),
    )
    .await;
    send(with(api(&github, Method::GET, "/user"), "x-debug", format!("token={TOKEN}"))).await;
    send(api(&github, Method::GET, &format!("/repos/{TOKEN}/shop"))).await;
    // In Authorization, but not as the whole credential.
    send(with(api(&github, Method::GET, "/user"), "authorization", format!("Basic {TOKEN}"))).await;

    let places: Vec<(usize, String)> =
        github.token_leaks(TOKEN).into_iter().map(|leak| (leak.request, leak.place)).collect();
    assert_eq!(
        places,
        [
            (0, "query".to_owned()),
            (1, "body".to_owned()),
            (2, "header x-debug".to_owned()),
            (3, "path".to_owned()),
            (4, "header authorization".to_owned()),
        ]
    );
    let panic =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| github.assert_token_only_in_authorization(TOKEN)))
            .unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(message.contains("request 0 (GET /repos/acme/shop/pulls): query"), "{message}");
    assert!(message.contains("request 1 (POST /repos/acme/shop/pulls): body"), "{message}");
}

#[test]
fn the_double_serves_while_the_test_blocks_and_stops_when_dropped() {
    let github = GithubDouble::spawn(Config::new(TOKEN).repo(RepoConfig::new("acme", "shop")));
    let addr = github.addr;
    assert!(addr.ip().is_loopback());
    // A blocking raw HTTP/1.1 exchange on the test's own thread, no runtime needed.
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET /repos/acme/shop HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: raw\r\nAccept: application/vnd.github+json\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"full_name\":\"acme/shop\""), "{answer}");
    drop(github);
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(TcpStream::connect(addr).is_err(), "still listening after drop");
}
