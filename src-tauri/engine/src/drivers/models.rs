//! The models each agent offers, for the composer's picker (`list_models`), and the check
//! that catches a model the agent does not offer before its turn starts. Only an
//! OpenAI-compatible endpoint says what it serves (`GET /models`); Claude Code resolves its
//! own aliases; Codex and ACP agents say nothing Kiln can read, so any id may be typed.

use std::time::Duration;

use crate::workspace::{Context, Workspace};
use kiln_records::store::settings::get_setting;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::{ListModelsArgs, ModelListView};

/// How long the endpoint may take to list its models: the picker waits for it.
const LIST_TIMEOUT: Duration = Duration::from_secs(5);

/// The aliases Claude Code resolves to its current models (`--model sonnet`).
const CLAUDE_ALIASES: &[&str] = &["sonnet", "opus", "haiku"];

/// The models `driver` (the default driver when `None`) offers.
pub(crate) async fn list(cx: &Context, args: ListModelsArgs) -> Result<ModelListView> {
    offered(&cx.ws, args.driver.as_deref()).await
}

/// What `list` answers, for a driver named (the default driver when `None`).
async fn offered(ws: &Workspace, driver: Option<&str>) -> Result<ModelListView> {
    let driver = match driver.filter(|d| !d.is_empty()) {
        Some(d) => d.to_string(),
        None => super::registry::chosen_default(ws).await?,
    };
    let view = |models: Vec<String>, source: &str, complete: bool, default_model: Option<String>| ModelListView {
        driver: driver.clone(),
        default_model,
        models,
        source: source.to_string(),
        complete,
    };
    match driver.as_str() {
        "claude" => Ok(view(
            CLAUDE_ALIASES.iter().map(|m| m.to_string()).collect(),
            "Claude Code's model aliases; a full model id works too",
            false,
            None,
        )),
        "codex" => Ok(view(Vec::new(), "Codex uses its own default; type a model id to choose another", false, None)),
        "openai-compatible" => {
            let url = get_setting(&ws.pool, crate::settings::OPENAI_BASE_URL).await?;
            let default_model = get_setting(&ws.pool, crate::settings::OPENAI_MODEL).await?;
            let Some(url) = url else {
                return Ok(view(Vec::new(), "no endpoint is set in Settings", false, default_model));
            };
            let key = crate::settings::openai_key(ws).await?;
            match endpoint_models(&url, key.as_deref()).await {
                Ok(models) => Ok(view(models, &format!("{url}/models"), true, default_model)),
                Err(why) => {
                    Ok(view(Vec::new(), &format!("the endpoint did not list its models: {why}"), false, default_model))
                }
            }
        }
        other if super::acp::presets::IDS.contains(&other) => {
            Ok(view(Vec::new(), "the agent chooses its own model; type a model id to choose another", false, None))
        }
        other => Err(ApiError::new(ErrorCode::DriverNotFound, format!("there is no driver `{other}`"))),
    }
}

/// Refuses `model` for `driver` when the agent's own list is complete and lacks it: a
/// turn on a model the endpoint does not serve would fail only after it started.
pub(crate) async fn check(ws: &Workspace, driver: &str, model: &str) -> Result<()> {
    if driver != "openai-compatible" || model.trim().is_empty() {
        return Ok(());
    }
    let list = offered(ws, Some(driver)).await?;
    if !list.complete || list.models.iter().any(|m| m == model) {
        return Ok(());
    }
    let offered: Vec<String> = list.models.iter().take(12).map(|m| format!("`{m}`")).collect();
    let more = if list.models.len() > offered.len() { ", …" } else { "" };
    Err(ApiError::new(
        ErrorCode::ModelUnknown,
        format!("the endpoint offers no model `{model}`; it offers {}{more}", offered.join(", ")),
    ))
}

/// `GET {base}/models` of an OpenAI-compatible endpoint: the ids it lists, sorted.
async fn endpoint_models(base: &str, key: Option<&str>) -> std::result::Result<Vec<String>, String> {
    let client = reqwest::Client::builder()
        .user_agent(concat!("kiln/", env!("CARGO_PKG_VERSION")))
        .timeout(LIST_TIMEOUT)
        .build()
        .map_err(|e| e.to_string())?;
    let mut request = client.get(format!("{}/models", base.trim_end_matches('/')));
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    let response = request.send().await.map_err(|e| kiln_runtime::redact::redact(&e.to_string()).into_owned())?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("HTTP {}", status.as_u16()));
    }
    let body: serde_json::Value = response.json().await.map_err(|e| format!("not a model list: {e}"))?;
    let data = body["data"].as_array().ok_or("not a model list: no `data`")?;
    let mut models: Vec<String> = data.iter().filter_map(|m| m["id"].as_str().map(str::to_string)).collect();
    models.sort();
    models.dedup();
    Ok(models)
}
