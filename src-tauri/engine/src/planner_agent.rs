//! The planner agent (ARCHITECTURE.md: Planner): after the rules, a short read-only turn of the chosen
//! driver answers JSON that may add modules, a title and the first role. It can never
//! turn a known module into a new one nor drop a module the rules found; when no
//! driver answers, the rules decide alone. While it runs the session is `planning`,
//! and the first message waits for it. A provider failing shows at once as the
//! session's live line (`crate::live`); one refusing the credentials ends planning there
//! and then, with one entry saying so, rather than after the agent's retries.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tokio::sync::{mpsc, watch};

use crate::drivers::events::DriverEvent;
use crate::drivers::{Driver, TurnRequest, TurnSink};
use crate::events::EventBus;
use crate::ids::SessionId;
use crate::planner::Rules;
use crate::session::{publish, record};
use crate::workspace::Workspace;
use kiln_records::store::sessions as records;
use kiln_runtime::clock::now;
use kiln_runtime::process::Running;
use kiln_types::error::Result;
use kiln_types::*;

/// How long the planner may think before the rules decide alone.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(120);

/// A planner at work, to wait for or stop.
#[derive(Clone)]
pub(crate) struct Planning {
    pgid: Arc<AtomicI32>,
    task: Arc<tokio::task::AbortHandle>,
    done: watch::Receiver<bool>,
}

impl crate::busy::Work for Planning {
    fn stop(&self) -> futures_util::future::BoxFuture<'_, ()> {
        Planning::stop(self);
        Box::pin(async {})
    }

    fn ended(&self) -> futures_util::future::BoxFuture<'_, ()> {
        Box::pin(self.wait())
    }
}

impl Planning {
    pub(crate) async fn wait(&self) {
        let mut done = self.done.clone();
        while !*done.borrow_and_update() {
            if done.changed().await.is_err() {
                break;
            }
        }
    }

    pub(crate) fn stop(&self) {
        self.task.abort();
        Running { pgid: self.pgid.load(Ordering::SeqCst) }.kill();
    }
}

#[derive(Debug, Default, Deserialize)]
struct Answer {
    #[serde(default)]
    modules: Vec<String>,
    title: Option<String>,
    role: Option<String>,
    reason: Option<String>,
}

/// Starts the planner for a new session in the background.
pub fn start(
    ws: Arc<Workspace>,
    events: Arc<EventBus>,
    id: SessionId,
    driver: Arc<dyn Driver>,
    brief: String,
    title_given: bool,
) {
    let (done_tx, done_rx) = watch::channel(false);
    let pgid = Arc::new(AtomicI32::new(0));
    let pgid_for_run = pgid.clone();
    let ws2 = ws.clone();
    let key = id.to_string();
    let task = ws.background.spawn(async move {
        let mut live = crate::live::Live::new(&id, LivePhase::Planning, None, None);
        let answer = ask(&ws2, &events, &mut live, &id, driver, &brief, pgid_for_run.clone()).await;
        // Whatever the agent left running goes now (an auth failure ends it early).
        Running { pgid: pgid_for_run.load(Ordering::SeqCst) }.kill();
        live.end(&events);
        if let Err(e) = apply(&ws2, &events, &id, answer, title_given).await {
            tracing::error!("applying the planner's answer for {id}: {e}");
        }
        let _ = records::set_state(&ws2.pool, id.as_str(), SessionState::Editing, &now()).await;
        ws2.busy.end_planning(id.as_str());
        let _ = publish(&ws2, &events, &id).await;
        let _ = done_tx.send(true);
    });
    let planning = Planning { pgid, task: Arc::new(task), done: done_rx };
    ws.busy.begin_planning(&key, Arc::new(planning));
}

/// Why the planner agent gave no usable answer.
#[derive(Debug)]
enum NoAnswer {
    /// The provider refused the credentials: planning stopped at once.
    Refused(String),
    Other(String),
}

impl From<String> for NoAnswer {
    fn from(why: String) -> Self {
        if crate::live::reason(None, &why) == "auth" {
            NoAnswer::Refused(why)
        } else {
            NoAnswer::Other(why)
        }
    }
}

