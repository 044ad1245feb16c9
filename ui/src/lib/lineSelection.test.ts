// Tests for picking lines to comment on: start, extend either way, clear; and where comments are drawn.
import { describe, expect, it } from "vitest";
import type { ReviewCommentView } from "../api/types";
import { commentedLines, commentsByEndLine, openCount, pickLine, rangeLabel, rangeOf } from "./lineSelection";

function comment(overrides: Partial<ReviewCommentView>): ReviewCommentView {
  return {
    id: "c1",
    path: "src/a.ts",
    startLine: 2,
    endLine: 3,
    quote: "x",
    body: "y",
    state: "open",
    turnId: null,
    note: null,
    createdAt: "2025-01-01T10:00:00Z",
    updatedAt: "2025-01-01T10:00:00Z",
    ...overrides,
  };
}

describe("pickLine", () => {
  it("starts a selection, extends it either way, and clears it when the only line is picked again", () => {
    const one = pickLine(null, "a.ts", 5, false);
    expect(one).toEqual({ path: "a.ts", anchor: 5, head: 5 });
    const down = pickLine(one, "a.ts", 9, true);
    expect(rangeOf(down!)).toEqual({ start: 5, end: 9 });
    const up = pickLine(down, "a.ts", 2, true);
    expect(rangeOf(up!)).toEqual({ start: 2, end: 5 });
    expect(pickLine(one, "a.ts", 5, false)).toBeNull();
    // A plain pick starts again; a pick in another file never extends.
    expect(pickLine(down, "a.ts", 7, false)).toEqual({ path: "a.ts", anchor: 7, head: 7 });
    expect(pickLine(down, "b.ts", 7, true)).toEqual({ path: "b.ts", anchor: 7, head: 7 });
    // Extending with nothing selected starts at that line.
    expect(pickLine(null, "a.ts", 3, true)).toEqual({ path: "a.ts", anchor: 3, head: 3 });
  });

  it("words a range", () => {
    expect(rangeLabel({ start: 4, end: 4 })).toBe("line 4");
    expect(rangeLabel({ start: 2, end: 5 })).toBe("lines 2–5");
  });
});

describe("comments in a file", () => {
  const comments = [
    comment({ id: "a", startLine: 2, endLine: 3 }),
    comment({ id: "b", startLine: 3, endLine: 3, state: "addressed" }),
    comment({ id: "c", startLine: 7, endLine: 8, state: "resolved" }),
    comment({ id: "d", path: "other.ts", startLine: 1, endLine: 1 }),
  ];

  it("groups them by the line they end at, in the file only", () => {
    const byLine = commentsByEndLine(comments, "src/a.ts");
    expect([...byLine.keys()]).toEqual([3, 8]);
    expect(byLine.get(3)!.map((c) => c.id)).toEqual(["a", "b"]);
  });

  it("marks the lines of comments not resolved, and counts what would be sent", () => {
    expect([...commentedLines(comments, "src/a.ts")].sort()).toEqual([2, 3]);
    expect(openCount(comments)).toBe(2);
  });
});
