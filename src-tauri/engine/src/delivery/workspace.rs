//! The `workspace` target (ARCHITECTURE.md: Delivery): every gate → copy into the workspace and remove
//! deleted files (refused, with the list, when the workspace changed them since the
//! session's base; in the direct workflow the files outside every module too) →
//! `install` → `enable` for new modules → `after` hooks per module →
//! `typecheck` → optional `build` → a restart note. The copy never leaves half a
//! change: each file goes through a temp file and a rename, overwritten and deleted
//! files are backed up first and put back if the copy fails. Later steps failing do
//! not undo the copy (it is one step that passed); the session stays undelivered and
//! the delivery can be retried.
//!
//! Nothing is written through a symbolic link of the workspace: a destination with a
//! link (or a file) among the directories above it blocks the plan and is refused again
//! when the copy writes; the temp files are made exclusively under random names, so a
//! link planted at a temp name is never opened; a link in a destination's own place is
//! what gets replaced or removed, never where it points.

use std::fs::{File, Permissions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use git2::{ObjectType, Oid};

use super::plan::{ModuleChanges, StepSpec};
use super::steps::{gates_step, substitute};
use super::{Applied, Delivering, StepSink, Target, TargetPlan};
use crate::ids::SessionId;
use crate::workspace::Workspace;
use kiln_runtime::process;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

/// Install and builds can be slow; a hook hanging longer is killed with its group.
const HOOK_TIMEOUT: Duration = Duration::from_secs(15 * 60);

pub(crate) struct WorkspaceTarget;

impl Target for WorkspaceTarget {
    fn available(&self, ws: &Workspace, _: &DeliverySettingsView) -> std::result::Result<(), String> {
        if !ws.config.delivery.targets.iter().any(|t| t == "workspace") {
            return Err("`[delivery] targets` in kiln.toml omits it".into());
        }
        Ok(())
    }

    async fn plan(
        &self,
        ws: &Arc<Workspace>,
        id: &SessionId,
        _: &DeliverySettingsView,
        changes: &[ModuleChanges],
        modules: &[PlannedModule],
    ) -> Result<TargetPlan> {
        let conflicts = conflicts(ws, &ws.session_workdir(id), changes)?;
        let mut blockers = if conflicts.is_empty() { Vec::new() } else { vec![conflict_blocker(conflicts)] };
        blockers.extend(super::plan::destination_blockers(&ws.root, changes));
        Ok(TargetPlan { blockers, steps: steps(ws, changes, modules), branch: None })
    }

    async fn apply(&self, ctx: &Delivering, sink: &dyn StepSink) -> Result<Applied> {
        let ws = &ctx.ws;
        gates_step(ctx, sink).await?;

        // Copy: the conflict check is repeated now, since the workspace may have moved
        // since the plan; nothing is written when it did.
        let (written, deleted): (usize, usize) =
            ctx.changes.iter().fold((0, 0), |(w, d), c| (w + c.written.len(), d + c.deleted.len()));
        sink.start("copy", &copy_title(written, deleted), None);
        let conflicts = conflicts(ws, &ws.session_workdir(&ctx.id), &ctx.changes)?;
        if !conflicts.is_empty() {
            let blocker = conflict_blocker(conflicts);
            sink.fail("copy", &format!("{}:\n{}", blocker.message, blocker.paths.join("\n")));
            return Err(ApiError::new(
                ErrorCode::DeliveryConflict,
                format!("{}: {}", blocker.message, blocker.paths.join(", ")),
            ));
        }
        // A link may have appeared in the workspace since the plan, too.
        let in_the_way = super::plan::destination_blockers(&ws.root, &ctx.changes);
        if !in_the_way.is_empty() {
            let text: Vec<String> =
                in_the_way.iter().map(|b| format!("{}: {}", b.message, b.paths.join(", "))).collect();
            sink.fail("copy", &format!("{}\nNothing was changed.", text.join("\n")));
            return Err(ApiError::new(ErrorCode::PathNotAllowed, text.join("; ")));
        }
        let backup = ws.kiln_dir().join("deliveries").join(&ctx.run_id).join("backup");
        let landed = match copy(ws, &ws.session_workdir(&ctx.id), &ctx.changes, &backup) {
            Ok(landed) => landed,
            Err(e) => {
                sink.fail(
                    "copy",
                    &ctx.redactor.redact(&format!("{}\nNothing was changed: every file was put back.", e.message)),
                );
                return Err(e);
            }
        };
        sink.pass("copy", &format!("{written} written, {deleted} removed:\n{}", landed.join("\n")));

        let d = &ws.config.delivery;
        hook(
            ctx,
            sink,
            "install",
            "Install dependencies",
            None,
            d.install.as_deref(),
            "no `install` command in `[delivery]`",
        )
        .await?;
        for (m, c) in ctx.modules.iter().zip(&ctx.changes) {
            if m.enable {
                let cmd = substitute(d.enable.as_deref().unwrap_or_default(), &c.module);
                hook(
                    ctx,
                    sink,
                    &format!("enable:{}", m.module_id),
                    &format!("Enable {}", m.module_id),
                    Some(&m.module_id),
                    Some(&cmd),
                    "",
                )
                .await?;
            }
        }
        for c in ctx.changes.iter().filter(|c| c.group != DiffGroup::Outside) {
            for (i, after) in d.after.iter().enumerate() {
                let cmd = substitute(after, &c.module);
                let id = format!("after:{}:{i}", c.module.id);
                hook(ctx, sink, &id, &after_title(i, &c.module.id), Some(&c.module.id), Some(&cmd), "").await?;
            }
        }
        hook(
            ctx,
            sink,
            "typecheck",
            "Typecheck",
            None,
            d.typecheck.as_deref(),
            "no `typecheck` command in `[delivery]`",
        )
        .await?;
        hook(ctx, sink, "build", "Build", None, d.build.as_deref(), "no `build` command in `[delivery]` (optional)")
            .await?;
        sink.start("restart", "Restart note", None);
        sink.pass(
            "restart",
            if ctx.restart_needed {
                "Restart the running application to pick the change up (server code, dependencies or a new module changed)."
            } else {
                "No restart needed: only files the application serves fresh changed."
            },
        );
        Ok(Applied { landed, pull_request: None })
    }
}

/// The steps in order, as the run shows them before they start.
fn steps(ws: &Workspace, changes: &[ModuleChanges], modules: &[PlannedModule]) -> Vec<StepSpec> {
    let (written, deleted) = changes.iter().fold((0, 0), |(w, d), c| (w + c.written.len(), d + c.deleted.len()));
    let mut out =
        vec![StepSpec::new("gates", "Run every gate", None), StepSpec::new("copy", copy_title(written, deleted), None)];
    out.push(StepSpec::new("install", "Install dependencies", None));
    for m in modules.iter().filter(|m| m.enable) {
        out.push(StepSpec::new(
            format!("enable:{}", m.module_id),
            format!("Enable {}", m.module_id),
            Some(&m.module_id),
        ));
    }
    // `after` hooks are per module: the files outside every module have none.
    for c in changes.iter().filter(|c| c.group != DiffGroup::Outside) {
        for i in 0..ws.config.delivery.after.len() {
            out.push(StepSpec::new(
                format!("after:{}:{i}", c.module.id),
                after_title(i, &c.module.id),
                Some(&c.module.id),
            ));
        }
    }
    out.push(StepSpec::new("typecheck", "Typecheck", None));
    out.push(StepSpec::new("build", "Build", None));
    out.push(StepSpec::new("restart", "Restart note", None));
    out
}

/// Titles never quote a command (a command may carry a secret); the output shows it, redacted.
fn after_title(i: usize, module: &str) -> String {
    format!("After hook {} for {module}", i + 1)
}

fn copy_title(written: usize, deleted: usize) -> String {
    format!("Copy {written} file{} into the workspace, remove {deleted}", if written == 1 { "" } else { "s" })
}

fn conflict_blocker(paths: Vec<String>) -> Blocker {
    Blocker {
        code: ErrorCode::DeliveryConflict,
        message: format!(
            "the workspace changed {} file{} the session also changed since its base: update the session from the workspace to take them in",
            paths.len(),
            if paths.len() == 1 { "" } else { "s" }
        ),
        module_id: None,
        paths,
        overridable: false,
    }
}

/// Paths the session changes that the workspace changed too since the session's base:
/// the workspace's file (or its absence) differs from the base's. A file that already
/// holds what the session has (a run that stopped after its copy) is no conflict, so a
/// failed delivery can be retried. The workspace's side is read as named (a link there
/// by what it says, as the base holds it); a path with a link or a file in the way is
/// left to [`super::plan::destination_blockers`], which names what is in the way.
pub(crate) fn conflicts(ws: &Workspace, workdir: &Path, changes: &[ModuleChanges]) -> Result<Vec<String>> {
    let store = ws.open_store()?;
    let mut out = Vec::new();
    for c in changes {
        let tree = store.find_commit(c.base)?.tree()?;
        for path in c.paths() {
            let base = tree.get_path(Path::new(path)).ok().map(|e| e.id());
            let Ok(file) = kiln_runtime::paths::confine_as_named(&ws.root, path) else { continue };
            let now = current(&file);
            let session = kiln_runtime::paths::confine_no_links(workdir, path).ok().and_then(|f| current(&f));
            if base != now && session != now {
                out.push(path.clone());
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The blob id of what is at `file` now; `None` when nothing is.
fn current(file: &Path) -> Option<Oid> {
    let meta = file.symlink_metadata().ok()?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(file).ok()?;
        return Oid::hash_object(ObjectType::Blob, target.as_os_str().as_encoded_bytes()).ok();
    }
    if !meta.is_file() {
        return Some(Oid::zero());
    }
    Oid::hash_file(ObjectType::Blob, file).ok()
}

/// What was at a destination before the copy changed it, to put back.
enum Saved {
    /// A regular file, copied into the run's backup directory.
    File(PathBuf),
    /// A symbolic link, by what it says: put back as a link, never followed.
    Link(PathBuf),
}

/// What the copy did so far, to undo it.
enum Done {
    /// A file written where `Saved` (if any) was before.
    Wrote(PathBuf, Option<Saved>),
    Removed(PathBuf, Saved),
}

/// Copies every written file and removes every deleted one; on any failure puts every
/// file back as it was (the same way: a temp file of its own, then a rename) and returns
/// the error.
fn copy(ws: &Workspace, workdir: &Path, changes: &[ModuleChanges], backup: &Path) -> Result<Vec<String>> {
    let mut done = Vec::new();
    let result = copy_all(ws, workdir, changes, backup, &mut done);
    if result.is_err() {
        for step in done.into_iter().rev() {
            let _ = match step {
                Done::Wrote(dest, Some(saved)) | Done::Removed(dest, saved) => put_back(&dest, &saved),
                Done::Wrote(dest, None) => std::fs::remove_file(&dest),
            };
        }
    }
    result
}

fn copy_all(
    ws: &Workspace,
    workdir: &Path,
    changes: &[ModuleChanges],
    backup: &Path,
    done: &mut Vec<Done>,
) -> Result<Vec<String>> {
    let mut landed = Vec::new();
    for c in changes {
        for rel in &c.written {
            // A link in the session is never followed out of it, nor delivered as one.
            let source = kiln_runtime::paths::confine_no_links(workdir, rel)?;
            let (content, permissions) = match open_file(&source) {
                Ok(Some(opened)) => opened,
                _ => {
                    return Err(ApiError::new(
                        ErrorCode::PathNotAllowed,
                        format!("`{rel}` is not a regular file in the session; it cannot be delivered"),
                    ))
                }
            };
            // Checked again as it is written: no link on the way into the workspace.
            let dest = kiln_runtime::paths::confine_as_named(&ws.root, rel)?;
            let saved = save(&dest, rel, backup)?;
            std::fs::create_dir_all(dest.parent().unwrap_or(&ws.root))?;
            place(&dest, content, permissions)?;
            done.push(Done::Wrote(dest, saved));
            landed.push(rel.clone());
            crate::pause::pause_point("delivery.copy.after-file");
        }
        for rel in &c.deleted {
            let dest = kiln_runtime::paths::confine_as_named(&ws.root, rel)?;
            // A link is removed itself; what it points to stays.
            if let Some(saved) = save(&dest, rel, backup)? {
                std::fs::remove_file(&dest)?;
                done.push(Done::Removed(dest, saved));
            }
            landed.push(rel.clone());
        }
    }
    Ok(landed)
}

/// `file` opened for reading if it is a regular file, never through a link in its own
/// place (and never waiting on a fifo); with its permissions. `None` when it is
/// something else.
fn open_file(file: &Path) -> std::io::Result<Option<(File, Permissions)>> {
    let opened = match File::options().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(file) {
        Ok(opened) => opened,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = opened.metadata()?;
    Ok(meta.is_file().then(|| (opened, meta.permissions())))
}

/// Keeps what is at `dest` (workspace-relative `rel`) before it is overwritten or
/// removed: a regular file copied into `backup`, a link by what it says; `None` when
/// nothing (or a directory, which no file replaces) is there.
fn save(dest: &Path, rel: &str, backup: &Path) -> Result<Option<Saved>> {
    let meta = match dest.symlink_metadata() {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    if meta.file_type().is_symlink() {
        return Ok(Some(Saved::Link(std::fs::read_link(dest)?)));
    }
    let Some((mut content, permissions)) = open_file(dest)? else { return Ok(None) };
    let saved = backup.join(rel);
    std::fs::create_dir_all(saved.parent().unwrap_or(backup))?;
    let mut copy = File::options().write(true).create_new(true).custom_flags(libc::O_NOFOLLOW).open(&saved)?;
    std::io::copy(&mut content, &mut copy)?;
    copy.set_permissions(permissions)?;
    Ok(Some(Saved::File(saved)))
}

/// Puts `saved` back at `dest`, the way the copy writes.
fn put_back(dest: &Path, saved: &Saved) -> std::io::Result<()> {
    match saved {
        Saved::File(file) => match open_file(file)? {
            Some((content, permissions)) => place(dest, content, permissions),
            None => Err(std::io::Error::other("the backup is not a regular file")),
        },
        Saved::Link(target) => {
            let dir = dest.parent().unwrap_or(Path::new("."));
            // `symlink` never replaces anything: a name taken is tried again.
            let made = temp_name().make_in(dir, |name| std::os::unix::fs::symlink(target, name))?;
            made.persist(dest).map(|_| ()).map_err(|e| e.error)
        }
    }
}

/// Writes `content` to a new regular file beside `dest` and renames it into `dest`'s
/// place. The temp file is made exclusively (`O_CREAT|O_EXCL|O_NOFOLLOW`) under a random
/// name, so whatever is already in the directory, a planted link included, is never
/// opened; the rename replaces what is at `dest` itself (a link there included) without
/// following it. A failure leaves no temp file behind.
fn place(dest: &Path, mut content: impl Read, permissions: Permissions) -> std::io::Result<()> {
    let dir = dest.parent().unwrap_or(Path::new("."));
    let mut temp = temp_name().make_in(dir, |name| {
        File::options()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .mode(0o600)
            .open(name)
    })?;
    std::io::copy(&mut content, temp.as_file_mut())?;
    temp.as_file().set_permissions(permissions)?;
    temp.persist(dest).map(|_| ()).map_err(|e| e.error)
}

/// Temp names in a workspace directory: hidden, and saying whose they are.
fn temp_name() -> tempfile::Builder<'static, 'static> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".kiln-delivery-").suffix(".tmp");
    builder
}

/// Runs a configured command in the workspace as one step: skipped when none is set,
/// its redacted output reported, a failure stopping the run.
async fn hook(
    ctx: &Delivering,
    sink: &dyn StepSink,
    id: &str,
    title: &str,
    module: Option<&str>,
    command: Option<&str>,
    none: &str,
) -> Result<()> {
    sink.start(id, title, module);
    let Some(command) = command.filter(|c| !c.trim().is_empty()) else {
        sink.skip(id, none);
        return Ok(());
    };
    let result = match scope(ctx) {
        Ok(scope) => process::run_scoped(command, &ctx.ws.root, &scope, HOOK_TIMEOUT, |_| {}).await,
        Err(e) => Err(e),
    };
    let (passed, output) = match result {
        Err(e) => (false, format!("could not start `{command}`: {e}")),
        Ok(o) => {
            let mut output = if o.tail.is_empty() { o.head.clone() } else { format!("{}\n…\n{}", o.head, o.tail) };
            if o.timed_out {
                output.push_str(&format!("\n(timed out after {} s)", HOOK_TIMEOUT.as_secs()));
            } else if !o.passed() {
                output.push_str(&format!(
                    "\n(exit code {})",
                    o.exit_code.map(|c| c.to_string()).unwrap_or_else(|| "none: killed".into())
                ));
            }
            (o.passed(), output)
        }
    };
    let output = ctx.redactor.redact(&format!("$ {command}\n{output}"));
    if passed {
        sink.pass(id, &output);
        Ok(())
    } else {
        sink.fail(id, &output);
        Err(ApiError::new(ErrorCode::DeliveryBlocked, format!("the step “{title}” failed; nothing after it ran")))
    }
}

/// Hooks run the delivered code (an install's scripts, a build), which the agent wrote:
/// scoped like gates (`kiln_runtime::process::project_scope`), with the session's cleared environment
/// and home and the workspace's binaries first on PATH. They work in the workspace, so
/// they may write there: Landlock cannot leave its `.kiln` out of a writable directory.
fn scope(ctx: &Delivering) -> std::io::Result<kiln_runtime::sandbox::Scope> {
    let root = &ctx.ws.root;
    process::project_scope(&ctx.ws.session_dir(&ctx.id), &[root], &[root], &[], &ctx.ws.config.environment)
}
