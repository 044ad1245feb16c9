//! Which issue the operator means: an issue's web address on the delivery provider's host
//! (`https://github.com/owner/name/issues/N`; for GitHub Enterprise or a test double, the
//! API's own host), or a number (`12`, `#12`) of the delivery repository. Anything else is
//! refused before GitHub is asked.

use crate::delivery::git_pr::github::valid_name;
use crate::delivery::git_pr::web_root;
use kiln_types::error::{ApiError, ErrorCode, Result};

/// An issue of a repository, by number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct IssueRef {
    pub owner: String,
    pub repo: String,
    pub number: u64,
}

impl IssueRef {
    pub(super) fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.repo)
    }
}

/// Reads `text`. `api_url` says which host an address may name; `delivery` is the
/// delivery repository a bare number belongs to (`None`: numbers are refused, with `why`).
pub(super) fn parse(text: &str, api_url: &str, delivery: Option<&(String, String)>) -> Result<IssueRef> {
    let text = text.trim();
    let digits = text.strip_prefix('#').unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        let number = number(digits).ok_or_else(|| ApiError::invalid(format!("'{text}' is no issue number")))?;
        return match delivery {
            Some((owner, repo)) => Ok(IssueRef { owner: owner.clone(), repo: repo.clone(), number }),
            // As git-pr says when it cannot tell the repository.
            None => Err(ApiError::new(
                ErrorCode::TargetUnavailable,
                "an issue number needs the delivery repository: set the repository (owner/name) in the delivery settings, or paste the issue's address",
            )),
        };
    }
    let refused = || {
        ApiError::invalid(format!(
            "'{}' is not the address of a GitHub issue on {}: paste one like {}/owner/name/issues/12, or its number",
            shorten(text),
            hosts(api_url).join(" or "),
            web_root(api_url)
        ))
    };
    let (scheme, rest) = text.split_once("://").ok_or_else(refused)?;
    if !scheme.eq_ignore_ascii_case("https") && !scheme.eq_ignore_ascii_case("http") {
        return Err(refused());
    }
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let (host, path) = rest.split_once('/').ok_or_else(refused)?;
    if host.contains('@') || !hosts(api_url).iter().any(|h| h.eq_ignore_ascii_case(host)) {
        return Err(refused());
    }
    let parts: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    match parts.as_slice() {
        [owner, repo, "issues", n] if valid_name(owner) && valid_name(repo) => match number(n) {
            Some(number) => Ok(IssueRef { owner: owner.to_string(), repo: repo.to_string(), number }),
            None => Err(refused()),
        },
        _ => Err(refused()),
    }
}

/// The hosts (with port) an issue's address may name: the provider's web host, and the
/// API's own host when that is not `api.github.com` (GitHub Enterprise serves both on one).
pub(super) fn hosts(api_url: &str) -> Vec<String> {
    let host = |url: &str| {
        let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
        rest.split(['/', '?', '#']).next().unwrap_or_default().to_ascii_lowercase()
    };
    let mut hosts = vec![host(&web_root(api_url))];
    let api = host(api_url);
    if api != "api.github.com" && !hosts.contains(&api) {
        hosts.push(api);
    }
    hosts
}

fn number(digits: &str) -> Option<u64> {
    digits.parse::<u64>().ok().filter(|n| (1..=i64::MAX as u64).contains(n))
}

/// What the operator typed, as an error message may quote it.
fn shorten(text: &str) -> String {
    let cut: String = text.chars().filter(|c| !c.is_control()).take(120).collect();
    if cut.chars().count() < text.chars().count() {
        format!("{cut}…")
    } else {
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GITHUB: &str = "https://api.github.com";

    fn delivery() -> Option<(String, String)> {
        Some(("acme".into(), "shop".into()))
    }

    fn issue(owner: &str, repo: &str, number: u64) -> IssueRef {
        IssueRef { owner: owner.into(), repo: repo.into(), number }
    }

    #[test]
    fn numbers_belong_to_the_delivery_repository() {
        assert_eq!(parse("12", GITHUB, delivery().as_ref()).unwrap(), issue("acme", "shop", 12));
        assert_eq!(parse(" #7 ", GITHUB, delivery().as_ref()).unwrap(), issue("acme", "shop", 7));
        let e = parse("12", GITHUB, None).unwrap_err();
        assert_eq!(e.code, ErrorCode::TargetUnavailable);
        assert!(e.message.contains("delivery repository"));
        assert!(parse("0", GITHUB, delivery().as_ref()).is_err());
        assert!(parse("99999999999999999999999", GITHUB, delivery().as_ref()).is_err());
    }

    #[test]
    fn addresses_on_the_providers_host() {
        let d = delivery();
        let d = d.as_ref();
        assert_eq!(parse("https://github.com/acme/shop/issues/3", GITHUB, d).unwrap(), issue("acme", "shop", 3));
        assert_eq!(
            parse("https://github.com/acme/tracker/issues/9#issuecomment-1", GITHUB, d).unwrap(),
            issue("acme", "tracker", 9)
        );
        let ghe = "https://ghe.example.com/api/v3";
        assert_eq!(parse("https://ghe.example.com/a/b/issues/1", ghe, d).unwrap(), issue("a", "b", 1));
        let double = "http://127.0.0.1:4321";
        assert_eq!(parse("http://127.0.0.1:4321/acme/shop/issues/2", double, d).unwrap(), issue("acme", "shop", 2));
        for bad in [
            "https://gitlab.com/acme/shop/issues/3",
            "https://github.com/acme/shop/pull/3",
            "https://github.com/acme/shop/issues/x",
            "https://github.com/acme/shop/issues",
            "https://user@github.com/acme/shop/issues/3",
            "https://api.github.com/repos/acme/shop/issues/3",
            "https://github.com/../shop/issues/3",
            "ftp://github.com/acme/shop/issues/3",
            "github.com/acme/shop/issues/3",
            "fix the cart",
            "",
        ] {
            let e = parse(bad, GITHUB, d).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidInput, "{bad}");
        }
        assert!(parse("http://127.0.0.1:9/acme/shop/issues/2", double, d).is_err(), "another port is another host");
    }
}
