//! The `git-pr` delivery target (SPEC §12): lands a session's files on a branch made
//! from a fresh `<remote>/<base>` in a temporary worktree, runs install/enable/typecheck
//! there, holds the change to the guardrail (module directories, lockfiles and, in the
//! direct workflow, the files outside every module the session changed; within the
//! limits) before any commit, commits with the session's title in the repository's own
//! commit style, pushes with a lease that never overwrites a
//! branch that is not this session's, and opens (or updates) the pull request through
//! GitHub's REST API, else `gh`, else a compare link. Every step is reported through a
//! [`StepSink`] with redacted output; the worktree is always removed, and a failed run
//! leaves no branch it made, locally or on the remote.
//!
//! The inputs are plain ([`GitPrInput`]) so the delivery core calls this without coupling:
//! it resolves the session, gates, settings and token, and this module does the git work.

pub mod github;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::api::types::{DeliverySettingsView, PullRequestView};
use crate::delivery::git::{Git, GitError, GitErrorKind, GitOutput, Redactor};
use crate::delivery::StepSink;
use crate::error::{ApiError, ErrorCode, Result};
use crate::process;

/// The trailer a Kiln commit carries; a remote branch whose tip has this session's is
/// this session's to update.
pub const SESSION_TRAILER: &str = "Kiln-Session";

/// The lockfiles a delivery may change besides the module directories.
pub const DEFAULT_LOCKFILES: &[&str] = &["package-lock.json", "pnpm-lock.yaml", "yarn.lock", "Cargo.lock"];

/// One module of the session being delivered.
#[derive(Debug, Clone)]
pub struct GitPrModule {
    /// The module's id (`@shop/wishlist`): the commit subject names it.
    pub id: String,
    /// Its directory, relative to the workspace (`modules/wishlist`): an allowed prefix.
    pub directory: String,
    /// A module the session created (`kiln: add`), not one it changed (`kiln: update`).
    pub is_new: bool,
    /// The workspace's `enable` command for this module, already filled in; run only for new modules.
    pub enable: Option<String>,
}

/// One row of the gate table.
#[derive(Debug, Clone)]
pub struct GateRow {
    /// `None` for a workspace gate.
    pub module: Option<String>,
    pub gate: String,
    /// `passed`, `failed`, `skipped` or `not configured`.
    pub status: String,
    pub duration_ms: u64,
}

/// What the pull request (and the commit) say.
#[derive(Debug, Clone, Default)]
pub struct GitPrBody {
    /// The title; `None`: the commit subject (see [`commit_subject_for`]).
    pub title: Option<String>,
    /// A short description of the change (markdown).
    pub what_changed: String,
    pub gates: Vec<GateRow>,
    /// Workspace-relative paths.
    pub added: Vec<String>,
    pub modified: Vec<String>,
    pub removed: Vec<String>,
    /// `(module id, SHA-256 of its specification)`.
    pub spec_hashes: Vec<(String, String)>,
}

/// Everything one git-pr delivery needs, resolved by the delivery core. Its `Debug`
/// never shows the token.
#[derive(Clone)]
pub struct GitPrInput {
    /// The git work tree that holds the workspace (the repository that has the remote).
    pub host_repo: PathBuf,
    /// The workspace's directory inside `host_repo`, relative (`""` when it is the root;
    /// an absolute path under `host_repo` is taken too).
    pub workspace_dir: PathBuf,
    /// Where the temporary worktree goes: `<host>/.kiln/worktrees/<session>` (absolute,
    /// or relative to `host_repo`). Whatever a crash left there is cleaned first.
    pub worktree_dir: PathBuf,
    /// Where `install` and `typecheck` get their home and temporary directory
    /// (`crate::sandbox::Scope`): the session's directory; by default beside the worktree.
    pub session_dir: PathBuf,
    pub session_id: String,
    /// The files to land: `(workspace-relative path, Some(file in the session's working
    /// copy) | None for a deletion)`.
    pub files: Vec<(String, Option<PathBuf>)>,
    /// The session's modules; the first names the branch.
    pub modules: Vec<GitPrModule>,
    /// Lockfile names allowed to change at the workspace root (see [`DEFAULT_LOCKFILES`]).
    pub lockfiles: Vec<String>,
    /// Direct workflow: the workspace-relative files outside every module that the session
    /// changed (a root lockfile, `CHANGELOG.md`, `.github/…`). The guardrail allows exactly
    /// these besides the module directories and lockfiles; empty in the specs workflow.
    pub root_files: Vec<String>,
    /// The session's title: the commit subject is made from it (else from the brief's first
    /// line), in the base branch's commit style. With neither: `kiln: add|update <module>`.
    pub title: Option<String>,
    /// The session's brief: the commit body carries it.
    pub brief: Option<String>,
    pub max_changed_files: usize,
    pub max_new_dependencies: usize,
    /// The packages the session adds that the workspace lacks.
    pub new_dependencies: Vec<String>,
    /// Shell commands run in the worktree's workspace directory; `None`: skipped.
    pub install: Option<String>,
    pub typecheck: Option<String>,
    /// How long one of those commands may run.
    pub command_timeout: Duration,
    pub settings: DeliverySettingsView,
    /// The provider token for `settings.api_url`, opened.
    pub token: Option<String>,
    pub body: GitPrBody,
    /// Another git (a path from Settings; a test's recording wrapper). `None`: `git` on PATH.
    pub git_program: Option<PathBuf>,
    /// Extra variables for every git process (tests point `HOME` at an empty directory).
    pub git_env: Vec<(String, String)>,
    /// Another `gh`; `None`: `gh` on PATH, when there is one.
    pub gh_program: Option<PathBuf>,
}

