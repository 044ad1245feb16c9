//! Finding an agent's binary: a path set in settings, else PATH, else the places npm
//! and the installers put it (npm's global prefix, `~/.local/bin`, `~/.npm-global/bin`,
//! Claude's own `~/.claude/local`, OpenCode's `~/.opencode/bin`). A missing binary is an
//! error that says how to install it (the ACP presets give their own hints, from
//! `super::acp::presets`, which sits above this).

use std::path::{Path, PathBuf};

use kiln_types::error::{ApiError, ErrorCode, Result};

/// How to install an agent whose binary is missing: the CLIs Kiln drives itself, else a
/// word for any other.
pub(crate) fn install_hint(binary: &str) -> &'static str {
    match binary {
        "claude" => "install Claude Code with `npm install -g @anthropic-ai/claude-code` and sign in with `claude`",
        "codex" => "install Codex with `npm install -g @openai/codex` and sign in with `codex login`",
        _ => "install it, or set its path in Settings",
    }
}

/// The binary to run for `name`, or `DRIVER_NOT_FOUND` saying how to install it.
pub fn find(name: &str, configured: Option<&Path>) -> Result<PathBuf> {
    find_else(name, configured, install_hint(name))
}

/// The binary to run for `name`, or `DRIVER_NOT_FOUND` saying `hint` (how to install it).
pub(crate) fn find_else(name: &str, configured: Option<&Path>, hint: &str) -> Result<PathBuf> {
    if let Some(path) = configured {
        return if is_executable(path) {
            Ok(path.to_path_buf())
        } else {
            Err(ApiError::new(
                ErrorCode::DriverNotFound,
                format!("the {name} path set in Settings, `{}`, is not an executable file", path.display()),
            ))
        };
    }
    candidates(name)
        .into_iter()
        .find(|p| is_executable(p))
        .ok_or_else(|| ApiError::new(ErrorCode::DriverNotFound, format!("`{name}` was not found: {hint}")))
}

fn candidates(name: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).map(|d| d.join(name)).collect()).unwrap_or_default();
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
        out.push(home.join(".local/bin").join(name));
        out.push(home.join(".npm-global/bin").join(name));
        out.push(home.join(".claude/local").join(name));
        out.push(home.join(".volta/bin").join(name));
        // OpenCode's own installer.
        out.push(home.join(".opencode/bin").join(name));
    }
    if let Some(prefix) = std::env::var_os("NPM_CONFIG_PREFIX").map(PathBuf::from) {
        out.push(prefix.join("bin").join(name));
    }
    out.push(PathBuf::from("/usr/local/bin").join(name));
    out.push(PathBuf::from("/opt/homebrew/bin").join(name));
    out
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_paths_must_be_executable_and_missing_binaries_say_how_to_install() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("claude");
        std::fs::write(&bin, "#!/bin/sh\n").unwrap();
        let err = find("claude", Some(&bin)).unwrap_err();
        assert_eq!(err.code, ErrorCode::DriverNotFound);
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find("claude", Some(&bin)).unwrap(), bin);
        let err = find("kiln-no-such-agent", None).unwrap_err();
        assert_eq!(err.code, ErrorCode::DriverNotFound);
        assert!(err.message.contains("Settings"), "{}", err.message);
    }
}
