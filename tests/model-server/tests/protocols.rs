//! The three wire protocols over real loopback HTTP: each stream is parsed the way a
//! client would and reassembled, so what a CLI would see is what is asserted.

mod support;

use kiln_model_server::{ModelServer, Step, OUTPUT_TOKENS};
use serde_json::{json, Value};
use support::{client, names, post, sse_events};

fn tool_then_text() -> Vec<Step> {
    vec![Step::tool("shell", json!({"command": ["ls", "-la"], "workdir": "/tmp/ws"})), Step::text("Listed the files.")]
}

fn tokens(body: &Value) -> u64 {
    (serde_json::to_vec(body).unwrap().len() / 4) as u64
}

#[tokio::test]
async fn anthropic_messages_stream_a_tool_call_then_text() {
    let server = ModelServer::start(tool_then_text()).await;
    let url = format!("{}/v1/messages?beta=true", server.base_url());
    let body = json!({"model": "claude-test", "max_tokens": 100, "stream": true,
        "messages": [{"role": "user", "content": "list files"}]});

    let response = post(&client(), &url, &body).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    let events = sse_events(&response.text().await.unwrap());
    let kinds = names(&events);
    assert_eq!(kinds[..3], ["message_start", "content_block_start", "ping"]);
    assert_eq!(
        kinds[kinds.len() - 4..],
        ["content_block_delta", "content_block_stop", "message_delta", "message_stop"]
    );
    // The `event:` line and the data's `type` agree, as the SDK relies on.
    for (name, data) in &events {
        assert_eq!(data["type"], json!(name));
    }
    let start = &events[0].1["message"];
    assert_eq!(start["model"], "claude-test");
    assert_eq!(start["usage"]["input_tokens"], tokens(&body));
    let block = &events[1].1["content_block"];
    assert_eq!(
        (block["type"].as_str(), block["name"].as_str(), block["id"].as_str()),
        (Some("tool_use"), Some("shell"), Some("call_1"))
    );
    let partial: Vec<&str> = events
        .iter()
        .filter(|(name, _)| name == "content_block_delta")
        .map(|(_, data)| {
            assert_eq!(data["delta"]["type"], "input_json_delta");
            data["delta"]["partial_json"].as_str().unwrap()
        })
        .collect();
    assert!(partial.len() > 1, "arguments arrive in fragments");
    let input: Value = serde_json::from_str(&partial.concat()).unwrap();
    assert_eq!(input, json!({"command": ["ls", "-la"], "workdir": "/tmp/ws"}));
    let delta = &events[events.len() - 2].1;
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert_eq!(
        delta["usage"],
        json!({"input_tokens": tokens(&body), "output_tokens": OUTPUT_TOKENS,
            "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0})
    );

    let response = post(&client(), &url, &body).await;
    let events = sse_events(&response.text().await.unwrap());
    assert_eq!(events[1].1["content_block"], json!({"type": "text", "text": ""}));
    let text: String = events
        .iter()
        .filter(|(name, _)| name == "content_block_delta")
        .map(|(_, data)| data["delta"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(text, "Listed the files.");
    assert_eq!(events[events.len() - 2].1["delta"]["stop_reason"], "end_turn");
}

#[tokio::test]
async fn anthropic_messages_without_stream_and_count_tokens() {
    let server = ModelServer::start(tool_then_text()).await;
    let body = json!({"model": "claude-test", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]});

    // Counting tokens must not use up a step.
    let count = post(&client(), &format!("{}/v1/messages/count_tokens?beta=true", server.base_url()), &body).await;
    assert_eq!(count.status(), 200);
    assert_eq!(count.json::<Value>().await.unwrap(), json!({"input_tokens": tokens(&body)}));

    let message: Value =
        post(&client(), &format!("{}/v1/messages", server.base_url()), &body).await.json().await.unwrap();
    assert_eq!(message["type"], "message");
    assert_eq!(message["id"], "msg_1");
    assert_eq!(message["stop_reason"], "tool_use");
    assert_eq!(
        message["content"],
        json!([{"type": "tool_use", "id": "call_1", "name": "shell", "input": {"command": ["ls", "-la"], "workdir": "/tmp/ws"}}])
    );
    assert_eq!(message["usage"]["output_tokens"], OUTPUT_TOKENS);
    assert_eq!(message["usage"]["cache_read_input_tokens"], 0);
}

#[tokio::test]
async fn responses_stream_a_function_call_then_text() {
    let server = ModelServer::start(tool_then_text()).await;
    let url = format!("{}/responses", server.openai_base_url());
    let body = json!({"model": "gpt-test", "stream": true, "input": [{"role": "user", "content": "list files"}]});

    let events = sse_events(&post(&client(), &url, &body).await.text().await.unwrap());
    assert_eq!(
        names(&events),
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    for (position, (name, data)) in events.iter().enumerate() {
        assert_eq!(data["type"], json!(name));
        assert_eq!(data["sequence_number"], position);
    }
    let added = &events[2].1["item"];
    assert_eq!(
        (added["type"].as_str(), added["call_id"].as_str(), added["name"].as_str()),
        (Some("function_call"), Some("call_1"), Some("shell"))
    );
    let arguments: String = events
        .iter()
        .filter(|(name, _)| name == "response.function_call_arguments.delta")
        .map(|(_, data)| {
            assert_eq!(data["item_id"], "fc_1");
            data["delta"].as_str().unwrap().to_owned()
        })
        .collect();
    let expected = json!({"command": ["ls", "-la"], "workdir": "/tmp/ws"});
    assert_eq!(serde_json::from_str::<Value>(&arguments).unwrap(), expected);
    let done = &events[7].1["item"];
    assert_eq!(serde_json::from_str::<Value>(done["arguments"].as_str().unwrap()).unwrap(), expected);
    assert_eq!(done["status"], "completed");
    let completed = &events[8].1["response"];
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["output"][0], *done);
    let input = tokens(&body);
    assert_eq!(
        completed["usage"],
        json!({"input_tokens": input, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": OUTPUT_TOKENS, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input + OUTPUT_TOKENS})
    );

    let events = sse_events(&post(&client(), &url, &body).await.text().await.unwrap());
    assert_eq!(
        names(&events),
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    let text: String = events
        .iter()
        .filter(|(name, _)| name == "response.output_text.delta")
        .map(|(_, data)| data["delta"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(text, "Listed the files.");
    let item = &events[9].1["item"];
    assert_eq!((item["type"].as_str(), item["role"].as_str()), (Some("message"), Some("assistant")));
    assert_eq!(item["content"], json!([{"type": "output_text", "text": "Listed the files.", "annotations": []}]));
    assert_eq!(events[10].1["response"]["id"], "resp_2");
}

#[tokio::test]
async fn responses_without_stream_return_the_response_object() {
    let server = ModelServer::start(vec![Step::text("plain")]).await;
    let body = json!({"model": "gpt-test", "input": "hi"});
    let response: Value =
        post(&client(), &format!("{}/responses", server.openai_base_url()), &body).await.json().await.unwrap();
    assert_eq!(response["object"], "response");
    assert_eq!(response["output"][0]["content"][0]["text"], "plain");
    assert_eq!(response["usage"]["output_tokens"], OUTPUT_TOKENS);
}

#[tokio::test]
async fn chat_completions_stream_fragmented_tool_arguments_then_text() {
    let server = ModelServer::start(tool_then_text()).await;
    let url = format!("{}/chat/completions", server.openai_base_url());
    let body = json!({"model": "local-test", "stream": true, "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "list files"}]});

    let events = sse_events(&post(&client(), &url, &body).await.text().await.unwrap());
    assert!(events.iter().all(|(name, _)| name.is_empty()), "chat frames are data-only");
    assert_eq!(events.last().unwrap().1, json!("[DONE]"));
    let chunks: Vec<&Value> = events[..events.len() - 1].iter().map(|(_, data)| data).collect();
    assert!(chunks.iter().all(|c| c["object"] == "chat.completion.chunk" && c["id"] == "chatcmpl-1"));
    let first = &chunks[0]["choices"][0]["delta"];
    assert_eq!(first["role"], "assistant");
    assert_eq!(
        first["tool_calls"][0],
        json!({"index": 0, "id": "call_1", "type": "function", "function": {"name": "shell", "arguments": ""}})
    );
    let fragments: Vec<&str> = chunks
        .iter()
        .flat_map(|c| c["choices"].as_array().unwrap())
        .filter_map(|choice| choice["delta"]["tool_calls"][0]["function"]["arguments"].as_str())
        .filter(|piece| !piece.is_empty())
        .collect();
    assert!(fragments.len() > 1, "arguments arrive in several fragments: {fragments:?}");
    assert_eq!(
        serde_json::from_str::<Value>(&fragments.concat()).unwrap(),
        json!({"command": ["ls", "-la"], "workdir": "/tmp/ws"})
    );
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "tool_calls");
    let usage_chunk = chunks.last().unwrap();
    assert_eq!(usage_chunk["choices"], json!([]));
    let input = tokens(&body);
    assert_eq!(usage_chunk["usage"]["prompt_tokens"], input);
    assert_eq!(usage_chunk["usage"]["completion_tokens"], OUTPUT_TOKENS);
    assert_eq!(usage_chunk["usage"]["total_tokens"], input + OUTPUT_TOKENS);

    // Without `include_usage` there is no usage chunk, as with the real API.
    let body = json!({"model": "local-test", "stream": true, "messages": []});
    let events = sse_events(&post(&client(), &url, &body).await.text().await.unwrap());
    let chunks: Vec<&Value> = events[..events.len() - 1].iter().map(|(_, data)| data).collect();
    let text: String = chunks.iter().filter_map(|c| c["choices"][0]["delta"]["content"].as_str()).collect();
    assert_eq!(text, "Listed the files.");
    assert_eq!(chunks.last().unwrap()["choices"][0]["finish_reason"], "stop");
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
}

#[tokio::test]
async fn chat_completions_without_stream_return_the_completion() {
    let server = ModelServer::start(tool_then_text()).await;
    let body = json!({"model": "local-test", "messages": []});
    let url = format!("{}/chat/completions", server.openai_base_url());
    let completion: Value = post(&client(), &url, &body).await.json().await.unwrap();
    assert_eq!(completion["object"], "chat.completion");
    let choice = &completion["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    let call = &choice["message"]["tool_calls"][0];
    assert_eq!((call["id"].as_str(), call["function"]["name"].as_str()), (Some("call_1"), Some("shell")));
    let arguments: Value = serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"command": ["ls", "-la"], "workdir": "/tmp/ws"}));
    assert_eq!(completion["usage"]["completion_tokens"], OUTPUT_TOKENS);

    let completion: Value = post(&client(), &url, &body).await.json().await.unwrap();
    assert_eq!(completion["choices"][0]["message"]["content"], "Listed the files.");
    assert_eq!(completion["choices"][0]["finish_reason"], "stop");
}
