//! What keeps a session busy: its turn, its planner agent, the command it runs for it (the
//! setup, or a gate), and an operator message waiting for that command and the planner
//! before its turn starts. One table per open workspace, so stopping, deleting, counting and
//! "is this session running?" read the same state, and a waiting message is woken when the
//! command ends instead of looking again on a timer. The layers above hand their turns and
//! planners in as `Work`, so this table stops and waits for them without knowing what they are.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use tokio::sync::Notify;

use kiln_runtime::process::Running;

/// A turn or a planner agent at work for a session.
pub(crate) trait Work: Send + Sync {
    /// Stops it, and returns once it has stopped.
    fn stop(&self) -> BoxFuture<'_, ()>;
    /// Returns once it has ended, stopped or done.
    fn ended(&self) -> BoxFuture<'_, ()>;
}

#[derive(Default)]
pub struct Busy {
    state: Mutex<State>,
    /// Told whenever a command ends, for `until_idle`.
    ended: Notify,
}

#[derive(Default)]
struct State {
    /// The command per session: its process group, or a group id of 0 while it starts.
    commands: HashMap<String, Running>,
    /// Sessions whose message waits for their setup (or planner) before its turn starts.
    queued: HashSet<String>,
    /// The turn per session.
    turns: HashMap<String, Arc<dyn Work>>,
    /// The planner agent per session.
    planners: HashMap<String, Arc<dyn Work>>,
}

impl Busy {
    /// Marks the session as running a command before its process exists, so that a delete
    /// issued meanwhile is refused and a stop reaches it (see `started`).
    pub fn hold(&self, session: &str) {
        self.state.lock().unwrap().commands.insert(session.to_string(), Running { pgid: 0 });
    }

    /// The held command's process started. Handed back when the session was stopped since
    /// it was held: the caller kills it at once.
    pub fn started(&self, session: &str, running: Running) -> Result<(), Running> {
        match self.state.lock().unwrap().commands.get_mut(session) {
            Some(slot) => {
                *slot = running;
                Ok(())
            }
            None => Err(running),
        }
    }

    /// A command started for the session (a gate), to be stopped with the session.
    pub fn run(&self, session: &str, running: Running) {
        self.state.lock().unwrap().commands.insert(session.to_string(), running);
    }

    /// The session's command ended or is being stopped: it is taken out (to kill it), and a
    /// message waiting for it is woken.
    pub fn end(&self, session: &str) -> Option<Running> {
        let running = self.state.lock().unwrap().commands.remove(session);
        self.ended.notify_waiters();
        running
    }

    pub fn runs_command(&self, session: &str) -> bool {
        self.state.lock().unwrap().commands.contains_key(session)
    }

    /// Commands running now, over all sessions.
    pub fn commands(&self) -> usize {
        self.state.lock().unwrap().commands.len()
    }

    /// Kills every command (Kiln quitting).
    pub fn kill_all(&self) {
        for running in self.state.lock().unwrap().commands.values() {
            running.kill();
        }
    }

    /// Returns once the session runs no command.
    pub async fn until_idle(&self, session: &str) {
        loop {
            // Registered before looking, so an end between the look and the wait still wakes.
            let ended = self.ended.notified();
            tokio::pin!(ended);
            ended.as_mut().enable();
            if !self.runs_command(session) {
                return;
            }
            ended.await;
        }
    }

    /// The session's message waits; counted as running from now until its turn has started.
    pub fn queue(&self, session: &str) {
        self.state.lock().unwrap().queued.insert(session.to_string());
    }

    /// Takes the waiting message off the queue: `true` when there was one.
    pub fn unqueue(&self, session: &str) -> bool {
        self.state.lock().unwrap().queued.remove(session)
    }

    /// Takes every waiting message off the queue (shutting down): the sessions they were for.
    pub fn unqueue_all(&self) -> Vec<String> {
        self.state.lock().unwrap().queued.drain().collect()
    }

    pub fn is_queued(&self, session: &str) -> bool {
        self.state.lock().unwrap().queued.contains(session)
    }

    /// The session's turn began: `false` (and nothing registered) when it runs one already.
    pub(crate) fn begin_turn(&self, session: &str, turn: Arc<dyn Work>) -> bool {
        let mut state = self.state.lock().unwrap();
        if state.turns.contains_key(session) {
            return false;
        }
        state.turns.insert(session.to_string(), turn);
        true
    }

    /// The session's turn ended.
    pub(crate) fn end_turn(&self, session: &str) {
        self.state.lock().unwrap().turns.remove(session);
    }

