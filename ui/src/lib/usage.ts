// Usage formatting: compact token counts and costs that never show an unknown amount as $0 or free.
import type { UsageTotals } from "../api/types";

/** "950", "12.3k", "4.5M": a token count short enough for a dashboard row. */
export function formatCount(n: number): string {
  if (!Number.isFinite(n) || n < 0) return "0";
  if (n < 1000) return String(Math.round(n));
  if (n < 999_950) return `${trim((n / 1000).toFixed(1))}k`;
  return `${trim((n / 1_000_000).toFixed(1))}M`;
}

function trim(fixed: string): string {
  return fixed.endsWith(".0") ? fixed.slice(0, -2) : fixed;
}

/** Input plus output tokens, compact: "12.3k tok". */
export function formatTokens(usage: UsageTotals): string {
  return `${formatCount(usage.inputTokens + usage.outputTokens)} tok`;
}

/** A known dollar amount: cents for a dollar or more, four decimals below ("$0.0123"). */
export function formatUsd(amount: number): string {
  if (amount === 0) return "$0.00";
  if (amount >= 1) return `$${amount.toFixed(2)}`;
  const fixed = amount.toFixed(4);
  return fixed === "0.0000" ? "<$0.0001" : `$${fixed}`;
}

/** Whether any of the cost is known: a sum exists and at least one turn reported it. */
function knownCost(usage: UsageTotals): number | null {
  if (usage.costUsd === null || !Number.isFinite(usage.costUsd)) return null;
  if (usage.unknownCostTurns >= usage.turns && usage.turns > 0) return null;
  return usage.costUsd;
}

/**
 * The cost of some usage: the summed known cost, "+ unknown" when some turns did not report
 * one, "unknown" when none did, and "—" when there were no turns at all.
 */
export function formatCost(usage: UsageTotals): string {
  if (usage.turns === 0 && usage.unknownCostTurns === 0) return "—";
  const known = knownCost(usage);
  if (known === null) return "unknown";
  const shown = formatUsd(known);
  return usage.unknownCostTurns > 0 ? `${shown} + unknown` : shown;
}

/** A title explaining the cost, e.g. "2 of 5 turns reported no cost". */
export function costNote(usage: UsageTotals): string | undefined {
  if (usage.unknownCostTurns === 0) return undefined;
  const turns = `${usage.unknownCostTurns} of ${usage.turns} turn${usage.turns === 1 ? "" : "s"}`;
  return `${turns} reported no cost: the real total is higher than any amount shown`;
}

export function emptyTotals(): UsageTotals {
  return {
    turns: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costUsd: null,
    unknownCostTurns: 0,
  };
}
