//! Several hosts serving one team's sessions from one PostgreSQL and one bucket (SPEC §21,
//! issue 21). Each session is owned by one host at a time through a lease
//! (`store::hosts`) that its owner renews with its heartbeat; its turns, gates and preview
//! run there. Any host serves any session:
//! - the records are shared, so reads answer anywhere;
//! - an operation on a session another host owns is queued as a work item, which the owner
//!   takes (FOR UPDATE SKIP LOCKED, up to its limit at once), runs and answers;
//! - what a host emits is written to `host_events`, which every other host reads by id when
//!   NOTIFY wakes it (or each second) and streams to its own views.
//!
//! When a host stops heartbeating its leases expire, and another host's monitor takes each
//! over: the session's checkpoints come from the bucket, its turn cut short is closed and
//! explained, its working copy rebuilt from the newest checkpoint, and it carries on there.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::{json, Value};
use sqlx::postgres::PgListener;
use sqlx::PgPool;

use crate::api::Engine;
use crate::events::EventBus;
use crate::hosts::LEASE_MS;
use crate::ids::SessionId;
use crate::workspace::Workspace;
use kiln_records::store::hosts::{self as records, Taken};
use kiln_records::store::Db;
use kiln_runtime::clock::now;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::{EntryKind, EventBody};

/// How often a host renews its leases and looks for expired ones.
const HEARTBEAT: Duration = Duration::from_secs(2);
/// How long a host asking the owner waits for the answer.
const ASK_PATIENCE: Duration = Duration::from_secs(120);
/// How long events stay in the shared stream (a host reads them within a second).
const EVENTS_KEPT_MS: i64 = 10 * 60 * 1000;

/// This host's part in the team, once `Engine::join_team` started it.
pub(super) struct Team {
    pool: PgPool,
    ws: Arc<Workspace>,
    events: Arc<EventBus>,
    /// The sessions this host holds, as its last heartbeat found them.
    held: Mutex<HashSet<String>>,
    /// Work items running here now, and how many may.
    working: AtomicUsize,
    limit: usize,
    /// Set as the host stops: its heartbeat must not renew the leases it let go.
    left: std::sync::atomic::AtomicBool,
}

impl Team {
    fn me(&self) -> &str {
        &self.ws.hosts.id
    }
}

/// The session an operation works on, when it must run on the session's owner: every
/// operation naming one, but those the operation table marks `any_host`.
fn routed_session(command: &str, args: &Value) -> Option<SessionId> {
    if !super::runs_on_owner(command) {
        return None;
    }
    SessionId::parse(args.get("sessionId")?.as_str()?).ok()
}

/// The sessions another host holds a lease on (live or expired): what a host opening the
/// workspace leaves alone. Empty on SQLite.
pub(super) async fn leased_elsewhere(ws: &Workspace) -> Result<HashSet<String>> {
    let Db::Postgres(pool) = &ws.pool else { return Ok(HashSet::new()) };
    Ok(records::leased_elsewhere(pool, &ws.hosts.id).await?.into_iter().collect())
}

