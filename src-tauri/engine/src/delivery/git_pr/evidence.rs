//! The preview as evidence in the pull request: the session's "before" (checkpoint 0) and
//! "after" (its newest turn) screenshots, uploaded to a branch of their own through
//! GitHub's Contents API (`upload`: GitHub has no API to attach an image to a pull
//! request's body), committed into the pull request's branch under a path the workspace
//! chooses (`commit`), or left out (`off`). The body's section says which, or that there
//! was nothing to capture.

use std::path::PathBuf;

use super::context::Ctx;
use super::github;
use super::message::web_root;

/// The branch `upload` puts screenshots on; never a pull request's branch.
pub(super) const EVIDENCE_BRANCH: &str = "kiln/evidence";

/// `[delivery] screenshots`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EvidenceMode {
    #[default]
    Upload,
    Commit,
    Off,
}

impl EvidenceMode {
    pub fn parse(text: &str) -> Option<EvidenceMode> {
        match text {
            "upload" => Some(EvidenceMode::Upload),
            "commit" => Some(EvidenceMode::Commit),
            "off" => Some(EvidenceMode::Off),
            _ => None,
        }
    }
}

/// One screenshot to show.
#[derive(Debug, Clone)]
pub struct EvidenceShot {
    /// `before` or `after`.
    pub label: &'static str,
    pub checkpoint: i64,
    /// The PNG in the session's directory.
    pub png: PathBuf,
}

/// What the pull request shows of the preview.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    pub mode: EvidenceMode,
    /// `commit`: the workspace-relative directory the screenshots are committed under.
    pub path: String,
    /// Whether the workspace has a preview at all.
    pub preview: bool,
    pub shots: Vec<EvidenceShot>,
}

impl Evidence {
    /// `commit`: each screenshot's workspace-relative path in the pull request's branch.
    pub fn committed(&self, session: &str) -> Vec<(String, &EvidenceShot)> {
        if self.mode != EvidenceMode::Commit {
            return Vec::new();
        }
        let dir = self.path.trim_matches('/');
        self.shots.iter().map(|s| (format!("{dir}/{session}/{}.png", s.label), s)).collect()
    }
}

/// `commit`: writes the screenshots into the worktree; the guardrail allows exactly these paths.
pub(super) fn write_committed(ctx: &Ctx<'_>) -> std::result::Result<String, String> {
    let mut out = Vec::new();
    for (rel, shot) in ctx.input.evidence.committed(&ctx.input.session_id) {
        let target = ctx.wt_workspace().join(&rel);
        let written = std::fs::create_dir_all(target.parent().expect("a parent"))
            .and_then(|()| std::fs::copy(&shot.png, &target).map(|_| ()));
        written.map_err(|e| format!("the {} screenshot could not be written to {rel}: {e}", shot.label))?;
        out.push(format!("screenshot {} → {rel}", shot.label));
    }
    Ok(out.join("\n"))
}

/// The body's `## Screenshots` section (`None` when `off`), and a line for the step's output.
/// `upload` puts the PNGs on [`EVIDENCE_BRANCH`] first; a failure there is said, never fatal.
pub(super) async fn section(ctx: &Ctx<'_>, api: Option<&github::Api>) -> (Option<String>, String) {
    let evidence = &ctx.input.evidence;
    let head = "## Screenshots\n\n";
    if evidence.mode == EvidenceMode::Off {
        return (None, String::new());
    }
    if !evidence.preview {
        return (Some(format!("{head}No preview: there was nothing to capture.\n")), String::new());
    }
    if evidence.shots.is_empty() {
        return (Some(format!("{head}The preview was not captured in this session.\n")), String::new());
    }
    let links: Vec<(String, &EvidenceShot)> = match evidence.mode {
        EvidenceMode::Commit => {
            let s = &ctx.input.settings;
            evidence
                .committed(&ctx.input.session_id)
                .into_iter()
                .map(|(rel, shot)| {
                    let url = format!(
                        "{}/{}/{}/raw/{}/{}",
                        web_root(&s.api_url),
                        ctx.owner,
                        ctx.repo,
                        ctx.branch,
                        ctx.repo_path(&rel)
                    );
                    (url, shot)
                })
                .collect()
        }
        _ => match upload(ctx, api).await {
            Ok(links) => links,
            Err(e) => {
                let text = format!("{head}The screenshots could not be uploaded: {e}\n");
                return (Some(text), format!("warning: the screenshots could not be uploaded: {e}"));
            }
        },
    };
    let mut text = String::from(head);
    text.push_str("| Before | After |\n| --- | --- |\n");
    let cell = |label: &str| {
        links
            .iter()
            .find(|(_, s)| s.label == label)
            .map(|(url, s)| format!("![{label} (checkpoint {})]({url})", s.checkpoint))
            .unwrap_or_else(|| "(none)".into())
    };
    text.push_str(&format!("| {} | {} |\n", cell("before"), cell("after")));
    let line = match evidence.mode {
        EvidenceMode::Commit => format!("{} screenshot(s) committed with the change", links.len()),
        _ => format!("{} screenshot(s) on the branch {EVIDENCE_BRANCH}", links.len()),
    };
    (Some(text), line)
}

/// `upload`: each PNG as `<session>/<label>-<checkpoint>.png` on [`EVIDENCE_BRANCH`]
/// (made from the base branch when missing); one already there is linked, not sent again.
async fn upload<'a>(
    ctx: &'a Ctx<'_>,
    api: Option<&github::Api>,
) -> std::result::Result<Vec<(String, &'a EvidenceShot)>, String> {
    let api = api.ok_or("uploading needs the delivery token (or set `[delivery] screenshots = \"commit\"`)")?;
    api.ensure_branch(EVIDENCE_BRANCH, &ctx.input.settings.base).await?;
    let session = &ctx.input.session_id;
    let mut links = Vec::new();
    for shot in &ctx.input.evidence.shots {
        let path = format!("{session}/{}-{}.png", shot.label, shot.checkpoint);
        let url = match api.file_url(&path, EVIDENCE_BRANCH).await? {
            Some(url) => url,
            None => {
                let png =
                    std::fs::read(&shot.png).map_err(|e| format!("reading the {} screenshot: {e}", shot.label))?;
                let message = format!("kiln: {} screenshot of session {session}", shot.label);
                api.put_file(&path, EVIDENCE_BRANCH, &message, &png).await?
            }
        };
        // A file's page, `?raw=true`: the image itself, for whoever may read the repository.
        links.push((format!("{url}?raw=true"), shot));
    }
    Ok(links)
}
