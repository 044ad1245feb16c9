//! `GET /api/terminal_stream?terminalId=<uuid>`: a terminal's output as server-sent events,
//! each chunk one `data: <json>` event (`TerminalChunk`): the replay of what the terminal
//! kept, then its output as it comes, then its `exit`, and the stream ends. Like
//! `/api/events` it needs a live browser session (`connection::require`), and it ends when
//! that session ends or the server stops (`streams::Lifeline`). The terminal runs on when
//! the stream ends.

use std::convert::Infallible;

use axum::extract::{Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use kiln_engine::TerminalAttachment;
use serde::Deserialize;

use crate::streams::Lifeline;
use crate::{access, connection, App, ErrorResponse};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TerminalQuery {
    terminal_id: String,
}

pub(crate) async fn terminal_stream(
    State(app): State<App>,
    connected: Option<axum::Extension<connection::Session>>,
    Query(query): Query<TerminalQuery>,
) -> Response {
    // `require` lets no one here without a live browser session, and says which.
    let Some(axum::Extension(connection::Session(secret))) = connected else {
        return ErrorResponse(access::not_connected()).into_response();
    };
    let attachment = match app.engine.attach_terminal(&query.terminal_id) {
        Ok(attachment) => attachment,
        Err(e) => return ErrorResponse::from(e).into_response(),
    };
    let lifeline = app.streams.lifeline(app.connections.checks(), secret);
    let chunks = stream::unfold((attachment, lifeline), next);
    Sse::new(chunks).keep_alive(KeepAlive::default()).into_response()
}

async fn next(
    (mut attachment, mut lifeline): (TerminalAttachment, Lifeline),
) -> Option<(Result<Event, Infallible>, (TerminalAttachment, Lifeline))> {
    let chunk = tokio::select! {
        biased;
        _ = lifeline.ended() => return None,
        chunk = attachment.next() => chunk?,
    };
    // Checked before each chunk, so none reaches a session that has just ended.
    if !lifeline.live().await {
        return None;
    }
    let event = Event::default().data(serde_json::to_string(&chunk).unwrap_or_default());
    Some((Ok(event), (attachment, lifeline)))
}
