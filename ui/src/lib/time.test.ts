// Tests for the relative and absolute time formatters.
import { describe, expect, it } from "vitest";
import { formatAbsolute, formatRelative } from "./time";

const now = Date.parse("2025-06-15T12:00:00Z");
const ago = (ms: number) => new Date(now - ms).toISOString();
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe("formatRelative", () => {
  it("says just now for the last 45 seconds", () => {
    expect(formatRelative(ago(0), now)).toBe("just now");
    expect(formatRelative(ago(30_000), now)).toBe("just now");
  });

  it("counts minutes", () => {
    expect(formatRelative(ago(50_000), now)).toBe("1 min ago");
    expect(formatRelative(ago(3 * MIN + 20_000), now)).toBe("3 min ago");
    expect(formatRelative(ago(59 * MIN), now)).toBe("59 min ago");
  });

  it("counts hours, then days", () => {
    expect(formatRelative(ago(HOUR), now)).toBe("1 hour ago");
    expect(formatRelative(ago(5 * HOUR + 10 * MIN), now)).toBe("5 hours ago");
    expect(formatRelative(ago(DAY + HOUR), now)).toBe("yesterday");
    expect(formatRelative(ago(4 * DAY), now)).toBe("4 days ago");
  });

  it("falls back to a short date after a week", () => {
    const t = now - 20 * DAY;
    const d = new Date(t);
    const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    expect(formatRelative(new Date(t).toISOString(), now)).toBe(`${months[d.getMonth()]} ${d.getDate()}`);
    expect(formatRelative("2023-03-04T12:00:00Z", now)).toMatch(/^Mar \d, 2023$/);
  });

  it("handles the future and invalid input", () => {
    expect(formatRelative(new Date(now + 10_000).toISOString(), now)).toBe("just now");
    expect(formatRelative(new Date(now + 5 * MIN).toISOString(), now)).toBe("in 5 min");
    expect(formatRelative("not a date", now)).toBe("unknown time");
  });
});

describe("formatAbsolute", () => {
  it("includes the year and keeps invalid input as is", () => {
    expect(formatAbsolute("2025-06-15T12:00:00Z")).toContain("2025");
    expect(formatAbsolute("nope")).toBe("nope");
  });
});
