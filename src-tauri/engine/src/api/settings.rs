//! The Settings operations (`get_settings`, `update_settings`): every stored setting
//! (`crate::settings`) shown beside what the agents are here (each CLI's binary, version and
//! login, the ACP presets), and the update that checks a whole request before it writes
//! anything. Here, above both, because it reads the settings and the drivers alike.

use crate::drivers::acp::presets;
use crate::drivers::registry::{self, DRIVERS};
use crate::settings::*;
use crate::workspace::{Context, Workspace};
use kiln_records::store::settings::{get_setting, set_setting};
use kiln_runtime::secrets::fingerprint;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::{CommandPolicy, DriverStatus, EmptyArgs, ServeMode, SettingsView, UpdateSettingsArgs};

/// Opens every stored secret once (`settings::hold_secrets`), the ACP agents' sealed
/// environment too, so each is redacted from the moment the workspace opens.
pub(super) async fn hold_secrets(ws: &Workspace) {
    crate::settings::hold_secrets(ws).await;
    let _ = presets::custom_env(ws).await;
    let _ = crate::mcp::stored(ws).await;
}

/// A local CLI's status: where its binary is (or how to install it), its version and
/// whether it is signed in (`crate::drivers::health`).
async fn local_driver(name: &str, configured: &Option<String>) -> DriverStatus {
    use crate::drivers::{discover, health};
    match discover::find(name, configured.as_deref().map(std::path::Path::new)) {
        Ok(path) => DriverStatus {
            id: name.into(),
            name: None,
            available: true,
            detail: path.display().to_string(),
            version: health::version(&path).await,
            signed_in: health::signed_in(name),
        },
        Err(e) => DriverStatus {
            id: name.into(),
            name: None,
            available: false,
            detail: e.message,
            version: None,
            signed_in: None,
        },
    }
}

pub(super) async fn view(cx: &Context, _: EmptyArgs) -> Result<SettingsView> {
    let ws = &cx.ws;
    let get = |key: &'static str| get_setting(&ws.pool, key);
    let local = ws.mode == ServeMode::Loopback;
    let claude_path = if local { get(CLAUDE_PATH).await? } else { None };
    let codex_path = if local { get(CODEX_PATH).await? } else { None };
    let openai_base_url = get(OPENAI_BASE_URL).await?;
    let openai_model = get(OPENAI_MODEL).await?;
    let key = openai_key(ws).await?;
    let openai = match (&openai_base_url, &openai_model) {
        (Some(url), Some(model)) => DriverStatus {
            id: "openai-compatible".into(),
            name: None,
            available: true,
            detail: format!("{model} at {url}"),
            version: None,
            signed_in: Some(key.is_some()),
        },
        _ => DriverStatus {
            id: "openai-compatible".into(),
            name: None,
            available: false,
            detail: "set the endpoint and model in Settings".into(),
            version: None,
            signed_in: None,
        },
    };
    let (acp_agents, drivers) = if local {
        // The CLIs answer `--version` at once: a cold start is the slow part.
        let (claude, codex, acp) =
            tokio::join!(local_driver("claude", &claude_path), local_driver("codex", &codex_path), presets::view(ws));
        let (agents, statuses) = acp?;
        let mut drivers = vec![claude, codex, openai];
        drivers.extend(statuses);
        (agents, drivers)
    } else {
        (Vec::new(), vec![openai])
    };
    let default_driver = get(DEFAULT).await?.filter(|d| registry::offered(ws.mode).contains(&d.as_str()));
    let bridge_url = bridge_url(ws).await?;
    Ok(SettingsView {
        default_driver: default_driver.unwrap_or_else(|| registry::default_driver(ws.mode).into()),
        command_policy: command_policy(ws).await?,
        commands_allowed: ws.agent_commands,
        confinement: confinement(),
        drivers,
        claude_path,
        codex_path,
        openai_base_url,
        openai_model,
        openai_key_fingerprint: key.as_deref().map(fingerprint),
        planner_agent: planner_agent(ws).await?,
        bridge_token_fingerprint: bridge_token(ws).await?.as_deref().map(fingerprint),
        bridge_url,
        delivery: delivery(ws).await?,
        acp_agents,
        acp_custom_env_names: if local { presets::custom_env_names(ws).await? } else { Vec::new() },
        mcp_servers: crate::mcp::views(ws).await?,
    })
}

