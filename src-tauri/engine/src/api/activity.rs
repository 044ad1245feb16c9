//! What the open workspace runs right now, counted: turns, planner agents, setups and gates,
//! deliveries. The desktop app asks before it lets its window close or quits (a running turn
//! keeps Kiln in the tray, and quitting asks first).

use super::Engine;

/// What runs in the open workspace, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Activity {
    /// Agent turns (an implementation or a review).
    pub turns: usize,
    /// Planner agents choosing a session's modules and role.
    pub planners: usize,
    /// A session's setup step or its gates (processes outside any turn's own).
    pub checks: usize,
    /// Deliveries in progress.
    pub deliveries: usize,
    /// Terminals open in the sessions' working copies.
    pub terminals: usize,
}

impl Activity {
    /// Nothing runs: closing the window may quit.
    pub fn is_idle(&self) -> bool {
        self.total() == 0
    }

    /// How many things run, of every kind.
    pub fn total(&self) -> usize {
        self.turns + self.planners + self.checks + self.deliveries + self.terminals
    }

    /// Each kind that runs, counted, for people: `["1 turn", "2 deliveries"]`.
    pub fn parts(&self) -> Vec<String> {
        let counted =
            |n: usize, one: &str, many: &str| (n > 0).then(|| format!("{n} {}", if n == 1 { one } else { many }));
        [
            counted(self.turns, "turn", "turns"),
            counted(self.planners, "planner", "planners"),
            counted(self.checks, "setup or gate", "setups or gates"),
            counted(self.deliveries, "delivery", "deliveries"),
            counted(self.terminals, "terminal", "terminals"),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// A short summary for people: "1 turn, 1 delivery", or "Nothing running".
    pub fn summary(&self) -> String {
        if self.is_idle() {
            return "Nothing running".into();
        }
        self.parts().join(", ")
    }
}

impl Engine {
    /// What the open workspace runs now; idle when no workspace is open.
    pub fn activity(&self) -> Activity {
        let Ok(ws) = self.workspace() else { return Activity::default() };
        // A delivery is registered by session for the whole process: count the open
        // workspace's own.
        let deliveries = crate::delivery::run::active_sessions()
            .iter()
            .filter(|session| ws.sessions_dir().join(session).is_dir())
            .count();
        let checks = ws.busy.commands();
        Activity {
            turns: ws.busy.turns(),
            planners: ws.busy.planners(),
            checks,
            deliveries,
            terminals: self.terminals.running(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Activity;

    #[test]
    fn the_summary_counts_each_kind_that_runs() {
        assert_eq!(Activity::default().summary(), "Nothing running");
        assert!(Activity::default().is_idle());
        let one = Activity { turns: 1, deliveries: 1, ..Default::default() };
        assert_eq!(one.summary(), "1 turn, 1 delivery");
        assert!(!one.is_idle());
        let many = Activity { turns: 2, planners: 1, checks: 3, deliveries: 2, terminals: 2 };
        assert_eq!(many.summary(), "2 turns, 1 planner, 3 setups or gates, 2 deliveries, 2 terminals");
        assert_eq!(many.total(), 10);
        assert_eq!(Activity { checks: 1, ..Default::default() }.summary(), "1 setup or gate");
    }
}
