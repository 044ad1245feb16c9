//! The workspace's stored settings: the default driver, binary paths, the OpenAI-compatible
//! endpoint with its key, and the connected application (`[preview] bridge`) with its
//! token. Keys and tokens are sealed together with the address they were given for and
//! are only ever handed to that address: changing an address requires its secret in
//! the same request, and only fingerprints leave the engine. The delivery provider's
//! token works the same way, bound to its API root. A self-hosted server
//! offers bring-your-own-key drivers only, so binary paths are neither shown nor set.
//! The command policy says which commands agents may run ("commands in the working
//! copy", the default, or "no commands"); the view also says how those commands are
//! confined on this machine (`kiln_runtime::sandbox`). The ACP agents' settings (the custom
//! command line, its sealed environment, the presets' paths) are checked, stored and
//! shown by `crate::drivers::acp::presets`. What reads them sits above: the drivers read
//! their keys and policy here, and the Settings operations (`api/settings.rs`), which show
//! the drivers' statuses beside them, read and write them through this module.

use serde::{Deserialize, Serialize};

use crate::workspace::Workspace;
use kiln_records::store::settings::{get_setting, set_setting};
use kiln_runtime::secrets::{fingerprint, Sealer};
use kiln_types::error::{ApiError, Result};
use kiln_types::{CommandPolicy, ConfinementView, DeliverySettingsView};

pub(crate) const DEFAULT: &str = "driver.default";
pub(crate) const CLAUDE_PATH: &str = "driver.claude.path";
pub(crate) const CODEX_PATH: &str = "driver.codex.path";
pub(crate) const OPENAI_BASE_URL: &str = "driver.openai.base_url";
pub(crate) const OPENAI_MODEL: &str = "driver.openai.model";
pub(crate) const OPENAI_KEY: &str = "driver.openai.key";
pub(crate) const PLANNER_AGENT: &str = "planner.agent";
/// `workdir` or `none`; unset is `workdir`.
pub(crate) const COMMANDS: &str = "agent.commands";
pub(crate) const BRIDGE_URL: &str = "bridge.url";
pub(crate) const BRIDGE_TOKEN: &str = "bridge.token";
pub(crate) const DELIVERY_REPOSITORY: &str = "delivery.repository";
pub(crate) const DELIVERY_REVIEWERS: &str = "delivery.reviewers";
pub(crate) const DELIVERY_PUSH_MODE: &str = "delivery.push_mode";
pub(crate) const DELIVERY_REMOTE: &str = "delivery.remote";
pub(crate) const DELIVERY_BASE: &str = "delivery.base";
pub(crate) const DELIVERY_BRANCH_PREFIX: &str = "delivery.branch_prefix";
pub(crate) const DELIVERY_API_URL: &str = "delivery.api_url";
pub(crate) const DELIVERY_TOKEN: &str = "delivery.token";
/// GitHub's REST API root, the provider API used unless Settings name another.
pub(crate) const GITHUB_API: &str = "https://api.github.com";
/// The ways a delivery may push: to the repository itself, through a fork, or whichever works.
pub(crate) const PUSH_MODES: &[&str] = &["auto", "direct", "fork"];

/// A secret and the address it was given for, sealed as one.
#[derive(Serialize, Deserialize)]
struct Bound {
    url: String,
    secret: String,
}

/// Opens the secret stored under `key`, if it was given for `url`. A key stored before
/// secrets were bound to addresses counts as given for `legacy_url`.
async fn bound_secret(
    ws: &Workspace,
    key: &str,
    url: Option<&str>,
    legacy_url: Option<&str>,
) -> Result<Option<String>> {
    let Some(sealed) = get_setting(&ws.pool, key).await? else { return Ok(None) };
    let plain = Sealer::open_or_create(&ws.kiln_dir())?.open(&sealed)?;
    let bound = match serde_json::from_slice::<Bound>(&plain) {
        Ok(bound) => bound,
        Err(_) => match legacy_url {
            Some(legacy) => Bound { url: legacy.into(), secret: String::from_utf8_lossy(&plain).into_owned() },
            None => return Ok(None),
        },
    };
    // Held for redaction whether or not it is handed out now: it is a secret Kiln holds.
    kiln_runtime::redact::hold(&bound.secret);
    Ok(url.filter(|u| *u == bound.url).map(|_| bound.secret))
}

/// Opens every secret stored here once, so each is redacted from whatever this process
/// stores or shows from the moment the workspace opens (the ACP agents' sealed environment
/// is `presets`', opened beside these by `api/settings.rs`). One that cannot be opened is
/// skipped: Settings say so where it is used.
pub(crate) async fn hold_secrets(ws: &Workspace) {
    for key in [OPENAI_KEY, BRIDGE_TOKEN, DELIVERY_TOKEN] {
        // Any address, a legacy bare secret included: the point is the secret, not its use.
        let _ = bound_secret(ws, key, None, Some("")).await;
    }
}

