//! This host among the hosts serving one team's database (SPEC §21): its id, kept in
//! `.kiln/host-id` so a host restarted on the same clone is the same host and takes up its
//! own sessions at once, and which sessions other hosts are running right now, as their
//! events said. A workspace on SQLite is one host alone; the set stays empty.
//! `api::team` runs the leases, the shared event stream and the work queue.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;

use kiln_types::error::Result;

const ID_FILE: &str = "host-id";

/// How long a session's lease holds without its owner's heartbeat (every 2 s): five beats.
pub(crate) const LEASE_MS: i64 = 10_000;

#[derive(Debug, Default)]
pub struct Hosts {
    /// This host's id: random, made on the first open of the clone.
    pub id: String,
    /// Sessions another host runs right now (their owner's last word).
    elsewhere: Mutex<HashSet<String>>,
}

impl Hosts {
    /// This host as `.kiln/host-id` names it (made when missing) on a team's database;
    /// alone, it needs no name and writes nothing.
    pub fn open(kiln_dir: &Path, team: bool) -> Result<Hosts> {
        if !team {
            return Ok(Hosts { id: "local".into(), elsewhere: Mutex::new(HashSet::new()) });
        }
        let path = kiln_dir.join(ID_FILE);
        let id = match std::fs::read_to_string(&path) {
            Ok(text) if valid(text.trim()) => text.trim().to_string(),
            _ => {
                let id = format!("host-{}", uuid::Uuid::new_v4().simple());
                std::fs::write(&path, format!("{id}\n"))?;
                id
            }
        };
        Ok(Hosts { id, elsewhere: Mutex::new(HashSet::new()) })
    }

    /// Whether another host runs `session` now.
    pub fn running_elsewhere(&self, session: &str) -> bool {
        self.elsewhere.lock().unwrap().contains(session)
    }

    /// What another host said of `session`: running or not.
    pub fn heard(&self, session: &str, running: bool) {
        let mut set = self.elsewhere.lock().unwrap();
        if running {
            set.insert(session.to_string());
        } else {
            set.remove(session);
        }
    }

    /// Every session another host runs, as the database says (events may have been missed).
    pub fn replace(&self, running: impl IntoIterator<Item = String>) {
        *self.elsewhere.lock().unwrap() = running.into_iter().collect();
    }
}

fn valid(id: &str) -> bool {
    id.starts_with("host-") && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}
