//! Specification approval (ARCHITECTURE.md: Workflows and the chain): the operator approves a module's specification;
//! Kiln sets its `status:` line and records the SHA-256 of that exact text. Any later
//! edit makes the approval stale, and a `status: approved` line an agent wrote is no
//! authority: only a recorded digest that matches the text counts.

use sha2::{Digest, Sha256};

/// The lowercase hex SHA-256 of a specification's exact text.
pub(crate) fn digest(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `text` is the very text whose approval was recorded as `recorded`.
pub(crate) fn is_current(recorded: Option<&str>, text: &str) -> bool {
    recorded.is_some_and(|d| d == digest(text))
}

/// `text` with its front matter's `status:` set to `status` (front matter is added when
/// the document has none). Everything else is kept byte for byte.
pub(crate) fn with_status(text: &str, status: &str) -> String {
    let line_end = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    let opens = lines.first().is_some_and(|l| l.trim_end() == "---");
    let close = if opens { lines.iter().skip(1).position(|l| l.trim_end() == "---").map(|i| i + 1) } else { None };
    let new_line = format!("status: {status}{line_end}");
    match close {
        Some(close) => {
            match lines[1..close].iter().position(|l| l.trim_start().starts_with("status:")) {
                Some(i) => lines[i + 1] = &new_line,
                None => lines.insert(1, &new_line),
            }
            lines.concat()
        }
        None => format!("---{line_end}{new_line}---{line_end}{text}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modules::spec_status;

    #[test]
    fn approval_binds_the_exact_text() {
        let draft = "---\nstatus: draft\nowner: shop\n---\n# Reviews\n\n## Purpose\nStars.\n";
        let approved = with_status(draft, "approved");
        assert_eq!(approved, "---\nstatus: approved\nowner: shop\n---\n# Reviews\n\n## Purpose\nStars.\n");
        let recorded = digest(&approved);
        assert!(is_current(Some(&recorded), &approved));
        // One changed character makes it stale.
        assert!(!is_current(Some(&recorded), &approved.replace("Stars.", "Stars!")));
        // An agent that writes the line itself gets no approval.
        assert_eq!(spec_status(&with_status(draft, "approved")).as_deref(), Some("approved"));
        assert!(!is_current(None, &approved));
    }

    #[test]
    fn status_is_added_where_missing() {
        assert_eq!(with_status("# Title\n", "approved"), "---\nstatus: approved\n---\n# Title\n");
        assert_eq!(with_status("---\nowner: x\n---\nBody\n", "draft"), "---\nstatus: draft\nowner: x\n---\nBody\n");
        assert_eq!(
            with_status("---\r\nstatus: draft\r\n---\r\nB\r\n", "approved"),
            "---\r\nstatus: approved\r\n---\r\nB\r\n"
        );
        assert_eq!(digest("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
