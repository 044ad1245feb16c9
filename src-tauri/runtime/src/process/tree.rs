//! What a started program left running outside its own process group. Killing a group
//! misses the descendants that moved to a group or session of their own: Claude Code runs
//! each of its Bash tool's commands under `setsid`, and an interactive shell puts its
//! background jobs in groups of their own. Both stay descendants (by parent id) of what
//! Kiln started while that lives, so Kiln reads the process table (`/proc`) before it
//! signals, and signals them too.

/// One row of `/proc/<pid>/stat`: the parent, the process group, the session, and whether
/// it has ended (a zombie awaiting its reaper).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Row {
    pid: i32,
    ppid: i32,
    pgrp: i32,
    session: i32,
    ended: bool,
}

/// Every process of the table, as far as it can be read (processes come and go meanwhile).
fn table() -> Vec<Row> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter_map(|pid| parse(pid, &std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?))
        .collect()
}

/// `/proc/<pid>/stat`'s fields after the command name, which is in parentheses and may
/// itself hold spaces and parentheses: state ppid pgrp session.
fn parse(pid: i32, stat: &str) -> Option<Row> {
    let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace();
    let ended = matches!(rest.next()?, "Z" | "X");
    let mut next = || rest.next()?.parse::<i32>().ok();
    Some(Row { pid, ppid: next()?, pgrp: next()?, session: next()?, ended })
}

/// The processes descended from the members of `members` that are not members
/// themselves (a group or a session), children before grandchildren.
fn strays(rows: &[Row], member: impl Fn(&Row) -> bool) -> Vec<i32> {
    let mut known: Vec<i32> = rows.iter().filter(|r| member(r)).map(|r| r.pid).collect();
    let mut found = Vec::new();
    // Each pass adds the children of what is known; a tree is at most as deep as the table.
    loop {
        let before = found.len();
        for row in rows {
            if known.contains(&row.ppid) && !known.contains(&row.pid) {
                known.push(row.pid);
                found.push(row.pid);
            }
        }
        if found.len() == before {
            return found;
        }
    }
}

/// The descendants of process group `pgid` that left it.
pub(super) fn strays_of_group(pgid: i32) -> Vec<i32> {
    strays(&table(), |r| r.pgrp == pgid)
}

/// How many members of process group `pgid` have not ended (zombies have).
pub(super) fn running_in_group(pgid: i32) -> usize {
    table().iter().filter(|r| r.pgrp == pgid && !r.ended).count()
}

/// Every member of session `sid`, and the descendants that left it.
pub(super) fn session_and_strays(sid: i32) -> Vec<i32> {
    let rows = table();
    let mut pids: Vec<i32> = rows.iter().filter(|r| r.session == sid).map(|r| r.pid).collect();
    pids.extend(strays(&rows, |r| r.session == sid));
    pids
}

/// Sends `signal` to each of `pids` (never 0 or 1, nor Kiln itself).
pub(super) fn signal_each(pids: &[i32], signal: libc::c_int) {
    let own = std::process::id() as i32;
    for &pid in pids.iter().filter(|&&p| p > 1 && p != own) {
        // SAFETY: kill(2) of a process Kiln started, or one of its descendants.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_read_past_a_command_name_with_parentheses() {
        let row = parse(42, "42 (a (b) c) S 7 42 40 34816 42 4194560").unwrap();
        assert_eq!(row, Row { pid: 42, ppid: 7, pgrp: 42, session: 40, ended: false });
        assert!(parse(43, "43 (sleep) Z 7 42 40 0 -1 4194564").unwrap().ended);
        assert_eq!(parse(1, "garbage"), None);
    }

    #[test]
    fn strays_are_the_descendants_outside_the_group() {
        let row = |pid, ppid, pgrp| Row { pid, ppid, pgrp, session: pgrp, ended: false };
        // 10 leads the group; 11 is in it; 12 left it (setsid) and started 13; 20 is unrelated.
        let rows = [row(10, 1, 10), row(11, 10, 10), row(13, 12, 12), row(12, 11, 12), row(20, 1, 20)];
        let mut found = strays(&rows, |r| r.pgrp == 10);
        found.sort();
        assert_eq!(found, vec![12, 13]);
    }

    #[test]
    fn a_real_setsid_child_is_found_from_its_group() {
        // A shell in a group of its own that starts `setsid sleep`: the sleep is a stray.
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "setsid sleep 30 & wait"]);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().unwrap();
        let pgid = child.id() as i32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let strays = loop {
            let found = strays_of_group(pgid);
            if !found.is_empty() || std::time::Instant::now() > deadline {
                break found;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert_eq!(strays.len(), 1, "{strays:?}");
        signal_each(&strays, libc::SIGKILL);
        // SAFETY: the group this test started.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
        child.wait().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::path::Path::new(&format!("/proc/{}", strays[0])).exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", strays[0])).unwrap_or_default();
        assert!(stat.is_empty() || stat.contains(") Z"), "the stray still runs: {stat}");
    }
}
