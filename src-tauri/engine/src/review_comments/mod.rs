//! Review comments (ARCHITECTURE.md: Review comments): the operator's comments on lines of
//! a session's diff. Each quotes the code it is on, read here from the working copy; they
//! are sent together with one turn (`chain::send_review`), and when that turn ends each
//! becomes "addressed?" when its lines changed in the turn, or open again when they did not.

mod lines;
pub(crate) mod prompt;
mod quote;

use git2::{Oid, Repository};

use crate::events::EventBus;
use crate::ids::SessionId;
use crate::session::{self, publish};
use crate::workspace::{Context, Workspace};
use kiln_records::store::checkpoints;
use kiln_records::store::review_comments::{self as records, NewComment, Outcome};
use kiln_runtime::clock::now;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

/// The longest comment, in characters.
const MAX_BODY: usize = 20_000;

/// What a process opening the workspace says of comments whose turn it never saw end.
pub(crate) const STRANDED: &str = "Kiln stopped before the turn it was sent with ended: send it again.";

pub(crate) async fn add(cx: &Context, args: AddReviewCommentArgs) -> Result<SessionView> {
    let Context { ws, events } = cx;
    let (id, session) = session::live(ws, &args.session_id).await?;
    session::refuse_closed(&session)?;
    let body = checked_body(&args.body)?;
    let workdir = ws.session_workdir(&id);
    let path = args.path.clone();
    let (start, end) = (args.start_line, args.end_line);
    let quote = tokio::task::spawn_blocking(move || quote::read(&workdir, &path, start, end))
        .await
        .map_err(|e| ApiError::internal("reading the commented lines", e))??;
    // Kept as the diff names it: `./a` and `a` are one file.
    let path = kiln_runtime::paths::relative(&args.path)?.to_string_lossy().replace('\\', "/");
    let comment_id = uuid::Uuid::new_v4().hyphenated().to_string();
    let at = now();
    let row = NewComment {
        id: &comment_id,
        session: id.as_str(),
        path: &path,
        start_line: start,
        end_line: end,
        quote: &quote,
        body,
        at: &at,
    };
    records::insert(&ws.pool, row).await?;
    publish(ws, events, &id).await
}

pub(crate) async fn update(cx: &Context, args: UpdateReviewCommentArgs) -> Result<SessionView> {
    let Context { ws, events } = cx;
    let (id, comment) = changeable(ws, &args.session_id, &args.comment_id).await?;
    let body = checked_body(&args.body)?;
    records::set_body(&ws.pool, id.as_str(), &comment.id, body, &now()).await?;
    publish(ws, events, &id).await
}

pub(crate) async fn delete(cx: &Context, args: ReviewCommentArgs) -> Result<SessionView> {
    let Context { ws, events } = cx;
    let (id, comment) = changeable(ws, &args.session_id, &args.comment_id).await?;
    records::remove(&ws.pool, id.as_str(), &comment.id).await?;
    publish(ws, events, &id).await
}

pub(crate) async fn resolve(cx: &Context, args: ResolveReviewCommentArgs) -> Result<SessionView> {
    let Context { ws, events } = cx;
    let (id, comment) = changeable(ws, &args.session_id, &args.comment_id).await?;
    let state = if args.resolved { ReviewCommentState::Resolved } else { ReviewCommentState::Open };
    records::set_state(&ws.pool, id.as_str(), &comment.id, state, None, &now()).await?;
    publish(ws, events, &id).await
}

/// A comment the operator may change: of a live, open session, and not in flight with a
/// running turn. COMMENT_NOT_FOUND for an id the session does not have.
async fn changeable(ws: &Workspace, session_id: &str, comment_id: &str) -> Result<(SessionId, ReviewCommentView)> {
    let (id, session) = session::live(ws, session_id).await?;
    session::refuse_closed(&session)?;
    let comment = records::get(&ws.pool, id.as_str(), comment_id).await?.ok_or_else(|| {
        let shown: String = comment_id.chars().take(80).collect();
        ApiError::new(ErrorCode::CommentNotFound, format!("session {id} has no comment `{}`", shown.escape_debug()))
    })?;
    if comment.state == ReviewCommentState::Sent {
        return Err(ApiError::new(
            ErrorCode::SessionRunning,
            "this comment went to the agent with the turn that runs now: change it when that turn has ended",
        ));
    }
    Ok((id, comment))
}

fn checked_body(body: &str) -> Result<&str> {
    let body = body.trim();
    if body.is_empty() {
        return Err(ApiError::invalid("the comment is empty"));
    }
    if body.chars().count() > MAX_BODY {
        return Err(ApiError::invalid(format!("a comment holds at most {MAX_BODY} characters")));
    }
    Ok(body)
}

/// Marks the session's open comments sent and answers them, oldest first (none: nothing to
/// send). They are read against a checkpoint of the working copy as it is now: the latest
/// one when nothing changed since, else one taken here.
pub(crate) async fn send_open(ws: &Workspace, events: &EventBus, id: &SessionId) -> Result<Vec<ReviewCommentView>> {
    let open = records::list(&ws.pool, id.as_str()).await?;
    if !open.iter().any(|c| c.state == ReviewCommentState::Open) {
        return Ok(Vec::new());
    }
    let checkpoint = restore_point(ws, events, id).await?;
    records::send_open(&ws.pool, id.as_str(), checkpoint, &now()).await
}

/// Takes back a send whose turn did not start: the comments are open again, as they were.
pub(crate) async fn unsend(ws: &Workspace, id: &SessionId, sent: &[ReviewCommentView]) -> Result<()> {
    let at = now();
    for c in sent {
        records::set_state(&ws.pool, id.as_str(), &c.id, ReviewCommentState::Open, None, &at).await?;
    }
    Ok(())
}

