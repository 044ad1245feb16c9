//! Conflict markers in a working copy's file (SPEC §4, update from the workspace): the
//! conflicts an update left, read from the markers git writes (`<<<<<<<`, `|||||||`,
//! `=======`, `>>>>>>>`), and one conflict replaced by the side the user keeps.
//!
//! The file is the record: a conflict is whatever markers stand in it now, whoever
//! edited it since (the agent, the terminal, this module). So each conflict carries an
//! id made from its own text and place, and a resolution names that id: a conflict that
//! changed since it was shown is not found, never a neighbour resolved by its number.

use std::path::Path;

use kiln_runtime::paths::beneath::Beneath;
use kiln_types::ConflictKeep;

/// The largest file whose conflicts are read (a merged source file, not a data dump).
pub const MAX_FILE: u64 = 4 * 1024 * 1024;

/// One conflict: the two sides (and the base, when the markers carry it) as the file
/// holds them, each line with its line ending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// Made from the conflict's text and its order in the file.
    pub id: String,
    /// The 1-based line of its `<<<<<<<` marker.
    pub line: u32,
    pub ours: String,
    pub base: Option<String>,
    pub theirs: String,
    /// Byte range of the whole conflict, markers included.
    range: std::ops::Range<usize>,
}

/// Whether a line is one of the markers that open or close a conflict (a file still
/// holding one is not resolved, even when the rest of that conflict was edited away).
fn opens(line: &str) -> bool {
    is_marker(line, '<')
}

fn closes(line: &str) -> bool {
    is_marker(line, '>')
}

/// Seven `c` and then the line's end or a space (git writes the side's label after it).
fn is_marker(line: &str, c: char) -> bool {
    let line = line.trim_end_matches(['\n', '\r']);
    line.len() >= 7 && line.chars().take(7).all(|x| x == c) && matches!(line.as_bytes().get(7), None | Some(b' '))
}

fn is_separator(line: &str) -> bool {
    line.trim_end_matches(['\n', '\r']) == "======="
}

fn is_base(line: &str) -> bool {
    is_marker(line, '|')
}

/// Whether the text holds a marker line at all.
pub fn holds_markers(text: &str) -> bool {
    text.split_inclusive('\n').any(|line| opens(line) || closes(line))
}

/// The whole conflicts of `text`, in order. Markers that make no whole conflict (one
/// side edited away by hand) are not one; `holds_markers` still sees them.
pub fn conflicts(text: &str) -> Vec<Conflict> {
    enum Part {
        Ours,
        Base,
        Theirs,
    }
    let mut found = Vec::new();
    let mut open: Option<(usize, u32, Part, String, Option<String>, String)> = None;
    let mut offset = 0;
    for (number, line) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += line.len();
        if opens(line) {
            // A second opening before the first closed: the first was no whole conflict.
            open = Some((start, number as u32 + 1, Part::Ours, String::new(), None, String::new()));
            continue;
        }
        let Some((from, at, part, ours, base, theirs)) = open.as_mut() else { continue };
        match part {
            Part::Ours if is_base(line) => {
                *part = Part::Base;
                *base = Some(String::new());
            }
            Part::Ours | Part::Base if is_separator(line) => *part = Part::Theirs,
            Part::Ours => ours.push_str(line),
            Part::Base => base.get_or_insert_with(String::new).push_str(line),
            Part::Theirs if closes(line) => {
                let index = found.len();
                let range = *from..offset;
                found.push(Conflict {
                    id: id_of(index, &text[range.clone()]),
                    line: *at,
                    ours: std::mem::take(ours),
                    base: base.take(),
                    theirs: std::mem::take(theirs),
                    range,
                });
                open = None;
            }
            Part::Theirs => theirs.push_str(line),
        }
    }
    found
}

