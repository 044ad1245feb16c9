//! Where a commented range of lines went in a change of its file: whether the change
//! touched those lines, and where they are now when it did not (lines added or removed
//! above them move them). Read from git's own line diff with no context lines.

use git2::{DiffOptions, Patch};

use kiln_types::error::Result;

/// A range of lines (1-based, inclusive) after a change of its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Followed {
    /// The change removed, replaced or inserted lines inside the range.
    pub changed: bool,
    pub start: i64,
    pub end: i64,
}

/// Follows lines `start..=end` of `before` into `after`.
pub(super) fn follow(before: &[u8], after: &[u8], start: i64, end: i64) -> Result<Followed> {
    let mut options = DiffOptions::new();
    options.context_lines(0);
    let patch = Patch::from_buffers(before, None, after, None, Some(&mut options))?;
    let mut changed = false;
    let mut shift = 0i64;
    for i in 0..patch.num_hunks() {
        let (hunk, _) = patch.hunk(i)?;
        let (old_start, old_lines) = (i64::from(hunk.old_start()), i64::from(hunk.old_lines()));
        let new_lines = i64::from(hunk.new_lines());
        if old_lines == 0 {
            // Lines inserted after old line `old_start`: above the range, inside it, or below.
            if old_start < start {
                shift += new_lines;
            } else if old_start < end {
                changed = true;
            }
            continue;
        }
        let old_end = old_start + old_lines - 1;
        if old_end < start {
            shift += new_lines - old_lines;
        } else if old_start <= end {
            changed = true;
        }
    }
    Ok(Followed { changed, start: (start + shift).max(1), end: (end + shift).max(1) })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "a\nb\nc\nd\ne\nf\n";

    fn follow_in(after: &str, start: i64, end: i64) -> Followed {
        follow(FILE.as_bytes(), after.as_bytes(), start, end).unwrap()
    }

    #[test]
    fn an_edit_inside_the_range_changes_it() {
        assert_eq!(follow_in("a\nb\nC\nd\ne\nf\n", 2, 4), Followed { changed: true, start: 2, end: 4 });
        // Removing its last line counts too.
        assert!(follow_in("a\nb\nc\ne\nf\n", 3, 4).changed);
        // A line inserted between two of its lines.
        assert!(follow_in("a\nb\nc\nx\nd\ne\nf\n", 3, 4).changed);
    }

    #[test]
    fn edits_above_move_the_range_and_edits_below_do_not() {
        // Two lines inserted above, one removed above.
        assert_eq!(follow_in("0\n1\na\nb\nc\nd\ne\nf\n", 3, 4), Followed { changed: false, start: 5, end: 6 });
        assert_eq!(follow_in("b\nc\nd\ne\nf\n", 3, 4), Followed { changed: false, start: 2, end: 3 });
        // Below, and a line inserted right after the range's last line.
        assert_eq!(follow_in("a\nb\nc\nd\nx\nf\n", 3, 4), Followed { changed: false, start: 3, end: 4 });
        assert_eq!(follow_in("a\nb\nc\nd\nx\ne\nf\n", 3, 4), Followed { changed: false, start: 3, end: 4 });
        // Right before its first line.
        assert_eq!(follow_in("a\nb\nx\nc\nd\ne\nf\n", 3, 4), Followed { changed: false, start: 4, end: 5 });
    }

    #[test]
    fn an_unchanged_file_keeps_everything() {
        assert_eq!(follow_in(FILE, 1, 6), Followed { changed: false, start: 1, end: 6 });
    }
}
