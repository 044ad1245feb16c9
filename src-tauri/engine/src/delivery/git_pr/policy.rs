//! What a delivery may do: whether git-pr can be used at all, which repository a remote
//! names, which origin a token may be sent to, and the guardrail every change is held to
//! before a commit (module directories, lockfiles, and in the direct workflow the files
//! outside every module the session changed, within the limits).

use std::collections::BTreeSet;
use std::path::Path;

use super::context::Ctx;
use super::github;
use kiln_types::DeliverySettingsView;

/// Whether git-pr can be used for a workspace in `host_repo`, with the reason when not.
pub fn available(host_repo: Option<&Path>, settings: &DeliverySettingsView) -> std::result::Result<(), String> {
    let Some(dir) = host_repo else {
        return Err("the workspace is not inside a git repository".into());
    };
    let repo =
        git2::Repository::discover(dir).map_err(|_| format!("{} is not inside a git repository", dir.display()))?;
    if repo.is_bare() {
        return Err(format!("{} is a bare repository: git-pr needs a work tree", dir.display()));
    }
    if settings.remote.is_empty() || settings.remote.starts_with('-') {
        return Err("no remote is set in the delivery settings".into());
    }
    let remote = repo.find_remote(&settings.remote).map_err(|_| {
        format!(
            "the repository has no remote '{}' (add one with `git remote add {} <url>`, or choose another remote in the delivery settings)",
            settings.remote, settings.remote
        )
    })?;
    let url = remote.url().unwrap_or_default().to_string();
    for (what, name) in [("base branch", &settings.base), ("branch prefix", &settings.branch_prefix)] {
        check_branch_part(name).map_err(|why| format!("the {what} '{name}' is not usable: {why}"))?;
    }
    match settings.push_mode.as_str() {
        "auto" | "direct" => {}
        "fork" => return Err("push mode `fork` needs the operator's confirmation to create a fork, which Kiln does not offer yet: use `auto` or `direct`".into()),
        other => return Err(format!("unknown push mode '{other}' (auto, direct or fork)")),
    }
    if owner_repo(settings.repository.as_deref(), &url).is_none() {
        return Err(
            "set the repository (owner/name) in the delivery settings: it cannot be read from the remote's address"
                .into(),
        );
    }
    Ok(())
}

pub(super) fn check_branch_part(name: &str) -> std::result::Result<(), String> {
    if name.is_empty() || name.starts_with('-') || name.starts_with('/') || name.ends_with('/') || name.contains("..") {
        return Err("git does not allow it".into());
    }
    if name.chars().any(|c| c.is_control() || c.is_whitespace() || "~^:?*[\\@{".contains(c)) {
        return Err("it holds spaces, control characters or one of ~ ^ : ? * [ \\ @ {".into());
    }
    if name.split('/').any(|p| p.is_empty() || p.starts_with('.') || p.ends_with(".lock")) {
        return Err("git does not allow it".into());
    }
    Ok(())
}

/// `(owner, repo)`: from the setting, else from a GitHub-style remote address
/// (`https://host/owner/repo(.git)`, `git@host:owner/repo.git`, `ssh://git@host/owner/repo`).
pub(crate) fn owner_repo(setting: Option<&str>, remote_url: &str) -> Option<(String, String)> {
    let split = |s: &str| -> Option<(String, String)> {
        let s = s.trim().trim_end_matches('/');
        let s = s.strip_suffix(".git").unwrap_or(s);
        let (owner, repo) = s.split_once('/')?;
        (github::valid_name(owner) && github::valid_name(repo)).then(|| (owner.to_string(), repo.to_string()))
    };
    if let Some(setting) = setting.filter(|s| !s.trim().is_empty()) {
        return split(setting);
    }
    let path = if let Some((_, rest)) = remote_url.split_once("://") {
        let (host, path) = rest.split_once('/')?;
        if host.is_empty() {
            return None; // file:///path
        }
        path
    } else if let Some((host, path)) = remote_url.split_once(':') {
        if host.contains('/') || !host.contains('@') && !host.contains('.') {
            return None;
        }
        path
    } else {
        return None;
    };
    let parts: Vec<&str> = path.trim_end_matches('/').rsplitn(3, '/').collect();
    (parts.len() >= 2).then(|| split(&format!("{}/{}", parts[1], parts[0]))).flatten()
}

/// Whether a token for `api_url` may be given to git for `remote_url`: only for the same
/// provider (`api.github.com` → `github.com`; an Enterprise API → its own host), over http(s).
pub(super) fn token_origin_for(api_url: &str, remote_url: &str) -> bool {
    let host = |url: &str| -> Option<String> {
        let (scheme, rest) = url.split_once("://")?;
        if !scheme.eq_ignore_ascii_case("https") && !scheme.eq_ignore_ascii_case("http") {
            return None;
        }
        let authority = rest.split(['/', '?', '#']).next()?;
        Some(authority.rsplit('@').next()?.to_ascii_lowercase())
    };
    match (host(api_url), host(remote_url)) {
        (Some(api), Some(remote)) => api == remote || api == format!("api.{remote}"),
        _ => false,
    }
}