/// The rule that keeps a stored secret with its address: a request that moves the address
/// while a secret is stored under `key` must give the secret again (or clear it), or it is
/// refused with `refusal`. Without it the old secret would be sent to the new host.
async fn secret_follows_address(
    ws: &Workspace,
    key: &str,
    address_changes: bool,
    secret_given: bool,
    refusal: &str,
) -> Result<()> {
    if address_changes && !secret_given && get_setting(&ws.pool, key).await?.is_some() {
        return Err(ApiError::invalid(refusal));
    }
    Ok(())
}

fn http_url(url: &str) -> Result<()> {
    if !(url.starts_with("http://") || url.starts_with("https://"))
        || url.contains(char::is_whitespace)
        || url.len() > 2048
    {
        return Err(ApiError::invalid(format!("`{}` is not an http(s) URL", url.chars().take(80).collect::<String>())));
    }
    Ok(())
}

pub(super) async fn update(cx: &Context, args: UpdateSettingsArgs) -> Result<SettingsView> {
    let ws = &cx.ws;
    // Everything is checked before anything is written.
    let clean = |v: &Option<String>| v.as_ref().map(|s| s.trim().to_string());
    if let Some(driver) = clean(&args.default_driver).filter(|d| !d.is_empty()) {
        if !DRIVERS.contains(&driver.as_str()) {
            return Err(ApiError::invalid(format!(
                "there is no driver `{driver}`; the drivers are {}",
                DRIVERS.join(", ")
            )));
        }
        if !registry::offered(ws.mode).contains(&driver.as_str()) {
            return Err(registry::not_offered(&driver));
        }
    }
    // "" puts back the default, like clearing any other setting.
    let commands = match clean(&args.command_policy) {
        Some(policy) if policy.is_empty() => Some(CommandPolicy::Workdir),
        Some(policy) => Some(parse_command_policy(&policy)?),
        None => None,
    };
    if commands == Some(CommandPolicy::Workdir) && !ws.agent_commands {
        return Err(ApiError::new(
            ErrorCode::NotAllowedInMode,
            "this self-hosted server lets agents run no commands: its operator can allow them with `kiln serve --allow-agent-commands`",
        ));
    }
    if ws.mode == ServeMode::SelfHosted && (args.claude_path.is_some() || args.codex_path.is_some()) {
        return Err(ApiError::new(ErrorCode::NotAllowedInMode, "a self-hosted server runs no local agent binaries"));
    }
    for path in [&args.claude_path, &args.codex_path].into_iter().flatten() {
        let path = path.trim();
        if !path.is_empty() && !std::path::Path::new(path).is_absolute() {
            return Err(ApiError::invalid(format!("`{path}` must be an absolute path")));
        }
        kiln_runtime::paths::program_outside(&ws.root, path)?;
    }

    let acp = presets::check(ws.mode, &ws.root, &args)?;

    let new_url = clean(&args.openai_base_url);
    if let Some(url) = new_url.as_deref().filter(|u| !u.is_empty()) {
        http_url(url)?;
    }
    let current_url = get_setting(&ws.pool, OPENAI_BASE_URL).await?;
    let url_changes = new_url.as_ref().is_some_and(|u| Some(u) != current_url.as_ref());
    let refusal = "give the API key again with the new endpoint: a stored key is never sent to another host";
    secret_follows_address(ws, OPENAI_KEY, url_changes, args.openai_key.is_some(), refusal).await?;
    let openai_url = if url_changes { new_url.clone().filter(|u| !u.is_empty()) } else { current_url };
    let new_key = clean(&args.openai_key);
    if new_key.as_deref().is_some_and(|k| !k.is_empty()) && openai_url.is_none() {
        return Err(ApiError::invalid("set the endpoint the key is for"));
    }

    let new_bridge = clean(&args.bridge_url);
    if let Some(url) = new_bridge.as_deref().filter(|u| !u.is_empty()) {
        http_url(url)?;
    }
    let current_bridge = bridge_url(ws).await?;
    let bridge_changes = new_bridge.as_ref().is_some_and(|u| u.is_empty() || Some(u) != current_bridge.as_ref());
    let refusal =
        "give the application's token again with its new address: a stored token is never sent to another host";
    secret_follows_address(ws, BRIDGE_TOKEN, bridge_changes, args.bridge_token.is_some(), refusal).await?;
    let bridge_target = if bridge_changes {
        new_bridge.clone().filter(|u| !u.is_empty()).or_else(|| ws.config.preview.bridge.clone())
    } else {
        current_bridge
    };
    let new_token = clean(&args.bridge_token);
    if new_token.as_deref().is_some_and(|t| !t.is_empty()) && bridge_target.is_none() {
        return Err(ApiError::invalid("set the connected application's address the token is for"));
    }

    // Delivery: names are checked here; the token is bound to the API root it is for.
    if let Some(repo) = clean(&args.delivery_repository).filter(|r| !r.is_empty()) {
        let valid =
            |part: &str| !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        if !matches!(repo.split_once('/'), Some((owner, name)) if valid(owner) && valid(name)) {
            return Err(ApiError::invalid(format!("`{repo}` is not a repository as `owner/name`")));
        }
    }
    if let Some(mode) = clean(&args.delivery_push_mode).filter(|m| !m.is_empty()) {
        if !PUSH_MODES.contains(&mode.as_str()) {
            return Err(ApiError::invalid(format!("the push mode is one of {}, not `{mode}`", PUSH_MODES.join(", "))));
        }
    }
    for (what, value) in [
        ("remote", &args.delivery_remote),
        ("base branch", &args.delivery_base),
        ("branch prefix", &args.delivery_branch_prefix),
    ] {
        if let Some(v) = clean(value).filter(|v| !v.is_empty()) {
            if v.starts_with('-')
                || v.contains("..")
                || v.chars().any(|c| c.is_whitespace() || c.is_control() || "~^:?*[\\".contains(c))
            {
                return Err(ApiError::invalid(format!("`{v}` is not a valid {what}")));
            }
        }
    }
    for login in args.delivery_reviewers.iter().flatten() {
        if login.is_empty() || !login.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '/') {
            return Err(ApiError::invalid(format!("`{login}` is not a reviewer login")));
        }
    }
    let new_api = clean(&args.delivery_api_url);
    if let Some(url) = new_api.as_deref().filter(|u| !u.is_empty()) {
        http_url(url)?;
    }
    let current_api = get_setting(&ws.pool, DELIVERY_API_URL).await?.unwrap_or_else(|| GITHUB_API.into());
    let api_target = match new_api.as_deref() {
        None => current_api.clone(),
        Some("") => GITHUB_API.to_string(),
        Some(url) => url.to_string(),
    };
    let refusal =
        "give the provider token again with the new API address: a stored token is never sent to another host";
    secret_follows_address(ws, DELIVERY_TOKEN, api_target != current_api, args.delivery_token.is_some(), refusal)
        .await?;

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
    if let Some(policy) = commands {
        set_setting(&ws.pool, COMMANDS, Some(if policy == CommandPolicy::None { "none" } else { "workdir" })).await?;
    }
    set(CLAUDE_PATH, clean(&args.claude_path)).await?;
    set(CODEX_PATH, clean(&args.codex_path)).await?;
    set(OPENAI_BASE_URL, new_url).await?;
    set(OPENAI_MODEL, clean(&args.openai_model)).await?;
    match (new_key, &openai_url) {
        (None, _) => {}
        (Some(k), Some(url)) if !k.is_empty() => store_bound(ws, OPENAI_KEY, url, &k).await?,
        (Some(_), _) => set_setting(&ws.pool, OPENAI_KEY, None).await?,
    }
    set(DELIVERY_REPOSITORY, clean(&args.delivery_repository)).await?;
    set(DELIVERY_PUSH_MODE, clean(&args.delivery_push_mode)).await?;
    set(DELIVERY_REMOTE, clean(&args.delivery_remote)).await?;
    set(DELIVERY_BASE, clean(&args.delivery_base)).await?;
    set(DELIVERY_BRANCH_PREFIX, clean(&args.delivery_branch_prefix)).await?;
    if let Some(reviewers) = &args.delivery_reviewers {
        set_setting(&ws.pool, DELIVERY_REVIEWERS, Some(&serde_json::to_string(reviewers).expect("strings serialize")))
            .await?;
    }
    set(DELIVERY_API_URL, new_api).await?;
    match clean(&args.delivery_token) {
        None => {}
        Some(t) if t.is_empty() => set_setting(&ws.pool, DELIVERY_TOKEN, None).await?,
        Some(t) => store_bound(ws, DELIVERY_TOKEN, &api_target, &t).await?,
    }
    presets::apply(ws, acp).await?;
    set(BRIDGE_URL, new_bridge).await?;
    match (new_token, &bridge_target) {
        (None, _) => {}
        (Some(t), Some(url)) if !t.is_empty() => store_bound(ws, BRIDGE_TOKEN, url, &t).await?,
        (Some(_), _) => set_setting(&ws.pool, BRIDGE_TOKEN, None).await?,
    }
    view(cx, EmptyArgs {}).await
}