impl std::fmt::Debug for GitPrInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitPrInput")
            .field("host_repo", &self.host_repo)
            .field("workspace_dir", &self.workspace_dir)
            .field("worktree_dir", &self.worktree_dir)
            .field("session_id", &self.session_id)
            .field("files", &self.files.len())
            .field("modules", &self.modules)
            .field("settings", &self.settings)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .finish_non_exhaustive()
    }
}

impl GitPrInput {
    /// An input with the defaults (lockfiles, limits, timeout) for the rest to be filled.
    pub fn new(
        host_repo: impl Into<PathBuf>,
        session_id: impl Into<String>,
        settings: DeliverySettingsView,
    ) -> GitPrInput {
        let host_repo = host_repo.into();
        let session_id = session_id.into();
        GitPrInput {
            worktree_dir: host_repo.join(".kiln/worktrees").join(&session_id),
            session_dir: host_repo.join(".kiln/worktrees").join(format!("{session_id}.session")),
            host_repo,
            workspace_dir: PathBuf::new(),
            session_id,
            files: Vec::new(),
            modules: Vec::new(),
            lockfiles: DEFAULT_LOCKFILES.iter().map(|s| s.to_string()).collect(),
            root_files: Vec::new(),
            title: None,
            brief: None,
            max_changed_files: 50,
            max_new_dependencies: 5,
            new_dependencies: Vec::new(),
            install: None,
            typecheck: None,
            command_timeout: Duration::from_secs(600),
            settings,
            token: None,
            body: GitPrBody::default(),
            git_program: None,
            git_env: Vec::new(),
            gh_program: None,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Availability

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

fn check_branch_part(name: &str) -> std::result::Result<(), String> {
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
pub fn owner_repo(setting: Option<&str>, remote_url: &str) -> Option<(String, String)> {
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

/// The branch a session's delivery pushes: `<prefix>/<module dir's last segment>-<first 8
/// of the session id>`. With several modules, the first one's directory names it.
pub fn branch_name(prefix: &str, modules: &[GitPrModule], session_id: &str) -> String {
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
pub fn commit_subject(modules: &[GitPrModule]) -> String {
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

fn gate_counts(gates: &[GateRow]) -> String {
    let count = |s: &str| gates.iter().filter(|g| g.status == s).count();
    let mut text = format!("{} passed, {} failed, {} skipped", count("passed"), count("failed"), count("skipped"));
    if count("not configured") > 0 {
        text.push_str(&format!(", {} not configured", count("not configured")));
    }
    text
}

/// The commit style a base branch's recent subjects show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitStyle {
    /// Most subjects are plain sentences (or there is no history to read): `<Title>`.
    Plain,
    /// Most subjects are conventional commits (`fix(cart): …`, `feat: …`). `scoped`: most
    /// of those name a scope; `scopes`: the scopes seen, most recent first.
    Conventional { scoped: bool, scopes: Vec<String> },
}

/// The commit types of conventional commits.
const CONVENTIONAL_TYPES: &[&str] =
    &["feat", "fix", "docs", "style", "refactor", "perf", "test", "build", "ci", "chore", "revert"];

/// A subject's conventional prefix: `(type, scope)` of `type(scope)!: text`, if it has one.
fn conventional(subject: &str) -> Option<(&str, Option<&str>)> {
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
pub fn commit_style(subjects: &[String]) -> CommitStyle {
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

/// The recent commit subjects of `rev` in `repo`, most recent first (at most 20).
pub fn recent_subjects(repo: &Path, rev: &str) -> Vec<String> {
    let read = || -> std::result::Result<Vec<String>, git2::Error> {
        let repo = git2::Repository::open(repo)?;
        let mut walk = repo.revwalk()?;
        walk.push(repo.revparse_single(rev)?.peel_to_commit()?.id())?;
        let mut out = Vec::new();
        for oid in walk.take(40) {
            let commit = repo.find_commit(oid?)?;
            if commit.parent_count() > 1 {
                continue;
            }
            out.push(commit.summary().unwrap_or_default().to_string());
            if out.len() == 20 {
                break;
            }
        }
        Ok(out)
    };
    read().unwrap_or_default()
}

/// `fix` when the brief or title speaks of a fault (fix, bug, broken, crash, wrong), else `feat`.
fn change_type(text: &str) -> &'static str {
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
fn lower_first(text: &str) -> String {
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
pub fn commit_subject_for(input: &GitPrInput, style: &CommitStyle) -> String {
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
pub fn commit_message(input: &GitPrInput, subject: &str) -> String {
    let mut text = format!("{subject}\n\n");
    let title = input.title.as_deref().map(|t| t.trim().trim_end_matches('.'));
    if let Some(brief) =
        input.brief.as_deref().map(str::trim).filter(|b| !b.is_empty() && Some(b.trim_end_matches('.')) != title)
    {
        text.push_str(brief);
        text.push_str("\n\n");
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
            g.status
        ));
    }
    text.push_str(&format!("\n{SESSION_TRAILER}: {}\n", input.session_id));
    text
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// The pull request's body: what changed, the gate table, the files, the specification
/// hashes and the session id.
pub fn pr_body(input: &GitPrInput) -> String {
    let b = &input.body;
    let mut out = String::from("## What changed\n\n");
    out.push_str(if b.what_changed.trim().is_empty() { "(no description)" } else { b.what_changed.trim() });
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
                cell(&g.status),
                g.duration_ms as f64 / 1000.0
            ));
        }
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

/// The web root for a compare link: `https://api.github.com` → `https://github.com`,
/// `https://host/api/v3` (GitHub Enterprise) → `https://host`.
pub fn web_root(api_url: &str) -> String {
    let api = api_url.trim_end_matches('/');
    if api.eq_ignore_ascii_case("https://api.github.com") {
        return "https://github.com".into();
    }
    if let Some(root) = api.strip_suffix("/api/v3") {
        return root.to_string();
    }
    "https://github.com".into()
}

pub fn compare_url(api_url: &str, owner: &str, repo: &str, base: &str, branch: &str) -> String {
    format!("{}/{owner}/{repo}/compare/{base}...{branch}", web_root(api_url))
}

/// Whether a token for `api_url` may be given to git for `remote_url`: only for the same
/// provider (`api.github.com` → `github.com`; an Enterprise API → its own host), over http(s).
fn token_origin_for(api_url: &str, remote_url: &str) -> bool {
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

// ---------------------------------------------------------------------------------------
// The run

/// Reports steps with every text redacted.
struct Steps<'a> {
    sink: &'a dyn StepSink,
    redactor: Redactor,
}

impl Steps<'_> {
    fn start(&self, id: &str, title: &str, module: Option<&str>) {
        self.sink.start(id, &self.redactor.redact(title), module);
    }
    fn pass(&self, id: &str, output: &str) {
        self.sink.pass(id, &self.redactor.redact(output));
    }
    fn fail(&self, id: &str, output: &str) {
        self.sink.fail(id, &self.redactor.redact(output));
    }
    fn skip(&self, id: &str, why: &str) {
        self.sink.skip(id, &self.redactor.redact(why));
    }
    /// Fails step `id` with `output` and returns the error to stop with.
    fn stop(&self, id: &str, code: ErrorCode, message: &str, output: &str) -> ApiError {
        let message = self.redactor.redact(message);
        let shown =
            if output.trim().is_empty() { message.clone() } else { format!("{message}\n\n{}", output.trim_end()) };
        self.fail(id, &shown);
        ApiError::new(code, message)
    }
    /// A git failure at step `id`.
    fn git_stop(&self, id: &str, err: GitError) -> ApiError {
        let code = match err.kind {
            GitErrorKind::RemoteMoved => ErrorCode::BranchMoved,
            GitErrorKind::InvalidInput => ErrorCode::InvalidInput,
            GitErrorKind::NotAWorktree => ErrorCode::PathNotAllowed,
            GitErrorKind::RemoteUnreachable
            | GitErrorKind::AuthenticationFailed
            | GitErrorKind::RefNotFound
            | GitErrorKind::NotInstalled => ErrorCode::TargetUnavailable,
            _ => ErrorCode::Internal,
        };
        let output = err.output.as_ref().map(shown).unwrap_or_default();
        self.stop(id, code, &err.message, &output)
    }
}

/// A git command as a step shows it.
fn shown(out: &GitOutput) -> String {
    let body = out.output.trim_end();
    if body.is_empty() {
        format!("$ {}", out.command)
    } else {
        format!("$ {}\n{body}", out.command)
    }
}

/// What a run changed that a failure must put back.
#[derive(Default)]
struct Undo {
    /// The local branch before the run (a previous delivery's), if it existed.
    local_before: Option<String>,
    /// The remote-tracking ref before the run.
    tracking_before: Option<String>,
    /// The run reached the worktree step (so a local branch may exist).
    branch_touched: bool,
}

struct Ctx<'a> {
    input: &'a GitPrInput,
    steps: Steps<'a>,
    branch: String,
    base_ref: String,
    worktree: PathBuf,
    workspace_rel: PathBuf,
    owner: String,
    repo: String,
    token_for_git: Option<String>,
}

impl Ctx<'_> {
    fn git(&self, dir: &Path) -> Git {
        let mut git = Git::new(dir).with_redactor(&self.steps.redactor);
        if let Some(program) = &self.input.git_program {
            git = git.with_program(program);
        }
        for (k, v) in &self.input.git_env {
            git = git.with_env(k, v);
        }
        if let (Some(token), Some(url)) = (&self.input.token, &self.token_for_git) {
            // Checked before the run: bound to the remote's own origin only.
            if let Ok(with) = git.clone().with_token(token, url) {
                git = with;
            }
        }
        git
    }

    fn host(&self) -> Git {
        self.git(&self.input.host_repo)
    }

    fn wt(&self) -> Git {
        self.git(&self.worktree)
    }

    fn wt_workspace(&self) -> PathBuf {
        self.worktree.join(&self.workspace_rel)
    }

    /// A workspace-relative path as a repository-relative one (git's paths).
    fn repo_path(&self, rel: &str) -> String {
        let joined = self.workspace_rel.join(rel);
        joined.to_string_lossy().trim_start_matches("./").to_string()
    }
}

/// Runs the git-pr delivery: each step through `sink`, the worktree always removed, and
/// on failure the branch it made removed (locally, and on the remote when this run pushed
/// it and the pull request could not be made).
pub async fn deliver(input: GitPrInput, sink: &dyn StepSink) -> Result<PullRequestView> {
    let mut redactor = Redactor::new();
    if let Some(token) = input.token.as_deref().filter(|t| !t.is_empty()) {
        redactor.add(token);
    }
    let steps = Steps { sink, redactor };
    let ctx = prepare(&input, steps)?;
    let mut undo = Undo::default();
    let result = run(&ctx, &mut undo).await;
    cleanup(&ctx, &undo, result.is_ok()).await;
    result
}

/// Checks the input and works out the names; nothing runs.
fn prepare<'a>(input: &'a GitPrInput, steps: Steps<'a>) -> Result<Ctx<'a>> {
    let s = &input.settings;
    if input.modules.is_empty() {
        return Err(ApiError::invalid("a delivery needs at least one module"));
    }
    for (what, name) in [("remote", &s.remote), ("base branch", &s.base), ("branch prefix", &s.branch_prefix)] {
        check_branch_part(name)
            .map_err(|why| ApiError::invalid(format!("the {what} '{name}' is not usable: {why}")))?;
    }
    let session_ok =
        !input.session_id.is_empty() && input.session_id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if !session_ok {
        return Err(ApiError::new(ErrorCode::InvalidSessionId, "the session id is not usable"));
    }
    let host_repo =
        input.host_repo.canonicalize().map_err(|e| ApiError::invalid(format!("{}: {e}", input.host_repo.display())))?;
    let workspace_rel = if input.workspace_dir.is_absolute() {
        let real = input.workspace_dir.canonicalize().unwrap_or_else(|_| input.workspace_dir.clone());
        real.strip_prefix(&host_repo).map(Path::to_path_buf).map_err(|_| {
            ApiError::invalid(format!(
                "the workspace {} is not inside {}",
                input.workspace_dir.display(),
                host_repo.display()
            ))
        })?
    } else if input.workspace_dir.as_os_str().is_empty() || input.workspace_dir == Path::new(".") {
        PathBuf::new()
    } else {
        crate::paths::relative(&input.workspace_dir.to_string_lossy())?
    };
    let worktree = if input.worktree_dir.is_absolute() {
        input.worktree_dir.clone()
    } else {
        input.host_repo.join(&input.worktree_dir)
    };
    let remote_url = git2::Repository::open(&input.host_repo)
        .ok()
        .and_then(|r| r.find_remote(&s.remote).ok().and_then(|remote| remote.url().map(String::from)))
        .unwrap_or_default();
    let (owner, repo) = owner_repo(s.repository.as_deref(), &remote_url).unwrap_or_default();
    let token_for_git =
        (input.token.is_some() && token_origin_for(&s.api_url, &remote_url)).then_some(remote_url.clone());
    if let (Some(token), Some(url)) = (&input.token, &token_for_git) {
        Git::new(&input.host_repo).with_token(token, url).map_err(|e| ApiError::invalid(e.message))?;
    }
    Ok(Ctx {
        branch: branch_name(&s.branch_prefix, &input.modules, &input.session_id),
        base_ref: format!("{}/{}", s.remote, s.base),
        input,
        steps,
        worktree,
        workspace_rel,
        owner,
        repo,
        token_for_git,
    })
}

async fn run(ctx: &Ctx<'_>, undo: &mut Undo) -> Result<PullRequestView> {
    let input = ctx.input;
    let s = &input.settings;
    let steps = &ctx.steps;
    let api = access(ctx).await?;

    // fetch
    steps.start("fetch", &format!("Fetch {} {}", s.remote, s.base), None);
    match ctx.host().fetch(&s.remote, &s.base).await {
        Ok(out) => steps.pass("fetch", &shown(&out)),
        Err(e) => return Err(steps.git_stop("fetch", e)),
    }

    // worktree
    steps.start("worktree", &format!("Create a worktree of {} on {}", ctx.base_ref, ctx.branch), None);
    let host = ctx.host();
    let mut output = Vec::new();
    match host.worktree_remove(&ctx.worktree).await {
        Ok(out) => {
            if !out.output.trim().is_empty() {
                output.push(format!("cleaned what an earlier run left:\n{}", shown(&out)));
            }
        }
        Err(e) => return Err(steps.git_stop("worktree", e)),
    }
    undo.local_before = host.rev_parse(&format!("refs/heads/{}", ctx.branch)).await.ok().flatten();
    undo.tracking_before = host.rev_parse(&format!("refs/remotes/{}/{}", s.remote, ctx.branch)).await.ok().flatten();
    undo.branch_touched = true;
    match host.worktree_add(&ctx.worktree, &ctx.base_ref, &ctx.branch).await {
        Ok(out) => output.push(shown(&out)),
        Err(e) => return Err(steps.git_stop("worktree", e)),
    }
    steps.pass("worktree", &output.join("\n"));

    // copy and removals
    steps.start("copy", "Copy the session's files and apply its removals", None);
    match copy_files(ctx) {
        Ok(out) => steps.pass("copy", &out),
        Err(e) => return Err(steps.stop("copy", e.code, &e.message, "")),
    }

    // install
    command_step(ctx, "install", "Install dependencies", None, input.install.as_deref()).await?;

    // enable (new modules)
    let wt = ctx.wt();
    let before_enable = status_paths(&wt).await;
    let mut any_enable = false;
    for module in &input.modules {
        if module.is_new && module.enable.is_some() {
            any_enable = true;
            let id = format!("enable:{}", module.id);
            command_step(ctx, &id, &format!("Enable {}", module.id), Some(&module.id), module.enable.as_deref())
                .await?;
        }
    }
    if !any_enable {
        steps.start("enable", "Enable new modules", None);
        steps.skip("enable", "no new module to enable");
    }
    let enabled_paths: BTreeSet<String> = if any_enable {
        status_paths(&wt).await.difference(&before_enable).cloned().collect()
    } else {
        BTreeSet::new()
    };

    // typecheck
    command_step(ctx, "typecheck", "Typecheck", None, input.typecheck.as_deref()).await?;

    // guardrail
    steps.start(
        "guardrail",
        "Check what changed: the session's modules, lockfiles and root files only, within the limits",
        None,
    );
    let (changed, _) = match wt.changed_paths(&ctx.base_ref).await {
        Ok(found) => found,
        Err(e) => return Err(steps.git_stop("guardrail", e)),
    };
    let verdict = guardrail(ctx, &changed, &enabled_paths);
    match verdict {
        Ok(report) => steps.pass("guardrail", &report),
        Err((message, report)) => return Err(steps.stop("guardrail", ErrorCode::DeliveryBlocked, &message, &report)),
    }

    // commit: the subject in the base branch's own style, as `git log` shows it
    let subject = commit_subject_for(
        input,
        &commit_style(&recent_subjects(&input.host_repo, &format!("refs/remotes/{}", ctx.base_ref))),
    );
    let message = commit_message(input, &subject);
    steps.start("commit", &format!("Commit \"{subject}\""), None);
    let commit_sha = match wt.commit(&message, None).await {
        Ok((sha, out)) => {
            steps.pass("commit", &format!("{}\ncommitted {sha}", shown(&out)));
            sha
        }
        Err(e) => return Err(steps.git_stop("commit", e)),
    };

    // push
    steps.start("push", &format!("Push {} to {}", ctx.branch, s.remote), None);
    let (expected, mut push_out) = match lease(ctx).await {
        Ok(found) => found,
        Err(e) => return Err(e),
    };
    match host.push(&s.remote, &ctx.branch, &ctx.branch, expected.as_deref()).await {
        Ok(out) => {
            push_out.push(shown(&out));
            steps.pass("push", &push_out.join("\n"));
        }
        Err(e) => return Err(steps.git_stop("push", e)),
    }

    // pull request
    steps.start("pull-request", "Open the pull request", None);
    match pull_request(ctx, api.as_ref(), &subject).await {
        Ok((view, out)) => {
            steps.pass("pull-request", &out);
            Ok(view)
        }
        Err((message, out)) => {
            let undone = unpush(ctx, expected.as_deref(), &commit_sha).await;
            Err(steps.stop("pull-request", ErrorCode::TargetUnavailable, &message, &format!("{out}\n{undone}")))
        }
    }
}

/// The push-access step: `fork` is refused; `auto` with a token asks the API whether it
/// may push; `direct`, or no token, push with what git has.
async fn access(ctx: &Ctx<'_>) -> Result<Option<github::Api>> {
    let input = ctx.input;
    let s = &input.settings;
    let steps = &ctx.steps;
    steps.start("access", "Check the repository and push access", None);
    if ctx.owner.is_empty() {
        return Err(steps.stop(
            "access",
            ErrorCode::TargetUnavailable,
            "set the repository (owner/name) in the delivery settings: it cannot be read from the remote's address",
            "",
        ));
    }
    let api = match input.token.as_deref().filter(|t| !t.is_empty()) {
        Some(token) => match github::Api::new(&s.api_url, token, &ctx.owner, &ctx.repo) {
            Ok(api) => Some(api),
            Err(e) => return Err(steps.stop("access", ErrorCode::InvalidInput, &e, "")),
        },
        None => None,
    };
    match s.push_mode.as_str() {
        "fork" => Err(steps.stop(
            "access",
            ErrorCode::TargetUnavailable,
            "fork mode needs the operator's confirmation to create a fork, which Kiln does not offer yet: use push mode `auto` or `direct`",
            "",
        )),
        "direct" => {
            steps.pass("access", &format!("push mode direct: pushing to {}/{} through '{}'", ctx.owner, ctx.repo, s.remote));
            Ok(api)
        }
        "auto" => match &api {
            None => {
                steps.pass("access", &format!("no token: pushing with your own git credentials for '{}'; no API check", s.remote));
                Ok(None)
            }
            Some(client) => match client.can_push().await {
                Ok(true) => {
                    steps.pass("access", &format!("the token may push to {}/{}", ctx.owner, ctx.repo));
                    Ok(api)
                }
                Ok(false) => Err(steps.stop(
                    "access",
                    ErrorCode::TargetUnavailable,
                    &format!(
                        "the token may not push to {}/{}: pushing to a fork (push mode `fork`) needs the operator's confirmation, which Kiln does not offer yet",
                        ctx.owner, ctx.repo
                    ),
                    "",
                )),
                Err(e) => Err(steps.stop("access", ErrorCode::TargetUnavailable, &format!("cannot read {}/{} through the API", ctx.owner, ctx.repo), &e)),
            },
        },
        other => Err(steps.stop("access", ErrorCode::InvalidInput, &format!("unknown push mode '{other}'"), "")),
    }
}

/// The paths `git status` lists in the worktree (to tell what `enable` changed).
async fn status_paths(git: &Git) -> BTreeSet<String> {
    match git.status_porcelain().await {
        Ok((entries, _)) => entries.into_iter().map(|(code, path)| format!("{code}\0{path}")).collect(),
        Err(_) => BTreeSet::new(),
    }
}

fn copy_files(ctx: &Ctx<'_>) -> Result<String> {
    let root = ctx.wt_workspace();
    let mut lines = Vec::new();
    for (rel, source) in &ctx.input.files {
        // As named, with no link followed on the way: the base branch may hold a link to a
        // directory where the session has a real one, and writing through it would land
        // the file wherever the link leads. A link in the file's own place is replaced or
        // removed itself, never what it points to.
        let dest = crate::paths::confine_as_named(&root, rel)?;
        match source {
            Some(source) => {
                let meta = std::fs::symlink_metadata(source)
                    .map_err(|e| ApiError::invalid(format!("{rel}: the session's file cannot be read: {e}")))?;
                if !meta.is_file() {
                    return Err(ApiError::new(
                        ErrorCode::PathNotAllowed,
                        format!("{rel}: the session's copy is not a regular file"),
                    ));
                }
                let existed = dest.symlink_metadata().is_ok();
                if let Some(parent) = dest.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| ApiError::internal(&format!("creating the directory of {rel}"), e))?;
                }
                if dest.symlink_metadata().map(|m| m.is_symlink()).unwrap_or(false) {
                    std::fs::remove_file(&dest)
                        .map_err(|e| ApiError::internal(&format!("replacing the link {rel}"), e))?;
                }
                std::fs::copy(source, &dest).map_err(|e| ApiError::internal(&format!("copying {rel}"), e))?;
                lines.push(format!("{} {rel}", if existed { "updated" } else { "added" }));
            }
            None => match dest.symlink_metadata() {
                Ok(m) if m.is_dir() => {
                    return Err(ApiError::new(
                        ErrorCode::PathNotAllowed,
                        format!("{rel} is a directory in the base branch, not a file"),
                    ))
                }
                Ok(_) => {
                    std::fs::remove_file(&dest).map_err(|e| ApiError::internal(&format!("removing {rel}"), e))?;
                    lines.push(format!("removed {rel}"));
                }
                Err(_) => lines.push(format!("{rel} is already absent from the base branch")),
            },
        }
    }
    if lines.is_empty() {
        lines.push("no files to land".into());
    }
    Ok(lines.join("\n"))
}

/// The scope of a configured command in the delivery worktree: it runs the delivered
/// code, so like gates (`crate::sandbox::Scope`), writing only to the worktree, with the
/// session's cleared environment and home and the worktree's binaries first on PATH.
fn command_scope(ctx: &Ctx<'_>, dir: &Path) -> std::io::Result<crate::sandbox::Scope> {
    let writable = [ctx.worktree.as_path()];
    crate::sandbox::Scope::new(&ctx.input.session_dir, &writable, &[dir.join("node_modules/.bin")], &[])
}

async fn command_step(ctx: &Ctx<'_>, id: &str, title: &str, module: Option<&str>, command: Option<&str>) -> Result<()> {
    let steps = &ctx.steps;
    steps.start(id, title, module);
    let Some(command) = command.filter(|c| !c.trim().is_empty()) else {
        steps.skip(id, &format!("no {} command is configured", id.split(':').next().unwrap_or(id)));
        return Ok(());
    };
    let dir = ctx.wt_workspace();
    let ran = match command_scope(ctx, &dir) {
        Ok(scope) => process::run_scoped(command, &dir, &scope, ctx.input.command_timeout, |_| {}).await,
        Err(e) => Err(e),
    };
    let outcome = match ran {
        Ok(outcome) => outcome,
        Err(e) => {
            return Err(steps.stop(id, ErrorCode::DeliveryBlocked, &format!("`{command}` could not start: {e}"), ""))
        }
    };
    let mut text = format!("$ {command}\n{}", outcome.head);
    if !outcome.tail.is_empty() {
        text.push_str(&format!("\n[… output cut …]\n{}", outcome.tail));
    }
    if outcome.passed() {
        steps.pass(id, &text);
        return Ok(());
    }
    let why = if outcome.timed_out {
        format!("`{command}` did not finish within {} s", ctx.input.command_timeout.as_secs())
    } else {
        format!(
            "`{command}` failed (exit {})",
            outcome.exit_code.map(|c| c.to_string()).unwrap_or_else(|| "by a signal".into())
        )
    };
    Err(steps.stop(id, ErrorCode::DeliveryBlocked, &format!("{title}: {why}"), &text))
}

/// The guardrail's report, or `(message, report)` naming the violations.
fn guardrail(
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
    if changed.len() > input.max_changed_files {
        problems.push(format!(
            "{} files changed, more than max_changed_files = {}",
            changed.len(),
            input.max_changed_files
        ));
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

/// What the push may replace: `(None)` when the branch must not exist, or its current
/// SHA when its tip is this session's (a second delivery). A branch someone else made is
/// `BRANCH_MOVED`, with the push step failed.
async fn lease(ctx: &Ctx<'_>) -> Result<(Option<String>, Vec<String>)> {
    let s = &ctx.input.settings;
    let steps = &ctx.steps;
    let host = ctx.host();
    let (current, out) = match host.remote_branch_sha(&s.remote, &ctx.branch).await {
        Ok(found) => found,
        Err(e) => return Err(steps.git_stop("push", e)),
    };
    let mut lines = vec![shown(&out)];
    let Some(sha) = current else {
        lines.push(format!("{} does not exist on {}: creating it", ctx.branch, s.remote));
        return Ok((None, lines));
    };
    match host.fetch(&s.remote, &ctx.branch).await {
        Ok(out) => lines.push(shown(&out)),
        Err(e) => return Err(steps.git_stop("push", e)),
    }
    let trailer = format!("{SESSION_TRAILER}: {}", ctx.input.session_id);
    let ours = git2::Repository::open(&ctx.input.host_repo)
        .ok()
        .and_then(|repo| {
            let oid = git2::Oid::from_str(&sha).ok()?;
            let commit = repo.find_commit(oid).ok()?;
            let message = commit.message().unwrap_or_default().to_string();
            Some(message.lines().any(|l| l.trim() == trailer))
        })
        .unwrap_or(false);
    if !ours {
        let message = format!(
            "the branch '{}' already exists on '{}' at {} and was not made by this session (its tip has no `{trailer}`): nothing was pushed, so that work is kept",
            ctx.branch,
            s.remote,
            &sha[..sha.len().min(12)]
        );
        return Err(steps.stop("push", ErrorCode::BranchMoved, &message, &lines.join("\n")));
    }
    lines.push(format!(
        "{} is this session's earlier delivery ({}): replacing it only if it is still there",
        ctx.branch,
        &sha[..sha.len().min(12)]
    ));
    Ok((Some(sha), lines))
}

/// Opens or updates the pull request: API with the token, else gh, else a compare link.
/// On failure, `(message, output)`.
async fn pull_request(
    ctx: &Ctx<'_>,
    api: Option<&github::Api>,
    subject: &str,
) -> std::result::Result<(PullRequestView, String), (String, String)> {
    let input = ctx.input;
    let s = &input.settings;
    let title = input.body.title.clone().filter(|t| !t.trim().is_empty()).unwrap_or_else(|| subject.to_string());
    let body = pr_body(input);
    let view = |url: String, number: Option<u64>, via: &str, created: bool| PullRequestView {
        url,
        number,
        branch: ctx.branch.clone(),
        via: via.into(),
        created,
    };

    if let Some(api) = api {
        let mut out = Vec::new();
        let existing = api
            .find_open(&ctx.branch, &s.base)
            .await
            .map_err(|e| (format!("the pull request could not be looked up: {e}"), String::new()))?;
        let (pull, created) = match existing.and_then(|p| p.number.map(|n| (n, p))) {
            Some((number, _)) => {
                let pull = api
                    .update(number, &title, &body)
                    .await
                    .map_err(|e| (format!("the pull request #{number} could not be updated: {e}"), String::new()))?;
                out.push(format!("updated the open pull request #{number}: {}", pull.url));
                (pull, false)
            }
            None => {
                let pull = api
                    .create(&ctx.branch, &s.base, &title, &body)
                    .await
                    .map_err(|e| (format!("the pull request could not be created: {e}"), String::new()))?;
                out.push(format!("created pull request #{}: {}", pull.number.unwrap_or(0), pull.url));
                (pull, true)
            }
        };
        if !s.reviewers.is_empty() {
            if let Some(number) = pull.number {
                match api.request_reviewers(number, &s.reviewers).await {
                    Ok(()) => out.push(format!("requested reviews from {}", s.reviewers.join(", "))),
                    // The pull request stands; a reviewer GitHub refuses is worth saying, not undoing.
                    Err(e) => out.push(format!("warning: reviewers could not be requested: {e}")),
                }
            }
        }
        return Ok((view(pull.url, pull.number, "api", created), out.join("\n")));
    }

    if let Some(gh) = github::find_gh(input.gh_program.as_deref()) {
        let dir = &input.host_repo;
        let repo = format!("{}/{}", ctx.owner, ctx.repo);
        if let Ok((true, _, _)) = github::gh(&gh, dir, &["auth", "status"], None).await {
            return gh_pull_request(ctx, &gh, &repo, &title, &body)
                .await
                .map(|(url, number, created, out)| (view(url, number, "gh", created), out));
        }
    }

    let url = compare_url(&s.api_url, &ctx.owner, &ctx.repo, &s.base, &ctx.branch);
    let out = format!("no token and no signed-in gh: open the pull request from the compare page\n{url}");
    Ok((view(url, None, "compare", true), out))
}

async fn gh_pull_request(
    ctx: &Ctx<'_>,
    gh: &Path,
    repo: &str,
    title: &str,
    body: &str,
) -> std::result::Result<(String, Option<u64>, bool, String), (String, String)> {
    let s = &ctx.input.settings;
    let dir = &ctx.input.host_repo;
    let fail = |what: &str, out: String| (format!("gh could not {what}"), out);
    let (ok, stdout, both) = github::gh(
        gh,
        dir,
        &["pr", "list", "--repo", repo, "--head", &ctx.branch, "--state", "open", "--json", "number,url"],
        None,
    )
    .await
    .map_err(|e| fail("list pull requests", e))?;
    if !ok {
        return Err(fail("list pull requests", both));
    }
    let listed: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap_or(serde_json::Value::Null);
    if let Some(first) = listed.as_array().and_then(|a| a.first()) {
        let number = first.get("number").and_then(|n| n.as_u64());
        let url = first.get("url").and_then(|u| u.as_str()).unwrap_or_default().to_string();
        let n = number.map(|n| n.to_string()).unwrap_or_default();
        let (ok, _, both) =
            github::gh(gh, dir, &["pr", "edit", &n, "--repo", repo, "--title", title, "--body-file", "-"], Some(body))
                .await
                .map_err(|e| fail("update the pull request", e))?;
        if !ok {
            return Err(fail("update the pull request", both));
        }
        return Ok((url.clone(), number, false, format!("updated the open pull request #{n} with gh: {url}")));
    }
    let mut args = vec![
        "pr",
        "create",
        "--repo",
        repo,
        "--head",
        &ctx.branch,
        "--base",
        &s.base,
        "--title",
        title,
        "--body-file",
        "-",
    ];
    let reviewers = s.reviewers.join(",");
    if !reviewers.is_empty() {
        args.extend(["--reviewer", &reviewers]);
    }
    let (ok, stdout, both) =
        github::gh(gh, dir, &args, Some(body)).await.map_err(|e| fail("create the pull request", e))?;
    if !ok {
        return Err(fail("create the pull request", both));
    }
    let url = stdout.lines().rev().find(|l| l.trim().starts_with("http")).unwrap_or_default().trim().to_string();
    let number = url.rsplit('/').next().and_then(|n| n.parse().ok());
    Ok((url.clone(), number, true, format!("created the pull request with gh: {url}\n{both}")))
}

/// Puts the remote branch back after a pull request could not be made: deleted when this
/// run created it, else back to the session's earlier delivery; both with a lease on what
/// this run pushed, so nobody else's push is undone.
async fn unpush(ctx: &Ctx<'_>, previous: Option<&str>, pushed: &str) -> String {
    let s = &ctx.input.settings;
    let host = ctx.host();
    match previous {
        None => match host.delete_remote_branch(&s.remote, &ctx.branch, pushed).await {
            Ok(out) => format!("removed the branch {} this run pushed to {}\n{}", ctx.branch, s.remote, shown(&out)),
            Err(e) => format!(
                "the branch {} this run pushed could not be removed from {}: {}",
                ctx.branch, s.remote, e.message
            ),
        },
        Some(old) => {
            let restored = git2::Repository::open(&ctx.input.host_repo).and_then(|repo| {
                let oid = git2::Oid::from_str(old)?;
                repo.reference(&format!("refs/heads/{}", ctx.branch), oid, true, "kiln: put back the earlier delivery")
                    .map(|_| ())
            });
            if let Err(e) = restored {
                return format!("the earlier delivery of {} could not be put back locally: {e}", ctx.branch);
            }
            match host.push(&s.remote, &ctx.branch, &ctx.branch, Some(pushed)).await {
                Ok(out) => {
                    format!("put {} on {} back to the earlier delivery {old}\n{}", ctx.branch, s.remote, shown(&out))
                }
                Err(e) => format!("{} on {} could not be put back to {old}: {}", ctx.branch, s.remote, e.message),
            }
        }
    }
}

/// The last step: remove the worktree always; on failure, the local branch (or put it
/// back to an earlier delivery) and a remote-tracking ref this run made.
async fn cleanup(ctx: &Ctx<'_>, undo: &Undo, succeeded: bool) {
    let steps = &ctx.steps;
    let title = if succeeded { "Remove the worktree" } else { "Remove the worktree and the branch" };
    steps.start("cleanup", title, None);
    let host = ctx.host();
    let mut lines = Vec::new();
    let mut ok = true;
    match host.worktree_remove(&ctx.worktree).await {
        Ok(out) => lines.push(shown(&out)),
        Err(e) => {
            ok = false;
            lines.push(format!("the worktree {} could not be removed: {}", ctx.worktree.display(), e.message));
        }
    }
    // An empty `.kiln/worktrees` left behind is no worktree; leave the directory alone.
    if !succeeded && undo.branch_touched {
        let local = format!("refs/heads/{}", ctx.branch);
        let tracking = format!("refs/remotes/{}/{}", ctx.input.settings.remote, ctx.branch);
        for (name, before) in [(&local, &undo.local_before), (&tracking, &undo.tracking_before)] {
            match put_back_ref(&ctx.input.host_repo, name, before.as_deref()) {
                Ok(Some(line)) => lines.push(line),
                Ok(None) => {}
                Err(e) => {
                    ok = false;
                    lines.push(format!("{name} could not be put back: {e}"));
                }
            }
        }
    }
    let text = lines.join("\n");
    if ok {
        steps.pass("cleanup", &text);
    } else {
        steps.fail("cleanup", &text);
    }
}

/// `name` back to `before` (deleted when it did not exist); a line saying what changed.
fn put_back_ref(repo: &Path, name: &str, before: Option<&str>) -> std::result::Result<Option<String>, git2::Error> {
    let repo = git2::Repository::open(repo)?;
    let now = repo.find_reference(name).ok().and_then(|r| r.target()).map(|o| o.to_string());
    if now.as_deref() == before {
        return Ok(None);
    }
    match before {
        None => {
            repo.find_reference(name)?.delete()?;
            Ok(Some(format!("removed {name}")))
        }
        Some(sha) => {
            repo.reference(name, git2::Oid::from_str(sha)?, true, "kiln: put back after a failed delivery")?;
            Ok(Some(format!("put {name} back to {sha}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            },
            GateRow {
                module: Some("@shop/catalog".into()),
                gate: "lint".into(),
                status: "not configured".into(),
                duration_ms: 0,
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
    }

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
