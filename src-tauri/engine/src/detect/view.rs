//! The set-up screen's two operations: what Kiln detected in the open workspace
//! (`detect_workspace`, also `kiln detect`), and writing it, as the operator edited it,
//! into `kiln.toml` (`save_config`). Saving validates the text as Kiln will read it
//! before anything is written, and keeps a copy of a replaced file in `.kiln/`.

use std::path::{Path, PathBuf};

use super::toml_out::{to_toml, ModuleGates};
use super::{gate, setup, toolchains, MODULE_GATES};
use crate::config::{Config, FILE_NAME};
use crate::workspace::Workspace;
use kiln_types::error::{ApiError, ErrorCode, Result};
use kiln_types::*;

pub(crate) fn view(ws: &Workspace) -> Result<DetectionView> {
    view_at(&ws.root, ws.config_path.as_deref(), &ws.config, &ws.modules)
}

/// Detection for a directory, read only: nothing is written, not even `.kiln/`
/// (`kiln detect` runs on repositories Kiln never opened).
pub fn detect_path(path: &Path) -> Result<DetectionView> {
    let opened = path
        .canonicalize()
        .map_err(|_| ApiError::new(ErrorCode::WorkspaceNotFound, format!("no directory at `{}`", path.display())))?;
    if !opened.is_dir() {
        return Err(ApiError::new(ErrorCode::WorkspaceNotFound, format!("`{}` is not a directory", opened.display())));
    }
    let (root, config_path) = crate::config::find_root(&opened);
    let config = match &config_path {
        Some(p) => Config::load(p)?,
        None => Config::default(),
    };
    let modules = crate::modules::discover(&root, &config)?;
    view_at(&root, config_path.as_deref(), &config, &modules)
}

fn view_at(
    root: &Path,
    config_path: Option<&Path>,
    config: &Config,
    found: &[crate::modules::ModuleInfo],
) -> Result<DetectionView> {
    let modules: Vec<DetectedModule> = found
        .iter()
        .map(|m| DetectedModule {
            id: m.id.clone(),
            directory: m.directory.clone(),
            toolchain: m.toolchain,
            gates: MODULE_GATES.iter().map(|g| gate(root, config, m, g)).collect(),
        })
        .collect();
    let setup = setup(root, config, found);
    let existing = config_path.and_then(|p| std::fs::read_to_string(p).ok());
    let toml = to_toml(
        existing.as_deref(),
        config.workflow(),
        setup.as_ref().map(|s| (s.command.as_str(), Some(s.source.as_str()))),
        &modules.iter().map(|m| ModuleGates::detected(&m.id, &m.gates)).collect::<Vec<_>>(),
    )?;
    Ok(DetectionView {
        root: root.display().to_string(),
        config_path: config_path.map(|p| p.display().to_string()),
        workflow: config.workflow(),
        toolchains: toolchains::check(root, found),
        modules,
        setup,
        toml,
        environment: environment(&config.environment),
        config_files: std::env::var_os("HOME")
            .map(std::path::PathBuf::from)
            .map(|home| {
                kiln_runtime::sandbox::passing::HOME_FILES
                    .iter()
                    .filter(|f| home.join(f).is_file())
                    .map(|f| format!("~/{f}"))
                    .collect()
            })
            .unwrap_or_default(),
    })
}

/// The user's variables that pass to the commands, then what `[environment] set` gives;
/// a secret-looking value is never shown.
fn environment(config: &kiln_runtime::sandbox::EnvironmentConfig) -> Vec<PassedVariable> {
    use kiln_runtime::sandbox::passing::{looks_secret, passes};
    let mut host: Vec<(String, String)> =
        kiln_runtime::sandbox::passing::host_variables().into_iter().filter(|(k, _)| passes(k, config)).collect();
    host.sort();
    let mut out: Vec<PassedVariable> = host
        .into_iter()
        .filter(|(k, _)| !config.set.contains_key(k))
        .map(|(name, value)| {
            let named = config.names(&name);
            PassedVariable {
                value: (!looks_secret(&name) && !has_userinfo(&value)).then_some(value),
                source: if named { "kiln.toml [environment] pass" } else { "your environment" }.into(),
                name,
            }
        })
        .collect();
    out.extend(config.set.iter().map(|(name, value)| PassedVariable {
        name: name.clone(),
        value: (!looks_secret(name) && !has_userinfo(value)).then(|| value.clone()),
        source: "kiln.toml [environment] set".into(),
    }));
    out
}

/// An address with a password in it (`https://user:secret@host/`), whose value is hidden.
fn has_userinfo(value: &str) -> bool {
    value.split("://").nth(1).and_then(|rest| rest.split('/').next()).is_some_and(|host| host.contains('@'))
}

/// Writes the edited set-up as the workspace's `kiln.toml` and returns its path; the
/// caller reopens the workspace with it.
pub(crate) fn save(ws: &Workspace, args: &SaveConfigArgs) -> Result<PathBuf> {
    let path = ws.config_path.clone().unwrap_or_else(|| ws.root.join(FILE_NAME));
    let existing = match std::fs::read_to_string(&path) {
        Ok(_) if !args.replace => {
            return Err(ApiError::new(
                ErrorCode::ConfigExists,
                format!(
                    "{} exists already: replace it to save this set-up (its other settings are kept)",
                    path.display()
                ),
            ));
        }
        Ok(text) => Some(text),
        Err(_) => None,
    };
    let mut modules = Vec::new();
    for m in &args.modules {
        if ws.module(&m.id).is_none() {
            return Err(ApiError::new(ErrorCode::ModuleNotFound, format!("the workspace has no module `{}`", m.id)));
        }
        let mut gates = Vec::new();
        for (name, command) in &m.gates {
            if !MODULE_GATES.contains(&name.as_str()) {
                return Err(ApiError::invalid(format!(
                    "there is no gate `{name}`; the gates are {}",
                    MODULE_GATES.join(", ")
                )));
            }
            if command.contains('\0') || command.len() > 4096 {
                return Err(ApiError::invalid(format!("the `{name}` command of `{}` is not a usable command", m.id)));
            }
            gates.push((name.as_str(), Some(command.trim().to_string()), None));
        }
        modules.push(ModuleGates { id: &m.id, gates });
    }
    let setup = args.setup.as_deref().map(|s| (s.trim(), None));
    let text = to_toml(existing.as_deref(), args.workflow, setup, &modules)?;
    // Exactly what Kiln will read: an error here names the problem and writes nothing.
    Config::parse(&text, &path)?;
    if let Some(old) = &existing {
        keep_copy(ws, &path, old)?;
    }
    write_atomically(&path, &text)?;
    Ok(path)
}

/// A replaced `kiln.toml` stays in `.kiln/backups/`, so nothing the user wrote is lost.
fn keep_copy(ws: &Workspace, path: &Path, text: &str) -> Result<()> {
    let dir = ws.kiln_dir().join("backups");
    std::fs::create_dir_all(&dir)?;
    let stamp = kiln_runtime::clock::now().replace([':', '.'], "-");
    let name = format!("{}.{stamp}", path.file_name().and_then(|n| n.to_str()).unwrap_or(FILE_NAME));
    std::fs::write(dir.join(name), text)?;
    Ok(())
}

fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("toml.kiln-tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}