/// `text` with the conflict `id` replaced by the side kept; `None` when no conflict of
/// the text has that id (it changed, or was resolved, since it was read).
pub fn resolve(text: &str, id: &str, keep: ConflictKeep) -> Option<String> {
    let conflict = conflicts(text).into_iter().find(|c| c.id == id)?;
    let kept = match keep {
        ConflictKeep::Session => conflict.ours.clone(),
        ConflictKeep::Workspace => conflict.theirs.clone(),
        ConflictKeep::Both => both(&conflict.ours, &conflict.theirs),
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..conflict.range.start]);
    out.push_str(&kept);
    out.push_str(&text[conflict.range.end..]);
    Some(out)
}

/// Both sides, one after the other, never glued onto one line.
fn both(ours: &str, theirs: &str) -> String {
    if ours.is_empty() || ours.ends_with('\n') {
        format!("{ours}{theirs}")
    } else {
        format!("{ours}\n{theirs}")
    }
}

fn id_of(index: usize, raw: &str) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hash::hash(&(index, raw), &mut hasher);
    format!("{:016x}", std::hash::Hasher::finish(&hasher))
}

/// Whether the file `rel` of a working copy still holds a marker line, read through a
/// handle beneath it (as bytes: a file that is not UTF-8 can hold markers too).
pub fn file_holds_markers(workdir: &Path, rel: &str) -> bool {
    // Any size: a large file still marked must never pass for resolved.
    read_bytes(workdir, rel, u64::MAX / 2).is_some_and(|bytes| holds_markers(&String::from_utf8_lossy(&bytes)))
}

/// The file `rel` of a working copy as text, read through a handle beneath it; `None`
/// when it cannot be read as text (gone, a directory, too large, not UTF-8).
pub fn read(workdir: &Path, rel: &str) -> Option<String> {
    String::from_utf8(read_bytes(workdir, rel, MAX_FILE)?).ok()
}

fn read_bytes(workdir: &Path, rel: &str, max: u64) -> Option<Vec<u8>> {
    let relative = kiln_runtime::paths::relative(rel).ok()?;
    Beneath::open(workdir).ok()?.read(&relative, max).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "a\n<<<<<<< session\nhi\n=======\nhey\n>>>>>>> workspace\nb\n<<<<<<< session\nx\n||||||| base\no\n=======\ny\n>>>>>>> workspace\n";

    #[test]
    fn reads_each_whole_conflict_with_its_sides_and_line() {
        let found = conflicts(TWO);
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].line, found[0].ours.as_str(), found[0].theirs.as_str()), (2, "hi\n", "hey\n"));
        assert_eq!(found[0].base, None);
        assert_eq!((found[1].line, found[1].base.as_deref()), (8, Some("o\n")));
        assert_ne!(found[0].id, found[1].id);
    }

    #[test]
    fn resolving_one_conflict_leaves_the_other_and_the_rest_untouched() {
        let second = conflicts(TWO)[1].id.clone();
        let once = resolve(TWO, &second, ConflictKeep::Workspace).unwrap();
        assert_eq!(once, "a\n<<<<<<< session\nhi\n=======\nhey\n>>>>>>> workspace\nb\ny\n");
        let first = conflicts(&once)[0].id.clone();
        assert_eq!(resolve(&once, &first, ConflictKeep::Both).unwrap(), "a\nhi\nhey\nb\ny\n");
        assert_eq!(resolve(&once, &first, ConflictKeep::Session).unwrap(), "a\nhi\nb\ny\n");
        assert!(!holds_markers(&resolve(&once, &first, ConflictKeep::Session).unwrap()));
    }

    #[test]
    fn a_conflict_that_changed_since_it_was_read_is_not_found() {
        let id = conflicts(TWO)[0].id.clone();
        let edited = TWO.replace("hey\n", "hey there\n");
        assert_eq!(resolve(&edited, &id, ConflictKeep::Session), None);
    }

    #[test]
    fn half_a_conflict_is_no_conflict_but_still_a_marker() {
        let half = "a\n<<<<<<< session\nhi\nb\n";
        assert!(conflicts(half).is_empty());
        assert!(holds_markers(half));
        assert!(!holds_markers("a\n<<<<<<<<<< not one\n== =\n"));
        assert!(holds_markers("x\r\n>>>>>>> workspace\r\n"));
    }
}
