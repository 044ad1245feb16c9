//! What each kind of terminal runs, with which environment and confinement:
//!
//! - `shell`: the user's shell (`$SHELL`, else bash, else sh) as a session's commands run
//!   (`kiln_runtime::process::project_scope`): the session's cleared environment and home, writing
//!   only to the working copy and the session's home and temporary directory, Kiln's own
//!   state not even readable. What Kiln sets for unattended commands (`PAGER=cat`, no git
//!   prompts) is left out, since a person is at this terminal; the user's own `CI` or
//!   `NO_COLOR`, when they have them, stay.
//! - `claude` / `codex`: the agent's CLI as the drivers build it for a turn (the binary
//!   from Settings or the usual places, their variables over the operator's environment,
//!   their confinement), resuming the session's conversation when it has one; Claude Code
//!   trusts the session's copy when the user trusted the repository.
//!
//! Every kind gets `TERM=xterm-256color` and `COLORTERM=truecolor`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::ids::SessionId;
use crate::workspace::Workspace;
use kiln_types::error::Result;
use kiln_types::{SessionView, TerminalKind};

/// The variables a scope sets for unattended commands, which an interactive shell leaves out
/// (`TERM` and `COLORTERM` are the terminal's own, set below).
const UNATTENDED: &[&str] = &["PAGER", "GIT_PAGER", "GIT_TERMINAL_PROMPT", "TERM", "COLORTERM"];

/// Whose environment the program starts from.
pub(super) enum Base {
    /// Only the given variables (a session's scope).
    Only,
    /// The operator's, without Kiln's own, with the given variables over it (an agent CLI).
    Operator,
}

/// A program ready to be started in a terminal.
pub(super) struct Launch {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub base: Base,
    pub env: Vec<(String, String)>,
    pub confinement: kiln_runtime::sandbox::Confinement,
    pub title: String,
}

fn terminal_vars() -> Vec<(String, String)> {
    vec![("TERM".into(), "xterm-256color".into()), ("COLORTERM".into(), "truecolor".into())]
}

/// What a terminal of `kind` runs for the session `id` working in `workdir`.
pub(super) async fn prepare(
    ws: &Workspace,
    id: &SessionId,
    session: &SessionView,
    kind: TerminalKind,
    workdir: &Path,
) -> Result<Launch> {
    match kind {
        TerminalKind::Shell => {
            let scope = kiln_runtime::process::project_scope(
                &ws.session_dir(id),
                &[workdir],
                &[workdir],
                &[],
                &ws.config.environment,
            )?;
            let mut env: Vec<(String, String)> =
                scope.env().iter().filter(|(k, _)| !UNATTENDED.contains(&k.as_str())).cloned().collect();
            env.extend(terminal_vars());
            let shell = shell();
            let title = shell.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "shell".into());
            Ok(Launch {
                program: shell.into_os_string(),
                args: Vec::new(),
                base: Base::Only,
                env,
                confinement: scope.confinement().clone(),
                title,
            })
        }
        TerminalKind::Claude => {
            let resume = session.resume_ids.get("claude").map(String::as_str);
            let repository = crate::drivers::claude::Repository {
                root: &ws.root,
                git_root: ws.git.as_ref().map(|g| g.workdir.as_path()),
            };
            let cli = crate::drivers::registry::claude(ws).await?.interactive(
                workdir,
                &repository,
                resume,
                session.model.as_deref(),
            )?;
            let title = if resume.is_some() { "claude --resume" } else { "claude" };
            Ok(agent(cli, title))
        }
        TerminalKind::Codex => {
            let thread = session.resume_ids.get("codex").map(String::as_str);
            let cli =
                crate::drivers::registry::codex(ws).await?.interactive(workdir, thread, session.model.as_deref())?;
            let title = if thread.is_some() { "codex resume" } else { "codex" };
            Ok(agent(cli, title))
        }
    }
}

fn agent(cli: crate::drivers::runner::Interactive, title: &str) -> Launch {
    let mut env = cli.env;
    env.extend(terminal_vars());
    Launch {
        program: cli.binary.into_os_string(),
        args: cli.args.into_iter().map(OsString::from).collect(),
        base: Base::Operator,
        env,
        confinement: cli.confinement,
        title: title.to_string(),
    }
}

/// The user's shell: `$SHELL` when it is an absolute path to a program, else bash, else sh.
fn shell() -> PathBuf {
    let executable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
    };
    let user = std::env::var_os("SHELL").map(PathBuf::from).filter(|p| p.is_absolute() && executable(p));
    user.or_else(|| Some(PathBuf::from("/bin/bash")).filter(|p| executable(p)))
        .unwrap_or_else(|| PathBuf::from("/bin/sh"))
}
