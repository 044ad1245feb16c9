//! The file tools: read (in pages), write, edit by exact replacement, list a directory.
//! Every name is checked by `Root::resolve`, then opened beneath the working copy's
//! handle, so each of them stays inside the working copy whatever is swapped meanwhile.

use std::io::ErrorKind;

use serde_json::Value;

use super::confine::{is_private, Root};
use super::{string, ToolOutcome, ToolResult};
use crate::drivers::events::FileChangeKind;
use kiln_runtime::paths::beneath::Written;

/// Lines a read returns when the model gives no `limit`.
const READ_LINES: u64 = 2000;
/// Characters a read returns at most, whatever the limit: a page must fit the context.
const READ_CHARS: usize = 100_000;
/// A file larger than this is not loaded whole; grep or a command can look into it.
const READ_BYTES: u64 = 8 * 1024 * 1024;
/// Entries a listing shows at most.
const LIST_ENTRIES: usize = 1000;

pub(super) fn read(root: &Root, input: &Value) -> ToolResult {
    let raw = string(input, "path")?;
    let path = root.resolve(raw)?;
    let bytes = root.beneath().read(&path, READ_BYTES).map_err(|e| match e.kind() {
        ErrorKind::FileTooLarge => {
            format!("`{raw}` is too large to read ({e}); use grep or run_command (head, sed -n) to look into it")
        }
        _ => io_error(raw, e),
    })?;
    if is_binary(&bytes) {
        return Ok(ToolOutcome::completed(format!("`{raw}` is a binary file ({} bytes); not shown", bytes.len())));
    }
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return Ok(ToolOutcome::completed("(empty file)"));
    }
    let first = input["offset"].as_u64().unwrap_or(1).max(1);
    let limit = input["limit"].as_u64().unwrap_or(READ_LINES).max(1);
    let total = lines.len() as u64;
    if first > total {
        return Err(format!("`{raw}` has {total} lines; offset {first} is past its end"));
    }
    let last = (first - 1 + limit).min(total);
    let mut page = lines[(first - 1) as usize..last as usize].join("\n");
    let mut shown_last = last;
    if page.chars().count() > READ_CHARS {
        page = page.chars().take(READ_CHARS).collect();
        // The cut line is shown again on the next page.
        shown_last = first - 1 + page.lines().count().saturating_sub(1).max(1) as u64;
    }
    if first > 1 || shown_last < total {
        page.push_str(&format!("\n[lines {first}-{shown_last} of {total}"));
        if shown_last < total {
            page.push_str(&format!("; read on with offset {}", shown_last + 1));
        }
        page.push(']');
    }
    Ok(ToolOutcome::completed(page))
}

pub(super) fn write(root: &Root, input: &Value) -> ToolResult {
    let raw = string(input, "path")?;
    let content = string(input, "content")?;
    let path = root.resolve(raw)?;
    let written = root.beneath().write(&path, content.as_bytes()).map_err(|e| match e.kind() {
        ErrorKind::IsADirectory => format!("`{raw}` is a directory"),
        _ => io_error(raw, e),
    })?;
    let relative = root.relative(&path);
    let change = if written == Written::Replaced { FileChangeKind::Update } else { FileChangeKind::Add };
    Ok(ToolOutcome {
        change: Some((relative.clone(), change)),
        ..ToolOutcome::completed(format!("wrote {} bytes to {relative}", content.len()))
    })
}

pub(super) fn edit(root: &Root, input: &Value) -> ToolResult {
    let raw = string(input, "path")?;
    let old = string(input, "old_string")?;
    let new = string(input, "new_string")?;
    if old.is_empty() {
        return Err("`old_string` is empty; to create a file use write_file".into());
    }
    let path = root.resolve(raw)?;
    let bytes = root.beneath().read(&path, READ_BYTES).map_err(|e| io_error(raw, e))?;
    let text =
        String::from_utf8(bytes).map_err(|_| format!("`{raw}` is not UTF-8 text; edit_file changes text only"))?;
    match text.matches(old).count() {
        0 => Err(format!(
            "`old_string` was not found in `{raw}`; read the file and copy the text exactly, whitespace included"
        )),
        1 => {
            root.beneath().write(&path, text.replacen(old, new, 1).as_bytes()).map_err(|e| io_error(raw, e))?;
            let relative = root.relative(&path);
            Ok(ToolOutcome {
                change: Some((relative.clone(), FileChangeKind::Update)),
                ..ToolOutcome::completed(format!("edited {relative}"))
            })
        }
        n => Err(format!(
            "`old_string` occurs {n} times in `{raw}`; include more surrounding lines so it names exactly one place"
        )),
    }
}

pub(super) fn list(root: &Root, input: &Value) -> ToolResult {
    let raw = input["path"].as_str().unwrap_or(".");
    let path = root.resolve(raw)?;
    let mut names: Vec<String> = root
        .beneath()
        .read_dir(&path)
        .map_err(|e| io_error(raw, e))?
        .flatten()
        .filter(|entry| !is_private(&entry.file_name()))
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => format!("{name}/"),
                Ok(kind) if kind.is_symlink() => format!("{name}@"),
                _ => name,
            }
        })
        .collect();
    if names.is_empty() {
        return Ok(ToolOutcome::completed("(empty directory)"));
    }
    names.sort();
    let total = names.len();
    names.truncate(LIST_ENTRIES);
    let mut listing = names.join("\n");
    if total > LIST_ENTRIES {
        listing.push_str(&format!("\n[{LIST_ENTRIES} of {total} entries shown; use glob to narrow]"));
    }
    Ok(ToolOutcome::completed(listing))
}

/// A NUL in the first 8 KiB: the same test git uses.
pub(super) fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0)
}

pub(super) fn io_error(raw: &str, e: std::io::Error) -> String {
    if kiln_runtime::paths::beneath::is_refusal(&e) {
        e.to_string()
    } else {
        format!("`{raw}`: {e}")
    }
}
