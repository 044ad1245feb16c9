//! Where a workspace's records and objects live. By default both sit beside the workspace
//! (`.kiln/kiln.db`, `.kiln/store.git`); a team's `kiln serve` can put the records on
//! PostgreSQL and the objects in an S3-compatible bucket so several hosts share them
//! (SPEC §21). The desktop always uses the default.

/// The operator's choice of backing stores (`kiln serve --database … --objects …`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Backing {
    /// `postgres://…`: the records on PostgreSQL instead of `.kiln/kiln.db`.
    pub database: Option<String>,
    /// `s3://bucket/prefix`: checkpoint objects, attachments and delivery artifacts in a
    /// bucket, with `.kiln/store.git` a cache that can be rebuilt from it.
    pub objects: Option<String>,
}

/// `url` as it may be shown or logged: its password, if any, replaced by `***`.
pub fn shown(url: &str) -> String {
    match password(url) {
        Some(secret) => {
            // The password sits between the user's `:` and the host's `@`: replace it there only.
            let (before, after) = url.split_at(secret.as_ptr() as usize - url.as_ptr() as usize);
            format!("{before}***{}", &after[secret.len()..])
        }
        None => url.to_string(),
    }
}

/// The password `url` carries (`scheme://user:password@host/…`), if any: what `shown` hides
/// and what an error quoting the URL must not print (`store::postgres`).
pub fn password(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
    let (userinfo, _) = authority.rsplit_once('@')?;
    let (_, secret) = userinfo.split_once(':')?;
    Some(secret).filter(|s| !s.is_empty())
}

/// `url` with `secret` as its password (percent-encoded), for a password read from a file
/// (`--database-password-file`) rather than written on a command line. A URL that has no
/// user (`postgres://host/db`) gets none: the password goes with PostgreSQL's own default.
pub fn with_password(url: &str, secret: &str) -> Result<String, String> {
    if password(url).is_some() {
        return Err("the URL already carries a password; give it in one place".into());
    }
    let (scheme, rest) = url.split_once("://").ok_or("not a URL (scheme://…)")?;
    let encoded = percent_encoding::utf8_percent_encode(secret, percent_encoding::NON_ALPHANUMERIC).to_string();
    let authority_end = rest.find('/').unwrap_or(rest.len());
    Ok(match rest[..authority_end].rsplit_once('@') {
        Some((user, _)) => format!("{scheme}://{user}:{encoded}@{}", &rest[user.len() + 1..]),
        None => format!("{scheme}://:{encoded}@{rest}"),
    })
}

#[cfg(test)]
mod tests {
    use super::{password, shown, with_password};

    #[test]
    fn a_password_from_a_file_goes_into_the_url_encoded() {
        let url = with_password("postgres://kiln@db.example:5432/team", "p@ss:w/rd").unwrap();
        assert_eq!(url, "postgres://kiln:p%40ss%3Aw%2Frd@db.example:5432/team");
        assert_eq!(password(&url), Some("p%40ss%3Aw%2Frd"));
        assert!(with_password("postgres://kiln:x@db/team", "y").is_err());
        assert_eq!(with_password("postgres://db/team", "y").unwrap(), "postgres://:y@db/team");
    }

    #[test]
    fn a_password_is_never_shown() {
        assert_eq!(shown("postgres://kiln:s3cret@db.example:5432/team"), "postgres://kiln:***@db.example:5432/team");
        assert_eq!(shown("postgres://kiln@db/team"), "postgres://kiln@db/team");
        assert_eq!(shown("s3://bucket/prefix"), "s3://bucket/prefix");
        assert_eq!(shown("not a url"), "not a url");
        assert_eq!(shown("postgres://kiln:@db/team"), "postgres://kiln:@db/team");
        // A password that is also the user, host and path is replaced where it stands only.
        assert_eq!(shown("postgres://db:db@db/db"), "postgres://db:***@db/db");
    }
}
