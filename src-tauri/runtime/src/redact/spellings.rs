//! The secrets one delivery knows (the workspace's sealed secrets, a token), in every
//! spelling a tool may print them: raw, base64 (an HTTP `Authorization: Basic` header in
//! a git trace) and percent-encoded (a URL, a form body), and the userinfo of any URL.
//! The git and gh transports, the delivery steps and their logs all mask through one
//! `Redactor`; the process-wide `super::redact` runs on top when anything is stored.

use std::sync::OnceLock;

use base64::Engine as _;

use crate::process::{HEAD_BYTES, TAIL_BYTES};

/// What a secret is replaced with.
const MASK: &str = "***";

/// The secrets to keep out of everything this module returns. Each is replaced with
/// `***` in its raw form, base64 (standard and URL-safe, at any alignment, so an HTTP
/// `Authorization: Basic` header in a trace is covered whatever the user name) and
/// percent-encoded forms. URL userinfo (`https://user:pass@host`) is always hidden.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Every spelling to mask, longest first so a longer form is not left half-masked.
    forms: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} forms)", self.forms.len())
    }
}

impl Redactor {
    pub fn new() -> Self {
        Self::default()
    }

    #[cfg(any(test, feature = "test-support"))]
    pub fn with(mut self, secret: &str) -> Self {
        self.add(secret);
        self
    }

    pub fn add(&mut self, secret: &str) {
        for s in [secret, secret.trim()] {
            if s.is_empty() {
                continue;
            }
            self.forms.push(s.to_string());
            self.forms.extend(base64_forms(s.as_bytes()));
            self.forms.extend(percent_forms(s));
        }
        self.forms.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        self.forms.dedup();
    }

    pub fn merge(&mut self, other: &Redactor) {
        self.forms.extend(other.forms.iter().cloned());
        self.forms.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        self.forms.dedup();
    }

    /// `text` with every secret and every URL's userinfo masked.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for form in &self.forms {
            if out.contains(form.as_str()) {
                out = out.replace(form.as_str(), MASK);
            }
        }
        userinfo_pattern().replace_all(&out, "${1}***@").into_owned()
    }

    /// A capped output: `head` and `tail` were cut out of one stream, so a secret may
    /// straddle a cut. A piece of a secret left dangling at a cut is masked too.
    pub fn redact_capped(&self, head: &str, tail: &str) -> String {
        if tail.is_empty() {
            return self.redact(head);
        }
        let mut head = self.redact(head);
        let mut tail = self.redact(tail);
        for form in &self.forms {
            mask_dangling_end(&mut head, form);
            mask_dangling_start(&mut tail, form);
        }
        format!(
            "{head}\n[… output cut: only the first {} KiB and the last {} KiB are kept …]\n{tail}",
            HEAD_BYTES / 1024,
            TAIL_BYTES / 1024
        )
    }
}

/// The shortest piece of a secret that is still masked at a cut: shorter ones say nothing.
const MIN_PIECE: usize = 4;

fn mask_dangling_end(text: &mut String, form: &str) {
    let longest = form.len().saturating_sub(1).min(text.len());
    for len in (MIN_PIECE..=longest).rev() {
        if form.is_char_boundary(len) && text.ends_with(&form[..len]) {
            text.truncate(text.len() - len);
            text.push_str(MASK);
            return;
        }
    }
}

fn mask_dangling_start(text: &mut String, form: &str) {
    let longest = form.len().saturating_sub(1).min(text.len());
    for len in (MIN_PIECE..=longest).rev() {
        let start = form.len() - len;
        if form.is_char_boundary(start) && text.starts_with(&form[start..]) {
            text.replace_range(..len, MASK);
            return;
        }
    }
}

/// `scheme://userinfo@` → `scheme://***@`.
fn userinfo_pattern() -> &'static regex::Regex {
    static PATTERN: OnceLock<regex::Regex> = OnceLock::new();
    PATTERN.get_or_init(|| regex::Regex::new(r#"(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#\s@'"<>]+@"#).unwrap())
}

/// The base64 spellings of a secret: whole (padded), and the characters that depend
/// only on the secret at each of the three byte alignments it can have inside a longer
/// encoded value (`user:secret` in a Basic header).
fn base64_forms(secret: &[u8]) -> Vec<String> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let mut forms = vec![STANDARD.encode(secret), URL_SAFE.encode(secret)];
    for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
        for offset in 0..3usize {
            let mut bytes = vec![0u8; offset];
            bytes.extend_from_slice(secret);
            let encoded = engine.encode(&bytes);
            // Character i covers bits [6i, 6i+6); keep those wholly inside the secret.
            let start = (8 * offset).div_ceil(6);
            let end = (8 * (offset + secret.len())) / 6;
            // A short fragment would mask unrelated text for no gain.
            if end >= start + 8 {
                forms.push(encoded[start..end].to_string());
            }
        }
    }
    forms
}

/// Percent-encoded spellings of a secret (as in a URL or a form body).
fn percent_forms(secret: &str) -> Vec<String> {
    let encode = |keep: &dyn Fn(u8) -> bool, space_plus: bool| -> String {
        let mut out = String::new();
        for &b in secret.as_bytes() {
            if keep(b) {
                out.push(b as char);
            } else if space_plus && b == b' ' {
                out.push('+');
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    };
    let unreserved = |b: u8| b.is_ascii_alphanumeric() || b"-._~".contains(&b);
    let alphanumeric = |b: u8| b.is_ascii_alphanumeric();
    let forms = [
        encode(&unreserved, false),
        encode(&alphanumeric, false),
        encode(&|b: u8| b.is_ascii_alphanumeric() || b"*-._".contains(&b), true),
    ];
    let mut forms: Vec<String> = forms.into_iter().filter(|f| f != secret).collect();
    let lower: Vec<String> = forms.iter().map(|f| lowercase_escapes(f)).filter(|f| f != secret).collect();
    forms.extend(lower);
    forms
}

/// `%2F` → `%2f`: some encoders write lower-case hex.
fn lowercase_escapes(encoded: &str) -> String {
    let bytes = encoded.as_bytes();
    let mut out = String::with_capacity(encoded.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            out.push('%');
            out.push((bytes[i + 1] as char).to_ascii_lowercase());
            out.push((bytes[i + 2] as char).to_ascii_lowercase());
            i += 3;
        } else {
            out.push(bytes[i] as char);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_fragments_cover_a_basic_header_for_any_user() {
        let r = Redactor::new().with("ghp_secretvalue123");
        for user in ["x-access-token", "a", "ab", "abc"] {
            let header = base64::engine::general_purpose::STANDARD.encode(format!("{user}:ghp_secretvalue123"));
            let shown = r.redact(&format!("Authorization: Basic {header}"));
            assert!(!shown.contains(&header), "{shown}");
            assert!(shown.contains(MASK), "{shown}");
        }
    }

    #[test]
    fn dangling_pieces_at_a_cut_are_masked() {
        let r = Redactor::new().with("tok_ABCDEFGHIJ");
        let shown = r.redact_capped("lots of text tok_ABCDE", "FGHIJ and more");
        assert!(!shown.contains("tok_ABCDE") && !shown.contains("FGHIJ"), "{shown}");
    }
}
