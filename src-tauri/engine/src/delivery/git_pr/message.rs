//! How a delivery is worded: the branch name, the commit subject in the repository's own
//! style (conventional or plain, read from its recent history), the commit message with
//! the brief and the gates, the pull request's body, the provider's web addresses, and a
//! git command as a step shows it.

use std::path::Path;

use super::{GateRow, GitPrInput, GitPrModule, SESSION_TRAILER};
use crate::delivery::git::GitOutput;
use kiln_types::IssueLink;

/// The branch a session's delivery pushes: `<prefix>/<module dir's last segment>-<first 8
/// of the session id>`. With several modules, the first one's directory names it.
pub(crate) fn branch_name(prefix: &str, modules: &[GitPrModule], session_id: &str) -> String {
    let segment = modules
        .first()
        .and_then(|m| Path::new(&m.directory).file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "change".into());
    let mut clean: String = segment
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c.to_ascii_lowercase() } else { '-' })
        .collect();
    clean = clean.trim_matches('-').to_string();
    if clean.is_empty() {
        clean = "change".into();
    }
    let short: String = session_id.chars().filter(|c| c.is_ascii_alphanumeric()).take(8).collect();
    format!("{}/{clean}-{short}", prefix.trim_end_matches('/'))
}

/// `kiln: add @shop/a` (several: `kiln: add @shop/a, @shop/b; update @shop/c`).
pub(super) fn commit_subject(modules: &[GitPrModule]) -> String {
    let ids =
        |new: bool| modules.iter().filter(|m| m.is_new == new).map(|m| m.id.as_str()).collect::<Vec<_>>().join(", ");
    let mut parts = Vec::new();
    let (added, updated) = (ids(true), ids(false));
    if !added.is_empty() {
        parts.push(format!("add {added}"));
    }
    if !updated.is_empty() {
        parts.push(format!("update {updated}"));
    }
    if parts.is_empty() {
        parts.push("update the workspace".into());
    }
    format!("kiln: {}", parts.join("; "))
}

pub(super) fn gate_counts(gates: &[GateRow]) -> String {
    let count = |s: &str| gates.iter().filter(|g| g.status == s).count();
    let mut text = format!("{} passed, {} failed, {} skipped", count("passed"), count("failed"), count("skipped"));
    if count("failing before") > 0 {
        text.push_str(&format!(", {} failing before the change", count("failing before")));
    }
    if count("not configured") > 0 {
        text.push_str(&format!(", {} not configured", count("not configured")));
    }
    text
}

/// The commit style a base branch's recent subjects show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum CommitStyle {
    /// Most subjects are plain sentences (or there is no history to read): `<Title>`.
    Plain,
    /// Most subjects are conventional commits (`fix(cart): …`, `feat: …`). `scoped`: most
    /// of those name a scope; `scopes`: the scopes seen, most recent first.
    Conventional { scoped: bool, scopes: Vec<String> },
}

/// The commit types of conventional commits.
pub(super) const CONVENTIONAL_TYPES: &[&str] =
    &["feat", "fix", "docs", "style", "refactor", "perf", "test", "build", "ci", "chore", "revert"];

/// A subject's conventional prefix: `(type, scope)` of `type(scope)!: text`, if it has one.
pub(super) fn conventional(subject: &str) -> Option<(&str, Option<&str>)> {
    let (head, rest) = subject.split_once(':')?;
    if !rest.starts_with(' ') || rest.trim().is_empty() {
        return None;
    }
    let head = head.strip_suffix('!').unwrap_or(head);
    let (kind, scope) = match head.split_once('(') {
        Some((kind, scope)) => (kind, Some(scope.strip_suffix(')')?.trim())),
        None => (head, None),
    };
    CONVENTIONAL_TYPES.contains(&kind).then_some((kind, scope.filter(|s| !s.is_empty())))
}

/// The style of `subjects` (most recent first; merges are not counted): conventional when
/// more than half of the last 20 are.
pub(super) fn commit_style(subjects: &[String]) -> CommitStyle {
    let recent: Vec<&str> =
        subjects.iter().map(|s| s.trim()).filter(|s| !s.is_empty() && !s.starts_with("Merge ")).take(20).collect();
    let parsed: Vec<(&str, Option<&str>)> = recent.iter().filter_map(|s| conventional(s)).collect();
    if recent.is_empty() || parsed.len() * 2 <= recent.len() {
        return CommitStyle::Plain;
    }
    let mut scopes: Vec<String> = Vec::new();
    for scope in parsed.iter().filter_map(|(_, scope)| *scope) {
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_string());
        }
    }
    let scoped = parsed.iter().filter(|(_, scope)| scope.is_some()).count() * 2 > parsed.len();
    CommitStyle::Conventional { scoped, scopes }
}

