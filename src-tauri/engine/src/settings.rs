//! The workspace's driver settings: the default driver, binary paths, and the
//! OpenAI-compatible endpoint with its key. The key is sealed at rest and only its
//! fingerprint ever leaves the engine; changing the endpoint requires the key again, so
//! a stored key is never sent to a host it was not given for.

use crate::api::types::{DriverStatus, SettingsView, UpdateSettingsArgs};
use crate::drivers::registry::{DEFAULT_DRIVER, DRIVERS};
use crate::error::{ApiError, Result};
use crate::secrets::{fingerprint, Sealer};
use crate::store::turns::{get_setting, set_setting};
use crate::workspace::Workspace;

pub const DEFAULT: &str = "driver.default";
pub const CLAUDE_PATH: &str = "driver.claude.path";
pub const CODEX_PATH: &str = "driver.codex.path";
pub const OPENAI_BASE_URL: &str = "driver.openai.base_url";
pub const OPENAI_MODEL: &str = "driver.openai.model";
pub const OPENAI_KEY: &str = "driver.openai.key";
pub const PLANNER_AGENT: &str = "planner.agent";

/// Whether the planner agent runs for new sessions (on unless turned off).
pub async fn planner_agent(ws: &Workspace) -> Result<bool> {
    Ok(get_setting(&ws.pool, PLANNER_AGENT).await?.as_deref() != Some("off"))
}

/// The stored OpenAI-compatible key, opened.
pub async fn openai_key(ws: &Workspace) -> Result<Option<String>> {
    match get_setting(&ws.pool, OPENAI_KEY).await? {
        None => Ok(None),
        Some(sealed) => {
            let plain = Sealer::open_or_create(&ws.kiln_dir())?.open(&sealed)?;
            Ok(Some(String::from_utf8_lossy(&plain).into_owned()))
        }
    }
}

pub async fn view(ws: &Workspace) -> Result<SettingsView> {
    let get = |key: &'static str| get_setting(&ws.pool, key);
    let claude_path = get(CLAUDE_PATH).await?;
    let codex_path = get(CODEX_PATH).await?;
    let openai_base_url = get(OPENAI_BASE_URL).await?;
    let openai_model = get(OPENAI_MODEL).await?;
    let key = openai_key(ws).await?;
    let binary = |name: &str, configured: &Option<String>| match crate::drivers::discover::find(name, configured.as_deref().map(std::path::Path::new)) {
        Ok(path) => DriverStatus { id: name.into(), available: true, detail: path.display().to_string() },
        Err(e) => DriverStatus { id: name.into(), available: false, detail: e.message },
    };
    let openai = match (&openai_base_url, &openai_model) {
        (Some(url), Some(model)) => DriverStatus { id: "openai-compatible".into(), available: true, detail: format!("{model} at {url}") },
        _ => DriverStatus { id: "openai-compatible".into(), available: false, detail: "set the endpoint and model in Settings".into() },
    };
    Ok(SettingsView {
        default_driver: get(DEFAULT).await?.unwrap_or_else(|| DEFAULT_DRIVER.into()),
        drivers: vec![binary("claude", &claude_path), binary("codex", &codex_path), openai],
        claude_path,
        codex_path,
        openai_base_url,
        openai_model,
        openai_key_fingerprint: key.as_deref().map(fingerprint),
        planner_agent: planner_agent(ws).await?,
        bridge_url: None,
        bridge_token_fingerprint: None,
    })
}

pub async fn update(ws: &Workspace, args: UpdateSettingsArgs) -> Result<SettingsView> {
    // Everything is checked before anything is written.
    let clean = |v: &Option<String>| v.as_ref().map(|s| s.trim().to_string());
    if let Some(driver) = clean(&args.default_driver).filter(|d| !d.is_empty()) {
        if !DRIVERS.contains(&driver.as_str()) {
            return Err(ApiError::invalid(format!("there is no driver `{driver}`; the drivers are {}", DRIVERS.join(", "))));
        }
    }
    let new_url = clean(&args.openai_base_url);
    if let Some(url) = new_url.as_deref().filter(|u| !u.is_empty()) {
        if !(url.starts_with("http://") || url.starts_with("https://")) || url.contains(char::is_whitespace) {
            return Err(ApiError::invalid(format!("`{url}` is not an http(s) URL")));
        }
    }
    let current_url = get_setting(&ws.pool, OPENAI_BASE_URL).await?;
    let url_changes = new_url.as_ref().is_some_and(|u| Some(u) != current_url.as_ref());
    let has_key = get_setting(&ws.pool, OPENAI_KEY).await?.is_some();
    if url_changes && has_key && args.openai_key.is_none() {
        return Err(ApiError::invalid(
            "give the API key again with the new endpoint: a stored key is never sent to another host",
        ));
    }
    for path in [&args.claude_path, &args.codex_path].into_iter().flatten() {
        let path = path.trim();
        if !path.is_empty() && !std::path::Path::new(path).is_absolute() {
            return Err(ApiError::invalid(format!("`{path}` must be an absolute path")));
        }
    }

    let set = |key: &'static str, value: Option<String>| async move {
        match value {
            None => Ok(()),
            Some(v) if v.is_empty() => set_setting(&ws.pool, key, None).await,
            Some(v) => set_setting(&ws.pool, key, Some(&v)).await,
        }
    };
    set(DEFAULT, clean(&args.default_driver)).await?;
    if let Some(on) = args.planner_agent {
        set_setting(&ws.pool, PLANNER_AGENT, Some(if on { "on" } else { "off" })).await?;
    }
    set(CLAUDE_PATH, clean(&args.claude_path)).await?;
    set(CODEX_PATH, clean(&args.codex_path)).await?;
    set(OPENAI_BASE_URL, new_url).await?;
    set(OPENAI_MODEL, clean(&args.openai_model)).await?;
    match clean(&args.openai_key) {
        None => {}
        Some(k) if k.is_empty() => set_setting(&ws.pool, OPENAI_KEY, None).await?,
        Some(k) => {
            let sealed = Sealer::open_or_create(&ws.kiln_dir())?.seal(k.as_bytes());
            set_setting(&ws.pool, OPENAI_KEY, Some(&sealed)).await?;
        }
    }
    view(ws).await
}
