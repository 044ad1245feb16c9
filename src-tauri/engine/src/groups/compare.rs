//! The comparison of a group's candidates: per candidate what the operator decides on
//! (state, the size of its change, its gates with test counts, review verdicts, tokens and
//! cost, time, its newest screenshot), and any two candidates' trees diffed.

use std::sync::Arc;

use crate::ids::SessionId;
use crate::session;
use crate::workspace::Workspace;
use kiln_records::store::{gate_results, turns};
use kiln_runtime::clock::{millis_between, now};
use kiln_types::error::Result;
use kiln_types::*;

use super::{load, member, test_counts};

/// The group with each candidate's figures, in candidate order.
pub(crate) async fn view(ws: &Arc<Workspace>, group_id: &str) -> Result<GroupView> {
    let group = load(ws, group_id).await?;
    let mut candidates = Vec::new();
    for (index, raw) in kiln_records::store::session_groups::members(&ws.pool, &group.id).await?.into_iter().enumerate()
    {
        let id = SessionId::parse(&raw)?;
        let session = session::view(ws, &id).await?;
        candidates.push(candidate(ws, &id, session, index as i64).await?);
    }
    Ok(GroupView {
        id: group.id,
        title: group.title,
        brief: group.brief,
        created_at: group.created_at,
        picked_session_id: group.picked_session_id,
        picked_at: group.picked_at,
        candidates,
    })
}

async fn candidate(ws: &Arc<Workspace>, id: &SessionId, session: SessionView, index: i64) -> Result<CandidateView> {
    // A tombstone has no working copy; an archived copy the clean-up removed has none
    // either: its figures are unknown rather than zero.
    let diff = match session.deleted_at {
        None => crate::diff::changes(ws, GetDiffArgs { session_id: id.to_string(), module_id: None }).await.ok(),
        Some(_) => None,
    };
    let files: Option<Vec<&FileDiff>> = diff.as_ref().map(|d| d.modules.iter().flat_map(|m| &m.files).collect());
    let gates = gate_results::latest(&ws.pool, id.as_str(), None)
        .await?
        .into_iter()
        .map(|g| CandidateGate {
            tests: (g.gate == "tests")
                .then(|| test_counts::read(&format!("{}\n{}", g.output_head, g.output_tail)))
                .flatten(),
            module: g.module,
            gate: g.gate,
            status: g.status,
        })
        .collect();
    let reviews = session
        .reviews
        .iter()
        .map(|r| CandidateReview {
            module_id: r.module_id.clone(),
            passed: r.passed,
            stale: r.stale,
            summary: r.summary.clone(),
        })
        .collect();
    let (first, last, running) = turns::turn_span(&ws.pool, id.as_str()).await?;
    let elapsed_ms = match (first, running) {
        (None, _) => None,
        (Some(_), true) => millis_between(&session.created_at, &now()),
        (Some(_), false) => last.and_then(|last| millis_between(&session.created_at, &last)),
    };
    let screenshot = kiln_records::store::screenshots::latest_for_session(&ws.pool, id.as_str()).await?;
    Ok(CandidateView {
        session_id: session.id.clone(),
        candidate: session.candidate.unwrap_or(index),
        title: session.title.clone(),
        driver: session.driver.clone(),
        model: session.model.clone(),
        state: session.state,
        running: session.running,
        waiting: session.waiting,
        archived_at: session.archived_at.clone(),
        delivered_at: session.delivered_at.clone(),
        files_changed: files.as_ref().map(|f| f.len() as i64),
        additions: files.as_ref().map(|f| f.iter().map(|f| f.additions).sum()),
        deletions: files.as_ref().map(|f| f.iter().map(|f| f.deletions).sum()),
        gates,
        reviews,
        usage: session.usage.total.clone(),
        elapsed_ms,
        screenshot_id: screenshot.map(|s| s.id),
    })
}

/// `right`'s working copy against `left`'s, both candidates of the group.
pub(crate) async fn compare_candidates(ws: &Arc<Workspace>, args: &CompareCandidatesArgs) -> Result<DiffView> {
    let group = load(ws, &args.group_id).await?;
    let left = member(ws, &group.id, &args.left).await?;
    let right = member(ws, &group.id, &args.right).await?;
    session::live(ws, left.as_str()).await?;
    session::live(ws, right.as_str()).await?;
    crate::diff::between(ws, &left, &right).await
}