/// `fix` when the brief or title speaks of a fault (fix, bug, broken, crash, wrong), else `feat`.
pub(super) fn change_type(text: &str) -> &'static str {
    const FAULT: &[&str] = &[
        "fix", "fixes", "fixed", "fixing", "bug", "bugs", "buggy", "broken", "crash", "crashes", "crashed", "crashing",
        "wrong", "wrongly",
    ];
    let fault = text.split(|c: char| !c.is_alphanumeric()).any(|w| FAULT.contains(&w.to_lowercase().as_str()));
    if fault {
        "fix"
    } else {
        "feat"
    }
}

/// The first letter in lower case, unless the first word is an acronym or a name
/// (`API`, `GitHub`, `README`).
pub(super) fn lower_first(text: &str) -> String {
    let first_word = text.split_whitespace().next().unwrap_or_default();
    if first_word.chars().skip(1).any(char::is_uppercase) {
        return text.to_string();
    }
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The commit subject: the session's title (else the brief's first line) in `style`;
/// with neither, the Kiln subject ([`commit_subject`]). Conventional: `type(scope): title`
/// (the type from the brief's words, the scope a module's directory name when the history
/// uses scopes, preferring one it has used), a title already in that form kept as it is.
pub(super) fn commit_subject_for(input: &GitPrInput, style: &CommitStyle) -> String {
    let title = input
        .title
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .or_else(|| input.brief.as_deref().and_then(|b| b.lines().map(str::trim).find(|l| !l.is_empty())));
    let Some(title) = title else { return commit_subject(&input.modules) };
    let title = title.trim_end_matches('.').trim_end();
    let CommitStyle::Conventional { scoped, scopes } = style else { return title.to_string() };
    if conventional(title).is_some() {
        return title.to_string();
    }
    let words = format!("{title}\n{}", input.brief.as_deref().unwrap_or_default());
    let kind = change_type(&words);
    let names: Vec<String> = input
        .modules
        .iter()
        .flat_map(|m| {
            let dir =
                Path::new(&m.directory).file_name().map(|n| n.to_string_lossy().into_owned()).filter(|n| n != ".");
            let id = m.id.rsplit('/').next().map(str::to_string);
            dir.into_iter().chain(id)
        })
        .filter(|n| !n.is_empty())
        .collect();
    let scope = names.iter().find(|n| scopes.contains(n)).or(if *scoped { names.first() } else { None });
    match scope {
        Some(scope) => format!("{kind}({scope}): {}", lower_first(title)),
        None => format!("{kind}: {}", lower_first(title)),
    }
}

/// The commit message: subject, the brief (unless it says no more than the title),
/// session, gate summary, and the session trailer.
pub(super) fn commit_message(input: &GitPrInput, subject: &str) -> String {
    let mut text = format!("{subject}\n\n");
    let title = input.title.as_deref().map(|t| t.trim().trim_end_matches('.'));
    if let Some(brief) =
        input.brief.as_deref().map(str::trim).filter(|b| !b.is_empty() && Some(b.trim_end_matches('.')) != title)
    {
        text.push_str(brief);
        text.push_str("\n\n");
    }
    if !input.session_commits.is_empty() {
        text.push_str("Commits made in the session:\n");
        for message in &input.session_commits {
            let subject = message.lines().next().unwrap_or_default();
            text.push_str(&format!("- {subject}\n"));
        }
        text.push('\n');
    }
    text.push_str(&format!(
        "Delivered by Kiln from session {}.\n\nGates: {}\n",
        input.session_id,
        gate_counts(&input.body.gates)
    ));
    for g in &input.body.gates {
        text.push_str(&format!(
            "- {}{}: {}\n",
            g.module.as_deref().map(|m| format!("{m} ")).unwrap_or_default(),
            g.gate,
            g.result()
        ));
    }
    if let Some((reason, _)) = &input.body.anyway {
        text.push_str(&format!("\nDelivered past failing gates, as the operator decided: {}\n", reason.trim()));
    }
    text.push_str(&format!("\n{SESSION_TRAILER}: {}\n", input.session_id));
    text
}

