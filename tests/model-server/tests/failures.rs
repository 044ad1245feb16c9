//! Scripted failures come back in each provider's own error format, and a client that
//! asks past the end of the script or at an unknown path gets a clear answer.

mod support;

use kiln_model_server::{parse_script, ModelServer, Step, EXHAUSTED};
use serde_json::{json, Value};
use support::{client, post};

#[tokio::test]
async fn anthropic_errors_use_anthropics_body_and_status() {
    let script = parse_script(
        r#"[{"error": {"status": 429, "message": "slow down", "retry_after": 0}},
                                  {"error": {"status": 529, "message": "busy"}}]"#,
    )
    .unwrap();
    let server = ModelServer::start(script).await;
    let url = format!("{}/v1/messages", server.base_url());
    let body = json!({"model": "claude-test", "stream": true, "messages": []});

    let response = post(&client(), &url, &body).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "0");
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
    );
    let response = post(&client(), &url, &body).await;
    assert_eq!(response.status(), 529);
    assert_eq!(response.json::<Value>().await.unwrap()["error"]["type"], "overloaded_error");
}

#[tokio::test]
async fn openai_errors_use_openais_body_and_status() {
    let script = parse_script(r#"[{"error": {"status": 401, "message": "bad key"}},
                                  {"error": {"status": 500, "message": "boom"}},
                                  {"error": {"status": 429, "message": "quota", "type": "insufficient_quota", "code": "insufficient_quota"}}]"#)
    .unwrap();
    let server = ModelServer::start(script).await;
    let body = json!({"model": "gpt-test", "stream": true, "input": "hi"});
    let responses = format!("{}/responses", server.openai_base_url());
    let chat = format!("{}/chat/completions", server.openai_base_url());

    let response = post(&client(), &responses, &body).await;
    assert_eq!(response.status(), 401);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"error": {"message": "bad key", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}})
    );
    let response = post(&client(), &chat, &body).await;
    assert_eq!(response.status(), 500);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"error": {"message": "boom", "type": "server_error", "param": null, "code": null}})
    );
    let response = post(&client(), &responses, &body).await;
    assert_eq!(response.status(), 429);
    let error = response.json::<Value>().await.unwrap();
    assert_eq!(
        (error["error"]["type"].as_str(), error["error"]["code"].as_str()),
        (Some("insufficient_quota"), Some("insufficient_quota"))
    );
}

#[tokio::test]
async fn an_exhausted_script_answers_a_final_text() {
    let server = ModelServer::start(vec![Step::text("only")]).await;
    let url = format!("{}/v1/messages", server.base_url());
    let body = json!({"model": "claude-test", "messages": []});
    let first: Value = post(&client(), &url, &body).await.json().await.unwrap();
    assert_eq!(first["content"][0]["text"], "only");
    for number in 2..4 {
        let next: Value = post(&client(), &url, &body).await.json().await.unwrap();
        assert_eq!(next["content"][0]["text"], EXHAUSTED);
        assert_eq!(next["stop_reason"], "end_turn");
        assert_eq!(next["id"], format!("msg_{number}"));
    }
}

#[tokio::test]
async fn unknown_paths_are_404_json_and_bad_bodies_use_no_step() {
    let server = ModelServer::start(vec![Step::text("kept")]).await;
    let response = post(&client(), &format!("{}/v1/models", server.base_url()), &json!({})).await;
    assert_eq!(response.status(), 404);
    assert_eq!(response.json::<Value>().await.unwrap()["error"]["type"], "not_found_error");
    let response = client().get(format!("{}/v1/messages", server.base_url())).send().await.unwrap();
    assert_eq!(response.status(), 404);

    let url = format!("{}/chat/completions", server.openai_base_url());
    let response = client().post(&url).body("not json").send().await.unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(response.json::<Value>().await.unwrap()["error"]["type"], "invalid_request_error");
    let completion: Value = post(&client(), &url, &json!({"messages": []})).await.json().await.unwrap();
    assert_eq!(completion["choices"][0]["message"]["content"], "kept");
}
