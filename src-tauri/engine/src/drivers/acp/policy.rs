//! Kiln's answer to an ACP agent's `session/request_permission`, by the command policy in
//! Settings, as the other drivers' permission flags decide it for Claude Code and Codex:
//! reading, searching and thinking are allowed; edits (and deletes and moves) inside the
//! working copy are allowed unless the turn is read-only; commands are allowed under
//! "commands in the working copy" and refused under "no commands" or in a read-only turn.
//! What the policy has no rule for (fetching from the network, switching the agent's mode,
//! other tools, or any path outside the working copy) is the operator's to answer.

use serde_json::Value;

use super::super::events::ToolKind;
use kiln_types::{CommandPolicy, PermissionChoice, PermissionChoiceKind};

/// What the policy says about one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Decision {
    Allow(&'static str),
    Refuse(&'static str),
    /// Undecided: the operator answers; the text says why, in words.
    Ask(&'static str),
}

/// The decision for a call of ACP tool kind `kind` whose locations are all inside the
/// working copy (`inside`) or not.
pub(super) fn decide(kind: Option<&str>, inside: bool, policy: CommandPolicy, read_only: bool) -> Decision {
    if !inside {
        return Decision::Ask("it names a path outside the session's working copy");
    }
    match kind {
        Some("read" | "search" | "think") => Decision::Allow("reading and searching the working copy are allowed"),
        Some("edit" | "delete" | "move") if read_only => Decision::Refuse("a read-only turn changes no files"),
        Some("edit" | "delete" | "move") => Decision::Allow("edits inside the working copy are allowed"),
        Some("execute") if policy == CommandPolicy::None => {
            Decision::Refuse("the command policy is \"no commands\" (Settings)")
        }
        Some("execute") if read_only => Decision::Refuse("a read-only turn runs no commands"),
        Some("execute") => Decision::Allow("commands run confined to the working copy"),
        Some("fetch") => Decision::Ask("the policy has no rule for fetching from the network"),
        Some("switch_mode") => Decision::Ask("the policy has no rule for switching the agent's mode"),
        _ => Decision::Ask("the policy has no rule for this kind of tool"),
    }
}

/// Kiln's tool kind for an ACP tool kind: deletes and moves are edits, a mode switch is
/// another tool.
pub(super) fn tool_kind(kind: Option<&str>) -> ToolKind {
    match kind {
        Some("read") => ToolKind::Read,
        Some("edit" | "delete" | "move") => ToolKind::Edit,
        Some("execute") => ToolKind::Execute,
        Some("search") => ToolKind::Search,
        Some("fetch") => ToolKind::Fetch,
        Some("think") => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// The agent's options whose kind Kiln knows, for the operator's card.
pub(super) fn choices(options: &Value) -> Vec<PermissionChoice> {
    options
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|option| {
            let kind = match option["kind"].as_str()? {
                "allow_once" => PermissionChoiceKind::AllowOnce,
                "allow_always" => PermissionChoiceKind::AllowAlways,
                "reject_once" => PermissionChoiceKind::RejectOnce,
                "reject_always" => PermissionChoiceKind::RejectAlways,
                _ => return None,
            };
            let id = option["optionId"].as_str()?.to_string();
            let name = option["name"].as_str().unwrap_or(&id).to_string();
            Some(PermissionChoice { id, name, kind })
        })
        .collect()
}

/// The agent's own option for allowing (`allow`) or refusing: the one-time option first,
/// so Kiln never grants or refuses for good on its own. `None` when the agent offers none.
pub(super) fn option_for(options: &Value, allow: bool) -> Option<String> {
    let preferred = if allow { ["allow_once", "allow_always"] } else { ["reject_once", "reject_always"] };
    let options = options.as_array()?;
    preferred.iter().find_map(|kind| {
        options.iter().find(|o| o["kind"] == *kind).and_then(|o| o["optionId"].as_str()).map(String::from)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_policy_decides_by_kind_place_and_command_policy() {
        use CommandPolicy::{None as NoCommands, Workdir};
        let allowed = |d: Decision| matches!(d, Decision::Allow(_));
        let refused = |d: Decision| matches!(d, Decision::Refuse(_));
        let asked = |d: Decision| matches!(d, Decision::Ask(_));
        for kind in ["read", "search", "think"] {
            assert!(allowed(decide(Some(kind), true, NoCommands, true)), "{kind}");
        }
        for kind in ["edit", "delete", "move"] {
            assert!(allowed(decide(Some(kind), true, NoCommands, false)), "{kind}");
            assert!(refused(decide(Some(kind), true, Workdir, true)), "{kind} in a read-only turn");
            assert!(asked(decide(Some(kind), false, Workdir, false)), "{kind} outside");
        }
        assert!(allowed(decide(Some("execute"), true, Workdir, false)));
        assert!(refused(decide(Some("execute"), true, NoCommands, false)));
        assert!(refused(decide(Some("execute"), true, Workdir, true)));
        for kind in [Some("fetch"), Some("switch_mode"), Some("other"), Some("teleport"), None] {
            assert!(asked(decide(kind, true, Workdir, false)), "{kind:?}");
        }
        assert!(asked(decide(Some("read"), false, Workdir, false)), "a read outside the working copy");
    }

    #[test]
    fn the_one_time_option_is_preferred() {
        let options = json!([
            {"optionId": "always", "name": "Always", "kind": "allow_always"},
            {"optionId": "once", "name": "Once", "kind": "allow_once"},
            {"optionId": "never", "name": "Never", "kind": "reject_always"},
        ]);
        assert_eq!(option_for(&options, true).as_deref(), Some("once"));
        assert_eq!(option_for(&options, false).as_deref(), Some("never"));
        assert_eq!(option_for(&json!([{"optionId": "a", "kind": "allow_always"}]), false), None);
        let kinds: Vec<_> = choices(&options).into_iter().map(|c| c.kind).collect();
        assert_eq!(
            kinds,
            [PermissionChoiceKind::AllowAlways, PermissionChoiceKind::AllowOnce, PermissionChoiceKind::RejectAlways]
        );
        assert_eq!(tool_kind(Some("move")), ToolKind::Edit);
        assert_eq!(tool_kind(Some("switch_mode")), ToolKind::Other);
    }
}
