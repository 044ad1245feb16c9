// App state (app info, sessions, transcripts, composer drafts, previews, delivery runs) and the reducer that applies fetches and live events.
import type { KilnError } from "../api/backend";
import type { AppState, AttachmentView, DeliveryRun, KilnEvent, PreviewView, SessionView, TranscriptEntry, WorkspaceView } from "../api/types";

/** Text waiting in a session's composer (e.g. a brief whose first turn did not start), with why. */
export interface Draft {
  text: string;
  error: KilnError | null;
  /** A sentence shown above the error, saying what happened. */
  note?: string;
}

export interface State {
  app: AppState | null;
  sessions: Record<string, SessionView>;
  /** Ids of sessions whose record was removed while the UI was open. */
  removed: Record<string, true>;
  transcripts: Record<string, TranscriptEntry[]>;
  /** Composer drafts by session id: the composer starts from one, leaves unsent text in one when it goes away, clears it on send. */
  drafts: Record<string, Draft>;
  includeArchived: boolean;
  /** Each session's preview as last reported (by a preview call or a `preview` event). */
  previews: Record<string, PreviewView>;
  /**
   * Preview events seen per session: a call's answer is applied only when no event came while it
   * was on its way, since events are always at least as new as the answers sent before them.
   */
  previewEvents: Record<string, number>;
  /** Each session's latest delivery run (by get_delivery, deliver or a `delivery` event). */
  deliveries: Record<string, DeliveryRun>;
  /** Delivery events seen per session, as previewEvents. */
  deliveryEvents: Record<string, number>;
  /** Bumped by a `resync` event: everything shown must be fetched again. */
  epoch: number;
}

export type Action =
  | { type: "appLoaded"; app: AppState }
  | { type: "workspaceChanged"; workspace: WorkspaceView }
  | { type: "sessionsLoaded"; sessions: SessionView[] }
  | { type: "sessionUpserted"; session: SessionView }
  | { type: "sessionRemoved"; sessionId: string }
  | { type: "transcriptLoaded"; sessionId: string; entries: TranscriptEntry[] }
  | { type: "attachmentAdded"; sessionId: string; attachment: AttachmentView }
  | { type: "draftSet"; sessionId: string; draft: Draft }
  | { type: "draftCleared"; sessionId: string }
  | { type: "setIncludeArchived"; value: boolean }
  /** A preview call's answer; `eventsSeen` is previewEvents[sessionId] when the call was made. */
  | { type: "previewLoaded"; preview: PreviewView; eventsSeen: number }
  /** A delivery call's answer; dropped when an event about the same run came while it was on its way. */
  | { type: "deliveryLoaded"; sessionId: string; run: DeliveryRun | null; eventsSeen: number }
  | { type: "event"; event: KilnEvent };

export const initialState: State = {
  app: null,
  sessions: {},
  removed: {},
  transcripts: {},
  drafts: {},
  includeArchived: false,
  previews: {},
  previewEvents: {},
  deliveries: {},
  deliveryEvents: {},
  epoch: 0,
};

