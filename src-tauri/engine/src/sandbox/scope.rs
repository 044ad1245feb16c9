//! What a command Kiln runs for a session sees and may touch: setup, gates, the tool
//! loop's `run_command`, the preview server and delivery hooks. They all run code the
//! agent may have written, so each gets the same scope:
//!
//! - an environment built from an allowlist, never Kiln's own: no provider keys, no
//!   `KILN_*` variables (so `KILN_CONFIG_DIR` does not lead to the access tokens), no
//!   agent-socket or cloud credentials;
//! - a session-scoped `HOME` and temporary directory (`.kiln/sessions/<id>/home` and
//!   `tmp`, mode 0700), so `~/.config`, shell start-up files and the agents' logins are
//!   not where the command looks;
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

use super::Confinement;

/// Variables passed through unchanged when Kiln has them: locale, identity, and what
/// tools need to find their toolchain, a proxy or a certificate store.
const PASSED: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "USER",
    "LOGNAME",
    "SHELL",
    "RUSTUP_TOOLCHAIN",
    "JAVA_HOME",
    "GOROOT",
    "GOFLAGS",
    "GOPROXY",
    "GONOSUMDB",
    "GOPRIVATE",
    "PNPM_HOME",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "UV_CACHE_DIR",
    "PIP_CACHE_DIR",
    "PIP_INDEX_URL",
    "npm_config_registry",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
];

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
    home: PathBuf,
    tmp: PathBuf,
}

impl Scope {
    /// A scope for a command of the session whose directory is `session_dir` (its home
    /// and temporary directory are made there), working in and allowed to write
    /// `writable`, with `bins` first on PATH and `extra` set last.
    pub fn new(
        session_dir: &Path,
        writable: &[&Path],
        bins: &[PathBuf],
        extra: &[(String, String)],
    ) -> std::io::Result<Scope> {
        Scope::with_host(session_dir, writable, bins, extra, &|key| std::env::var(key).ok())
    }

    /// `new`, reading Kiln's own environment through `host` (for tests).
    fn with_host(
        session_dir: &Path,
        writable: &[&Path],
        bins: &[PathBuf],
        extra: &[(String, String)],
        host: &dyn Fn(&str) -> Option<String>,
    ) -> std::io::Result<Scope> {
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
        let mut env: Vec<(String, String)> = vec![
            ("PATH".into(), path),
            ("HOME".into(), text(&home)),
            ("TMPDIR".into(), text(&tmp)),
            ("TMP".into(), text(&tmp)),
            ("TEMP".into(), text(&tmp)),
            ("CI".into(), "1".into()),
            ("TERM".into(), "dumb".into()),
            ("NO_COLOR".into(), "1".into()),
            // Nothing may wait for a terminal: git asking for a password, a pager.
            ("GIT_TERMINAL_PROMPT".into(), "0".into()),
            ("PAGER".into(), "cat".into()),
            ("GIT_PAGER".into(), "cat".into()),
            // Go keeps to the toolchain installed here; corepack fetches a package
            // manager without asking (there is no one to answer).
            ("GOTOOLCHAIN".into(), "local".into()),
            ("COREPACK_ENABLE_DOWNLOAD_PROMPT".into(), "0".into()),
        ];
        for key in PASSED {
            if let Some(value) = host(key).filter(|v| !v.is_empty()) {
                env.push((key.to_string(), value));
            }
        }
        let real_home = host("HOME").filter(|h| !h.is_empty()).map(PathBuf::from).filter(|h| h.is_absolute());
        for (key, default) in PINNED {
            let value = host(key).filter(|v| Path::new(v).is_absolute()).map(PathBuf::from);
            let value = value.or_else(|| real_home.as_ref().map(|h| h.join(default)).filter(|p| p.exists()));
            if let Some(value) = value {
                env.push((key.to_string(), text(&value)));
            }
        }
        if let Some(gocache) = host("GOCACHE").filter(|v| Path::new(v).is_absolute()) {
            env.push(("GOCACHE".into(), gocache));
        }
        for (key, value) in extra {
            env.retain(|(k, _)| k != key);
            env.push((key.clone(), value.clone()));
        }
        let mut confinement = Confinement::for_commands(&env);
        for dir in writable {
            confinement.allow(dir);
        }
        confinement.allow(&home);
        confinement.allow(&tmp);
        // Kiln's own state is not even readable, but for this session's directory. What
        // lies inside a writable directory cannot be hidden (a delivery hook writes the
        // workspace, `.kiln` included), so it is not.
        let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let writable_real: Vec<PathBuf> = writable.iter().map(|p| real(p)).collect();
        let hidden: Vec<PathBuf> =
            super::hidden::hidden().into_iter().filter(|h| !writable_real.iter().any(|w| h.starts_with(w))).collect();
        // What the command works in stays readable even inside a hidden path (git-pr's
        // worktree lives in `.kiln/worktrees`).
        let shown: Vec<&Path> = writable.iter().copied().chain([session_dir]).collect();
        confinement.hide(&hidden, &shown);
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
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The session's temporary directory.
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
        let host_env = [
            ("PATH", "/usr/bin:/bin"),
            ("HOME", real.to_str().unwrap()),
            ("LANG", "C.UTF-8"),
            ("KILN_CONFIG_DIR", "/secret/config"),
            ("ANTHROPIC_API_KEY", "sk-ant-secret"),
            ("AWS_SECRET_ACCESS_KEY", "aws-secret"),
            ("SSH_AUTH_SOCK", "/run/agent.sock"),
            ("XDG_CONFIG_HOME", "/home/op/.config"),
        ];
        let host = |key: &str| host_env.iter().find(|(k, _)| *k == key).map(|(_, v)| v.to_string());
        let session = tmp.path().join("session");
        let work = session.join("workspace");
        let bins = [work.join("node_modules/.bin")];
        let scope = Scope::with_host(&session, &[&work], &bins, &[("PORT".into(), "4000".into())], &host).unwrap();
        for key in ["KILN_CONFIG_DIR", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK", "XDG_CONFIG_HOME"]
        {
            assert_eq!(get(&scope, key), None, "{key} leaked");
        }
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
        assert!(Scope::new(&session, &[], &[], &[]).is_err());
    }
}