/// Runs the read-only turn; `Err` carries why there is no usable answer. Retries and
/// errors show on `live` as they come; an auth failure ends the run at once.
async fn ask(
    ws: &Workspace,
    events: &EventBus,
    live: &mut crate::live::Live,
    id: &SessionId,
    driver: Arc<dyn Driver>,
    brief: &str,
    pgid: Arc<AtomicI32>,
) -> std::result::Result<Answer, NoAnswer> {
    let roles = ws.roles().map_err(|e| NoAnswer::Other(e.message))?;
    let modules: Vec<String> =
        ws.modules.iter().map(|m| format!("- `{}` in `{}` ({:?})", m.id, m.directory, m.toolchain)).collect();
    let role_ids: Vec<&str> = roles.iter().map(|r| r.id.as_str()).collect();
    let pattern =
        ws.id_pattern.as_ref().map(|p| format!("A new module's id matches `{}`.", p.as_str())).unwrap_or_default();
    let instructions = format!(
        "You plan a change to this workspace before anyone works on it. Read what you need; change nothing.\n\nThe workspace's modules:\n{}\n{pattern}\n\nAnswer with one JSON object and nothing else: {{\"modules\": [module ids the change needs, in order], \"title\": \"a short title\", \"role\": \"the first role, one of {}\", \"reason\": \"one sentence\"}}.",
        modules.join("\n"),
        role_ids.join(", ")
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    let sink = TurnSink::new(tx, Box::new(move |r: Running| pgid.store(r.pgid, Ordering::SeqCst)));
    let request = TurnRequest {
        workdir: ws.session_workdir(id),
        session_dir: ws.session_dir(id),
        prompt: format!("Plan this change:\n\n{brief}"),
        instructions,
        resume_id: None,
        model: None,
        read_only: true,
        environment: ws.config.environment.clone(),
        // The planner reads the repository only.
        mcp: Vec::new(),
    };
    let run = async { driver.run(request, sink).await.map_err(|e| NoAnswer::from(e.message)) };
    let collect = async {
        let mut text = String::new();
        let mut ended: Option<std::result::Result<(), String>> = None;
        while let Some(event) = rx.recv().await {
            match event {
                DriverEvent::Text { text: t } => {
                    live.recovered(events);
                    text.push_str(&t);
                }
                DriverEvent::Retry { attempt, message, max_attempts, http_status } => {
                    let status = crate::live::retrying(attempt, max_attempts, http_status, &message);
                    let refused = status.reason == "auth";
                    live.status(events, status);
                    if refused {
                        return Err(NoAnswer::Refused(message));
                    }
                }
                DriverEvent::Error { message } => {
                    let status = crate::live::failed(&message);
                    let refused = status.reason == "auth";
                    live.status(events, status);
                    if refused {
                        return Err(NoAnswer::Refused(message));
                    }
                }
                DriverEvent::TurnEnded { is_error: true, error, .. } => {
                    let error = error.unwrap_or_default();
                    live.status(events, crate::live::failed(&error));
                    ended = Some(Err(error));
                }
                DriverEvent::TurnEnded { final_text, .. } => {
                    if let Some(t) = final_text {
                        text = t;
                    }
                    ended = Some(Ok(()));
                }
                _ => {}
            }
        }
        Ok((text, ended))
    };
    // `try_join` drops the run (killing the agent) as soon as the collector gives up.
    let both = async {
        let ((), (text, ended)) = tokio::try_join!(run, collect)?;
        ended.unwrap_or(Err("the planner ended without an answer".into()))?;
        Ok::<String, NoAnswer>(text)
    };
    let text = tokio::time::timeout(TIMEOUT, both)
        .await
        .map_err(|_| NoAnswer::Other(format!("no answer within {} s", TIMEOUT.as_secs())))??;
    parse(&text).ok_or_else(|| NoAnswer::Other("its answer held no JSON object".to_string()))
}

/// The JSON object in an answer, wherever the model put it (fences, prose around it).
fn parse(text: &str) -> Option<Answer> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    serde_json::from_str(text.get(start..=end)?).ok()
}

