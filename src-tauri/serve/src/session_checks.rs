//! Whether browser sessions still live, asked by every `/api/` call and before every
//! event on every open stream: with 50 streams open, one event is 50 checks at once. One
//! query answers every check asked while the previous query ran, instead of each taking
//! its turn for the access store's few connections. No answer is older than its question:
//! a check joins only a batch whose query has not started, so "nothing made after a
//! revocation is sent" (SECURITY.md, the event stream) holds as it did with one query each.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use kiln_engine::types::ServeMode;
use tokio::sync::watch;

use crate::access::Access;

/// The live secrets a batch's query found; `None` until it has run.
type Answer = Option<Arc<HashSet<String>>>;

pub(crate) struct SessionChecks {
    access: Arc<Access>,
    mode: ServeMode,
    shared: Arc<Shared>,
}

struct Shared {
    /// The checks asked since the running query started, answered by the next one.
    pending: Mutex<Option<Batch>>,
    /// Held by the query running now: one at a time, so the next batch gathers meanwhile.
    lane: tokio::sync::Mutex<()>,
}

struct Batch {
    secrets: Vec<String>,
    answer: watch::Receiver<Answer>,
}

impl SessionChecks {
    pub(crate) fn new(access: Arc<Access>, mode: ServeMode) -> SessionChecks {
        SessionChecks { access, mode, shared: Arc::new(Shared { pending: Mutex::new(None), lane: Default::default() }) }
    }

    /// Whether the browser session whose cookie is `secret` lives (not ended, expired or
    /// revoked, by this process or another), read after this call began.
    pub(crate) async fn live(&self, secret: &str) -> bool {
        let mut answer = {
            let mut pending = self.shared.pending.lock().unwrap();
            match pending.as_mut() {
                Some(batch) => {
                    if !batch.secrets.iter().any(|s| s == secret) {
                        batch.secrets.push(secret.to_string());
                    }
                    batch.answer.clone()
                }
                None => {
                    let (tell, answer) = watch::channel(None);
                    *pending = Some(Batch { secrets: vec![secret.to_string()], answer: answer.clone() });
                    // Its own task, so a caller that goes away (a closed stream) cannot
                    // leave the others of its batch unanswered.
                    tokio::spawn(answer_batch(self.access.clone(), self.mode, self.shared.clone(), tell));
                    answer
                }
            }
        };
        let live = match answer.wait_for(Option::is_some).await {
            Ok(live) => live.as_ref().is_some_and(|live| live.contains(secret)),
            // The task is gone unanswered (the runtime is stopping): not live.
            Err(_) => false,
        };
        live
    }
}

/// Waits for the running query, then closes the pending batch (the one this task was
/// started for: a new batch starts only once this one is taken) and answers it.
async fn answer_batch(access: Arc<Access>, mode: ServeMode, shared: Arc<Shared>, tell: watch::Sender<Answer>) {
    let _lane = shared.lane.lock().await;
    let secrets = shared.pending.lock().unwrap().take().map(|batch| batch.secrets).unwrap_or_default();
    let live = match access.live_among(mode, &secrets).await {
        Ok(live) => live,
        Err(e) => {
            // As one check's store error did: nobody is let through.
            tracing::warn!("kiln serve: checking {} browser session(s): {}", secrets.len(), e.message);
            HashSet::new()
        }
    };
    tell.send_replace(Some(Arc::new(live)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn checks_asked_together_each_get_their_own_answer() {
        let dir = tempfile::tempdir().unwrap();
        let access = Arc::new(Access::open(dir.path(), None).await.unwrap());
        let live = access.connect(ServeMode::Loopback, crate::access::Proof::ServerToken).await.unwrap().secret;
        let ended = access.connect(ServeMode::Loopback, crate::access::Proof::ServerToken).await.unwrap().secret;
        access.disconnect(&ended).await.unwrap();
        let checks = Arc::new(SessionChecks::new(access.clone(), ServeMode::Loopback));
        let mut asked = tokio::task::JoinSet::new();
        for n in 0..60 {
            let (checks, secret) = (checks.clone(), [&live, &ended, &"forged".to_string()][n % 3].clone());
            asked.spawn(async move { (n % 3, checks.live(&secret).await) });
        }
        while let Some(answer) = asked.join_next().await {
            let (which, live) = answer.unwrap();
            assert_eq!(live, which == 0, "secret {which}");
        }
        // A self-hosted server admits no loopback session, batched or not.
        assert!(!SessionChecks::new(access.clone(), ServeMode::SelfHosted).live(&live).await);
        // Ended after the last check: the next one says so.
        access.disconnect(&live).await.unwrap();
        assert!(!checks.live(&live).await);
    }
}