pub(super) fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// The pull request's body: what changed (and the issue it closes), the gate table, the
/// screenshots (when the workspace wants them), the files, the specification hashes and the
/// session id. `base_repo` is the `owner/name` the pull request goes to.
pub(super) fn pr_body(input: &GitPrInput, base_repo: &str, screenshots: Option<&str>) -> String {
    let b = &input.body;
    let mut out = String::from("## What changed\n\n");
    out.push_str(if b.what_changed.trim().is_empty() { "(no description)" } else { b.what_changed.trim() });
    if let Some(issue) = &b.closes {
        out.push_str(&format!("\n\n{}", closing_line(issue, base_repo)));
    }
    out.push_str("\n\n## Gates\n\n");
    if b.gates.is_empty() {
        out.push_str("No gate ran.\n");
    } else {
        out.push_str("| Module | Gate | Result | Time |\n| --- | --- | --- | --- |\n");
        for g in &b.gates {
            out.push_str(&format!(
                "| {} | {} | {} | {:.1} s |\n",
                cell(g.module.as_deref().unwrap_or("(workspace)")),
                cell(&g.gate),
                cell(&g.result()),
                g.duration_ms as f64 / 1000.0
            ));
        }
    }
    if let Some((reason, blockers)) = &b.anyway {
        out.push_str("\n**Delivered past failing gates**, as the operator decided: ");
        out.push_str(reason.trim());
        out.push('\n');
        for blocker in blockers {
            out.push_str(&format!("- {}\n", blocker.replace('\n', " ")));
        }
    }
    if let Some(section) = screenshots {
        out.push('\n');
        out.push_str(section);
    }
    out.push_str("\n## Files\n");
    for (title, list) in [("Added", &b.added), ("Modified", &b.modified), ("Removed", &b.removed)] {
        out.push_str(&format!("\n**{title}** ({})\n", list.len()));
        for path in list {
            out.push_str(&format!("- `{}`\n", path.replace('`', "'")));
        }
    }
    out.push_str("\n## Specifications\n\n");
    if b.spec_hashes.is_empty() {
        out.push_str("None.\n");
    } else {
        out.push_str("| Module | SHA-256 |\n| --- | --- |\n");
        for (module, hash) in &b.spec_hashes {
            out.push_str(&format!("| {} | `{}` |\n", cell(module), cell(hash)));
        }
    }
    out.push_str(&format!("\n---\nKiln session `{}`\n", input.session_id));
    out
}

/// `Closes #N`, or `Closes owner/name#N` when the issue is in another repository than
/// the pull request's base (GitHub closes it on merge either way).
pub(super) fn closing_line(issue: &IssueLink, base_repo: &str) -> String {
    if issue.repo.eq_ignore_ascii_case(base_repo) {
        format!("Closes #{}", issue.number)
    } else {
        format!("Closes {}#{}", issue.repo, issue.number)
    }
}

/// The web root for a compare link: `https://api.github.com` → `https://github.com`,
/// `https://host/api/v3` (GitHub Enterprise) → `https://host`.
pub(crate) fn web_root(api_url: &str) -> String {
    let api = api_url.trim_end_matches('/');
    if api.eq_ignore_ascii_case("https://api.github.com") {
        return "https://github.com".into();
    }
    if let Some(root) = api.strip_suffix("/api/v3") {
        return root.to_string();
    }
    "https://github.com".into()
}

pub(super) fn compare_url(api_url: &str, owner: &str, repo: &str, base: &str, branch: &str) -> String {
    format!("{}/{owner}/{repo}/compare/{base}...{branch}", web_root(api_url))
}

