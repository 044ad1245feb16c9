//! Best-of-N (issue 20): one brief fanned out to 2–5 candidate sessions, each a normal
//! session (its own working copy, made as `create_session` makes one) whose first message is
//! the brief, sent with the candidate's own driver and model. The candidates run in parallel
//! within the engine's turn limit (`crate::slots`). The comparison (`compare`) shows them side
//! by side; the pick keeps one for the normal delivery and archives the rest, their
//! checkpoints kept.
//!
//! Setup is shared where the toolchain allows it without one candidate seeing another's
//! files: every session's setup and gates already run with the real home's package caches
//! (`sandbox::scope`: `~/.npm`, pnpm's store, `~/.cargo/registry`, Go's module cache), so
//! the candidates' installs fill and read one cache rather than each downloading. Their
//! `node_modules` and `target` stay per working copy: an agent may change dependencies.

mod compare;
pub(crate) mod test_counts;

use std::sync::Arc;

use crate::events::EventBus;
use crate::ids::SessionId;
use crate::session::{self, record, MAX_TITLE};
use crate::workspace::{Context, Workspace};
use kiln_records::store::session_groups as records;
use kiln_runtime::clock::now;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

pub(crate) use compare::{compare_candidates, view};

/// How many candidates a group may have.
const CANDIDATES: std::ops::RangeInclusive<usize> = 2..=5;

/// Makes the group's candidates and sends each the brief. Everything that can be refused
/// is checked before the first session is made; a failure after that removes what was made.
pub(crate) async fn create(cx: &Context, args: CreateSessionGroupArgs) -> Result<GroupView> {
    let Context { ws, events } = cx;
    if !CANDIDATES.contains(&args.candidates.len()) {
        return Err(ApiError::invalid(format!(
            "a group has {} to {} candidates, not {}",
            CANDIDATES.start(),
            CANDIDATES.end(),
            args.candidates.len()
        )));
    }
    let mut choices = Vec::new();
    for choice in &args.candidates {
        let driver = choice.driver.trim();
        // An unknown driver is INVALID_INPUT, a missing CLI DRIVER_NOT_FOUND: before anything is made.
        crate::drivers::registry::resolve(ws, Some(driver)).await?;
        let model = choice.model.as_deref().map(str::trim).filter(|m| !m.is_empty()).map(str::to_string);
        choices.push((driver.to_string(), model));
    }
    let brief = args.brief.trim().to_string();
    let title = match args.title.as_deref().map(str::trim) {
        Some(t) if !t.is_empty() => t.to_string(),
        _ => crate::chain::start::title_from(&brief),
    };
    if title.chars().count() > MAX_TITLE {
        return Err(ApiError::invalid(format!("the title is longer than {MAX_TITLE} characters")));
    }
    let group = SessionId::new().to_string();
    let mut made: Vec<SessionId> = Vec::new();
    let outcome = make_candidates(ws, events, &args, &group, &title, &choices, &mut made).await;
    if let Err(e) = outcome {
        for id in made {
            let args = DeleteSessionArgs { session_id: id.to_string(), stop: Some(true), keep_transcript: Some(false) };
            if let Err(e) = session::delete(ws, events, args).await {
                tracing::error!("removing candidate {id} of a group that failed: {e}");
            }
        }
        let _ = records::remove(&ws.pool, &group).await;
        return Err(e);
    }
    for (id, (driver, model)) in made.iter().zip(&choices) {
        let message = SendMessageArgs {
            session_id: id.to_string(),
            text: brief.clone(),
            role: None,
            module: None,
            driver: Some(driver.clone()),
            model: model.clone(),
            context: None,
        };
        // The candidates exist from here on: one whose message cannot start says so in its
        // own transcript and the others go on.
        if let Err(e) = crate::chain::send_message(cx, message).await {
            let note = format!("The brief could not be sent: {} [{}]", e.message, e.code.as_str());
            let _ = record(ws, events, id, EntryKind::System, None, &note).await;
        }
    }
    view(ws, &group).await
}

/// Creates each candidate's session in order and joins it to the group (written once the
/// first session, which checks the brief, is made). `made` holds what exists so far.
async fn make_candidates(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    args: &CreateSessionGroupArgs,
    group: &str,
    title: &str,
    choices: &[(String, Option<String>)],
    made: &mut Vec<SessionId>,
) -> Result<()> {
    for (candidate, (driver, model)) in choices.iter().enumerate() {
        let create = CreateSessionArgs {
            brief: args.brief.clone(),
            title: Some(candidate_title(title, candidate, driver, model.as_deref())),
            create_modules: args.create_modules.clone(),
            issue: None,
        };
        let session = crate::chain::create(ws, events, create).await?;
        let id = SessionId::parse(&session.id)?;
        made.push(id.clone());
        if candidate == 0 {
            records::insert(&ws.pool, group, title, args.brief.trim(), &session.created_at).await?;
        }
        records::join(&ws.pool, id.as_str(), group, candidate as i64, driver, model.as_deref()).await?;
        session::publish(ws, events, &id).await?;
    }
    Ok(())
}

