// Sizes on disk as people read them: "950 B", "12.3 MB", "1.2 GB" (decimal units, as the engine's `human_bytes` words them).
const UNITS = ["KB", "MB", "GB", "TB", "PB"] as const;

/** A byte count, short: whole bytes below 1000, else one decimal (dropped when it is 0) in the largest unit under 1000. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "0 B";
  if (bytes < 1000) return `${Math.round(bytes)} B`;
  let value = bytes / 1000;
  let unit = 0;
  // 999.95 would round to "1000.0": move up a unit first.
  while (value >= 999.95 && unit < UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  const fixed = value.toFixed(1);
  return `${fixed.endsWith(".0") ? fixed.slice(0, -2) : fixed} ${UNITS[unit]}`;
}