impl Engine {
    /// Joins the hosts serving the open workspace's team database: registers this host,
    /// shares its events, and starts its heartbeat, the stream of the others' events, the
    /// monitor of expired leases and the worker of items asked of it. Nothing on SQLite.
    pub async fn join_team(self: &Arc<Self>) -> Result<()> {
        let ws = self.workspace()?;
        let Db::Postgres(pool) = &ws.pool else { return Ok(()) };
        if self.team.get().is_some() {
            return Ok(());
        }
        let name = format!("{} (pid {})", host_name(), std::process::id());
        records::register(pool, &ws.hosts.id, &name, &now()).await?;
        let limit = ws.config.session.parallel_turns(crate::workspace::cores()).max(1);
        let team = Arc::new(Team {
            pool: pool.clone(),
            ws: ws.clone(),
            events: self.events.clone(),
            held: Mutex::new(HashSet::new()),
            working: AtomicUsize::new(0),
            limit,
            left: Default::default(),
        });
        if self.team.set(team.clone()).is_err() {
            return Ok(());
        }
        // What this host held before it restarted was recovered when it opened: held again.
        for session in records::held_by(pool, team.me()).await? {
            records::take(pool, &session, team.me(), LEASE_MS, &now()).await?;
            team.held.lock().unwrap().insert(session);
        }
        let (outbox, queued) = tokio::sync::mpsc::unbounded_channel();
        self.events.share_with(outbox);
        let first = records::newest_event(pool).await?;
        tokio::spawn(publish(team.clone(), queued));
        tokio::spawn(relay(Arc::downgrade(self), team.clone(), first));
        tokio::spawn(heartbeat(Arc::downgrade(self), team.clone()));
        tokio::spawn(work(Arc::downgrade(self), team.clone()));
        tracing::info!("host {} joined the team on its database", team.me());
        Ok(())
    }

    /// Runs an operation by name with JSON arguments: what both transports call. On a team's
    /// database, an operation on a session another host owns is asked of that host.
    pub async fn dispatch(&self, command: &str, args: Value) -> Result<Value> {
        let team = self.team.get().cloned();
        if let Some(team) = &team {
            if let Some(session) = routed_session(command, &args) {
                if let Some(owner) = owner_elsewhere(team, &session).await? {
                    return ask(team, &session, &owner, command, &args).await;
                }
            }
        }
        self.dispatch_here(command, args).await
    }
}

/// The host that owns `session` when it is another live one; otherwise this host takes the
/// lease (taking the session over first when a host that stopped held it) and `None`.
async fn owner_elsewhere(team: &Arc<Team>, session: &SessionId) -> Result<Option<String>> {
    Ok(match take_lease(team, session).await? {
        Taken::No { owner } => Some(owner),
        // No such session: the operation, run here, says so itself.
        Taken::Yes { .. } | Taken::NoSession => None,
    })
}

/// Takes `session`'s lease for this host unless another live host holds it, and takes the
/// session over when a host that stopped held it. Under the session's recovery lock, so an
/// operation on it waits for the take-over rather than finding half a session.
async fn take_lease(team: &Team, session: &SessionId) -> Result<Taken> {
    let lock = crate::recover::lock(&team.ws, session);
    let _guard = lock.lock().await;
    let taken = records::take(&team.pool, session.as_str(), team.me(), LEASE_MS, &now()).await?;
    if let Taken::Yes { from } = &taken {
        team.held.lock().unwrap().insert(session.to_string());
        if let Some(from) = from {
            take_over(team, session, from).await?;
        }
    }
    Ok(taken)
}