    /// The session's turn, to stop it.
    pub(crate) fn turn(&self, session: &str) -> Option<Arc<dyn Work>> {
        self.state.lock().unwrap().turns.get(session).cloned()
    }

    pub(crate) fn runs_turn(&self, session: &str) -> bool {
        self.state.lock().unwrap().turns.contains_key(session)
    }

    /// The session's planner agent began.
    pub(crate) fn begin_planning(&self, session: &str, planner: Arc<dyn Work>) {
        self.state.lock().unwrap().planners.insert(session.to_string(), planner);
    }

    /// The session's planner agent ended or is being stopped: taken out, to stop it.
    pub(crate) fn end_planning(&self, session: &str) -> Option<Arc<dyn Work>> {
        self.state.lock().unwrap().planners.remove(session)
    }

    /// The session's planner agent, to wait for it or stop it.
    pub(crate) fn planner(&self, session: &str) -> Option<Arc<dyn Work>> {
        self.state.lock().unwrap().planners.get(session).cloned()
    }

    /// Turns running now, over all sessions.
    pub(crate) fn turns(&self) -> usize {
        self.state.lock().unwrap().turns.len()
    }

    /// Planner agents at work now, over all sessions.
    pub(crate) fn planners(&self) -> usize {
        self.state.lock().unwrap().planners.len()
    }

    /// Every turn and planner agent, to stop them all (Kiln quitting).
    pub(crate) fn all_work(&self) -> Vec<Arc<dyn Work>> {
        let state = self.state.lock().unwrap();
        state.turns.values().chain(state.planners.values()).cloned().collect()
    }

    /// Whether the session runs anything: a turn, a planner, a command, or a message waiting.
    pub fn is_busy(&self, session: &str) -> bool {
        let state = self.state.lock().unwrap();
        state.commands.contains_key(session)
            || state.queued.contains(session)
            || state.turns.contains_key(session)
            || state.planners.contains_key(session)
    }

    /// Whether any session runs anything.
    pub fn any(&self) -> bool {
        let state = self.state.lock().unwrap();
        !state.commands.is_empty() || !state.queued.is_empty() || !state.turns.is_empty() || !state.planners.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test]
    async fn a_wait_ends_when_the_command_does_and_not_before() {
        let busy = Arc::new(Busy::default());
        busy.hold("s");
        let waiting = tokio::spawn({
            let busy = busy.clone();
            async move { busy.until_idle("s").await }
        });
        // Another session's command ending does not end this wait.
        busy.run("other", Running { pgid: 0 });
        busy.end("other");
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "the wait ended while the session's command still ran");
        assert!(busy.end("s").is_some());
        tokio::time::timeout(Duration::from_secs(5), waiting).await.expect("the wait did not end").unwrap();
        assert!(!busy.any());
    }

    #[test]
    fn a_stop_before_the_process_started_is_not_undone_by_its_start() {
        let busy = Busy::default();
        busy.hold("s");
        assert!(busy.end("s").is_some());
        assert!(busy.started("s", Running { pgid: 0 }).is_err(), "the stopped command came back");
        assert!(!busy.runs_command("s"));
    }

    struct Idle;

    impl Work for Idle {
        fn stop(&self) -> BoxFuture<'_, ()> {
            Box::pin(async {})
        }
        fn ended(&self) -> BoxFuture<'_, ()> {
            Box::pin(async {})
        }
    }

    #[test]
    fn a_turn_or_a_planner_keeps_the_session_busy_and_a_second_turn_is_refused() {
        let busy = Busy::default();
        assert!(busy.begin_turn("s", Arc::new(Idle)));
        assert!(!busy.begin_turn("s", Arc::new(Idle)), "a second turn was registered");
        assert!(busy.is_busy("s") && busy.runs_turn("s") && !busy.is_busy("t") && busy.any());
        busy.begin_planning("t", Arc::new(Idle));
        assert!(busy.is_busy("t"));
        assert_eq!((busy.turns(), busy.planners(), busy.all_work().len()), (1, 1, 2));
        busy.end_turn("s");
        assert!(busy.end_planning("t").is_some());
        assert!(!busy.is_busy("s") && !busy.is_busy("t") && !busy.any());
    }

    #[test]
    fn a_queued_message_keeps_the_session_busy_until_taken_off() {
        let busy = Busy::default();
        busy.queue("s");
        assert!(busy.is_busy("s") && busy.is_queued("s") && busy.any());
        assert!(busy.unqueue("s"));
        assert!(!busy.unqueue("s"));
        assert!(!busy.is_busy("s"));
    }
}
