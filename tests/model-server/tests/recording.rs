//! What the server remembers of each request, how scripts are read, and the server's
//! lifetime: it keeps serving while a test body blocks, and stops when dropped.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;

use kiln_model_server::{parse_script, Aside, ModelServer, Step};
use serde_json::{json, Value};
use support::{client, post};

#[tokio::test]
async fn every_request_is_recorded_with_its_body_and_headers() {
    let server = ModelServer::start(vec![Step::text("a"), Step::text("b")]).await;
    let messages = json!({"model": "claude-test", "messages": [{"role": "user", "content": "hello"}]});
    client()
        .post(format!("{}/v1/messages?beta=true", server.base_url()))
        .header("x-api-key", "test-key")
        .header("anthropic-version", "2023-06-01")
        .json(&messages)
        .send()
        .await
        .unwrap();
    post(&client(), &format!("{}/v1/messages/count_tokens", server.base_url()), &messages).await;
    let chat = json!({"model": "local", "messages": [{"role": "user", "content": "hi"}]});
    post(&client(), &format!("{}/chat/completions", server.openai_base_url()), &chat).await;
    post(&client(), &format!("{}/elsewhere", server.base_url()), &json!({"x": 1})).await;

    let requests = server.requests();
    let seen: Vec<(&str, &str)> = requests.iter().map(|r| (r.method.as_str(), r.path.as_str())).collect();
    assert_eq!(
        seen,
        [
            ("POST", "/v1/messages"),
            ("POST", "/v1/messages/count_tokens"),
            ("POST", "/v1/chat/completions"),
            ("POST", "/elsewhere")
        ]
    );
    assert_eq!(requests[0].query.as_deref(), Some("beta=true"));
    assert_eq!(requests[0].header("X-Api-Key"), Some("test-key"));
    assert_eq!(requests[0].headers["anthropic-version"], "2023-06-01");
    assert_eq!(requests[0].body, messages);
    assert_eq!(requests[2].body, chat);
    assert_eq!(requests[3].body, json!({"x": 1}));
}

#[test]
fn scripts_read_from_json_and_reject_ambiguous_steps() {
    let script = parse_script(
        r#"[{"tool": "apply_patch", "arguments": {"input": "*** Begin Patch"}},
            {"tool": "noop"},
            {"text": "done"},
            {"error": {"status": 500, "message": "boom"}}]"#,
    )
    .unwrap();
    assert_eq!(script[0], Step::tool("apply_patch", json!({"input": "*** Begin Patch"})));
    assert_eq!(script[1], Step::tool("noop", json!({})));
    assert_eq!(script[2], Step::text("done"));
    assert_eq!(script[3], Step::error(500, "boom"));
    assert_eq!(parse_script(&serde_json::to_string(&script).unwrap()).unwrap(), script);

    assert!(parse_script(r#"[{"tool": "x", "text": "y"}]"#).is_err());
    assert!(parse_script(r#"[{"tool": "x", "arguments": [1]}]"#).is_err());
    assert!(parse_script(r#"[{"txet": "typo"}]"#).is_err());
}

// A test that blocks its (single) runtime thread on a child process must not starve
// the server; this blocks on a plain socket instead.
#[tokio::test(flavor = "current_thread")]
async fn the_server_answers_while_the_test_body_blocks() {
    let server = ModelServer::start(vec![Step::text("still here")]).await;
    let body = json!({"model": "m", "messages": []}).to_string();
    let mut stream = TcpStream::connect(server.addr).unwrap();
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        server.addr,
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("still here"));
}

#[tokio::test]
async fn dropping_the_server_stops_it() {
    let server = ModelServer::start(vec![]).await;
    let addr = server.addr;
    assert!(addr.ip().is_loopback());
    drop(server);
    // Shutdown is asynchronous; give it a moment, then nothing listens there.
    for _ in 0..50 {
        if TcpStream::connect(addr).is_err() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("still listening on {addr}");
}

#[tokio::test]
async fn a_step_is_used_once_across_protocols() {
    let server = ModelServer::start(vec![Step::text("first"), Step::text("second")]).await;
    let message: Value = post(&client(), &format!("{}/v1/messages", server.base_url()), &json!({"messages": []}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(message["content"][0]["text"], "first");
    let response: Value = post(&client(), &format!("{}/responses", server.openai_base_url()), &json!({"input": "x"}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(response["output"][0]["content"][0]["text"], "second");
}

/// A title request an agent sends beside its turn takes the aside's answer, in whichever
/// order the two arrive, and leaves the script's steps for the turn.
#[tokio::test]
async fn a_marked_request_is_answered_beside_the_script() {
    let title = Aside::new("generate a title", Step::text("Cart notes"));
    let server = ModelServer::start_with_asides(vec![Step::text("the turn")], vec![title]).await;
    let url = format!("{}/chat/completions", server.openai_base_url());
    let ask = |text: &str| json!({"messages": [{"role": "user", "content": text}]});
    let answer = |v: Value| v["choices"][0]["message"]["content"].as_str().unwrap_or_default().to_string();
    let first: Value = post(&client(), &url, &ask("please generate a title for this")).await.json().await.unwrap();
    assert_eq!(answer(first), "Cart notes");
    let turn: Value = post(&client(), &url, &ask("write the notes")).await.json().await.unwrap();
    assert_eq!(answer(turn), "the turn");
    let again: Value = post(&client(), &url, &ask("generate a title again")).await.json().await.unwrap();
    assert_eq!(answer(again), "Cart notes", "every marked request, not only the first");
    assert_eq!(server.requests().len(), 3, "each is recorded");
}
