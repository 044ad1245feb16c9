//! What a command Kiln runs for a session sees and may touch: setup, gates, the tool
//! loop's `run_command`, the preview server and delivery hooks. They all run code the
//! agent may have written, so each gets the same scope:
//!
//! - the user's environment minus secrets (`super::passing`): toolchain configuration by
//!   prefix and name, never a secret-looking name or `KILN_*` (so `KILN_CONFIG_DIR` does
//!   not lead to the access tokens) unless `[environment] pass` names it, no agent socket;
//!   Kiln adds only what running without a terminal needs (no pager, no git prompt);
//! - a session-scoped `HOME` and temporary directory (`.kiln/sessions/<id>/home` and
//!   `tmp`, mode 0700), so shell start-up files and the agents' logins are not where the
//!   command looks, with a copy of the user's tool configuration files (`.npmrc`, pip's,
//!   uv's, `.gitconfig`…) in it: read as in the user's terminal, never written;
//! - the toolchains and package caches the real home holds (`~/.cargo`, `~/.rustup`,
//!   `~/go`, `~/.npm`, `~/.cache`, pnpm's store, `~/.local` for Python's user site)
//!   named explicitly, so moving `HOME` does not make installs and builds go online;
//! - the Landlock confinement (`super::Confinement`): writable are the directory the
//!   command works in, the session's home and temporary directory, the devices a shell
//!   writes to and those caches. Not `/tmp`: a command that writes there would share it
//!   with every other program, Kiln's own state included when it lives there. Kiln's
//!   config directory and the workspace's `.kiln`, but for the session's own directory,
//!   are not even readable (`super::hidden`).

use std::path::{Path, PathBuf};

use super::passing::EnvironmentConfig;
use super::Confinement;

/// Locations under the real home that tools find through `HOME` by default: each is
/// set explicitly (to Kiln's value, else the default when it exists) so the command,
/// whose `HOME` is the session's, still uses the installed toolchain and the caches.
const PINNED: &[(&str, &str)] = &[
    ("CARGO_HOME", ".cargo"),
    ("RUSTUP_HOME", ".rustup"),
    ("GOPATH", "go"),
    ("GOMODCACHE", "go/pkg/mod"),
    ("XDG_CACHE_HOME", ".cache"),
    ("XDG_DATA_HOME", ".local/share"),
    ("npm_config_cache", ".npm"),
    ("COREPACK_HOME", ".cache/node/corepack"),
    ("PYTHONUSERBASE", ".local"),
    ("GRADLE_USER_HOME", ".gradle"),
];

/// The environment and confinement of one command. Made per command, since the
/// writable directory and the binaries first on PATH differ between them.
#[derive(Debug, Clone)]
pub struct Scope {
    env: Vec<(String, String)>,
    confinement: Confinement,
    /// What `home()` and `tmp()` answer, which only the tests ask.
    #[cfg_attr(not(feature = "test-support"), allow(dead_code))]
    home: PathBuf,
    #[cfg_attr(not(feature = "test-support"), allow(dead_code))]
    tmp: PathBuf,
}

impl Scope {
    /// A scope for a command of the session whose directory is `session_dir` (its home
    /// and temporary directory are made there), working in and allowed to write
    /// `writable`, with `bins` first on PATH, `extra` set, and the user's environment
    /// passed and set as `environment` says (`super::passing`).
    pub fn new(
        session_dir: &Path,
        writable: &[&Path],
        bins: &[PathBuf],
        extra: &[(String, String)],
        environment: &EnvironmentConfig,
    ) -> std::io::Result<Scope> {
        let host = super::passing::host_variables();
        Scope::with_host(session_dir, writable, bins, extra, environment, &host)
    }