/// Asks `owner` to run `command` on `session` and waits for its answer. Should the owner
/// stop meanwhile, the item waits for whoever takes the session over (this host's own
/// monitor, perhaps); one it had taken is answered HOST_UNAVAILABLE. An item nobody took
/// in two minutes is withdrawn, and HOST_UNAVAILABLE.
async fn ask(team: &Team, session: &SessionId, owner: &str, command: &str, args: &Value) -> Result<Value> {
    let id = records::ask(&team.pool, session.as_str(), command, &args.to_string(), team.me(), &now()).await?;
    tracing::debug!("asked {owner} to run {command} on {session} (item {id})");
    let mut deadline = Some(tokio::time::Instant::now() + ASK_PATIENCE);
    let mut pause = Duration::from_millis(10);
    loop {
        if let Some(outcome) = records::outcome(&team.pool, id).await? {
            return answer(&outcome);
        }
        if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
            if records::withdraw(&team.pool, id).await? {
                return Err(unavailable(owner));
            }
            // Taken: it runs (gates may take minutes), and is answered by its owner, or as
            // HOST_UNAVAILABLE by the host that notices the owner stopped (`monitor`).
            deadline = None;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}

fn unavailable(owner: &str) -> ApiError {
    ApiError::new(
        ErrorCode::HostUnavailable,
        format!("the host running this session ({owner}) did not answer; ask again in a few seconds"),
    )
}

/// An operation's result or error as a work item's outcome.
fn outcome(result: &Result<Value>) -> String {
    match result {
        Ok(value) => json!({ "ok": value }).to_string(),
        Err(e) => json!({ "error": e }).to_string(),
    }
}

/// The result or error a work item's outcome holds.
fn answer(outcome: &str) -> Result<Value> {
    let mut value: Value =
        serde_json::from_str(outcome).map_err(|e| ApiError::internal("reading a work item's outcome", e))?;
    if let Some(ok) = value.get_mut("ok") {
        return Ok(ok.take());
    }
    let error = value.get_mut("error").map(Value::take).unwrap_or(Value::Null);
    Err(serde_json::from_value(error).map_err(|e| ApiError::internal("reading a work item's outcome", e))?)
}

/// Takes `session` over from `from`, which stopped heartbeating: its checkpoints are fetched
/// from the bucket, what was running is closed and explained, a working copy this host kept
/// from an earlier time is put aside, and the copy is rebuilt from the newest checkpoint.
/// The caller holds the session's recovery lock (`take_lease`).
async fn take_over(team: &Team, session: &SessionId, from: &str) -> Result<()> {
    let (ws, events) = (&team.ws, &team.events);
    ws.hosts.heard(session.as_str(), false);
    let cut = crate::recover::interrupted::Interrupted::read(&ws.pool).await?;
    let at = now();
    let only = Some(session.as_str());
    kiln_records::store::turns::close_orphans(&ws.pool, &at, only).await?;
    kiln_records::store::review_comments::reopen_stranded(&ws.pool, crate::review_comments::STRANDED, &at, only)
        .await?;
    put_aside(ws, session);
    let record = kiln_records::store::sessions::load(&ws.pool, session.as_str(), false).await?;
    let closed = record.archived_at.is_some() || record.rejected_at.is_some();
    super::recovery::recover_one(ws, events, session, closed, &cut).await?;
    // Last, once the session is whole again here: what a reader sees the handover end with.
    let me = &ws.hosts.id;
    let text = if records::registered(&team.pool, from).await? {
        format!("The host running this session ({from}) stopped answering, so this host ({me}) took it over: it carries on here from the newest checkpoint.")
    } else {
        format!("The host running this session ({from}) was stopped and handed it on, so this host ({me}) took it over: it carries on here from the newest checkpoint.")
    };
    crate::session::record(ws, events, session, EntryKind::System, None, &text).await?;
    tracing::info!("took session {session} over from {from}");
    Ok(())
}

/// Moves a working copy this host kept from an earlier ownership out of the way (never
/// removed: it may hold what its turn changed then), so the rebuild starts from the
/// newest checkpoint rather than from a stale copy.
fn put_aside(ws: &Workspace, session: &SessionId) {
    let workdir = ws.session_workdir(session);
    if std::fs::symlink_metadata(&workdir).is_ok_and(|m| m.is_dir()) {
        let aside = ws.session_dir(session).join(format!("workspace.before-{}", now().replace([':', '.'], "-")));
        match std::fs::rename(&workdir, &aside) {
            Ok(()) => {
                tracing::warn!("session {session}: an earlier working copy of this host is kept at {}", aside.display())
            }
            Err(e) => tracing::error!("session {session}: putting the earlier working copy aside: {e}"),
        }
    }
}

/// Writes what this host emits to the shared stream, in batches, and records the owner's
/// word on whether each session is at work.
async fn publish(team: Arc<Team>, mut queued: tokio::sync::mpsc::UnboundedReceiver<(EventBody, bool)>) {
    while let Some(first) = queued.recv().await {
        let mut batch = vec![first];
        while batch.len() < 500 {
            match queued.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        // The last word per session is what counts: one write each, not one per event.
        let mut running = std::collections::HashMap::new();
        for (body, _) in &batch {
            if let EventBody::Session { session } = body {
                running.insert(session.id.as_str(), session.running);
            }
        }
        for (session, running) in running {
            let _ = records::set_running(&team.pool, session, team.me(), running).await;
        }
        let texts: Vec<(String, bool)> = batch
            .iter()
            .filter_map(|(body, kept)| serde_json::to_string(body).ok().map(|text| (text, *kept)))
            .collect();
        if let Err(e) = records::publish(&team.pool, team.me(), &texts).await {
            tracing::error!("sharing {} event(s) with the other hosts: {e}", texts.len());
        }
    }
}

/// Streams the other hosts' events to this host's views, from the stream's newest event
/// when the host joined.
async fn relay(engine: Weak<Engine>, team: Arc<Team>, mut last: i64) {
    let mut listener = listen(&team.pool, records::EVENTS_CHANNEL).await;
    loop {
        wake(&mut listener, Duration::from_secs(1)).await;
        if engine.strong_count() == 0 {
            return;
        }
        loop {
            let rows = match records::events_after(&team.pool, team.me(), last).await {
                Ok(rows) => rows,
                Err(e) => {
                    tracing::warn!("reading the other hosts' events: {e}");
                    break;
                }
            };
            let full = rows.len() == 1000;
            for (id, text, kept) in rows {
                last = id;
                let Ok(body) = serde_json::from_str::<EventBody>(&text) else { continue };
                match &body {
                    EventBody::Session { session } => team.ws.hosts.heard(&session.id, session.running),
                    EventBody::SessionRemoved { session_id } => team.ws.hosts.heard(session_id, false),
                    _ => {}
                }
                team.events.relay(body, kept);
            }
            if !full {
                break;
            }
        }
    }
}

/// Renews this host's leases, notices one another host took, takes over the sessions of
/// hosts that stopped, and keeps the shared tables short.
async fn heartbeat(engine: Weak<Engine>, team: Arc<Team>) {
    let mut beats = 0u64;
    loop {
        tokio::time::sleep(HEARTBEAT).await;
        let Some(engine) = engine.upgrade() else { return };
        if team.left.load(Ordering::SeqCst) {
            return;
        }
        match records::heartbeat(&team.pool, team.me(), LEASE_MS).await {
            Ok(held) => {
                let held: HashSet<String> = held.into_iter().collect();
                let lost: Vec<String> = team.held.lock().unwrap().difference(&held).cloned().collect();
                *team.held.lock().unwrap() = held;
                for session in lost {
                    lose(&engine, &team, &session).await;
                }
            }
            Err(e) => tracing::error!("the heartbeat of host {}: {e}", team.me()),
        }
        if let Ok(running) = records::running_elsewhere(&team.pool, team.me()).await {
            team.ws.hosts.replace(running);
        }
        if let Err(e) = monitor(&team).await {
            tracing::error!("taking over the sessions of a host that stopped: {e}");
        }
        beats += 1;
        if beats.is_multiple_of(30) {
            let _ = records::prune_events(&team.pool, EVENTS_KEPT_MS).await;
            let day_ago = kiln_runtime::clock::before_now(Duration::from_secs(24 * 60 * 60));
            let _ = records::prune_work(&team.pool, &day_ago).await;
        }
    }
}

/// A session whose lease another host took while this one held it (this host missed its
/// heartbeats, a stalled process or a cut network): its turn here stops, since the other
/// host runs the session now.
async fn lose(engine: &Engine, team: &Team, session: &str) {
    tracing::warn!("host lost the lease on session {session}: another host took it over");
    if team.ws.busy.runs_turn(session) {
        let _ = engine.dispatch_here("stop_turn", json!({ "sessionId": session })).await;
    }
}

/// Takes over every session whose lease expired, answers the items their host had taken and
/// never answered, and renews this host's own expired leases.
async fn monitor(team: &Arc<Team>) -> Result<()> {
    let mut gone = HashSet::new();
    for (session, host) in records::expired(&team.pool).await? {
        let Ok(id) = SessionId::parse(&session) else { continue };
        if let Err(e) = take_lease(team, &id).await {
            tracing::error!("taking session {session} over from {host}: {e}");
        }
        if host != team.me() {
            gone.insert(host);
        }
    }
    for host in gone {
        let error = outcome(&Err(unavailable(&host)));
        records::abandon_from(&team.pool, &host, &error, &now()).await?;
    }
    Ok(())
}

/// Runs the items other hosts ask of this one, up to its limit at once.
async fn work(engine: Weak<Engine>, team: Arc<Team>) {
    let mut listener = listen(&team.pool, records::WORK_CHANNEL).await;
    let (done, mut finished) = tokio::sync::mpsc::unbounded_channel::<()>();
    loop {
        tokio::select! {
            _ = wake(&mut listener, Duration::from_millis(500)) => {}
            _ = finished.recv() => {}
        }
        if engine.strong_count() == 0 {
            return;
        }
        let free = team.limit.saturating_sub(team.working.load(Ordering::SeqCst));
        let items = match records::take_work(&team.pool, team.me(), free as i64).await {
            Ok(items) => items,
            Err(e) => {
                tracing::warn!("taking work items: {e}");
                continue;
            }
        };
        for item in items {
            tracing::debug!("running {} on session {} (work item {})", item.operation, item.session_id, item.id);
            team.working.fetch_add(1, Ordering::SeqCst);
            let (engine, team, done) = (engine.clone(), team.clone(), done.clone());
            tokio::spawn(async move {
                let result = match (engine.upgrade(), serde_json::from_str::<Value>(&item.args)) {
                    (Some(engine), Ok(args)) => engine.dispatch_here(&item.operation, args).await,
                    (None, _) => Err(unavailable(team.me())),
                    (_, Err(e)) => Err(ApiError::internal("reading a work item", e)),
                };
                if let Err(e) = records::finish_work(&team.pool, item.id, &outcome(&result), &now()).await {
                    tracing::error!("answering work item {}: {e}", item.id);
                }
                team.working.fetch_sub(1, Ordering::SeqCst);
                let _ = done.send(());
            });
        }
    }
}

impl Engine {
    /// Hands this host's sessions on at once (their leases expire now), as the server
    /// stops: part of `shutdown`.
    pub(super) async fn leave_team(&self) {
        if let Some(team) = self.team.get() {
            team.left.store(true, Ordering::SeqCst);
            if let Err(e) = records::release(&team.pool, team.me()).await {
                tracing::error!("letting this host's leases go: {e}");
            }
        }
    }
}

/// A listener on `channel`, or none when it cannot connect (polling alone then).
async fn listen(pool: &PgPool, channel: &str) -> Option<PgListener> {
    match PgListener::connect_with(pool).await {
        Ok(mut listener) => match listener.listen(channel).await {
            Ok(()) => Some(listener),
            Err(e) => {
                tracing::warn!("listening on {channel}: {e}");
                None
            }
        },
        Err(e) => {
            tracing::warn!("listening on {channel}: {e}");
            None
        }
    }
}

/// Waits for a notification, or `at_most`.
async fn wake(listener: &mut Option<PgListener>, at_most: Duration) {
    match listener {
        Some(l) => {
            // A lost connection answers at once (and reconnects on the next call): no spin.
            if let Ok(Err(_)) = tokio::time::timeout(at_most, l.recv()).await {
                tokio::time::sleep(at_most).await;
            }
        }
        None => tokio::time::sleep(at_most).await,
    }
}

fn host_name() -> String {
    std::fs::read_to_string("/etc/hostname").map(|n| n.trim().to_string()).unwrap_or_else(|_| "a host".into())
}
