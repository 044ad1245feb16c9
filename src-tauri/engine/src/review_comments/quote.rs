//! The code a comment is on: lines of a file of the session's working copy, read by Kiln
//! (never taken from the request), each refusal with its code.

use std::path::Path;

use kiln_types::error::{ApiError, ErrorCode, Result};

/// The largest file a comment can quote from (the diff shows no larger one either).
const MAX_FILE: u64 = 4 * 1024 * 1024;
/// The most lines one comment can span.
pub(super) const MAX_LINES: i64 = 500;

/// Lines `start..=end` (1-based, inclusive) of `path` in `workdir`, joined with `\n`.
/// PATH_NOT_ALLOWED for a path that leaves the working copy; INVALID_INPUT for one that is
/// no file, a file that is not text, and lines it does not have.
pub(super) fn read(workdir: &Path, path: &str, start: i64, end: i64) -> Result<String> {
    let file = kiln_runtime::paths::confine(workdir, path)?;
    let meta = std::fs::metadata(&file)
        .map_err(|_| ApiError::invalid(format!("`{path}` is not a file of the session's working copy")))?;
    if !meta.is_file() {
        return Err(ApiError::invalid(format!("`{path}` is not a file of the session's working copy")));
    }
    if meta.len() > MAX_FILE {
        return Err(ApiError::invalid(format!("`{path}` is too large to comment on")));
    }
    let bytes = std::fs::read(&file)?;
    let text = String::from_utf8(bytes).map_err(|_| ApiError::invalid(format!("`{path}` is not a text file")))?;
    lines(&text, start, end).map_err(|e| ApiError::new(e.code, format!("`{path}`: {}", e.message)))
}

/// Lines `start..=end` of `text`, or INVALID_INPUT naming what is wrong with the range.
pub(super) fn lines(text: &str, start: i64, end: i64) -> Result<String> {
    let count = text.lines().count() as i64;
    if start < 1 || end < start {
        return Err(ApiError::new(
            ErrorCode::InvalidInput,
            format!("lines {start} to {end} are no range: lines count from 1 and the end is not before the start"),
        ));
    }
    if end > count {
        return Err(ApiError::invalid(format!("it has {count} lines; line {end} is not one of them")));
    }
    if end - start + 1 > MAX_LINES {
        return Err(ApiError::invalid(format!("a comment spans at most {MAX_LINES} lines")));
    }
    let picked: Vec<&str> = text.lines().skip((start - 1) as usize).take((end - start + 1) as usize).collect();
    Ok(picked.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_lines_and_refuses_what_is_not_there() {
        let text = "one\ntwo\r\nthree\n";
        assert_eq!(lines(text, 2, 3).unwrap(), "two\nthree");
        assert_eq!(lines(text, 1, 1).unwrap(), "one");
        for (start, end) in [(0, 1), (2, 1), (3, 4), (-1, 2)] {
            assert_eq!(lines(text, start, end).unwrap_err().code, ErrorCode::InvalidInput, "{start}..{end}");
        }
        assert!(lines("", 1, 1).is_err());
    }
}