/// "<title> · 2: codex (o4-mini)", clipped so it fits a session's title.
fn candidate_title(title: &str, candidate: usize, driver: &str, model: Option<&str>) -> String {
    let suffix = match model {
        Some(model) => format!(" · {}: {driver} ({model})", candidate + 1),
        None => format!(" · {}: {driver}", candidate + 1),
    };
    let room = MAX_TITLE.saturating_sub(suffix.chars().count());
    let mut base: String = title.chars().take(room).collect();
    if base.chars().count() < title.chars().count() {
        base.pop();
        base.push('…');
    }
    let title = format!("{base}{suffix}");
    title.chars().take(MAX_TITLE).collect()
}

/// The group's record, or `GROUP_NOT_FOUND`.
pub(crate) async fn load(ws: &Workspace, group: &str) -> Result<records::GroupRow> {
    records::load(&ws.pool, group)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::GroupNotFound, format!("no group {group} in this workspace")))
}

/// The candidate a request names, parsed, or `INVALID_INPUT` when it is none of the group's.
pub(crate) async fn member(ws: &Workspace, group: &str, session: &str) -> Result<SessionId> {
    let id = SessionId::parse(session)?;
    if !records::members(&ws.pool, group).await?.iter().any(|m| m == id.as_str()) {
        return Err(ApiError::invalid(format!("session {id} is no candidate of group {group}")));
    }
    Ok(id)
}

/// The comparison of the group's candidates.
pub(crate) async fn get(cx: &Context, args: GroupIdArgs) -> Result<GroupView> {
    view(&cx.ws, &args.group_id).await
}

/// Every group, newest first, with its candidates' sessions.
pub(crate) async fn list(cx: &Context, _: EmptyArgs) -> Result<Vec<GroupSummary>> {
    let ws = &cx.ws;
    let mut out = Vec::new();
    for row in records::list(&ws.pool).await? {
        let session_ids = records::members(&ws.pool, &row.id).await?;
        out.push(GroupSummary {
            id: row.id,
            title: row.title,
            created_at: row.created_at,
            picked_session_id: row.picked_session_id,
            session_ids,
        });
    }
    Ok(out)
}

/// Marks the winner and archives every other candidate still open (stopping what it runs).
/// Returns the group and the sessions archived now.
pub(crate) async fn pick(
    ws: &Arc<Workspace>,
    events: &Arc<EventBus>,
    args: PickCandidateArgs,
) -> Result<(GroupView, Vec<String>)> {
    let group = load(ws, &args.group_id).await?;
    let winner = member(ws, &group.id, &args.session_id).await?;
    let (_, session) = session::live(ws, winner.as_str()).await?;
    if session.archived_at.is_some() || session.rejected_at.is_some() {
        return Err(ApiError::new(
            ErrorCode::SessionArchived,
            format!("session {winner} is archived: restore it before picking it"),
        ));
    }
    records::set_picked(&ws.pool, &group.id, winner.as_str(), &now()).await?;
    let mut archived = Vec::new();
    for other in records::members(&ws.pool, &group.id).await? {
        if other == winner.as_str() {
            continue;
        }
        let id = SessionId::parse(&other)?;
        let view = session::view(ws, &id).await?;
        if view.deleted_at.is_some() || view.archived_at.is_some() {
            continue;
        }
        session::archive(ws, events, StopArgs { session_id: other.clone(), stop: Some(true) }).await?;
        archived.push(other);
    }
    let text = format!(
        "Picked as the winner of its group; {} other candidate(s) archived (their checkpoints stay). Deliver it as any session.",
        archived.len()
    );
    record(ws, events, &winner, EntryKind::System, None, &text).await?;
    session::publish(ws, events, &winner).await?;
    Ok((view(ws, &group.id).await?, archived))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_candidate_title_names_its_place_and_agent_and_fits() {
        assert_eq!(candidate_title("Wishlist", 1, "codex", None), "Wishlist · 2: codex");
        assert_eq!(candidate_title("Wishlist", 0, "claude", Some("sonnet")), "Wishlist · 1: claude (sonnet)");
        let long = "x".repeat(MAX_TITLE);
        let made = candidate_title(&long, 4, "claude", Some("opus"));
        assert_eq!(made.chars().count(), MAX_TITLE);
        assert!(made.ends_with("… · 5: claude (opus)"), "{made}");
    }
}
