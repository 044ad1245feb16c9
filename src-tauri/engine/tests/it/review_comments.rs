//! Review comments (ARCHITECTURE.md: Review comments) on a plain repository with no
//! kiln.toml, driven by Kiln's own OpenAI-compatible loop against the scripted model
//! server: the review's prompt carries each comment with its file, lines and quoted code;
//! after the turn, comments whose lines changed are addressed and the others open again,
//! moved when lines above them moved; comments survive a restart; every refusal.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use kiln_engine::types::*;
use kiln_engine::{Engine, ErrorCode};
use kiln_model_server::{ModelServer, Step};
use serde_json::json;

const APP: &str = "const a = 1;\nconst b = 2;\nconst c = 3;\nconst d = 4;\nconst e = 5;\nconst f = 6;\n";
/// The first turn's change: `e` doubled, so the session has a diff.
const APP_1: &str = "const a = 1;\nconst b = 2;\nconst c = 3;\nconst d = 4;\nconst e = 10;\nconst f = 6;\n";
/// The review's change: a header line above everything, `b` and `c` rewritten.
const APP_2: &str = "// numbers\nconst a = 1;\nlet b = 2;\nlet c = 3;\nconst d = 4;\nconst e = 10;\nconst f = 6;\n";

fn repository(root: &Path) {
    write(&root.join("src/app.js"), APP);
    write(&root.join("notes.md"), "# Notes\n\nNothing yet.\n");
    write(&root.join("secret.bin"), "");
    std::fs::write(root.join("secret.bin"), [0u8, 159, 146, 150, 255]).unwrap();
    std::fs::create_dir_all(root.join("src/empty")).unwrap();
    sh_git(root, &["init", "-q", "-b", "main"]);
    sh_git(root, &["add", "-A"]);
    sh_git(root, &["-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "-qm", "numbers"]);
}

struct World {
    tmp: tempfile::TempDir,
    repo: PathBuf,
    engine: Arc<Engine>,
    server: ModelServer,
}

async fn world(script: Vec<Step>) -> World {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("numbers");
    repository(&repo);
    let engine = engine(&tmp.path().join("config"));
    open(&engine, &repo).await;
    let server = ModelServer::start(script).await;
    use_scripted_model(&engine, &server, false).await;
    World { tmp, repo, engine, server }
}

fn write_file(path: &str, content: &str) -> Step {
    Step::tool("write_file", json!({"path": path, "content": content}))
}

/// A session whose first turn changed `src/app.js`, settled, with auto-continue off (no
/// review turn follows a change).
async fn changed_session(w: &World) -> SessionView {
    let s = create(&w.engine, "Tidy the numbers").await;
    wait_setup(&w.engine, &s.id).await;
    let off = UpdateSessionArgs { session_id: s.id.clone(), auto_continue: Some(false), title: None };
    w.engine.update_session(off).await.unwrap();
    w.engine.send_message(message(&s.id, "Double e")).await.unwrap();
    wait_settled(&w.engine, &s.id, Duration::from_secs(60)).await
}

/// Settled, and the review turn's end has been applied to its comments (none is still
/// `sent`): the session stops running a moment before its comments are marked.
async fn settled_review(engine: &Engine, id: &str) -> SessionView {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let s = wait_settled(engine, id, Duration::from_secs(60)).await;
        if s.review_comments.iter().all(|c| c.state != ReviewCommentState::Sent) {
            return s;
        }
        assert!(std::time::Instant::now() < deadline, "the review's comments were never settled: {s:#?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn message(id: &str, text: &str) -> SendMessageArgs {
    SendMessageArgs {
        session_id: id.into(),
        text: text.into(),
        role: None,
        module: None,
        driver: None,
        model: None,
        context: None,
    }
}

fn add(id: &str, path: &str, start: i64, end: i64, body: &str) -> AddReviewCommentArgs {
    AddReviewCommentArgs {
        session_id: id.into(),
        path: path.into(),
        start_line: start,
        end_line: end,
        body: body.into(),
    }
}

fn comment<'a>(s: &'a SessionView, body: &str) -> &'a ReviewCommentView {
    s.review_comments.iter().find(|c| c.body == body).unwrap_or_else(|| panic!("no comment `{body}`: {s:#?}"))
}

/// The text of every model request that holds `needle`.
fn requests_holding(server: &ModelServer, needle: &str) -> Vec<String> {
    server.requests().iter().map(|r| r.body.to_string()).filter(|b| b.contains(needle)).collect()
}

#[tokio::test]
async fn the_review_carries_each_comment_and_marks_those_whose_lines_changed() {
    let w = world(vec![
        write_file("src/app.js", APP_1),
        Step::text("Doubled e.\nHANDOFF: none - done"),
        write_file("src/app.js", APP_2),
        Step::text("Used let for b and c.\nHANDOFF: none - done"),
    ])
    .await;
    let s = changed_session(&w).await;
    assert!(s.review_comments.is_empty());

    w.engine.add_review_comment(add(&s.id, "src/app.js", 2, 3, "Use let for these")).await.unwrap();
    w.engine.add_review_comment(add(&s.id, "./src/app.js", 6, 6, "Name f better")).await.unwrap();
    let s = w.engine.add_review_comment(add(&s.id, "notes.md", 3, 3, "Say what changed")).await.unwrap();
    let first = comment(&s, "Use let for these");
    assert_eq!((first.path.as_str(), first.start_line, first.end_line), ("src/app.js", 2, 3));
    assert_eq!(first.quote, "const b = 2;\nconst c = 3;", "quoted from the working copy");
    assert_eq!(first.state, ReviewCommentState::Open);
    assert_eq!(comment(&s, "Name f better").path, "src/app.js");
    assert_eq!(comment(&s, "Say what changed").quote, "Nothing yet.");

    let sent = w
        .engine
        .send_review(SendReviewArgs { session_id: s.id.clone(), message: Some("Please fix these.".into()) })
        .await
        .unwrap();
    assert!(sent.running, "the review started a turn");
    let s = settled_review(&w.engine, &s.id).await;

    // The turn's first request carries every comment: file, lines, quoted code, words.
    let asked = requests_holding(&w.server, "Review comments (3)");
    assert!(!asked.is_empty(), "no request carried the review");
    let prompt = &asked[0];
    for needle in [
        "Please fix these.",
        "1. `src/app.js` lines 2-3:\\n```js\\nconst b = 2;\\nconst c = 3;\\n```\\nUse let for these",
        "2. `src/app.js` line 6:\\n```js\\nconst f = 6;\\n```\\nName f better",
        "3. `notes.md` line 3:\\n```md\\nNothing yet.\\n```\\nSay what changed",
    ] {
        assert!(prompt.contains(needle), "`{needle}` missing from {prompt}");
    }

    // Lines 2-3 changed: addressed. Line 6 did not, but moved down by the header: open, at 7.
    let addressed = comment(&s, "Use let for these");
    assert_eq!(addressed.state, ReviewCommentState::Addressed, "{s:#?}");
    assert!(addressed.turn_id.is_some());
    let moved = comment(&s, "Name f better");
    assert_eq!((moved.state, moved.start_line, moved.end_line), (ReviewCommentState::Open, 7, 7), "{moved:#?}");
    assert!(moved.note.as_deref().unwrap_or_default().contains("did not change its lines"), "{moved:#?}");
    assert_eq!(moved.turn_id, addressed.turn_id);
    assert_eq!(comment(&s, "Say what changed").state, ReviewCommentState::Open);
    let entries = w
        .engine
        .get_transcript(GetTranscriptArgs { session_id: s.id.clone(), after: None, before: None, last: None })
        .await
        .unwrap();
    assert!(entries.iter().any(|e| e.text.contains("1 addressed?") && e.text.contains("2 still open")));

    // The operator resolves the addressed one, and can take it back.
    let resolve =
        |resolved| ResolveReviewCommentArgs { session_id: s.id.clone(), comment_id: addressed.id.clone(), resolved };
    let s2 = w.engine.resolve_review_comment(resolve(true)).await.unwrap();
    assert_eq!(comment(&s2, "Use let for these").state, ReviewCommentState::Resolved);
    let s2 = w.engine.resolve_review_comment(resolve(false)).await.unwrap();
    assert_eq!(comment(&s2, "Use let for these").state, ReviewCommentState::Open);
}

#[tokio::test]
async fn a_review_turn_that_changes_nothing_leaves_every_comment_open() {
    let w = world(vec![
        write_file("src/app.js", APP_1),
        Step::text("Doubled e.\nHANDOFF: none - done"),
        Step::text("Those look fine to me.\nHANDOFF: none - nothing to change"),
    ])
    .await;
    let s = changed_session(&w).await;
    w.engine.add_review_comment(add(&s.id, "src/app.js", 5, 5, "Why 10?")).await.unwrap();
    w.engine.send_review(SendReviewArgs { session_id: s.id.clone(), message: None }).await.unwrap();
    let s = settled_review(&w.engine, &s.id).await;
    let c = comment(&s, "Why 10?");
    assert_eq!((c.state, c.start_line), (ReviewCommentState::Open, 5), "{c:#?}");
    assert!(c.turn_id.is_some() && c.note.is_some(), "{c:#?}");
    assert_eq!(requests_holding(&w.server, "Address these review comments").len(), 1);
    // Sent again, it goes again (it is open).
    let again = w.engine.send_review(SendReviewArgs { session_id: s.id.clone(), message: None }).await;
    assert!(again.is_ok(), "{again:?}");
    wait_settled(&w.engine, &s.id, Duration::from_secs(60)).await;
}

#[tokio::test]
async fn comments_survive_a_restart_and_one_left_sent_opens_again() {
    let w = world(vec![write_file("src/app.js", APP_1), Step::text("Doubled e.\nHANDOFF: none - done")]).await;
    let s = changed_session(&w).await;
    w.engine.add_review_comment(add(&s.id, "src/app.js", 1, 2, "Kept")).await.unwrap();
    w.engine.add_review_comment(add(&s.id, "notes.md", 1, 1, "Cut short")).await.unwrap();
    w.engine.shutdown().await;
    drop(w.engine);
    // As if Kiln had stopped while the turn that carried it ran.
    let db = w.repo.join(".kiln/kiln.db");
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display())).await.unwrap();
    sqlx::query("UPDATE review_comments SET state = 'sent' WHERE body = 'Cut short'").execute(&pool).await.unwrap();
    pool.close().await;

    let engine = engine(&w.tmp.path().join("config2"));
    open_when_released(&engine, &w.repo, Duration::from_secs(30)).await;
    let s = engine.get_session(SessionIdArgs { session_id: s.id.clone() }).await.unwrap();
    assert_eq!(s.review_comments.len(), 2, "{s:#?}");
    let kept = comment(&s, "Kept");
    assert_eq!((kept.state, kept.quote.as_str()), (ReviewCommentState::Open, "const a = 1;\nconst b = 2;"));
    let cut = comment(&s, "Cut short");
    assert_eq!(cut.state, ReviewCommentState::Open);
    assert!(cut.note.as_deref().unwrap_or_default().contains("Kiln stopped"), "{cut:#?}");
}

