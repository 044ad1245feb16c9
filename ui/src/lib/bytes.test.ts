// Tests for formatBytes: units, rounding at a unit's edge, and input that is no size.
import { describe, expect, it } from "vitest";
import { formatBytes } from "./bytes";

describe("formatBytes", () => {
  it("shows whole bytes below a kilobyte", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(999)).toBe("999 B");
  });

  it("uses decimal units with one decimal, dropped when it is zero", () => {
    expect(formatBytes(1000)).toBe("1 KB");
    expect(formatBytes(1536)).toBe("1.5 KB");
    expect(formatBytes(12_345_678)).toBe("12.3 MB");
    expect(formatBytes(1_200_000_000)).toBe("1.2 GB");
    expect(formatBytes(3_400_000_000_000)).toBe("3.4 TB");
  });

  it("moves up a unit rather than showing 1000", () => {
    expect(formatBytes(999_960)).toBe("1 MB");
    expect(formatBytes(999_940)).toBe("999.9 KB");
  });

  it("never shows a negative or unknown size", () => {
    expect(formatBytes(-5)).toBe("0 B");
    expect(formatBytes(Number.NaN)).toBe("0 B");
  });
});
