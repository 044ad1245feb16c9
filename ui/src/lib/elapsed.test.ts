// Tests for the running indicator's clock: formatting and which moment the turn started.
import { describe, expect, it } from "vitest";
import { makeEntry } from "../test/fixtures";
import { formatElapsed, lastTurnStart, turnStartedAt } from "./elapsed";

describe("elapsed", () => {
  it("formats m:ss and h:mm:ss", () => {
    expect(formatElapsed(-5)).toBe("0:00");
    expect(formatElapsed(7_400)).toBe("0:07");
    expect(formatElapsed(754_000)).toBe("12:34");
    expect(formatElapsed(3_723_000)).toBe("1:02:03");
  });

  it("starts at the last “takes the turn” entry, unless running began later", () => {
    const entries = [
      makeEntry(1, {
        kind: "system",
        text: "**UX Designer** takes the turn in `@shop/cart`.",
        createdAt: "2025-01-01T10:00:00Z",
      }),
      makeEntry(2, { kind: "agent", text: "takes the turn" }),
      makeEntry(3, {
        kind: "system",
        text: "**Backend Engineer** takes the turn in `@shop/api`.",
        createdAt: "2025-01-01T10:05:00Z",
      }),
    ];
    const start = lastTurnStart(entries);
    expect(start?.id).toBe(3);
    const at = Date.parse("2025-01-01T10:05:00Z");
    expect(turnStartedAt(start, null, 0)).toBe(at);
    expect(turnStartedAt(start, at + 9_000, 0)).toBe(at + 9_000);
    expect(turnStartedAt(start, at - 9_000, 0)).toBe(at);
    expect(turnStartedAt(null, null, 42)).toBe(42);
  });
});