#[tokio::test]
async fn every_refusal_has_its_code_and_changes_nothing() {
    let w = world(vec![
        write_file("src/app.js", APP_1),
        Step::text("Doubled e.\nHANDOFF: none - done"),
        // The review's turn takes a while: a command that sleeps.
        Step::tool("run_command", json!({"command": "sleep 3"})),
        Step::text("Thought about it.\nHANDOFF: none - nothing to change"),
    ])
    .await;
    let s = changed_session(&w).await;
    let id = s.id.clone();
    // Nothing to send yet.
    let none = w.engine.send_review(SendReviewArgs { session_id: id.clone(), message: None }).await.unwrap_err();
    assert_eq!(none.code, ErrorCode::NothingToSend);

    let cases = [
        (add(&id, "../outside.js", 1, 1, "x"), ErrorCode::PathNotAllowed),
        (add(&id, "/etc/passwd", 1, 1, "x"), ErrorCode::PathNotAllowed),
        (add(&id, ".git/config", 1, 1, "x"), ErrorCode::PathNotAllowed),
        (add(&id, "src/missing.js", 1, 1, "x"), ErrorCode::InvalidInput),
        (add(&id, "src/empty", 1, 1, "x"), ErrorCode::InvalidInput),
        (add(&id, "secret.bin", 1, 1, "x"), ErrorCode::InvalidInput),
        (add(&id, "src/app.js", 0, 1, "x"), ErrorCode::InvalidInput),
        (add(&id, "src/app.js", 3, 2, "x"), ErrorCode::InvalidInput),
        (add(&id, "src/app.js", 6, 7, "x"), ErrorCode::InvalidInput),
        (add(&id, "src/app.js", 1, 1, "  \n "), ErrorCode::InvalidInput),
        (add("../x", "src/app.js", 1, 1, "x"), ErrorCode::InvalidSessionId),
        (add("5b0f8c1e-2f4c-4d8e-9a3b-1c2d3e4f5a6b", "src/app.js", 1, 1, "x"), ErrorCode::SessionNotFound),
    ];
    for (args, code) in cases {
        let shown = format!("{args:?}");
        let refused = w.engine.add_review_comment(args).await.unwrap_err();
        assert_eq!(refused.code, code, "{shown}: {}", refused.message);
    }
    let s = w.engine.get_session(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    assert!(s.review_comments.is_empty(), "a refusal stored nothing: {s:#?}");

    let s = w.engine.add_review_comment(add(&id, "src/app.js", 1, 1, "Fine")).await.unwrap();
    let c = s.review_comments[0].clone();
    let unknown = "5b0f8c1e-2f4c-4d8e-9a3b-1c2d3e4f5a6b".to_string();
    let update = |comment_id: &str, body: &str| UpdateReviewCommentArgs {
        session_id: id.clone(),
        comment_id: comment_id.into(),
        body: body.into(),
    };
    let target = |comment_id: &str| ReviewCommentArgs { session_id: id.clone(), comment_id: comment_id.into() };
    assert_eq!(
        w.engine.update_review_comment(update(&unknown, "x")).await.unwrap_err().code,
        ErrorCode::CommentNotFound
    );
    assert_eq!(w.engine.update_review_comment(update(&c.id, " ")).await.unwrap_err().code, ErrorCode::InvalidInput);
    assert_eq!(w.engine.delete_review_comment(target(&unknown)).await.unwrap_err().code, ErrorCode::CommentNotFound);
    let resolve = ResolveReviewCommentArgs { session_id: id.clone(), comment_id: "nope".into(), resolved: true };
    assert_eq!(w.engine.resolve_review_comment(resolve).await.unwrap_err().code, ErrorCode::CommentNotFound);
    let s = w.engine.update_review_comment(update(&c.id, "Fine, but rename it")).await.unwrap();
    assert_eq!(s.review_comments[0].body, "Fine, but rename it");

    // While the review's turn runs: no other review is sent, and its comment is not changed.
    w.engine.send_review(SendReviewArgs { session_id: id.clone(), message: None }).await.unwrap();
    let running = w.engine.send_review(SendReviewArgs { session_id: id.clone(), message: None }).await.unwrap_err();
    assert_eq!(running.code, ErrorCode::SessionRunning);
    let sent = w.engine.get_session(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    assert_eq!(sent.review_comments[0].state, ReviewCommentState::Sent, "{sent:#?}");
    let busy = w.engine.update_review_comment(update(&c.id, "y")).await.unwrap_err();
    assert_eq!(busy.code, ErrorCode::SessionRunning);
    assert_eq!(w.engine.delete_review_comment(target(&c.id)).await.unwrap_err().code, ErrorCode::SessionRunning);
    let resolve = ResolveReviewCommentArgs { session_id: id.clone(), comment_id: c.id.clone(), resolved: true };
    assert_eq!(w.engine.resolve_review_comment(resolve).await.unwrap_err().code, ErrorCode::SessionRunning);
    let s = settled_review(&w.engine, &id).await;
    assert_eq!(s.review_comments[0].state, ReviewCommentState::Open, "{s:#?}");

    // A closed session refuses every change.
    let archived = w.engine.archive_session(StopArgs { session_id: id.clone(), stop: Some(true) }).await.unwrap();
    assert!(archived.archived_at.is_some());
    let closed = w.engine.add_review_comment(add(&id, "src/app.js", 1, 1, "x")).await.unwrap_err();
    assert_eq!(closed.code, ErrorCode::SessionArchived);
    assert_eq!(w.engine.delete_review_comment(target(&c.id)).await.unwrap_err().code, ErrorCode::SessionArchived);
    let send = w.engine.send_review(SendReviewArgs { session_id: id.clone(), message: None }).await.unwrap_err();
    assert_eq!(send.code, ErrorCode::SessionArchived);
    let s = w.engine.restore_session(SessionIdArgs { session_id: id.clone() }).await.unwrap();
    assert_eq!(s.review_comments.len(), 1);

    // Deleted, it is gone.
    let s = w.engine.delete_review_comment(target(&c.id)).await.unwrap();
    assert!(s.review_comments.is_empty());
    assert_eq!(w.engine.delete_review_comment(target(&c.id)).await.unwrap_err().code, ErrorCode::CommentNotFound);
}
