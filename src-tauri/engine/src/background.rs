//! The work a workspace runs in the background for its sessions, owned rather than detached:
//! a chain of turns an operator's action started (the action answers at once, the chain runs
//! on), and a session's setup. Shutting down waits for each to end and write its last entry,
//! and aborts what outlives the wait, so nothing of a closed engine runs on.

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use tokio::task::JoinSet;

#[derive(Default)]
pub struct Background {
    tasks: Mutex<JoinSet<()>>,
}

impl Background {
    /// Runs `work` in the background, owned by the workspace.
    pub fn spawn(&self, work: impl Future<Output = ()> + Send + 'static) {
        let mut tasks = self.tasks.lock().unwrap();
        // What has ended is let go, so the set holds only what runs.
        while tasks.try_join_next().is_some() {}
        tasks.spawn(work);
    }

    /// Waits at most `within` for everything running to end (a stopped turn's chain records
    /// the stop, a killed setup its end), then aborts the rest. How many were aborted.
    pub async fn end_all(&self, within: Duration) -> usize {
        let mut tasks = std::mem::take(&mut *self.tasks.lock().unwrap());
        let _ = tokio::time::timeout(within, async { while tasks.join_next().await.is_some() {} }).await;
        let left = tasks.len();
        tasks.shutdown().await;
        left
    }

    /// How many are running.
    #[cfg(test)]
    fn running(&self) -> usize {
        let mut tasks = self.tasks.lock().unwrap();
        while tasks.try_join_next().is_some() {}
        tasks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
