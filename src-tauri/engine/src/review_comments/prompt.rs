//! The prompt of the turn a review is sent with: the operator's words, then each comment
//! with its file, its lines, the code it is on (fenced) and what the operator said of it.

use kiln_types::ReviewCommentView;

/// What opens the prompt when the operator wrote nothing of their own.
const DEFAULT_MESSAGE: &str = "Address these review comments on your change.";

/// What starts the comments' part of a composed prompt.
const COMMENTS_HEAD: &str = "\n\nReview comments (";

pub(crate) fn compose(message: Option<&str>, comments: &[ReviewCommentView]) -> String {
    let message = message.map(str::trim).filter(|m| !m.is_empty()).unwrap_or(DEFAULT_MESSAGE);
    let mut out = format!("{message}{COMMENTS_HEAD}{}):\n", comments.len());
    for (i, c) in comments.iter().enumerate() {
        let lines = if c.start_line == c.end_line {
            format!("line {}", c.start_line)
        } else {
            format!("lines {}-{}", c.start_line, c.end_line)
        };
        let fence = fence_for(&c.quote);
        let language = c.path.rsplit_once('.').map(|(_, ext)| ext).filter(|e| is_word(e)).unwrap_or("");
        out.push_str(&format!(
            "\n{}. `{}` {lines}:\n{fence}{language}\n{}\n{fence}\n{}\n",
            i + 1,
            c.path,
            c.quote,
            c.body.trim()
        ));
    }
    out
}

/// The operator's own words of a message: what `compose` put before the comments (the
/// code they quote and what they say of it are no request of their own, so a comment on
/// "screen readers" routes nothing to the screens' role).
pub(crate) fn operator_words(message: &str) -> &str {
    message.split_once(COMMENTS_HEAD).map_or(message, |(own, _)| own)
}

/// A fence longer than any run of backticks in `code`, so the quote cannot close it.
fn fence_for(code: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for ch in code.chars() {
        run = if ch == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

fn is_word(text: &str) -> bool {
    !text.is_empty() && text.len() <= 10 && text.chars().all(|c| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_types::ReviewCommentState;

    fn comment(path: &str, start: i64, end: i64, quote: &str, body: &str) -> ReviewCommentView {
        ReviewCommentView {
            id: "c".into(),
            path: path.into(),
            start_line: start,
            end_line: end,
            quote: quote.into(),
            body: body.into(),
            state: ReviewCommentState::Open,
            turn_id: None,
            note: None,
            created_at: String::new(),
            updated_at: String::new(),
        }
    }

    #[test]
    fn carries_file_lines_quote_and_body() {
        let text = compose(
            None,
            &[
                comment("src/a.ts", 3, 4, "let x = 1;\nlet y = 2;", " Use const "),
                comment("b.md", 2, 2, "```x```", "Typo"),
            ],
        );
        assert!(text.starts_with("Address these review comments"), "{text}");
        assert_eq!(operator_words(&text), "Address these review comments on your change.");
        assert_eq!(operator_words("Make the screen bigger"), "Make the screen bigger");
        assert!(text.contains("Review comments (2):"), "{text}");
        assert!(text.contains("1. `src/a.ts` lines 3-4:\n```ts\nlet x = 1;\nlet y = 2;\n```\nUse const\n"), "{text}");
        // A quote holding a fence gets a longer one.
        assert!(text.contains("2. `b.md` line 2:\n````md\n```x```\n````\nTypo\n"), "{text}");
        assert!(compose(Some("Please fix"), &[]).starts_with("Please fix\n"));
    }
}
