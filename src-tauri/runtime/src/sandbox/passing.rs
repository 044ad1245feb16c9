//! Which of the user's environment variables reach the commands Kiln runs for a session
//! (setup, gates, the preview, terminals, the tool loop's commands), and which of the
//! user's tool configuration files they can read (ARCHITECTURE.md: Confinement).
//!
//! An install or a test must behave as in the user's terminal, minus their secrets:
//! - toolchain configuration passes by prefix (`COREPACK_`, `NPM_CONFIG_`, `PIP_`, `GO…`,
//!   `CARGO_`…) or by name (`NODE_OPTIONS`, `CI`, `NO_COLOR`, `TERM`…);
//! - a name that looks secret (`*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*_KEY`, cloud and
//!   provider credentials) never passes, nor does Kiln's own `KILN_*`, unless the user
//!   names it in `[environment] pass`;
//! - `[environment] set` gives a value outright;
//! - the tool configuration files under the real home (`.npmrc`, pip's and uv's config…)
//!   are copied into the session's home before each command, so the command reads them
//!   where the tool looks and can never write the user's own.

use std::collections::BTreeMap;
use std::path::Path;

/// `[environment]` of `kiln.toml` (and the same in the user's settings).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EnvironmentConfig {
    /// Variables of the user's environment that pass although they would not by the
    /// rules (a secret the tests need, a variable of the project's own); a trailing `*`
    /// names a prefix.
    pub pass: Vec<String>,
    /// Variables set to these values for every command.
    pub set: BTreeMap<String, String>,
}

/// Variables Kiln decides itself, which `set` cannot change: the session's home and
/// temporary directory, and the PATH with the project's binaries first.
pub const RESERVED: &[&str] = &["HOME", "PATH", "TMPDIR", "TMP", "TEMP"];

impl EnvironmentConfig {
    /// Problems with the names, in words, for `kiln.toml`'s error (empty when valid).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for name in &self.pass {
            let bare = name.strip_suffix('*').unwrap_or(name);
            if !is_name(bare) {
                out.push(format!(
                    "`environment.pass` entry `{name}` is not a variable name (or a prefix ending in `*`)"
                ));
            }
        }
        for name in self.set.keys() {
            if !is_name(name) {
                out.push(format!("`environment.set` key `{name}` is not a variable name"));
            } else if RESERVED.contains(&name.as_str()) {
                out.push(format!("`environment.set` cannot set `{name}`: Kiln sets it for the session"));
            }
        }
        out
    }

    /// Whether the user named `key` in `pass`.
    pub fn names(&self, key: &str) -> bool {
        self.pass.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => key.starts_with(prefix),
            None => p == key,
        })
    }
}

fn is_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Passed by name: locale, identity, certificates, proxies, and the variables that say how
/// the user wants output and tools to behave.
const NAMES: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "TZ",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "CI",
    "EDITOR",
    "JAVA_HOME",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "VIRTUALENV_PYTHON",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "all_proxy",
];

/// Passed by prefix: each toolchain's configuration.
const PREFIXES: &[&str] = &[
    "LC_",
    "COREPACK_",
    "NPM_CONFIG_",
    "npm_config_",
    "NODE_",
    "PNPM_",
    "YARN_",
    "BUN_",
    "DENO_",
    "PIP_",
    "PIPENV_",
    "UV_",
    "POETRY_",
    "PDM_",
    "HATCH_",
    "PYTHON",
    "PUPPETEER_",
    "PLAYWRIGHT_",
    "CYPRESS_",
    "ELECTRON_",
    "CGO_",
    "CARGO_",
    "RUST",
    "JAVA_",
    "JDK_",
    "MAVEN_",
    "GRADLE_",
    "SKIP_INSTALL_",
    "VOLTA_",
    "MISE_",
    "ASDF_",
];

/// Kiln decides these whatever the user's environment says: the session's build goes to
/// its own working copy, never to a target directory shared with the user's builds.
const NEVER: &[&str] = &["CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR"];

/// Names the secret rules would catch that hold none: Go's list of private module paths.
const NOT_SECRET: &[&str] = &["GOPRIVATE"];

