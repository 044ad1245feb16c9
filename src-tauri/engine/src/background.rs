//! The work an engine runs in the background for its sessions, owned rather than detached:
//! a chain of turns an operator's action started (the action answers at once, the chain runs
//! on), a session's setup, a planner agent, a delivery, the screenshot after a turn, and the
//! recovery of a workspace just opened. Shutting down waits for each to end and write its
//! last entry, and aborts what outlives the wait, so nothing of a closed engine runs on.

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use tokio::task::{AbortHandle, JoinSet};

#[derive(Default)]
pub struct Background {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    tasks: JoinSet<()>,
    /// Set once shutting down has waited: work started after that is not run.
    closed: bool,
}

impl Background {
    /// Runs `work` in the background, owned by the engine; the handle stops it.
    pub fn spawn(&self, work: impl Future<Output = ()> + Send + 'static) -> AbortHandle {
        let mut state = self.state.lock().unwrap();
        // What has ended is let go, so the set holds only what runs.
        while state.tasks.try_join_next().is_some() {}
        if state.closed {
            // Dropped unpolled: a closed engine starts nothing, and what it would have done
            // is found cut short when the workspace opens again.
            tracing::warn!("background work started after shutdown was not run");
            drop(work);
            return state.tasks.spawn(async {});
        }
        state.tasks.spawn(work)
    }

    /// Waits at most `within` for everything running to end (a stopped turn's chain records
    /// the stop, a killed setup its end, a delivery its last step), work those start
    /// meanwhile included, then aborts the rest and takes no more. How many were aborted.
    pub async fn end_all(&self, within: Duration) -> usize {
        let deadline = tokio::time::Instant::now() + within;
        let mut aborted = 0;
        loop {
            let mut tasks = {
                let mut state = self.state.lock().unwrap();
                if state.tasks.is_empty() {
                    state.closed = true;
                    return aborted;
                }
                std::mem::take(&mut state.tasks)
            };
            let _ = tokio::time::timeout_at(deadline, async { while tasks.join_next().await.is_some() {} }).await;
            aborted += tasks.len();
            tasks.shutdown().await;
        }
    }

    /// How many are running.
    #[cfg(test)]
    fn running(&self) -> usize {
        let mut state = self.state.lock().unwrap();
        while state.tasks.try_join_next().is_some() {}
        state.tasks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn ending_waits_for_work_that_ends_and_aborts_work_that_does_not() {
        let background = Background::default();
        let (done_tx, done_rx) = tokio::sync::oneshot::channel();
        background.spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            done_tx.send(()).unwrap();
        });
        background.spawn(std::future::pending());
        assert_eq!(background.running(), 2);
        assert_eq!(background.end_all(Duration::from_secs(2)).await, 1, "the pending one was aborted");
        // The one that ended did so before end_all returned: its message is there already.
        assert!(done_rx.await.is_ok());
        assert_eq!(background.running(), 0);
    }

    #[tokio::test]
    async fn work_started_while_ending_is_waited_for_and_work_started_after_is_not_run() {
        let background = Arc::new(Background::default());
        let (done_tx, done_rx) = tokio::sync::oneshot::channel();
        // Like a recovery that starts a setup: the second piece is started by the first,
        // after the wait began.
        background.spawn({
            let background = background.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                background.spawn(async move {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    done_tx.send(()).unwrap();
                });
            }
        });
        assert_eq!(background.end_all(Duration::from_secs(5)).await, 0);
        assert!(done_rx.await.is_ok(), "the work started during the wait did not finish before it ended");

        let (late_tx, mut late_rx) = tokio::sync::oneshot::channel::<()>();
        let handle = background.spawn(async move {
            late_tx.send(()).unwrap();
        });
        tokio::time::timeout(Duration::from_secs(5), async {
            while !handle.is_finished() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("the late work was neither run nor aborted");
        assert!(late_rx.try_recv().is_err(), "work started after shutdown ran");
    }
}