    /// `new`, with Kiln's own environment given as `host` (for tests).
    fn with_host(
        session_dir: &Path,
        writable: &[&Path],
        bins: &[PathBuf],
        extra: &[(String, String)],
        environment: &EnvironmentConfig,
        host_env: &[(String, String)],
    ) -> std::io::Result<Scope> {
        let host = |key: &str| host_env.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let home = session_dir.join("home");
        let tmp = session_dir.join("tmp");
        for dir in [&home, &tmp] {
            private_dir(dir)?;
        }
        let mut path: Vec<PathBuf> = bins.to_vec();
        if let Some(system) = host("PATH") {
            path.extend(std::env::split_paths(&system));
        }
        let path = std::env::join_paths(path).map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
        let text = |p: &Path| p.to_string_lossy().into_owned();
        // Only what running without a terminal needs; nothing a project's tests observe
        // (`CI`, `TERM`, `NO_COLOR` come from the user, or from `[environment]`).
        let mut env: Vec<(String, String)> = vec![
            // Nothing may wait for a terminal: git asking for a password, a pager.
            ("GIT_TERMINAL_PROMPT".into(), "0".into()),
            ("PAGER".into(), "cat".into()),
            ("GIT_PAGER".into(), "cat".into()),
            // Go keeps to the toolchain installed here and corepack fetches a package
            // manager without asking (there is no one to answer), unless the user says
            // otherwise in their own environment.
            ("GOTOOLCHAIN".into(), "local".into()),
            ("COREPACK_ENABLE_DOWNLOAD_PROMPT".into(), "0".into()),
        ];
        for (key, value) in super::passing::passed(host_env.iter().map(|(k, v)| (k.as_str(), v.as_str())), environment)
        {
            if !value.is_empty() {
                env.retain(|(k, _)| *k != key);
                env.push((key, value));
            }
        }
        let real_home = host("HOME").filter(|h| !h.is_empty()).map(PathBuf::from).filter(|h| h.is_absolute());
        for (key, default) in PINNED {
            let value = host(key).filter(|v| Path::new(v).is_absolute()).map(PathBuf::from);
            let value = value.or_else(|| real_home.as_ref().map(|h| h.join(default)).filter(|p| p.exists()));
            if let Some(value) = value {
                env.retain(|(k, _)| k != key);
                env.push((key.to_string(), text(&value)));
            }
        }
        // Kiln's own, last: the home, the temporary directory and the PATH are the session's.
        env.retain(|(k, _)| !super::passing::RESERVED.contains(&k.as_str()));
        env.extend([
            ("PATH".into(), path),
            ("HOME".into(), text(&home)),
            ("TMPDIR".into(), text(&tmp)),
            ("TMP".into(), text(&tmp)),
            ("TEMP".into(), text(&tmp)),
        ]);
        let set = environment.set.iter().filter(|(k, _)| !super::passing::RESERVED.contains(&k.as_str()));
        for (key, value) in extra.iter().cloned().chain(set.map(|(k, v)| (k.clone(), v.clone()))) {
            env.retain(|(k, _)| *k != key);
            env.push((key, value));
        }
        // The user's tool configuration, where the tools look for it under HOME; a copy, so
        // the user's own files are never written.
        if let Some(real_home) = &real_home {
            super::passing::copy_home_files(real_home, &home)?;
        }
        let mut confinement = Confinement::for_commands(&env);
        for dir in writable {
            confinement.allow(dir);
        }
        confinement.allow(&home);
        confinement.allow(&tmp);
        // Kiln's own state is not even readable, but for this session's directory and what
        // the command works in, even inside it (git-pr's worktree lives in `.kiln/worktrees`).
        let shown: Vec<&Path> = writable.iter().copied().chain([session_dir]).collect();
        confinement.hide_kiln_state(&shown);
        Ok(Scope { env, confinement, home, tmp })
    }

    /// The whole environment of the command (nothing else is inherited).
    pub fn env(&self) -> &[(String, String)] {
        &self.env
    }

    /// Where the command may write.
    pub fn confinement(&self) -> &Confinement {
        &self.confinement
    }

    /// The session's home directory as the command sees it.
    #[cfg(any(test, feature = "test-support"))]
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The session's temporary directory.
    #[cfg(any(test, feature = "test-support"))]
    pub fn tmp(&self) -> &Path {
        &self.tmp
    }
}

