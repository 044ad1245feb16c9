//! `send_review`: the session's open review comments go to the agent as one turn, started
//! the way an operator message starts one (`send_message`).

use super::*;

pub(crate) async fn send_review(cx: &Context, args: SendReviewArgs) -> Result<SessionView> {
    let Context { ws, events } = cx;
    let (id, session) = session::live(ws, &args.session_id).await?;
    session::refuse_closed(&session)?;
    // The turn that ends next is the one the comments are read against (`review_comments::after_turn`).
    if ws.is_running(id.as_str()) {
        return Err(ApiError::new(
            ErrorCode::SessionRunning,
            format!("session {id} is running: send the review when it has stopped"),
        ));
    }
    let sent = crate::review_comments::send_open(ws, events, &id).await?;
    if sent.is_empty() {
        return Err(ApiError::new(ErrorCode::NothingToSend, "there is no open review comment to send"));
    }
    let text = crate::review_comments::prompt::compose(args.message.as_deref(), &sent);
    let message = SendMessageArgs {
        session_id: args.session_id.clone(),
        text,
        role: None,
        module: None,
        driver: None,
        model: None,
        context: None,
    };
    match send_message(cx, message).await {
        Ok(view) => Ok(view),
        Err(e) => {
            // The turn did not start: the comments were not sent.
            crate::review_comments::unsend(ws, &id, &sent).await?;
            let _ = publish(ws, events, &id).await;
            Err(e)
        }
    }
}
