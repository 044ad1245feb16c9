//! What a session accepts as an attachment (ARCHITECTURE.md: Attachments), as pure functions: how many,
//! how large, which types, content that really is what its extension says, and the
//! safe name it is stored and copied under.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use kiln_types::error::{ApiError, ErrorCode, Result};

/// Where attachment copies live inside a working copy (never checkpointed or delivered).
pub const IN_WORKDIR: &str = "reference/attachments";

pub const MAX_PER_SESSION: usize = 10;
pub const MAX_BYTES: usize = 5 * 1024 * 1024;
pub const MAX_NAME_CHARS: usize = 128;
pub(crate) const EXTENSIONS: [&str; 11] =
    ["png", "jpg", "jpeg", "gif", "webp", "md", "txt", "json", "csv", "pdf", "svg"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Image,
    File,
}

/// An accepted attachment: its kind and its extension, in lowercase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub kind: Kind,
    pub extension: String,
}

pub(crate) fn kind_of(extension: &str) -> Kind {
    match extension {
        "png" | "jpg" | "jpeg" | "gif" | "webp" | "svg" => Kind::Image,
        _ => Kind::File,
    }
}

/// Accepts `bytes` named `name` as the next attachment of a session that holds
/// `existing_count`, or says why not. Checked in this order: count, type, emptiness,
/// size, content. The extension is read from the same cleaned name `safe_name`
/// keeps, so what is checked is what is stored.
pub fn check(name: &str, bytes: &[u8], existing_count: usize) -> Result<Checked> {
    if existing_count >= MAX_PER_SESSION {
        return Err(ApiError::new(
            ErrorCode::AttachmentLimit,
            format!("a session holds at most {MAX_PER_SESSION} attachments; remove one to add another"),
        ));
    }
    let cleaned = clean(name);
    let extension = split(&cleaned).1.map(str::to_ascii_lowercase).unwrap_or_default();
    if !EXTENSIONS.contains(&extension.as_str()) {
        return Err(ApiError::new(
            ErrorCode::AttachmentType,
            format!("`{}` is not a type Kiln accepts; attach one of: {}", shown(name), EXTENSIONS.join(", ")),
        ));
    }
    if bytes.is_empty() {
        return Err(ApiError::new(ErrorCode::AttachmentEmpty, format!("`{}` is empty", shown(name))));
    }
    if bytes.len() > MAX_BYTES {
        return Err(ApiError::new(
            ErrorCode::AttachmentTooLarge,
            format!("`{}` is {} bytes; an attachment is at most 5 MB ({MAX_BYTES} bytes)", shown(name), bytes.len()),
        ));
    }
    if !content_matches(&extension, bytes) {
        return Err(ApiError::new(
            ErrorCode::AttachmentMismatch,
            format!("the content of `{}` is not a valid .{extension} file", shown(name)),
        ));
    }
    Ok(Checked { kind: kind_of(&extension), extension })
}

/// Images, PDFs and SVGs by their first bytes; text kinds by being UTF-8 (and JSON
/// by parsing), since a browser trusts the extension when it shows them.
fn content_matches(extension: &str, bytes: &[u8]) -> bool {
    match extension {
        "png" => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "jpg" | "jpeg" => bytes.starts_with(b"\xff\xd8\xff"),
        "gif" => bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a"),
        "webp" => bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP",
        "pdf" => bytes.starts_with(b"%PDF-"),
        "svg" => std::str::from_utf8(bytes).is_ok_and(has_svg_root),
        "json" => std::str::from_utf8(bytes)
            .is_ok_and(|text| serde_json::from_str::<serde_json::Value>(without_bom(text)).is_ok()),
        "md" | "txt" | "csv" => std::str::from_utf8(bytes).is_ok(),
        _ => false,
    }
}

/// True when, after a BOM, whitespace, an XML declaration, comments and a DOCTYPE
/// without an internal subset, the first element is `<svg`.
fn has_svg_root(text: &str) -> bool {
    let mut rest = without_bom(text);
    loop {
        rest = rest.trim_start();
        let skipped = if rest.starts_with("<?") {
            rest.find("?>").map(|end| end + 2)
        } else if rest.starts_with("<!--") {
            rest.find("-->").map(|end| end + 3)
        } else if rest.starts_with("<!DOCTYPE") {
            // An internal subset (`[...]`) can declare entities; an attachment needs none.
            rest.find('>').filter(|&end| !rest[..end].contains('[')).map(|end| end + 1)
        } else {
            let Some(after) = rest.strip_prefix("<svg") else { return false };
            return after.starts_with(|c: char| c.is_ascii_whitespace() || c == '>' || c == '/');
        };
        match skipped {
            Some(end) => rest = &rest[end..],
            None => return false,
        }
    }
}

fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// The name an attachment is stored and copied under. The rule, in order:
/// 1. keep the last path segment only (after the last `/` or `\`);
/// 2. replace every character outside `[A-Za-z0-9._-]` with `-`;
/// 3. collapse runs of `-` to one `-` and runs of `.` to one `.` (so never `..`);
/// 4. strip leading and trailing `.` and `-` (no hidden file, nothing that reads as
///    a command-line option);
/// 5. the extension is what follows the last `.`; strip `-` and `.` from the end of
///    the stem;
/// 6. at most 128 characters: the stem is cut, the extension kept;
/// 7. unique in the session, ignoring case: `-2`, `-3`… go before the extension.
///
/// So `my photo (1).PNG` becomes `my-photo-1.PNG`. An empty result is refused.
///
/// A hostile or odd name is stored under a safe name, never refused for its spelling
/// alone: the cleaning cannot yield a path, so refusing would only cost the operator a
/// file a browser or an OS named oddly. The record keeps that safe name, not the
/// original: it is the name the agent reads the copy by, and the operator must see the
/// same one. Case by case (the tests in `tests/it/paths.rs` hold each):
/// - `a/b.png`, `..\..\b.png`, `C:\Users\me\b.png`: the last segment, `b.png`;
/// - `..` or `.`: no name left, and no extension, so `ATTACHMENT_TYPE` first;
/// - `.hidden.txt`, `-rf.txt`: `hidden.txt`, `rf.txt` (no hidden file, no option);
/// - a 300-character name: cut to 128, the extension kept;
/// - control characters, NUL included: each one a `-`;
/// - look-alikes of `/` and `.` (U+2215, U+2044, U+FF0F, U+FF0E) and U+202E (which
///   makes `x\u{202e}gnp.txt` display as `xtxt.png`): each a `-`, so `..∕..∕a.png` is
///   `a.png` and the extension checked and stored is the real one, `.txt`.
pub fn safe_name(original: &str, taken: &[String]) -> Result<String> {
    let cleaned = clean(original);
    if cleaned.is_empty() {
        return Err(ApiError::invalid(format!("`{}` leaves no usable file name", shown(original))));
    }
    let (stem, extension) = split(&cleaned);
    for n in 1.. {
        let suffix = if n == 1 { String::new() } else { format!("-{n}") };
        let candidate = fit(stem, &suffix, extension);
        if !taken.iter().any(|t| t.eq_ignore_ascii_case(&candidate)) {
            return Ok(candidate);
        }
    }
    unreachable!("some suffix is always free")
}

/// Whether `name` could have come out of `safe_name`: one segment of `[A-Za-z0-9._-]`,
/// at most 128 characters, not starting with `.` or `-`, with no `..`. Checked again
/// before a name read back from the records becomes part of a path.
pub(crate) fn is_safe_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_CHARS
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && !name.starts_with(['.', '-'])
        && !name.contains("..")
}

/// Steps 1 to 5 of `safe_name`. The result is ASCII, so characters are bytes.
fn clean(original: &str) -> String {
    let segment = original.rsplit(['/', '\\']).next().unwrap_or_default();
    let mut out = String::with_capacity(segment.len());
    for c in segment.chars() {
        let c = if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' };
        if (c == '-' || c == '.') && out.ends_with(c) {
            continue;
        }
        out.push(c);
    }
    let out = out.trim_matches(['.', '-']);
    match split(out) {
        (stem, Some(extension)) => format!("{}.{extension}", stem.trim_end_matches(['.', '-'])),
        (stem, None) => stem.to_string(),
    }
}

/// Stem and extension, split at the last `.`.
fn split(name: &str) -> (&str, Option<&str>) {
    match name.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() && !extension.is_empty() => (stem, Some(extension)),
        _ => (name, None),
    }
}

/// `stem + suffix + .extension`, cutting the stem to stay within `MAX_NAME_CHARS`.
/// An extension too long to keep is cut along with the rest.
fn fit(stem: &str, suffix: &str, extension: Option<&str>) -> String {
    let tail = extension.map(|e| format!(".{e}")).unwrap_or_default();
    if suffix.len() + tail.len() >= MAX_NAME_CHARS {
        let whole = format!("{stem}{tail}");
        let cut = whole[..whole.len().min(MAX_NAME_CHARS - suffix.len())].trim_end_matches(['.', '-']);
        return format!("{cut}{suffix}");
    }
    let room = MAX_NAME_CHARS - suffix.len() - tail.len();
    let stem = stem[..stem.len().min(room)].trim_end_matches(['.', '-']);
    format!("{stem}{suffix}{tail}")
}

/// A name as quoted in a message: short, with control characters escaped.
fn shown(name: &str) -> String {
    let short: String = name.chars().take(80).collect();
    short.escape_debug().to_string()
}
