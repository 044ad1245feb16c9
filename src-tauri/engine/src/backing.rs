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

#[cfg(test)]
mod tests {
    use super::shown;

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
