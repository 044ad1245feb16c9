//! Branches made through the API and files put through the Contents API: what Kiln's
//! screenshot upload does (a `kiln/evidence` branch from the base's tip, one PNG per
//! file), and GitHub's refusals on the way.

mod support;

use reqwest::Method;
use serde_json::json;
use support::{api, double, send};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\nnot really an image";

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[tokio::test]
async fn a_branch_is_made_from_the_base_and_a_file_put_on_it() {
    let github = double().await;
    let (status, _) = send(api(&github, Method::GET, "/repos/acme/shop/git/ref/heads/kiln/evidence")).await;
    assert_eq!(status, 404);
    let (status, main) = send(api(&github, Method::GET, "/repos/acme/shop/git/ref/heads/main")).await;
    assert_eq!((status, main["ref"].as_str()), (200, Some("refs/heads/main")));
    let sha = main["object"]["sha"].as_str().unwrap().to_string();
    assert_eq!(main["object"]["type"], "commit");

    let create = json!({"ref": "refs/heads/kiln/evidence", "sha": sha});
    let (status, made) = send(api(&github, Method::POST, "/repos/acme/shop/git/refs").json(&create)).await;
    assert_eq!((status, &made["object"]["sha"]), (201, &json!(sha)), "{made}");
    let (status, again) = send(api(&github, Method::POST, "/repos/acme/shop/git/refs").json(&create)).await;
    assert_eq!((status, again["message"].as_str()), (422, Some("Reference already exists")));

    let path = "/repos/acme/shop/contents/s1/before-0.png";
    let put = json!({"message": "kiln: before", "content": base64(PNG), "branch": "kiln/evidence"});
    let (status, answer) = send(api(&github, Method::PUT, path).json(&put)).await;
    assert_eq!(status, 201, "{answer}");
    assert_eq!(answer["content"]["path"], "s1/before-0.png");
    assert_eq!(answer["content"]["name"], "before-0.png");
    assert_eq!(answer["content"]["size"], PNG.len());
    assert_eq!(answer["content"]["type"], "file");
    assert!(answer["content"]["html_url"].as_str().unwrap().ends_with("/acme/shop/blob/kiln/evidence/s1/before-0.png"));
    assert_eq!(answer["commit"]["message"], "kiln: before");
    assert_eq!(answer["commit"]["parents"][0]["sha"], json!(sha));
    // The branch moved to the new commit; main did not.
    let (_, moved) = send(api(&github, Method::GET, "/repos/acme/shop/git/ref/heads/kiln/evidence")).await;
    assert_eq!(moved["object"]["sha"], answer["commit"]["sha"]);
    let (_, main_again) = send(api(&github, Method::GET, "/repos/acme/shop/git/ref/heads/main")).await;
    assert_eq!(main_again["object"]["sha"], json!(sha));

    let (status, got) = send(api(&github, Method::GET, &format!("{path}?ref=kiln/evidence"))).await;
    assert_eq!((status, &got["sha"], &got["encoding"]), (200, &answer["content"]["sha"], &json!("base64")));
    let (status, _) = send(api(&github, Method::GET, &format!("{path}?ref=main"))).await;
    assert_eq!(status, 404);
    assert_eq!(github.file("acme", "shop", "kiln/evidence", "s1/before-0.png").unwrap().0, PNG);
    assert_eq!(github.files("acme", "shop", "kiln/evidence"), vec!["s1/before-0.png".to_string()]);

    // Replacing needs the current blob's sha.
    let (status, refused) = send(api(&github, Method::PUT, path).json(&put)).await;
    assert_eq!((status, refused["message"].as_str()), (422, Some("Invalid request.\n\n\"sha\" wasn't supplied.")));
    let stale = json!({"message": "m", "content": base64(b"x"), "branch": "kiln/evidence", "sha": "0".repeat(40)});
    let (status, _) = send(api(&github, Method::PUT, path).json(&stale)).await;
    assert_eq!(status, 409);
    let current = answer["content"]["sha"].as_str().unwrap();
    let replace = json!({"message": "m", "content": base64(b"x"), "branch": "kiln/evidence", "sha": current});
    let (status, _) = send(api(&github, Method::PUT, path).json(&replace)).await;
    assert_eq!(status, 200);
    assert_eq!(github.file("acme", "shop", "kiln/evidence", "s1/before-0.png").unwrap().0, b"x");
}

#[tokio::test]
async fn refusals_change_nothing() {
    let github = double().await;
    let path = "/repos/acme/shop/contents/a.png";
    let cases = [
        (json!({"content": base64(PNG), "branch": "main"}), 422),
        (json!({"message": "m", "branch": "main"}), 422),
        (json!({"message": "m", "content": "%%% not base64", "branch": "main"}), 422),
        (json!({"message": "m", "content": base64(PNG), "branch": "nope"}), 404),
    ];
    for (body, expected) in cases {
        let (status, answer) = send(api(&github, Method::PUT, path).json(&body)).await;
        assert_eq!(status, expected, "{body}: {answer}");
    }
    let (status, _) = send(
        api(&github, Method::POST, "/repos/acme/shop/git/refs").json(&json!({"ref": "heads/x", "sha": "a".repeat(40)})),
    )
    .await;
    assert_eq!(status, 422);
    let (status, _) = send(api(&github, Method::PUT, "/repos/acme/nope/contents/a.png").json(&json!({}))).await;
    assert_eq!(status, 404);
    assert!(github.files("acme", "shop", "main").is_empty());
}
