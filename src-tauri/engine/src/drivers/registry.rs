//! Which driver runs a turn: the one the composer picked, else the session's, else the
//! workspace's default from Settings. A CLI driver whose binary is missing fails here,
//! before anything is recorded, so the operator's message stays in the composer. A
//! self-hosted server never runs the local CLIs: they carry the operator's own login.
//! Every driver gets the command policy from Settings ("commands in the working copy"
//! or "no commands"). An ACP agent (`acp:*`) is a preset's command line or the custom one
//! (`super::acp::presets`), its binary found here like the CLIs'.

use std::path::PathBuf;
use std::sync::Arc;

use super::claude::ClaudeDriver;
use super::codex::CodexDriver;
use super::Driver;
use crate::workspace::Workspace;
use kiln_records::store::settings::get_setting;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::ServeMode;

/// The ACP agents (`acp:gemini`, …, `acp:custom`) last: `super::acp::presets::IDS`.
pub(crate) const DRIVERS: &[&str] = &[
    "claude",
    "codex",
    "openai-compatible",
    "acp:gemini",
    "acp:opencode",
    "acp:goose",
    "acp:claude",
    "acp:codex",
    "acp:custom",
];
pub(crate) const DEFAULT_DRIVER: &str = "claude";

/// The drivers a server in `mode` offers.
pub(crate) fn offered(mode: ServeMode) -> &'static [&'static str] {
    match mode {
        ServeMode::Loopback => DRIVERS,
        ServeMode::SelfHosted => &["openai-compatible"],
    }
}

pub(crate) fn default_driver(mode: ServeMode) -> &'static str {
    match mode {
        ServeMode::Loopback => DEFAULT_DRIVER,
        ServeMode::SelfHosted => "openai-compatible",
    }
}

pub(crate) fn not_offered(driver: &str) -> ApiError {
    ApiError::new(
        ErrorCode::NotAllowedInMode,
        format!("a self-hosted server offers bring-your-own-key drivers only, not `{driver}`: use openai-compatible"),
    )
}

/// The driver a turn runs on when none is named: Settings' default when this server
/// offers it, else the mode's own default.
pub(crate) async fn chosen_default(ws: &Workspace) -> Result<String> {
    Ok(get_setting(&ws.pool, "driver.default")
        .await?
        .filter(|d| offered(ws.mode).contains(&d.as_str()))
        .unwrap_or_else(|| default_driver(ws.mode).into()))
}

pub async fn resolve(ws: &Workspace, name: Option<&str>) -> Result<Arc<dyn Driver>> {
    let name = match name {
        Some(n) => n.to_string(),
        None => chosen_default(ws).await?,
    };
    if DRIVERS.contains(&name.as_str()) && !offered(ws.mode).contains(&name.as_str()) {
        return Err(not_offered(&name));
    }
    match name.as_str() {
        "claude" => {
            let driver = claude(ws).await?;
            super::discover::find("claude", driver.binary.as_deref())?;
            Ok(Arc::new(driver))
        }
        "codex" => {
            let driver = codex(ws).await?;
            super::discover::find("codex", driver.binary.as_deref())?;
            Ok(Arc::new(driver))
        }
        "openai-compatible" => {
            // Only the endpoint's settings: the whole view would ask the local CLIs their versions.
            let base_url = get_setting(&ws.pool, crate::settings::OPENAI_BASE_URL).await?;
            let model = get_setting(&ws.pool, crate::settings::OPENAI_MODEL).await?;
            let (Some(base_url), Some(model)) = (base_url, model) else {
                return Err(ApiError::new(
                    kiln_types::error::ErrorCode::DriverNotFound,
                    "the OpenAI-compatible driver needs an endpoint and a model: set them in Settings",
                ));
            };
            let key = crate::settings::openai_key(ws).await?;
            // Conversations last from one turn to the next while the endpoint, model and
            // key stay the same.
            let identity = format!(
                "{base_url}\n{model}\n{}",
                key.as_deref().map(kiln_runtime::secrets::fingerprint).unwrap_or_default()
            );
            let conversations = {
                let mut slot = ws.openai.lock().unwrap();
                match slot.as_ref().filter(|(id, _)| *id == identity) {
                    Some((_, kept)) => kept.clone(),
                    None => {
                        let fresh = crate::registry::Conversations::default();
                        *slot = Some((identity, fresh.clone()));
                        fresh
                    }
                }
            };
            let mut driver = super::openai::OpenAiDriver::new(base_url, key, model).with_conversations(conversations);
            driver.commands = crate::settings::command_policy(ws).await?;
            Ok(Arc::new(driver))
        }
        // An ACP agent's id is the preset's own `&'static str` (the key its sessions are kept under).
        other => match super::acp::presets::IDS.iter().copied().find(|id| *id == other) {
            Some(id) => Ok(Arc::new(super::acp::presets::driver(ws, id).await?)),
            None => {
                Err(ApiError::invalid(format!("there is no driver `{other}`; the drivers are {}", DRIVERS.join(", "))))
            }
        },
    }
}

/// The claude driver as Settings make it (its binary, the command policy), for a turn or
/// a terminal.
pub(crate) async fn claude(ws: &Workspace) -> Result<ClaudeDriver> {
    let binary = get_setting(&ws.pool, crate::settings::CLAUDE_PATH).await?.map(PathBuf::from);
    let commands = crate::settings::command_policy(ws).await?;
    Ok(ClaudeDriver { binary, commands, ..Default::default() })
}

/// The codex driver as Settings make it, for a turn or a terminal.
pub(crate) async fn codex(ws: &Workspace) -> Result<CodexDriver> {
    let binary = get_setting(&ws.pool, crate::settings::CODEX_PATH).await?.map(PathBuf::from);
    let commands = crate::settings::command_policy(ws).await?;
    Ok(CodexDriver { binary, commands, ..Default::default() })
}

/// Which key or login a driver's turns sign in with, in one sentence for a refusal
/// ("the model provider refused the credentials"): the user's fix starts there. Never
/// the key itself: its variable's name, or the fingerprint Settings shows.
pub(crate) async fn credentials(ws: &Workspace, driver: &str) -> String {
    let env_key = |names: &[&str]| {
        names.iter().find(|n| super::health::cli_env(n).is_some_and(|v| !v.trim().is_empty())).map(|n| n.to_string())
    };
    match driver {
        "claude" => match env_key(&["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"]) {
            Some(name) => format!("Claude Code signed in with `{name}` from Kiln's environment."),
            None => {
                "Claude Code signed in with its own login (run `claude`, then `/login`; kept in `~/.claude`).".into()
            }
        },
        "codex" => match env_key(&["OPENAI_API_KEY", "CODEX_API_KEY"]) {
            Some(name) => format!("Codex signed in with `{name}` from Kiln's environment."),
            None => "Codex signed in with its own login (`codex login`; kept in `~/.codex`).".into(),
        },
        "openai-compatible" => {
            let url = get_setting(&ws.pool, crate::settings::OPENAI_BASE_URL).await.ok().flatten();
            let key = crate::settings::openai_key(ws).await.ok().flatten();
            let at = url.map(|u| format!(" for {u}")).unwrap_or_default();
            match key {
                Some(key) => format!(
                    "Kiln sent the key set in Settings{at} (fingerprint `{}`).",
                    kiln_runtime::secrets::fingerprint(&key)
                ),
                None => format!("No key is set in Settings{at}."),
            }
        }
        _ => "The agent signed in with its own login.".into(),
    }
}
