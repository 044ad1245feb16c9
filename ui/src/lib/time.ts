// Formats timestamps: short relative phrases ("3 min ago") and a full absolute form for tooltips.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

function toMs(value: string | number | Date): number {
  if (value instanceof Date) return value.getTime();
  if (typeof value === "number") return value;
  return Date.parse(value);
}

/** "just now", "3 min ago", "2 hours ago", "yesterday", "4 days ago", then "Mar 4" / "Mar 4, 2023". */
export function formatRelative(value: string | number | Date, now: number | Date = Date.now()): string {
  const t = toMs(value);
  const n = toMs(now);
  if (Number.isNaN(t)) return "unknown time";
  const diff = n - t;
  if (diff < 0) {
    const ahead = -diff;
    if (ahead < MINUTE) return "just now";
    if (ahead < HOUR) return `in ${Math.floor(ahead / MINUTE)} min`;
    if (ahead < DAY) return plural(Math.floor(ahead / HOUR), "hour", "in ");
    return shortDate(t, n);
  }
  if (diff < 45_000) return "just now";
  if (diff < HOUR) return `${Math.max(1, Math.floor(diff / MINUTE))} min ago`;
  if (diff < DAY) return `${plural(Math.floor(diff / HOUR), "hour")} ago`;
  const days = Math.floor(diff / DAY);
  if (days === 1) return "yesterday";
  if (days < 7) return `${days} days ago`;
  return shortDate(t, n);
}

function plural(count: number, unit: string, prefix = ""): string {
  return `${prefix}${count} ${unit}${count === 1 ? "" : "s"}`;
}

function shortDate(t: number, now: number): string {
  const d = new Date(t);
  const sameYear = d.getFullYear() === new Date(now).getFullYear();
  const base = `${MONTHS[d.getMonth()]} ${d.getDate()}`;
  return sameYear ? base : `${base}, ${d.getFullYear()}`;
}

/** Made once: `toLocaleString` with options builds a formatter per call (about a millisecond), and every
 * transcript row's time has this title, so scrolling a long chat paid it for each row it drew. */
let absolute: Intl.DateTimeFormat | undefined;

/** The full local date and time, for title attributes. */
export function formatAbsolute(value: string | number | Date): string {
  const t = toMs(value);
  if (Number.isNaN(t)) return String(value);
  absolute ??= new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
  return absolute.format(t);
}