/// Whether a name looks like it holds a secret. Matched on the upper-cased name, so
/// `npm_config__authToken` is caught as well as `NPM_TOKEN`.
pub fn looks_secret(key: &str) -> bool {
    let key = key.to_ascii_uppercase();
    const WORDS: &[&str] =
        &["TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "APIKEY", "API_KEY", "PRIVATE", "_AUTH", "COOKIE"];
    const OWNERS: &[&str] =
        &["AWS_", "AZURE_", "GOOGLE_", "GCP_", "GCLOUD_", "ANTHROPIC_", "OPENAI_", "GITHUB_", "GH_"];
    WORDS.iter().any(|w| key.contains(w))
        || key.ends_with("_KEY")
        || key.contains("_KEY_")
        || key.ends_with("_PASS")
        || OWNERS.iter().any(|o| key.starts_with(o))
}

/// Whether the user's variable `key` reaches a session's command.
pub fn passes(key: &str, config: &EnvironmentConfig) -> bool {
    if config.names(key) {
        return true;
    }
    // Kiln's own, whatever the prefix (`LC_KILN_…` would otherwise pass as a locale).
    if key.contains("KILN_") || NEVER.contains(&key) || (looks_secret(key) && !NOT_SECRET.contains(&key)) {
        return false;
    }
    NAMES.contains(&key) || PREFIXES.iter().any(|p| key.starts_with(p)) || is_go_variable(key)
}

/// Go's own variables are `GO` and capitals, no underscore (`GOPROXY`, `GOFLAGS`,
/// `GOTOOLCHAIN`), which `GOOGLE_…` is not.
fn is_go_variable(key: &str) -> bool {
    key.strip_prefix("GO")
        .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()))
}

/// Kiln's own environment as text: a variable whose name or value is not UTF-8 is left out
/// (`std::env::vars` would panic on it).
pub fn host_variables() -> Vec<(String, String)> {
    std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect()
}