/// The guardrail's report, or `(message, report)` naming the violations.
pub(super) fn guardrail(
    ctx: &Ctx<'_>,
    changed: &[(String, String)],
    enabled: &BTreeSet<String>,
) -> std::result::Result<String, (String, String)> {
    let input = ctx.input;
    // A whole-repository module (`.`) allows everything under the workspace.
    let prefix = |dir: &str| match dir.trim_end_matches('/') {
        "" | "." => ctx.repo_path("").trim_end_matches('/').to_string(),
        dir => ctx.repo_path(dir),
    };
    let prefixes: Vec<String> = input
        .modules
        .iter()
        .map(|m| prefix(&m.directory))
        .map(|p| if p.is_empty() { p } else { format!("{p}/") })
        .collect();
    let lockfiles: Vec<String> = input.lockfiles.iter().map(|l| ctx.repo_path(l)).collect();
    let root_files: BTreeSet<String> = input.root_files.iter().map(|f| ctx.repo_path(f)).collect();
    // `[delivery] screenshots = "commit"`: exactly these, and not counted as the change's files.
    let evidence: BTreeSet<String> =
        input.evidence.committed(&input.session_id).iter().map(|(rel, _)| ctx.repo_path(rel)).collect();
    let by_enable: BTreeSet<&str> = enabled.iter().filter_map(|e| e.split_once('\0').map(|(_, p)| p)).collect();
    let mut outside = Vec::new();
    let mut report = Vec::new();
    for (status, path) in changed {
        let why = if prefixes.iter().any(|p| path.starts_with(p.as_str())) {
            "module"
        } else if lockfiles.contains(path) {
            "lockfile"
        } else if root_files.contains(path) {
            "outside the modules, changed by the session"
        } else if evidence.contains(path) {
            "screenshot of the preview"
        } else if by_enable.contains(path.as_str()) {
            "written by enable"
        } else {
            outside.push(path.clone());
            "NOT ALLOWED"
        };
        report.push(format!("{status} {path} ({why})"));
    }
    let mut problems = Vec::new();
    if changed.is_empty() {
        problems.push(format!("nothing changed against {}: there is nothing to deliver", ctx.base_ref));
    }
    if !outside.is_empty() {
        problems.push(format!(
            "{} path(s) outside the session's modules, the lockfiles and its own root files changed: {}",
            outside.len(),
            outside.join(", ")
        ));
    }
    let counted = changed.iter().filter(|(_, p)| !evidence.contains(p)).count();
    if counted > input.max_changed_files {
        problems.push(format!("{} files changed, more than max_changed_files = {}", counted, input.max_changed_files));
    }
    if input.new_dependencies.len() > input.max_new_dependencies {
        problems.push(format!(
            "{} new dependencies ({}), more than max_new_dependencies = {}",
            input.new_dependencies.len(),
            input.new_dependencies.join(", "),
            input.max_new_dependencies
        ));
    }
    let summary = format!(
        "{} changed path(s) (limit {}), {} new dependenc{} (limit {})",
        changed.len(),
        input.max_changed_files,
        input.new_dependencies.len(),
        if input.new_dependencies.len() == 1 { "y" } else { "ies" },
        input.max_new_dependencies
    );
    let body = format!("{summary}\n{}", report.join("\n"));
    if problems.is_empty() {
        Ok(body)
    } else {
        Err((format!("the guardrail stopped the delivery before any commit: {}", problems.join("; ")), body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delivery::git_pr::message::web_root;

    #[test]
    fn repositories_from_remotes() {
        let pair = |o: &str, r: &str| Some((o.to_string(), r.to_string()));
        assert_eq!(owner_repo(Some("acme/shop"), ""), pair("acme", "shop"));
        assert_eq!(owner_repo(None, "https://github.com/acme/shop.git"), pair("acme", "shop"));
        assert_eq!(owner_repo(None, "git@github.com:acme/shop.git"), pair("acme", "shop"));
        assert_eq!(owner_repo(None, "ssh://git@github.com/acme/shop"), pair("acme", "shop"));
        assert_eq!(owner_repo(None, "/tmp/remote.git"), None);
        assert_eq!(owner_repo(None, "file:///tmp/x/remote.git"), None);
        assert_eq!(owner_repo(Some("acme"), ""), None);
    }

    #[test]
    fn tokens_go_only_to_their_provider() {
        assert!(token_origin_for("https://api.github.com", "https://github.com/acme/shop.git"));
        assert!(token_origin_for("https://ghe.example.com/api/v3", "https://ghe.example.com/acme/shop.git"));
        assert!(!token_origin_for("https://api.github.com", "https://gitlab.com/acme/shop.git"));
        assert!(!token_origin_for("https://api.github.com", "git@github.com:acme/shop.git"));
        assert_eq!(web_root("https://api.github.com/"), "https://github.com");
        assert_eq!(web_root("https://ghe.example.com/api/v3"), "https://ghe.example.com");
    }
}