/// A git command as a step shows it.
pub(super) fn shown(out: &GitOutput) -> String {
    let body = out.output.trim_end();
    if body.is_empty() {
        format!("$ {}", out.command)
    } else {
        format!("$ {}\n{body}", out.command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_types::DeliverySettingsView;

    fn module(id: &str, dir: &str, new: bool) -> GitPrModule {
        GitPrModule { id: id.into(), directory: dir.into(), is_new: new, enable: None }
    }

    #[test]
    fn names() {
        let m = [module("@shop/wishlist", "modules/wishlist", true), module("@shop/cart", "modules/cart", false)];
        assert_eq!(branch_name("kiln", &m, "1a2b3c4d-5e6f-4000-8000-000000000000"), "kiln/wishlist-1a2b3c4d");
        assert_eq!(commit_subject(&m), "kiln: add @shop/wishlist; update @shop/cart");
        assert_eq!(commit_subject(&m[1..]), "kiln: update @shop/cart");
    }

    fn subjects(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn titled(title: Option<&str>, brief: Option<&str>, modules: &[GitPrModule]) -> GitPrInput {
        let settings = DeliverySettingsView {
            repository: None,
            reviewers: Vec::new(),
            push_mode: "auto".into(),
            remote: "origin".into(),
            base: "main".into(),
            branch_prefix: "kiln".into(),
            api_url: "https://api.github.com".into(),
            token_fingerprint: None,
        };
        let mut input = GitPrInput::new("/tmp", "s", settings);
        input.title = title.map(str::to_string);
        input.brief = brief.map(str::to_string);
        input.modules = modules.to_vec();
        input
    }

    #[test]
    fn a_delivery_past_failing_gates_says_so_with_the_reason() {
        let mut input = titled(Some("Faster adder"), None, &[module("calc", ".", false)]);
        input.body.gates = vec![GateRow {
            module: Some("calc".into()),
            gate: "tests".into(),
            status: "failed".into(),
            duration_ms: 1200,
            note: "1 new failure: `adds`".into(),
        }];
        let plain = pr_body(&input, "acme/calc", None);
        assert!(!plain.contains("Delivered past"), "{plain}");
        input.body.anyway =
            Some(("the adder test is flaky upstream".into(), vec!["the `tests` gate in `calc` failed".into()]));
        let body = pr_body(&input, "acme/calc", None);
        assert!(body
            .contains("**Delivered past failing gates**, as the operator decided: the adder test is flaky upstream"));
        assert!(body.contains("- the `tests` gate in `calc` failed\n"), "{body}");
        assert!(body.contains("| calc | tests | failed (1 new failure: `adds`) | 1.2 s |"), "{body}");
        let commit = commit_message(&input, "Faster adder");
        assert!(
            commit.contains("Delivered past failing gates, as the operator decided: the adder test is flaky upstream")
        );
    }

    #[test]
    fn commit_styles_from_history() {
        let conventional = subjects(&[
            "fix(cart): keep the total",
            "feat(catalog): ratings",
            "Merge pull request #4 from x/y",
            "chore: bump",
            "docs(readme): typo",
        ]);
        assert_eq!(
            commit_style(&conventional),
            CommitStyle::Conventional { scoped: true, scopes: vec!["cart".into(), "catalog".into(), "readme".into()] }
        );
        let unscoped = subjects(&["feat: one", "fix: two", "feat!: three", "Tidy up"]);
        assert_eq!(commit_style(&unscoped), CommitStyle::Conventional { scoped: false, scopes: Vec::new() });
        let plain = subjects(&["Add a cart", "Fix the total", "feat: one", "Update README.md"]);
        assert_eq!(commit_style(&plain), CommitStyle::Plain);
        assert_eq!(commit_style(&[]), CommitStyle::Plain);
        // `Note: …` or `fix:nothing` is no conventional commit.
        assert_eq!(commit_style(&subjects(&["Note: later", "fix:nothing", "feature: x"])), CommitStyle::Plain);
    }

    #[test]
    fn subjects_from_the_title_or_brief_in_the_history_style() {
        let m = [module("@shop/cart", "modules/cart", false)];
        let scoped = CommitStyle::Conventional { scoped: true, scopes: vec!["catalog".into()] };
        let unscoped = CommitStyle::Conventional { scoped: false, scopes: Vec::new() };

        // Plain history: the title as it is (no trailing full stop).
        let input = titled(Some("Keep the cart total."), Some("The total is wrong after a removal."), &m);
        assert_eq!(commit_subject_for(&input, &CommitStyle::Plain), "Keep the cart total");
        // Conventional: fix for a fault, the module's directory as the scope when scopes are used.
        assert_eq!(commit_subject_for(&input, &scoped), "fix(cart): keep the cart total");
        assert_eq!(commit_subject_for(&input, &unscoped), "fix: keep the cart total");
        let feature = titled(Some("Show ratings"), Some("Show each product's ratings."), &m);
        assert_eq!(commit_subject_for(&feature, &scoped), "feat(cart): show ratings");
        // A scope the history used wins over the first module's directory.
        let two = [module("@shop/cart", "modules/cart", false), module("@shop/catalog", "modules/catalog", false)];
        assert_eq!(
            commit_subject_for(&titled(Some("Show ratings"), None, &two), &scoped),
            "feat(catalog): show ratings"
        );
        // Unscoped history: a scope only when the history used that one.
        assert_eq!(commit_subject_for(&titled(Some("Show ratings"), None, &two), &unscoped), "feat: show ratings");
        // Acronyms and names keep their case; a title already conventional is kept.
        assert_eq!(
            commit_subject_for(&titled(Some("API keys for the cart"), None, &m), &unscoped),
            "feat: API keys for the cart"
        );
        assert_eq!(commit_subject_for(&titled(Some("GitHub login"), None, &m), &unscoped), "feat: GitHub login");
        assert_eq!(commit_subject_for(&titled(Some("fix(cart): total"), None, &m), &scoped), "fix(cart): total");
        // No title: the brief's first line; neither: Kiln's own subject.
        assert_eq!(
            commit_subject_for(&titled(None, Some("\nCrash on an empty cart\nsee #3"), &m), &unscoped),
            "fix: crash on an empty cart"
        );
        assert_eq!(commit_subject_for(&titled(Some("  "), None, &m), &scoped), "kiln: update @shop/cart");
        // A whole-repository module (`.`) is scoped by its id; `fixture` is not a fix.
        let root = [module("solo", ".", false)];
        assert_eq!(
            commit_subject_for(&titled(Some("Add a fixture"), None, &root), &scoped),
            "feat(solo): add a fixture"
        );
    }

    #[test]
    fn a_body_closes_the_issue_in_its_repository_or_another() {
        let mut input = titled(Some("Keep the total"), Some("Keep it."), &[]);
        input.body.what_changed = "Keep it.".into();
        assert!(!pr_body(&input, "acme/shop", None).contains("Closes"));
        let link =
            |repo: &str| IssueLink { url: format!("https://github.com/{repo}/issues/7"), number: 7, repo: repo.into() };
        input.body.closes = Some(link("acme/shop"));
        assert!(
            pr_body(&input, "Acme/Shop", None).contains("Keep it.\n\nCloses #7\n"),
            "{}",
            pr_body(&input, "acme/shop", None)
        );
        input.body.closes = Some(link("acme/tracker"));
        assert!(pr_body(&input, "acme/shop", None).contains("\n\nCloses acme/tracker#7\n"));
    }

    #[test]
    fn commit_messages_carry_the_brief_and_the_gates() {
        let mut input = titled(
            Some("Show ratings"),
            Some("Show each product's ratings.\n\nOn the catalog screen."),
            &[module("@shop/catalog", "modules/catalog", false)],
        );
        input.body.gates = vec![
            GateRow {
                module: Some("@shop/catalog".into()),
                gate: "tests".into(),
                status: "passed".into(),
                duration_ms: 1,
                note: String::new(),
            },
            GateRow {
                module: Some("@shop/catalog".into()),
                gate: "lint".into(),
                status: "not configured".into(),
                duration_ms: 0,
                note: String::new(),
            },
        ];
        let message = commit_message(&input, "feat(catalog): show ratings");
        assert!(message.starts_with("feat(catalog): show ratings\n\nShow each product's ratings.\n\nOn the catalog screen.\n\nDelivered by Kiln"), "{message}");
        assert!(message.contains("Gates: 1 passed, 0 failed, 0 skipped, 1 not configured\n"), "{message}");
        assert!(message.contains("- @shop/catalog lint: not configured\n"), "{message}");
        assert!(message.ends_with("\nKiln-Session: s\n"), "{message}");
        // A one-line brief that is the title is not said twice.
        let same = titled(Some("Show ratings"), Some("Show ratings."), &[]);
        assert!(
            commit_message(&same, "Show ratings").starts_with("Show ratings\n\nDelivered by Kiln"),
            "{}",
            commit_message(&same, "Show ratings")
        );
        // Commits made in the session's checkout are named by their subjects.
        let mut committed = titled(Some("Show ratings"), Some("Show ratings."), &[]);
        committed.session_commits = vec!["Add the stars\n\nWith a body.".into(), "Test the stars".into()];
        let message = commit_message(&committed, "Show ratings");
        assert!(
            message.starts_with(
                "Show ratings\n\nCommits made in the session:\n- Add the stars\n- Test the stars\n\nDelivered by Kiln"
            ),
            "{message}"
        );
    }
}