function time(iso: string): number {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? 0 : t;
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

function withoutKey<T>(record: Record<string, T>, key: string): Record<string, T> {
  if (!(key in record)) return record;
  const next = { ...record };
  delete next[key];
  return next;
}

function replaceWorkspace(state: State, workspace: WorkspaceView): State {
  if (!state.app) return state;
  const switched = state.app.workspace?.root !== workspace.root;
  const app = { ...state.app, workspace };
  if (!switched) return { ...state, app };
  return { ...state, app, sessions: {}, removed: {}, transcripts: {}, previews: {}, deliveries: {} };
}

function upsertSession(state: State, session: SessionView): State {
  return {
    ...state,
    sessions: { ...state.sessions, [session.id]: session },
    removed: withoutKey(state.removed, session.id),
  };
}

function removeSession(state: State, sessionId: string): State {
  return {
    ...state,
    sessions: withoutKey(state.sessions, sessionId),
    transcripts: withoutKey(state.transcripts, sessionId),
    previews: withoutKey(state.previews, sessionId),
    removed: { ...state.removed, [sessionId]: true },
  };
}

function setPreview(state: State, preview: PreviewView): State {
  return { ...state, previews: { ...state.previews, [preview.sessionId]: preview } };
}

function applyEvent(state: State, event: KilnEvent): State {
  const body = event.body;
  switch (body.type) {
    case "session":
      return upsertSession(state, body.session);
    case "transcript": {
      const id = body.entry.sessionId;
      const existing = state.transcripts[id] ?? [];
      const merged = mergeEntries(existing, [body.entry]);
      return merged === existing ? state : { ...state, transcripts: { ...state.transcripts, [id]: merged } };
    }
    case "sessionRemoved":
      return removeSession(state, body.sessionId);
    case "workspace":
      return replaceWorkspace(state, body.workspace);
    case "preview": {
      const id = body.preview.sessionId;
      const next = setPreview(state, body.preview);
      return { ...next, previewEvents: { ...state.previewEvents, [id]: (state.previewEvents[id] ?? 0) + 1 } };
    }
    case "delivery": {
      const id = body.run.sessionId;
      return {
        ...state,
        deliveries: { ...state.deliveries, [id]: body.run },
        deliveryEvents: { ...state.deliveryEvents, [id]: (state.deliveryEvents[id] ?? 0) + 1 },
      };
    }
    case "resync":
      return { ...state, epoch: state.epoch + 1 };
    default:
      return state;
  }
}

export function reducer(state: State, action: Action): State {
  switch (action.type) {
    case "appLoaded": {
      const switched = state.app?.workspace?.root !== action.app.workspace?.root;
      if (!switched || !state.app) return { ...state, app: action.app };
      return { ...state, app: action.app, sessions: {}, removed: {}, transcripts: {}, previews: {}, deliveries: {} };
    }
    case "workspaceChanged":
      return replaceWorkspace(state, action.workspace);
    case "sessionsLoaded": {
      // A list replaces what we had, but an event newer than the list's copy of a session wins.
      const sessions: Record<string, SessionView> = {};
      for (const s of action.sessions) {
        const known = state.sessions[s.id];
        sessions[s.id] = known && time(known.updatedAt) > time(s.updatedAt) ? known : s;
      }
      return { ...state, sessions };
    }
    case "sessionUpserted":
      return upsertSession(state, action.session);
    case "sessionRemoved":
      return removeSession(state, action.sessionId);
    case "transcriptLoaded": {
      const existing = state.transcripts[action.sessionId] ?? [];
      const merged = mergeEntries(existing, action.entries);
      if (merged === existing && action.sessionId in state.transcripts) return state;
      return { ...state, transcripts: { ...state.transcripts, [action.sessionId]: merged } };
    }
    case "attachmentAdded": {
      // add_attachment answers with the attachment only; the session event may come before or after.
      const session = state.sessions[action.sessionId];
      if (!session || session.attachments.some((a) => a.id === action.attachment.id)) return state;
      const attachments = [...session.attachments, action.attachment];
      return { ...state, sessions: { ...state.sessions, [session.id]: { ...session, attachments } } };
    }
    case "draftSet":
      return { ...state, drafts: { ...state.drafts, [action.sessionId]: action.draft } };
    case "draftCleared": {
      const drafts = withoutKey(state.drafts, action.sessionId);
      return drafts === state.drafts ? state : { ...state, drafts };
    }
    case "setIncludeArchived":
      return { ...state, includeArchived: action.value };
    case "previewLoaded":
      if ((state.previewEvents[action.preview.sessionId] ?? 0) !== action.eventsSeen) return state;
      return setPreview(state, action.preview);
    case "deliveryLoaded": {
      const held = state.deliveries[action.sessionId];
      const eventsCame = (state.deliveryEvents[action.sessionId] ?? 0) !== action.eventsSeen;
      if (!action.run) return held && !eventsCame ? { ...state, deliveries: withoutKey(state.deliveries, action.sessionId) } : state;
      if (held && held.id === action.run.id && eventsCame) return state;
      return { ...state, deliveries: { ...state.deliveries, [action.sessionId]: action.run } };
    }
    case "event":
      return applyEvent(state, action.event);
    default:
      return state;
  }
}

/** True when a session is archived, rejected or deleted (hidden unless "Show archived"). */
export function isShelved(session: SessionView): boolean {
  return session.archivedAt !== null || session.rejectedAt !== null || session.deletedAt !== null;
}

/** The sessions the dashboard lists, newest first. */
export function visibleSessions(state: State): SessionView[] {
  return Object.values(state.sessions)
    .filter((s) => state.includeArchived || !isShelved(s))
    .sort((a, b) => time(b.createdAt) - time(a.createdAt) || b.id.localeCompare(a.id));
}