async fn restore_point(ws: &Workspace, events: &EventBus, id: &SessionId) -> Result<i64> {
    let (latest, commit) = checkpoints::latest(&ws.pool, id.as_str()).await?;
    let tree = {
        let _guard = ws.store_lock.lock().await;
        let store = ws.open_store()?;
        let tree = crate::working_copy::snapshot_workdir(&store, &ws.session_workdir(id))?;
        let latest_tree = store.find_commit(oid(&commit)?)?.tree_id();
        if tree == latest_tree {
            return Ok(latest);
        }
        tree
    };
    crate::checkpoint::take(ws, events, id, tree, "Before the review comments were sent", None, None).await
}

/// After a turn of the session ended (`turn_id`, its checkpoint when it changed files):
/// the comments sent with it become addressed when their lines changed, or open again
/// with a note. The first turn to end after a send is the one that carried it: a review
/// is sent only while nothing runs.
pub(crate) async fn after_turn(
    ws: &Workspace,
    events: &EventBus,
    id: &SessionId,
    turn_id: i64,
    after: Option<i64>,
    cut_short: Option<&str>,
) -> Result<()> {
    let sent = records::in_flight(&ws.pool, id.as_str()).await?;
    if sent.is_empty() {
        return Ok(());
    }
    let after_commit = match after {
        Some(sequence) => checkpoints::commit(&ws.pool, id.as_str(), Some(sequence)).await?,
        None => None,
    };
    let mut befores = std::collections::BTreeMap::new();
    for (_, checkpoint) in &sent {
        if let Some(sequence) = checkpoint {
            if let Some(commit) = checkpoints::commit(&ws.pool, id.as_str(), Some(*sequence)).await? {
                befores.insert(*sequence, commit);
            }
        }
    }
    let outcomes: Vec<(String, ReviewCommentState, i64, i64, Option<String>)> = {
        let _guard = ws.store_lock.lock().await;
        let store = ws.open_store()?;
        sent.iter()
            .map(|(c, checkpoint)| {
                let before = checkpoint.and_then(|s| befores.get(&s));
                let (state, start, end, note) = outcome(&store, c, before, after_commit.as_deref(), cut_short);
                (c.id.clone(), state, start, end, note)
            })
            .collect()
    };
    let at = now();
    let mut addressed = 0;
    for (comment_id, state, start_line, end_line, note) in &outcomes {
        addressed += usize::from(*state == ReviewCommentState::Addressed);
        let row = Outcome {
            id: comment_id,
            state: *state,
            turn_id: Some(turn_id),
            start_line: *start_line,
            end_line: *end_line,
            note: note.as_deref(),
            at: &at,
        };
        records::settle(&ws.pool, id.as_str(), row).await?;
    }
    let open = outcomes.len() - addressed;
    let text = format!(
        "Review comments after the turn: {addressed} addressed? (their lines changed: resolve them), {open} still open."
    );
    session::record(ws, events, id, EntryKind::System, None, &text).await?;
    Ok(())
}

/// One sent comment after its turn: its state, its lines now, and the note when it is open again.
fn outcome(
    store: &Repository,
    c: &ReviewCommentView,
    before: Option<&String>,
    after: Option<&str>,
    cut_short: Option<&str>,
) -> (ReviewCommentState, i64, i64, Option<String>) {
    let open = |why: String| (ReviewCommentState::Open, c.start_line, c.end_line, Some(why));
    let unchanged = match cut_short {
        Some(how) => format!("The turn it was sent with {how}, and its lines did not change."),
        None => "The turn it was sent with did not change its lines.".to_string(),
    };
    // No checkpoint after the turn: it changed no file.
    let Some(after) = after else { return open(unchanged) };
    let Some(before) = before else {
        return open("Kiln could not tell whether its lines changed: the checkpoint it was sent at is gone.".into());
    };
    let read = |commit: &str| file_at(store, commit, &c.path);
    let (old, new) = match (read(before.as_str()), read(after)) {
        (Ok(old), Ok(new)) => (old, new),
        (Err(e), _) | (_, Err(e)) => {
            tracing::error!("reading `{}` for review comment {}: {e}", c.path, c.id);
            return open(format!("Kiln could not read `{}` to tell whether its lines changed.", c.path));
        }
    };
    let (Some(old), Some(new)) = (old, new) else {
        // Removed in the turn (or not there before, which a comment's file always was).
        return (ReviewCommentState::Addressed, c.start_line, c.end_line, None);
    };
    match lines::follow(&old, &new, c.start_line, c.end_line) {
        Ok(f) if f.changed => (ReviewCommentState::Addressed, f.start, f.end, None),
        Ok(f) => (ReviewCommentState::Open, f.start, f.end, Some(unchanged)),
        Err(e) => open(format!("Kiln could not compare `{}`: {}", c.path, e.message)),
    }
}

/// The content of `path` in a checkpoint's commit; `None` when it has no such file.
fn file_at(store: &Repository, commit: &str, path: &str) -> Result<Option<Vec<u8>>> {
    let tree = store.find_commit(oid(commit)?)?.tree()?;
    let entry = match tree.get_path(std::path::Path::new(path)) {
        Ok(entry) => entry,
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let object = entry.to_object(store)?;
    Ok(object.as_blob().map(|b| b.content().to_vec()))
}

fn oid(commit: &str) -> Result<Oid> {
    Oid::from_str(commit).map_err(|e| ApiError::internal("checkpoint id", e))
}
