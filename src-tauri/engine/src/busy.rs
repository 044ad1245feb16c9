//! What keeps a session busy besides its turn and planner: the command it runs for it (the
//! setup, or a gate), and an operator message waiting for that command and the planner
//! before its turn starts. One table per open workspace, so stopping, deleting and counting
//! read the same state, and a waiting message is woken when the command ends instead of
//! looking again on a timer.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use tokio::sync::Notify;

use kiln_runtime::process::Running;

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

    /// Whether the session runs a command or has a message waiting.
    pub fn is_busy(&self, session: &str) -> bool {
        let state = self.state.lock().unwrap();
        state.commands.contains_key(session) || state.queued.contains(session)
    }

    /// Whether any session runs a command or has a message waiting.
    pub fn any(&self) -> bool {
        let state = self.state.lock().unwrap();
        !state.commands.is_empty() || !state.queued.is_empty()
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
