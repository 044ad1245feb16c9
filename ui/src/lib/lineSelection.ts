// Lines picked in a file's diff to comment on, and the review comments drawn beside them: pure logic, so the diff view
// only renders. Lines are the working copy's (the diff's new side), 1-based; a selection has an anchor (the first line
// picked) and a head (where a shift-click, a shift-Enter or a drag ended), in either order.
import type { ReviewCommentState, ReviewCommentView } from "../api/types";

export interface LineSelection {
  path: string;
  anchor: number;
  head: number;
}

export interface LineRange {
  start: number;
  end: number;
}

/**
 * The selection after picking `line` of `path`: extending moves the head of a selection in the same file, anything
 * else starts a new one; picking the only selected line again clears it.
 */
export function pickLine(
  previous: LineSelection | null,
  path: string,
  line: number,
  extend: boolean,
): LineSelection | null {
  if (previous && previous.path === path) {
    if (extend) return { ...previous, head: line };
    if (previous.anchor === line && previous.head === line) return null;
  }
  return { path, anchor: line, head: line };
}

export function rangeOf(selection: LineSelection): LineRange {
  return { start: Math.min(selection.anchor, selection.head), end: Math.max(selection.anchor, selection.head) };
}

export function inRange(line: number, range: LineRange): boolean {
  return line >= range.start && line <= range.end;
}

/** "line 4" or "lines 2–5". */
export function rangeLabel(range: LineRange): string {
  return range.start === range.end ? `line ${range.start}` : `lines ${range.start}–${range.end}`;
}

/** The file's comments by the line they end at, where they are drawn; oldest first at each line. */
export function commentsByEndLine(
  comments: readonly ReviewCommentView[],
  path: string,
): Map<number, ReviewCommentView[]> {
  const out = new Map<number, ReviewCommentView[]>();
  for (const c of comments) {
    if (c.path !== path) continue;
    const at = out.get(c.endLine);
    if (at) at.push(c);
    else out.set(c.endLine, [c]);
  }
  return out;
}

/** Whether a line of the file is under a comment that still asks something (not resolved). */
export function commentedLines(comments: readonly ReviewCommentView[], path: string): Set<number> {
  const out = new Set<number>();
  for (const c of comments) {
    if (c.path !== path || c.state === "resolved") continue;
    for (let line = c.startLine; line <= c.endLine; line++) out.add(line);
  }
  return out;
}

/** How many comments "Send to agent" would send. */
export function openCount(comments: readonly ReviewCommentView[]): number {
  return comments.filter((c) => c.state === "open").length;
}

export const STATE_LABEL: Record<ReviewCommentState, string> = {
  open: "open",
  sent: "sent",
  addressed: "addressed?",
  resolved: "resolved",
};
