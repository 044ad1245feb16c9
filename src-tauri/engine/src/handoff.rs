//! The line every turn ends with (ARCHITECTURE.md: Workflows and the chain): `HANDOFF: <role-id> - <why>` or
//! `HANDOFF: none - <why>`. Parsed forgivingly: any case, a display name instead of an
//! id, any dash or a colon as the separator, Markdown emphasis, a trailing full stop.

use crate::roles::{self, Role};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A role of the workspace, by id.
    Role(String),
    /// `none`: the turn is done (review) or waits for the operator.
    None,
    /// A name that is no role; routing decides instead.
    Unknown(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handoff {
    pub target: Target,
    pub reason: String,
}

/// The last `HANDOFF:` line of a turn's final text, if it has one.
pub fn parse(text: &str, roles: &[Role]) -> Option<Handoff> {
    text.lines().rev().find_map(|line| parse_line(line, roles))
}

fn parse_line(line: &str, roles: &[Role]) -> Option<Handoff> {
    let line = line.trim().trim_matches(['*', '_', '`', '>', ' ']);
    let upper = line.to_ascii_uppercase();
    let at = upper.find("HANDOFF")?;
    let rest = line[at + "HANDOFF".len()..].trim_start_matches(['*', '_', '`']).trim_start();
    let rest = rest.strip_prefix(':')?.trim().trim_start_matches(['*', '_', '`']);
    // The target runs to the first separator: " - ", " – ", " — ", ":" or end of line.
    let separators = [" - ", " – ", " — ", ": ", " -- "];
    let (name, reason) = separators
        .iter()
        .filter_map(|sep| rest.find(sep).map(|i| (i, sep.len())))
        .min_by_key(|(i, _)| *i)
        .map(|(i, len)| (&rest[..i], &rest[i + len..]))
        .unwrap_or((rest, ""));
    let name = name.trim().trim_matches(['*', '_', '`', '.']).trim();
    let reason = reason.trim().trim_end_matches('.').trim().to_string();
    if name.is_empty() {
        return None;
    }
    let target = if name.eq_ignore_ascii_case("none") {
        Target::None
    } else {
        match roles::find(roles, name) {
            Some(role) => Target::Role(role.id.clone()),
            None => Target::Unknown(name.to_string()),
        }
    };
    Some(Handoff { target, reason })
}
