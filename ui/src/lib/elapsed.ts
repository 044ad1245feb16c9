// Elapsed-time helpers for the running-turn indicator: "0:07", "12:34", "1:02:03".
import type { TranscriptEntry } from "../api/types";

export function formatElapsed(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

/** The last system entry saying a role "takes the turn", if any. */
export function lastTurnStart(entries: TranscriptEntry[] | undefined): TranscriptEntry | null {
  if (!entries) return null;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i];
    if (e.kind === "system" && /takes the turn/i.test(e.text)) return e;
  }
  return null;
}

/**
 * When the running turn started: the last "takes the turn" entry, unless running was seen to
 * begin after it (then that moment); `mountedAt` when neither is known.
 */
export function turnStartedAt(entry: TranscriptEntry | null, runningSince: number | null, mountedAt: number): number {
  const at = entry ? Date.parse(entry.createdAt) : Number.NaN;
  if (runningSince !== null) return Number.isNaN(at) ? runningSince : Math.max(at, runningSince);
  return Number.isNaN(at) ? mountedAt : at;
}
