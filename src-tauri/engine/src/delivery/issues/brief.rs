//! An issue worded as a session's brief: whatever the operator typed, then the issue's
//! title, address, author, labels and body, then its comments oldest first with their
//! authors and dates. The issue's part is held to a size: a long body or comment is cut
//! and later comments are left out, and the brief says what was cut and where to read it.

use serde_json::Value;

/// The most the issue's part of a brief may take, in characters (a brief holds 20 000).
pub(super) const ISSUE_BUDGET: usize = 16_000;
/// The most of the issue's body kept.
const BODY_CAP: usize = 8_000;
/// The most of one comment kept.
const COMMENT_CAP: usize = 2_000;

/// One comment, as GitHub answered it.
pub(super) struct Comment {
    pub author: String,
    pub at: String,
    pub body: String,
}

impl Comment {
    pub(super) fn from_json(value: &Value) -> Comment {
        Comment { author: login(value), at: text(value, "created_at"), body: text(value, "body") }
    }
}

/// The issue's author's login (`ghost` when the account is gone, as GitHub shows it).
pub(super) fn login(value: &Value) -> String {
    value.pointer("/user/login").and_then(Value::as_str).unwrap_or("ghost").to_string()
}

pub(super) fn text(value: &Value, key: &str) -> String {
    value.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

pub(super) fn labels(value: &Value) -> Vec<String> {
    value
        .get("labels")
        .and_then(Value::as_array)
        .map(|labels| {
            labels
                .iter()
                .filter_map(|l| l.get("name").and_then(Value::as_str).or_else(|| l.as_str()))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The brief: `typed` (may be empty), then the issue `name` (`acme/shop#12`) at `url`.
/// `unread` is how many comments were not even fetched (past the pages read).
pub(super) fn compose(typed: &str, name: &str, url: &str, issue: &Value, comments: &[Comment], unread: bool) -> String {
    let mut out = String::new();
    let typed = typed.trim();
    if !typed.is_empty() {
        out.push_str(typed);
        out.push_str("\n\n");
    }
    let issue_start = out.chars().count();
    out.push_str(&format!("GitHub issue {name}: {}\n{url}\n", text(issue, "title").trim()));
    let labels = labels(issue);
    out.push_str(&format!("Opened by @{} on {}", login(issue), text(issue, "created_at")));
    if !labels.is_empty() {
        out.push_str(&format!("; labels: {}", labels.join(", ")));
    }
    out.push_str(".\n\n");
    let body = text(issue, "body");
    out.push_str(&if body.trim().is_empty() {
        "(The issue has no description.)".to_string()
    } else {
        capped(body.trim(), BODY_CAP, "the description", url)
    });
    out.push('\n');

    if comments.is_empty() {
        return out;
    }
    out.push_str(&format!("\nComments, oldest first ({}):\n", comments.len()));
    let mut left_out = 0;
    for (index, comment) in comments.iter().enumerate() {
        let entry = format!(
            "\n@{} on {}:\n{}\n",
            comment.author,
            comment.at,
            capped(comment.body.trim(), COMMENT_CAP, "this comment", url)
        );
        if out.chars().count() - issue_start + entry.chars().count() > ISSUE_BUDGET {
            left_out = comments.len() - index;
            break;
        }
        out.push_str(&entry);
    }
    if left_out > 0 {
        out.push_str(&format!(
            "\n[{left_out} later comment(s) left out to keep the brief short: read them at {url}]\n"
        ));
    }
    if unread {
        out.push_str(&format!("\n[The issue has more comments than Kiln reads: read them at {url}]\n"));
    }
    out
}

/// `text` up to `cap` characters; when cut, a note saying how much more there is and where.
fn capped(text: &str, cap: usize, what: &str, url: &str) -> String {
    let total = text.chars().count();
    if total <= cap {
        return text.to_string();
    }
    let kept: String = text.chars().take(cap).collect();
    format!("{}\n[{what} was cut here: {} more characters at {url}]", kept.trim_end(), total - cap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn issue(body: &str) -> Value {
        json!({"title": "Cart forgets its total", "body": body, "user": {"login": "alice"},
               "created_at": "2026-01-02T03:04:05Z", "labels": [{"name": "bug"}, {"name": "cart"}]})
    }

    fn comment(author: &str, body: &str) -> Comment {
        Comment { author: author.into(), at: "2026-01-03T00:00:00Z".into(), body: body.into() }
    }

    #[test]
    fn typed_text_then_the_issue_then_its_comments_in_order() {
        let brief = compose(
            "Keep it small.",
            "acme/shop#3",
            "https://github.com/acme/shop/issues/3",
            &issue("Add two, remove one."),
            &[comment("bob", "Seen it."), comment("carol", "Me too.")],
            false,
        );
        assert_eq!(
            brief,
            "Keep it small.\n\nGitHub issue acme/shop#3: Cart forgets its total\nhttps://github.com/acme/shop/issues/3\nOpened by @alice on 2026-01-02T03:04:05Z; labels: bug, cart.\n\nAdd two, remove one.\n\nComments, oldest first (2):\n\n@bob on 2026-01-03T00:00:00Z:\nSeen it.\n\n@carol on 2026-01-03T00:00:00Z:\nMe too.\n"
        );
    }

    #[test]
    fn long_parts_are_cut_and_the_brief_says_so() {
        let url = "https://github.com/acme/shop/issues/3";
        let long = "x".repeat(BODY_CAP + 10);
        let comments: Vec<Comment> = (0..20).map(|n| comment(&format!("u{n}"), &"y".repeat(COMMENT_CAP + 5))).collect();
        let brief = compose("", "acme/shop#3", url, &issue(&long), &comments, false);
        assert!(brief.chars().count() <= ISSUE_BUDGET + 200, "{}", brief.chars().count());
        assert!(brief.contains(&format!("[the description was cut here: 10 more characters at {url}]")));
        assert!(brief.contains(&format!("[this comment was cut here: 5 more characters at {url}]")));
        assert!(brief.contains("@u0 on"), "the oldest comments are kept");
        assert!(!brief.contains("@u19 on"));
        assert!(brief.contains(&format!("later comment(s) left out to keep the brief short: read them at {url}]")));
        let unread = compose("", "acme/shop#3", url, &issue(""), &comments[..1], true);
        assert!(unread.contains("(The issue has no description.)"));
        assert!(unread.contains(&format!("[The issue has more comments than Kiln reads: read them at {url}]")));
    }
}
