// Tests for usage formatting: compact token counts, and costs that never show an unknown amount as $0.
import { describe, expect, it } from "vitest";
import { makeTotals } from "../test/fixtures";
import { costNote, formatCost, formatCount, formatTokens, formatUsd } from "./usage";

describe("formatCost", () => {
  it("shows the known cost when every turn reported one", () => {
    expect(formatCost(makeTotals({ turns: 3, costUsd: 0.0123 }))).toBe("$0.0123");
    expect(formatCost(makeTotals({ turns: 3, costUsd: 2.5 }))).toBe("$2.50");
    expect(costNote(makeTotals({ turns: 3, costUsd: 0.0123 }))).toBeUndefined();
  });

  it("adds “+ unknown” when some turns reported no cost", () => {
    const usage = makeTotals({ turns: 3, costUsd: 0.0123, unknownCostTurns: 1 });
    expect(formatCost(usage)).toBe("$0.0123 + unknown");
    expect(costNote(usage)).toContain("1 of 3 turns");
  });

  it("says unknown, never $0 or free, when no turn reported a cost", () => {
    for (const usage of [
      makeTotals({ turns: 2, costUsd: null, unknownCostTurns: 2 }),
      makeTotals({ turns: 2, costUsd: 0, unknownCostTurns: 2 }),
      makeTotals({ turns: 2, costUsd: null, unknownCostTurns: 0 }),
    ]) {
      const shown = formatCost(usage);
      expect(shown).toBe("unknown");
      expect(shown).not.toMatch(/\$0|free/i);
    }
  });

  it("shows a dash, not a price, when there were no turns", () => {
    expect(formatCost(makeTotals())).toBe("—");
    expect(formatCost(makeTotals({ costUsd: 0 }))).toBe("—");
  });

  it("keeps tiny known amounts visible", () => {
    expect(formatUsd(0.00001)).toBe("<$0.0001");
    expect(formatUsd(0)).toBe("$0.00");
  });
});

describe("formatCount / formatTokens", () => {
  it("compacts counts", () => {
    expect(formatCount(0)).toBe("0");
    expect(formatCount(950)).toBe("950");
    expect(formatCount(12_345)).toBe("12.3k");
    expect(formatCount(40_000)).toBe("40k");
    expect(formatCount(999_960)).toBe("1M");
    expect(formatCount(4_520_000)).toBe("4.5M");
  });

  it("sums input and output tokens", () => {
    expect(formatTokens(makeTotals({ inputTokens: 12_000, outputTokens: 300, cacheReadTokens: 90_000 }))).toBe(
      "12.3k tok",
    );
  });
});