async fn apply(
    ws: &Workspace,
    events: &EventBus,
    id: &SessionId,
    answer: std::result::Result<Answer, NoAnswer>,
    title_given: bool,
) -> Result<()> {
    let answer = match answer {
        Ok(a) => a,
        Err(NoAnswer::Refused(why)) => {
            let why = why.trim().lines().next().unwrap_or_default().to_string();
            let text = format!(
                "Planning stopped: the model provider refused the credentials ({why}). The rules' modules stand; check the driver's login or key in Settings before you send a message."
            );
            record(ws, events, id, EntryKind::System, None, &text).await?;
            return Ok(());
        }
        Err(NoAnswer::Other(why)) => {
            let text = format!(
                "Kiln chose where to work from the brief alone: the planning agent's answer could not be used ({why})."
            );
            record(ws, events, id, EntryKind::System, None, &text).await?;
            return Ok(());
        }
    };
    let session = records::load(&ws.pool, id.as_str(), false).await?;
    let rules = Rules { modules: &ws.modules, id_pattern: ws.id_pattern.as_ref(), globs: &ws.config.modules.globs };
    let mut notes = Vec::new();
    let (sequence, _) = kiln_records::store::checkpoints::latest(&ws.pool, id.as_str()).await?;
    for wanted in answer.modules.iter().map(|m| m.trim()) {
        if session.modules.iter().any(|m| m.id == wanted) {
            continue; // the rules' modules stay as they are
        }
        let added = if let Some(module) = ws.module(wanted) {
            Some(SessionModule {
                id: module.id.clone(),
                directory: module.directory.clone(),
                kind: ModuleChange::Edit,
                joined_at: now(),
                base_sequence: sequence,
            })
        } else if ws.id_pattern.as_ref().is_some_and(|p| p.is_match(wanted)) {
            // The id is the agent's text and names the new module's directory: it must
            // make a plain path of non-empty names (no control characters, no `.git`).
            let directory = rules.new_directory(wanted);
            let plain = !wanted.chars().any(char::is_control)
                && !directory.split('/').any(str::is_empty)
                && kiln_runtime::paths::relative(&directory).is_ok();
            if plain {
                Some(SessionModule {
                    id: wanted.to_string(),
                    directory,
                    kind: ModuleChange::New,
                    joined_at: now(),
                    base_sequence: sequence,
                })
            } else {
                notes.push(format!("ignored `{}`: it makes no usable directory", wanted.escape_debug()));
                None
            }
        } else {
            notes.push(format!("ignored `{wanted}`: no such module, and not a new-module id"));
            None
        };
        if let Some(module) = added {
            records::add_module(&ws.pool, id.as_str(), &module).await?;
            let what = if module.kind == ModuleChange::New { "new module" } else { "module" };
            notes.push(format!("added {what} `{}`", module.id));
        }
    }
    if let Some(title) =
        answer.title.map(|t| t.trim().to_string()).filter(|t| !t.is_empty() && t.chars().count() <= 120)
    {
        if !title_given {
            records::set_title(&ws.pool, id.as_str(), &title, None).await?;
            notes.push(format!("titled it “{title}”"));
        }
    }
    if let Some(role) = answer.role.as_deref() {
        let roles = ws.roles()?;
        match crate::roles::find(&roles, role) {
            Some(r) => {
                records::set_pending_role(&ws.pool, id.as_str(), Some(&r.id)).await?;
                notes.push(format!("suggests **{}** first", r.name));
            }
            None => notes.push(format!("named `{role}`, which is not a role")),
        }
    }
    let mut text = format!(
        "**Planner agent** — {}.",
        if notes.is_empty() { "agrees with the rules".to_string() } else { notes.join("; ") }
    );
    if let Some(reason) = answer.reason.filter(|r| !r.trim().is_empty()) {
        text.push_str(&format!("\n\n{}", reason.trim()));
    }
    record(ws, events, id, EntryKind::System, None, &text).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn finds_the_json_object_in_an_answer() {
        let a = parse("Here is the plan:\n```json\n{\"modules\": [\"@shop/cart\"], \"title\": \"Coupons\", \"role\": \"backend-engineer\"}\n```").unwrap();
        assert_eq!(
            (a.modules, a.title.as_deref(), a.role.as_deref()),
            (vec!["@shop/cart".to_string()], Some("Coupons"), Some("backend-engineer"))
        );
        assert!(parse("no json here").is_none());
        assert!(parse("{not json}").is_none());
    }
}