/// Seals `secret` with the address it is given for, and stores it under `key`.
pub(crate) async fn store_bound(ws: &Workspace, key: &str, url: &str, secret: &str) -> Result<()> {
    kiln_runtime::redact::hold(secret);
    let bound = serde_json::to_vec(&Bound { url: url.into(), secret: secret.into() }).expect("two strings serialize");
    let sealed = Sealer::open_or_create(&ws.kiln_dir())?.seal(&bound);
    set_setting(&ws.pool, key, Some(&sealed)).await
}

/// Whether the planner agent runs for new sessions (on unless turned off).
pub(crate) async fn planner_agent(ws: &Workspace) -> Result<bool> {
    Ok(get_setting(&ws.pool, PLANNER_AGENT).await?.as_deref() != Some("off"))
}

/// Which commands agents may run: "commands in the working copy" unless set to none, or
/// none at all on a self-hosted server not started with `--allow-agent-commands`.
pub async fn command_policy(ws: &Workspace) -> Result<CommandPolicy> {
    if !ws.agent_commands {
        return Ok(CommandPolicy::None);
    }
    Ok(match get_setting(&ws.pool, COMMANDS).await?.as_deref() {
        Some("none") => CommandPolicy::None,
        _ => CommandPolicy::Workdir,
    })
}

pub(crate) fn parse_command_policy(value: &str) -> Result<CommandPolicy> {
    match value {
        "workdir" => Ok(CommandPolicy::Workdir),
        "none" => Ok(CommandPolicy::None),
        other => Err(ApiError::invalid(format!(
            "the command policy is `workdir` (commands in the working copy) or `none` (no commands), not `{}`",
            other.chars().take(40).collect::<String>()
        ))),
    }
}

/// How the commands agents run are confined here.
pub(crate) fn confinement() -> ConfinementView {
    let support = kiln_runtime::sandbox::support();
    ConfinementView {
        available: support.available,
        mechanism: support.mechanism.into(),
        abi: support.abi,
        enforcement: support.enforcement.as_str().into(),
        detail: support.detail,
    }
}

/// The OpenAI-compatible key, opened, when it was given for the endpoint now set.
pub async fn openai_key(ws: &Workspace) -> Result<Option<String>> {
    let url = get_setting(&ws.pool, OPENAI_BASE_URL).await?;
    bound_secret(ws, OPENAI_KEY, url.as_deref(), url.as_deref()).await
}

/// The connected application's address: the one set in Settings, else kiln.toml's.
pub(crate) async fn bridge_url(ws: &Workspace) -> Result<Option<String>> {
    Ok(get_setting(&ws.pool, BRIDGE_URL).await?.or_else(|| ws.config.preview.bridge.clone()))
}

/// The connected application's token, opened, when it was given for its address.
pub(crate) async fn bridge_token(ws: &Workspace) -> Result<Option<String>> {
    let url = bridge_url(ws).await?;
    bound_secret(ws, BRIDGE_TOKEN, url.as_deref(), None).await
}

/// The delivery settings: Settings first, then kiln.toml's `[delivery.git]`.
pub(crate) async fn delivery(ws: &Workspace) -> Result<DeliverySettingsView> {
    let get = |key: &'static str| get_setting(&ws.pool, key);
    let git = &ws.config.delivery.git;
    let reviewers = match get(DELIVERY_REVIEWERS).await? {
        Some(list) => serde_json::from_str(&list).unwrap_or_default(),
        None => git.reviewers.clone(),
    };
    let api_url = get(DELIVERY_API_URL).await?.unwrap_or_else(|| GITHUB_API.into());
    Ok(DeliverySettingsView {
        repository: get(DELIVERY_REPOSITORY).await?,
        reviewers,
        push_mode: get(DELIVERY_PUSH_MODE).await?.unwrap_or_else(|| "auto".into()),
        remote: get(DELIVERY_REMOTE).await?.unwrap_or_else(|| git.remote.clone()),
        base: get(DELIVERY_BASE).await?.unwrap_or_else(|| git.base.clone()),
        branch_prefix: get(DELIVERY_BRANCH_PREFIX).await?.unwrap_or_else(|| git.branch_prefix.clone()),
        token_fingerprint: delivery_token(ws).await?.as_deref().map(fingerprint),
        api_url,
    })
}

/// The provider token, opened, when it was given for the API root now set.
pub(crate) async fn delivery_token(ws: &Workspace) -> Result<Option<String>> {
    let url = get_setting(&ws.pool, DELIVERY_API_URL).await?.unwrap_or_else(|| GITHUB_API.into());
    bound_secret(ws, DELIVERY_TOKEN, Some(&url), None).await
}
