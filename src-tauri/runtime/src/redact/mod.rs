//! Keeps secrets out of what Kiln stores and shows. A provider may echo the key it was
//! sent ("Incorrect API key provided: Bearer sk-…"), an agent may print a token: every
//! transcript entry, event and driver error passes through `redact` on its way to
//! `kiln.db` or a view. It replaces each secret this process has opened or stored (the
//! sealed provider keys, the connected application's and the delivery provider's
//! tokens) and anything shaped like one (a bearer credential, an `sk-…` key, a GitHub
//! or Kiln access token).
//!
//! A delivery's own secrets, in every spelling its tools may print them, are masked by a
//! `Redactor` (`spellings`).
//!
//! The secrets are held for the whole process, not per workspace: events and the
//! drivers have no workspace at hand, and hiding one workspace's key in another's
//! transcript costs nothing.

mod spellings;

use std::borrow::Cow;
use std::sync::{LazyLock, RwLock};

use regex::Regex;
use serde_json::Value;

pub use spellings::Redactor;

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Shorter secrets are not held: replacing every `abc` in a transcript would garble it,
/// and a real key or token is far longer.
const MIN_HELD: usize = 8;

static HELD: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Shapes of credentials, whoever's they are: group 1 is kept (the `Bearer ` before a
/// credential), group 2 is the credential. One without a digit is taken for a word
/// ("Bearer authentication"), as real keys and tokens are random.
static SHAPES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        // An Authorization value as it is sent or echoed.
        r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/\-]{12,}=*)",
        // OpenAI, Anthropic and compatible keys: sk-…, sk-proj-…, sk-ant-….
        r"()(\bsk-[A-Za-z0-9_\-]{16,})",
        // GitHub tokens.
        r"()(\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}))",
        // Kiln's own access tokens (`kiln token create`).
        r"()(\bkiln_[A-Za-z0-9_\-]{20,})",
    ]
    .iter()
    .map(|p| Regex::new(p).expect("a valid pattern"))
    .collect()
});

/// Remembers `secret` so every later `redact` in this process replaces it.
pub fn hold(secret: &str) {
    let secret = secret.trim();
    if secret.len() < MIN_HELD {
        return;
    }
    let mut held = HELD.write().unwrap_or_else(|e| e.into_inner());
    if !held.iter().any(|s| s == secret) {
        held.push(secret.to_string());
        // Longest first, so a secret containing another is replaced whole.
        held.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
}

/// `text` with every held secret and every credential-shaped string replaced; borrowed
/// when there was nothing to replace.
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    {
        let held = HELD.read().unwrap_or_else(|e| e.into_inner());
        for secret in held.iter() {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), REDACTED));
            }
        }
    }
    for shape in SHAPES.iter() {
        let credential = |c: &regex::Captures| c[2].bytes().any(|b| b.is_ascii_digit());
        if !shape.captures_iter(&out).any(|c| credential(&c)) {
            continue;
        }
        let replaced = shape.replace_all(&out, |c: &regex::Captures| {
            if !credential(c) {
                return c[0].to_string();
            }
            // A full stop after a credential ends the sentence, not the credential.
            let stops = &c[2][c[2].trim_end_matches('.').len()..];
            format!("{}{REDACTED}{stops}", &c[1])
        });
        out = Cow::Owned(replaced.into_owned());
    }
    out
}

/// `redact` for an owned string.
pub fn redact_owned(text: String) -> String {
    match redact(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(redacted) => redacted,
    }
}

/// Redacts every string (and object key) in `value`; `true` when anything changed.
pub fn redact_json(value: &mut Value) -> bool {
    match value {
        Value::String(s) => match redact(s) {
            Cow::Borrowed(_) => false,
            Cow::Owned(redacted) => {
                *s = redacted;
                true
            }
        },
        Value::Array(items) => items.iter_mut().fold(false, |changed, v| redact_json(v) | changed),
        Value::Object(map) => {
            let mut changed = false;
            let entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
            for (key, mut v) in entries {
                changed |= redact_json(&mut v);
                let key = match redact(&key) {
                    Cow::Borrowed(_) => key,
                    Cow::Owned(redacted) => {
                        changed = true;
                        redacted
                    }
                };
                map.insert(key, v);
            }
            changed
        }
        _ => false,
    }
}

/// `value` with its strings redacted, through its JSON form; unchanged (and not
/// re-decoded) when it holds nothing to redact.
pub fn redact_serde<T: serde::Serialize + serde::de::DeserializeOwned>(value: T) -> T {
    let Ok(text) = serde_json::to_string(&value) else { return value };
    // The cheap check first: most values hold nothing to redact.
    if matches!(redact(&text), Cow::Borrowed(_)) {
        return value;
    }
    let Ok(mut json) = serde_json::to_value(&value) else { return value };
    redact_json(&mut json);
    serde_json::from_value(json).unwrap_or(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_secrets_are_replaced_wherever_they_appear() {
        hold("kiln-test-held-7f3a9c2e41d84b0f");
        let text = "key kiln-test-held-7f3a9c2e41d84b0f refused;kiln-test-held-7f3a9c2e41d84b0f";
        assert_eq!(redact(text), "key [redacted] refused;[redacted]");
        // Too short to hold without garbling text.
        hold("abc");
        assert_eq!(redact("abc"), "abc");
    }

    #[test]
    fn credential_shapes_are_replaced_keeping_what_precedes_them() {
        assert_eq!(
            redact("Incorrect API key provided: Bearer sk-proj-AbCdEf0123456789xyz. See the docs."),
            "Incorrect API key provided: Bearer [redacted]. See the docs."
        );
        assert_eq!(redact("key=sk-ant-api03-0123456789abcdefXYZ end"), "key=[redacted] end");
        assert_eq!(redact("token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"), "token [redacted]");
        assert_eq!(redact("use kiln_9f8e7d6c5b4a39281706f5e4 here"), "use [redacted] here");
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for text in [
            "a risk-assessment-of-the-plan",
            "the bearer of bad news",
            "Bearer authentication, basically",
            "sk-learn-tutorial-for-beginners",
            "Added the endpoint.",
        ] {
            assert!(matches!(redact(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn json_strings_and_keys_are_redacted() {
        hold("kiln-test-json-5e1c0b7a9d3f2468");
        let mut value = serde_json::json!({"a": ["x kiln-test-json-5e1c0b7a9d3f2468"], "kiln-test-json-5e1c0b7a9d3f2468": 1, "n": 2});
        assert!(redact_json(&mut value));
        assert_eq!(value, serde_json::json!({"a": ["x [redacted]"], "[redacted]": 1, "n": 2}));
        assert!(!redact_json(&mut serde_json::json!({"plain": "text"})));
    }
}