/// A directory only its owner may enter; an existing link in its place is refused,
/// never followed.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => {
            if meta.permissions().mode() & 0o077 != 0 {
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
            }
            Ok(())
        }
        Ok(_) => Err(std::io::Error::other(format!("{} is not a directory", dir.display()))),
        Err(_) => std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(scope: &'a Scope, key: &str) -> Option<&'a str> {
        scope.env().iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    #[test]
    fn only_allowlisted_variables_reach_the_command() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real-home");
        std::fs::create_dir_all(real.join(".cargo")).unwrap();
        std::fs::create_dir_all(real.join(".npm")).unwrap();
        std::fs::write(real.join(".npmrc"), "registry=http://127.0.0.1:9/\n").unwrap();
        let host_env: Vec<(String, String)> = [
            ("PATH", "/usr/bin:/bin"),
            ("HOME", real.to_str().unwrap()),
            ("LANG", "C.UTF-8"),
            ("KILN_CONFIG_DIR", "/secret/config"),
            ("ANTHROPIC_API_KEY", "sk-ant-secret"),
            ("AWS_SECRET_ACCESS_KEY", "aws-secret"),
            ("SSH_AUTH_SOCK", "/run/agent.sock"),
            ("XDG_CONFIG_HOME", "/home/op/.config"),
            ("PUPPETEER_SKIP_DOWNLOAD", "1"),
            ("NPM_CONFIG_REGISTRY", "http://127.0.0.1:9/"),
            ("NPM_TOKEN", "npm-secret"),
            ("FORCE_COLOR", "1"),
            ("CARGO_TARGET_DIR", "/shared/target"),
            ("PROJECT_MODE", "fast"),
            ("TMPDIR", "/elsewhere"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let session = tmp.path().join("session");
        let work = session.join("workspace");
        let bins = [work.join("node_modules/.bin")];
        let environment = EnvironmentConfig {
            pass: vec!["PROJECT_*".into()],
            set: [("GREETING".to_string(), "hello".to_string()), ("FORCE_COLOR".to_string(), "0".to_string())]
                .into_iter()
                .collect(),
        };
        let extra = [("PORT".to_string(), "4000".to_string())];
        let scope = Scope::with_host(&session, &[&work], &bins, &extra, &environment, &host_env).unwrap();
        for key in [
            "KILN_CONFIG_DIR",
            "ANTHROPIC_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "SSH_AUTH_SOCK",
            "XDG_CONFIG_HOME",
            "NPM_TOKEN",
            "CARGO_TARGET_DIR",
        ] {
            assert_eq!(get(&scope, key), None, "{key} leaked");
        }
        // Nothing Kiln adds changes what a project's tests observe.
        for key in ["CI", "TERM", "NO_COLOR"] {
            assert_eq!(get(&scope, key), None, "{key} was added by Kiln");
        }
        // The user's toolchain configuration passes; `[environment]` passes and sets.
        assert_eq!(get(&scope, "PUPPETEER_SKIP_DOWNLOAD"), Some("1"));
        assert_eq!(get(&scope, "NPM_CONFIG_REGISTRY"), Some("http://127.0.0.1:9/"));
        assert_eq!(get(&scope, "PROJECT_MODE"), Some("fast"));
        assert_eq!(get(&scope, "GREETING"), Some("hello"));
        assert_eq!(get(&scope, "FORCE_COLOR"), Some("0"), "set wins over the user's value");
        // The user's .npmrc is read where npm looks, from a copy.
        assert_eq!(std::fs::read_to_string(scope.home().join(".npmrc")).unwrap(), "registry=http://127.0.0.1:9/\n");
        assert_eq!(scope.env().iter().filter(|(k, _)| k == "TMPDIR").count(), 1);
        assert_eq!(get(&scope, "HOME"), Some(session.join("home").to_str().unwrap()));
        assert_eq!(get(&scope, "TMPDIR"), Some(session.join("tmp").to_str().unwrap()));
        assert_eq!(get(&scope, "LANG"), Some("C.UTF-8"));
        assert_eq!(get(&scope, "PORT"), Some("4000"));
        assert!(get(&scope, "PATH").unwrap().starts_with(bins[0].to_str().unwrap()));
        // Toolchains and caches under the real home are named, when they exist.
        assert_eq!(get(&scope, "CARGO_HOME"), Some(real.join(".cargo").to_str().unwrap()));
        assert_eq!(get(&scope, "npm_config_cache"), Some(real.join(".npm").to_str().unwrap()));
        assert_eq!(get(&scope, "RUSTUP_HOME"), None, "a missing ~/.rustup is not named");
        // The home and temp directory exist and are private.
        use std::os::unix::fs::PermissionsExt;
        for dir in [scope.home(), scope.tmp()] {
            assert_eq!(std::fs::metadata(dir).unwrap().permissions().mode() & 0o777, 0o700);
        }
        let writable = scope.confinement().writable();
        for path in [work.as_path(), scope.home(), scope.tmp(), &real.join(".npm"), Path::new("/dev/null")] {
            assert!(writable.contains(&path.to_path_buf()), "{} writable: {writable:?}", path.display());
        }
        for path in ["/tmp", "/var/tmp", "/dev/shm"] {
            assert!(!writable.contains(&PathBuf::from(path)), "{path} not writable: {writable:?}");
        }
        assert!(!writable.contains(&real.join(".claude")) && !writable.contains(&real));
    }

    #[test]
    fn a_link_in_place_of_the_home_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let session = tmp.path().join("session");
        std::fs::create_dir_all(&session).unwrap();
        std::os::unix::fs::symlink(tmp.path(), session.join("home")).unwrap();
        assert!(Scope::new(&session, &[], &[], &[], &EnvironmentConfig::default()).is_err());
    }
}