/// The user's variables that pass, in the order given.
pub fn passed<'a>(
    host: impl IntoIterator<Item = (&'a str, &'a str)>,
    config: &EnvironmentConfig,
) -> Vec<(String, String)> {
    host.into_iter().filter(|(k, _)| passes(k, config)).map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The user's tool configuration files, relative to the home: read by the tools through
/// `HOME`, so a copy of each one that exists goes into the session's home.
pub const HOME_FILES: &[&str] = &[
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".config/pnpm/rc",
    ".bunfig.toml",
    ".config/pip/pip.conf",
    ".pip/pip.conf",
    ".config/uv/uv.toml",
    ".pypirc",
    ".condarc",
    ".gitconfig",
    ".config/git/config",
    ".config/git/ignore",
    ".config/go/env",
    ".m2/settings.xml",
    ".gemrc",
];

/// Copies each of `HOME_FILES` that `real_home` holds as a regular file into `home`,
/// replacing what the session's commands left there. Everything under `home` is opened
/// beneath a handle of it without following links: the session's commands may write there,
/// and a link they planted must never lead a copy out. Returns the files copied.
pub fn copy_home_files(real_home: &Path, home: &Path) -> std::io::Result<Vec<&'static str>> {
    let root = crate::paths::beneath::Beneath::open(home)?;
    let mut copied = Vec::new();
    for rel in HOME_FILES {
        let source = real_home.join(rel);
        // The user's own file, read through links as their tools would read it.
        let Ok(content) = std::fs::read(&source) else { continue };
        if !std::fs::metadata(&source).is_ok_and(|m| m.is_file()) {
            continue;
        }
        root.replace(Path::new(rel), &content, 0o600)?;
        copied.push(*rel);
    }
    Ok(copied)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pass: &[&str], set: &[(&str, &str)]) -> EnvironmentConfig {
        EnvironmentConfig {
            pass: pass.iter().map(|s| s.to_string()).collect(),
            set: set.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        }
    }

    #[test]
    fn toolchain_configuration_passes_by_prefix() {
        let none = EnvironmentConfig::default();
        for key in [
            "COREPACK_NPM_REGISTRY",
            "NPM_CONFIG_REGISTRY",
            "npm_config_registry",
            "PUPPETEER_SKIP_DOWNLOAD",
            "SKIP_INSTALL_SIMPLE_GIT_HOOKS",
            "PIP_INDEX_URL",
            "UV_INDEX_URL",
            "PYTHONDONTWRITEBYTECODE",
            "GOFLAGS",
            "GOPROXY",
            "GOPRIVATE",
            "CGO_ENABLED",
            "CARGO_NET_OFFLINE",
            "RUSTFLAGS",
            "NODE_OPTIONS",
            "NODE_ENV",
            "CI",
            "NO_COLOR",
            "TERM",
            "LC_ALL",
        ] {
            assert!(passes(key, &none), "{key} should pass");
        }
    }

    #[test]
    fn secrets_and_kiln_variables_never_pass_unless_named() {
        let none = EnvironmentConfig::default();
        for key in [
            "NPM_TOKEN",
            "NPM_CONFIG__AUTH",
            "npm_config__authToken",
            "CARGO_REGISTRY_TOKEN",
            "CARGO_REGISTRIES_CORP_TOKEN",
            "PIP_PASSWORD",
            "UV_INDEX_CORP_PASSWORD",
            "POETRY_HTTP_BASIC_CORP_PASSWORD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "PUPPETEER_SIGNING_KEY",
            "KILN_CONFIG_DIR",
            "LC_KILN_TEST",
            "CARGO_TARGET_DIR",
            "SSH_AUTH_SOCK",
            "DATABASE_URL",
        ] {
            assert!(!passes(key, &none), "{key} must not pass");
        }
        let named = config(&["NPM_TOKEN", "MY_APP_*"], &[]);
        assert!(passes("NPM_TOKEN", &named));
        assert!(passes("MY_APP_MODE", &named) && !passes("MY_APPMODE", &named));
        assert!(!passes("NPM_TOKEN_2", &named), "a named variable names only itself");
    }

    #[test]
    fn configuration_names_are_checked() {
        assert!(config(&["FOO", "BAR_*"], &[("X", "1")]).problems().is_empty());
        let bad = config(&["not a name", "1X"], &[("HOME", "/x"), ("A-B", "1")]);
        let problems = bad.problems();
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("cannot set `HOME`")), "{problems:?}");
    }

    #[test]
    fn home_files_are_copied_and_a_planted_link_is_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        let home = tmp.path().join("home");
        let outside = tmp.path().join("outside");
        for dir in [real.join(".config/pip"), home.clone(), outside.clone()] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(real.join(".npmrc"), "registry=http://127.0.0.1:9/\n").unwrap();
        std::fs::write(real.join(".config/pip/pip.conf"), "[global]\nno-index = true\n").unwrap();
        std::fs::write(outside.join("victim"), "keep").unwrap();
        // What a command of the session could plant: the file a link to a file outside,
        // and a directory on the way a link to a directory outside.
        std::os::unix::fs::symlink(outside.join("victim"), home.join(".npmrc")).unwrap();
        std::os::unix::fs::symlink(&outside, home.join(".config")).unwrap();
        let copied = copy_home_files(&real, &home);
        assert!(copied.is_err(), "a link on the way is refused, not followed");
        assert_eq!(std::fs::read_to_string(outside.join("victim")).unwrap(), "keep");
        assert!(!outside.join("pip").exists(), "nothing was made through the link");
        // The planted file link itself was replaced by the copy.
        assert!(!std::fs::symlink_metadata(home.join(".npmrc")).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(home.join(".npmrc")).unwrap(), "registry=http://127.0.0.1:9/\n");

        std::fs::remove_file(home.join(".config")).unwrap();
        let copied = copy_home_files(&real, &home).unwrap();
        assert_eq!(copied, vec![".npmrc", ".config/pip/pip.conf"]);
        assert_eq!(std::fs::read_to_string(home.join(".config/pip/pip.conf")).unwrap(), "[global]\nno-index = true\n");
    }
}
