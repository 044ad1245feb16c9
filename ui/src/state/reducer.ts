// UI-local state (composer drafts, "Show archived") and the pure helpers over sessions and transcripts; server state lives in the query cache (queries.ts).
import type { KilnError } from "../api/backend";
import type { SessionView, TranscriptEntry } from "../api/types";
import { MAX_POINTED, type PointedItem } from "../lib/pointed";

/** Text waiting in a session's composer (e.g. a brief whose first turn did not start), with why. */
export interface Draft {
  text: string;
  error: KilnError | null;
  /** A sentence shown above the error, saying what happened. */
  note?: string;
}

export interface State {
  /** Composer drafts by session id: the composer starts from one, leaves unsent text in one when it goes away, clears it on send. */
  drafts: Record<string, Draft>;
  includeArchived: boolean;
  /** What was picked in a session's preview, waiting in its composer for the next message. */
  pointed: Record<string, PointedItem[]>;
}

export type UiAction =
  | { type: "draftSet"; sessionId: string; draft: Draft }
  | { type: "draftCleared"; sessionId: string }
  | { type: "setIncludeArchived"; value: boolean }
  | { type: "pointedAdded"; sessionId: string; item: PointedItem }
  | { type: "pointedRemoved"; sessionId: string; screenshotId: number }
  | { type: "pointedCleared"; sessionId: string };

export const initialState: State = { drafts: {}, includeArchived: false, pointed: {} };

function withPointed(state: State, sessionId: string, items: PointedItem[]): State {
  const pointed = { ...state.pointed };
  if (items.length) pointed[sessionId] = items;
  else delete pointed[sessionId];
  return { ...state, pointed };
}

function time(iso: string): number {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? 0 : t;
}

/** The newer of two copies of a session (by updatedAt; the first on a tie). */
export function newerSession(a: SessionView, b: SessionView): SessionView {
  return time(b.updatedAt) > time(a.updatedAt) ? b : a;
}

/** Adds entries not already present (by id), keeping the list ordered by id. */
export function mergeEntries(existing: TranscriptEntry[], incoming: TranscriptEntry[]): TranscriptEntry[] {
  const seen = new Set(existing.map((e) => e.id));
  const fresh: TranscriptEntry[] = [];
  for (const entry of incoming) {
    if (seen.has(entry.id)) continue;
    seen.add(entry.id);
    fresh.push(entry);
  }
  if (fresh.length === 0) return existing;
  const merged = existing.concat(fresh);
  for (let i = Math.max(1, existing.length); i < merged.length; i++) {
    if (merged[i].id < merged[i - 1].id) {
      merged.sort((a, b) => a.id - b.id);
      break;
    }
  }
  return merged;
}

export function reducer(state: State, action: UiAction): State {
  switch (action.type) {
    case "draftSet":
      return { ...state, drafts: { ...state.drafts, [action.sessionId]: action.draft } };
    case "draftCleared": {
      if (!(action.sessionId in state.drafts)) return state;
      const drafts = { ...state.drafts };
      delete drafts[action.sessionId];
      return { ...state, drafts };
    }
    case "setIncludeArchived":
      return state.includeArchived === action.value ? state : { ...state, includeArchived: action.value };
    case "pointedAdded": {
      const items = (state.pointed[action.sessionId] ?? []).filter(
        (i) => i.screenshot.id !== action.item.screenshot.id,
      );
      return withPointed(state, action.sessionId, [...items, action.item].slice(-MAX_POINTED));
    }
    case "pointedRemoved": {
      const items = state.pointed[action.sessionId] ?? [];
      const kept = items.filter((i) => i.screenshot.id !== action.screenshotId);
      return kept.length === items.length ? state : withPointed(state, action.sessionId, kept);
    }
    case "pointedCleared":
      return action.sessionId in state.pointed ? withPointed(state, action.sessionId, []) : state;
    default:
      return state;
  }
}

/** True when a session is archived, rejected or deleted (hidden unless "Show archived"). */
export function isShelved(session: SessionView): boolean {
  return session.archivedAt !== null || session.rejectedAt !== null || session.deletedAt !== null;
}

/** The sessions the dashboard lists, newest first. */
export function visibleSessions(sessions: readonly SessionView[], includeArchived: boolean): SessionView[] {
  return sessions
    .filter((s) => includeArchived || !isShelved(s))
    .sort((a, b) => time(b.createdAt) - time(a.createdAt) || b.id.localeCompare(a.id));
}
