//! What git is allowed to be given. Every name reaches git as an argument, so none may
//! look like an option, and branch names follow git's own rules (a subset, checked before
//! anything runs); a token is bound only to an http(s) origin.

/// `scheme://host[:port]` of an http(s) URL, lower-cased; `None` for anything else.
pub(super) fn http_origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?.to_ascii_lowercase();
    let valid = !host.is_empty() && host.bytes().all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b));
    valid.then(|| format!("{scheme}://{host}"))
}

pub(super) fn check_ref_name(name: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("'{}' is not usable: {why}", name.escape_debug()));
    if name.is_empty() || name.len() > 200 {
        return bad("it must have 1 to 200 characters");
    }
    if name.starts_with('-') {
        return bad("it starts with '-'");
    }
    if name.chars().any(|c| c.is_control() || c.is_whitespace() || "~^:?*[\\".contains(c)) {
        return bad("it holds spaces, control characters or one of ~ ^ : ? * [ \\");
    }
    if name.contains("..")
        || name.contains("@{")
        || name == "@"
        || name.ends_with('.')
        || name.ends_with('/')
        || name.starts_with('/')
    {
        return bad("git does not allow it as a branch name");
    }
    if name.split('/').any(|part| part.is_empty() || part.starts_with('.') || part.ends_with(".lock")) {
        return bad("git does not allow it as a branch name");
    }
    Ok(())
}

/// A remote: a configured name, a URL or a path.
pub(super) fn check_remote(remote: &str) -> Result<(), String> {
    if remote.is_empty() || remote.starts_with('-') || remote.chars().any(|c| c.is_control()) {
        return Err(format!("'{}' is not a usable remote", remote.escape_debug()));
    }
    Ok(())
}

/// A revision (`origin/main`, a SHA, `HEAD`).
pub(super) fn check_rev(rev: &str) -> Result<(), String> {
    if rev.is_empty()
        || rev.len() > 300
        || rev.starts_with('-')
        || rev.chars().any(|c| c.is_control() || c.is_whitespace())
    {
        return Err(format!("'{}' is not a usable revision", rev.escape_debug()));
    }
    Ok(())
}

pub(super) fn check_sha(sha: &str) -> Result<(), String> {
    if (sha.len() == 40 || sha.len() == 64) && sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(format!("'{}' is not a full commit SHA", sha.escape_debug()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        assert_eq!(http_origin("https://u:p@GitHub.com/org/repo.git").as_deref(), Some("https://github.com"));
        assert_eq!(http_origin("http://127.0.0.1:8080/x").as_deref(), Some("http://127.0.0.1:8080"));
        assert_eq!(http_origin("ssh://git@github.com/x"), None);
        assert_eq!(http_origin("https://evil.com=x/"), None);
    }

    #[test]
    fn ref_names() {
        for ok in ["main", "kiln/shop-1234abcd", "release-1.2"] {
            assert!(check_ref_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-f", "a..b", "a b", "a:b", "x.lock", "a//b", "/a", "a/", ".a", "a/.b", "@", "a@{1}", "a\nb"] {
            assert!(check_ref_name(bad).is_err(), "{bad:?}");
        }
    }
}
