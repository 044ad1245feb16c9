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
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{path}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
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
    }
}
