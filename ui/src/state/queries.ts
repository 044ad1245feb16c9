// Server state in TanStack Query: the query client's defaults, every query key (one place), and how each query is fetched.
import { QueryClient, type QueryKey } from "@tanstack/react-query";
import type { Backend, Command, CommandMap, ResultOf } from "../api/backend";
import type { DeliveryTarget, SessionView, TranscriptEntry } from "../api/types";
import { mergeEntries, newerSession } from "./reducer";

/** The operations an empty argument object satisfies: what a workspace question may ask. */
export type Question = { [C in Command]: Record<string, never> extends CommandMap[C]["args"] ? C : never }[Command];

/**
 * Every query key. All but the app's sit under ["ws"]: they belong to the open workspace and are
 * reset when another one opens.
 */
export const keys = {
  app: ["app"] as const,
  workspace: ["ws"] as const,
  /** Prefix of every session list (with and without shelved sessions). */
  sessionLists: ["ws", "sessions"] as const,
  sessions: (includeArchived: boolean) => ["ws", "sessions", includeArchived] as const,
  /** A session; null once its record was removed. */
  session: (id: string) => ["ws", "session", id] as const,
  transcript: (id: string) => ["ws", "transcript", id] as const,
  gates: (id: string) => ["ws", "gates", id] as const,
  preview: (id: string) => ["ws", "preview", id] as const,
  /** The latest delivery run (null: none yet). */
  delivery: (id: string) => ["ws", "delivery", id] as const,
  plan: (id: string, target: DeliveryTarget | null) => ["ws", "plan", id, target] as const,
  /** An answer about the open workspace asked with no arguments (get_settings, detect_workspace). */
  question: (command: Question) => ["ws", "question", command] as const,
  usage: ["ws", "usage"] as const,
  /** What `.kiln/` takes on disk (disk_usage): refetched when sessions change, never on a timer. */
  disk: ["ws", "disk"] as const,
  /** How many times a session's files were recorded or restored as a checkpoint, as this page heard it: kept from `checkpoint` events only. */
  checkpoints: (id: string) => ["ws", "checkpoints", id] as const,
  /** A session's live view (agent text being written, provider trouble): kept from `live` events only. */
  live: (id: string) => ["ws", "live", id] as const,
  /** A group of candidate sessions as the comparison shows it (get_group). */
  group: (id: string) => ["ws", "group", id] as const,
  /** Every group of the workspace (list_groups), for the dashboard. */
  groups: ["ws", "groups"] as const,
  /** One candidate's tree against another's (compare_candidates). */
  compare: (id: string, left: string, right: string) => ["ws", "compare", id, left, right] as const,
  /** One GitHub issue as get_issue read it (the new-session picker's preview of a pasted address). */
  issue: (reference: string) => ["ws", "issue", reference] as const,
  /** The conflicts an update left in a session's files (get_conflicts), as of the files listed. */
  conflicts: (id: string, files: string) => ["ws", "conflicts", id, files] as const,
  /** The models an agent offers (list_models), for the composer's picker. */
  models: (driver: string) => ["ws", "models", driver] as const,
  /** A session's terminals: running ones and recently exited ones. */
  terminals: (id: string) => ["ws", "terminals", id] as const,
  /** A screenshot's PNG (get_screenshot): it never changes, so it is fetched once. */
  screenshot: (id: string, shot: number) => ["ws", "screenshot", id, shot] as const,
};

/**
 * The app's query client. No automatic retries or focus refetches: a failure shows with its own
 * Retry, and events keep what is shown current. `networkMode: "always"`: the engine is on this
 * machine or behind `kiln serve`, so the browser's online flag says nothing about reaching it.
 */
export function makeQueryClient(): QueryClient {
  const client = new QueryClient({
    defaultOptions: {
      queries: { retry: false, refetchOnWindowFocus: false, refetchOnReconnect: false, networkMode: "always" },
      mutations: { retry: false, networkMode: "always" },
    },
  });
  // The app state is written by the start-up (store.tsx) and events only; it must never be collected.
  client.setQueryDefaults(keys.app, { gcTime: Infinity, staleTime: Infinity });
  return client;
}

/** Entries that came by event while a session's first transcript fetch was on its way (merged into its answer). */
const early = new WeakMap<QueryClient, Map<string, TranscriptEntry[]>>();

export function holdEarlyEntry(client: QueryClient, entry: TranscriptEntry) {
  let held = early.get(client);
  if (!held) {
    held = new Map();
    early.set(client, held);
  }
  held.set(entry.sessionId, [...(held.get(entry.sessionId) ?? []), entry]);
}

function takeEarlyEntries(client: QueryClient, sessionId: string): TranscriptEntry[] {
  const held = early.get(client);
  const entries = held?.get(sessionId) ?? [];
  held?.delete(sessionId);
  return entries;
}

/** A session list: the answer, except that a copy an event made newer (or removed) meanwhile wins. */
export function sessionListQuery(backend: Backend, client: QueryClient, includeArchived: boolean) {
  return {
    queryKey: keys.sessions(includeArchived),
    queryFn: async (): Promise<SessionView[]> => {
      const list = await backend.call("list_sessions", includeArchived ? { includeArchived: true } : {});
      const out: SessionView[] = [];
      for (const s of list) {
        const known = client.getQueryData<SessionView | null>(keys.session(s.id));
        if (known === null) continue;
        out.push(known ? newerSession(s, known) : s);
      }
      return out;
    },
  };
}

export function sessionQuery(backend: Backend, sessionId: string) {
  return {
    queryKey: keys.session(sessionId),
    queryFn: (): Promise<SessionView | null> => backend.call("get_session", { sessionId }),
  };
}

/** How many of the newest entries a transcript opens with; the older ones load after they are drawn. */
export const FIRST_ENTRIES = 200;

/**
 * A transcript. The first fetch asks for the newest entries only, so a long transcript is drawn at
 * its end at once, then loads the older ones and puts them before (`loadOlder`). Once one is held, a
 * refetch (resync, retry) asks only for the entries after the last one; the answer is merged with
 * what events delivered meanwhile (by id, no duplicates).
 */
export function transcriptQuery(backend: Backend, client: QueryClient, sessionId: string) {
  const key = keys.transcript(sessionId);
  return {
    queryKey: key,
    queryFn: async (): Promise<TranscriptEntry[]> => {
      const held = client.getQueryData<TranscriptEntry[]>(key);
      const after = held?.length ? held[held.length - 1].id : undefined;
      const fetched = await backend.call(
        "get_transcript",
        after === undefined ? { sessionId, last: FIRST_ENTRIES } : { sessionId, after },
      );
      if (after === undefined && fetched.length === FIRST_ENTRIES) loadOlder(backend, client, sessionId, fetched[0].id);
      const current = client.getQueryData<TranscriptEntry[]>(key) ?? [];
      return mergeEntries(mergeEntries(current, takeEarlyEntries(client, sessionId)), fetched);
    },
  };
}

/**
 * Puts the entries before `before` in front of the held transcript. Its answer comes after the
 * first page is held (a response is a later task than the query's own answer); should that page be
 * gone by then, or the fetch fail, the transcript is dropped so the next look loads it whole
 * rather than show it with a gap.
 */
function loadOlder(backend: Backend, client: QueryClient, sessionId: string, before: number) {
  const key = keys.transcript(sessionId);
  backend.call("get_transcript", { sessionId, before }).then(
    (older) => {
      if (client.getQueryData<TranscriptEntry[]>(key)) {
        client.setQueryData<TranscriptEntry[]>(key, (held) => (held ? mergeEntries(older, held) : held));
      } else {
        client.removeQueries({ queryKey: key, exact: true });
      }
    },
    () => client.removeQueries({ queryKey: key, exact: true }),
  );
}

/**
 * The workspace's disk use. Never stale by age: walking every working copy is work, so it is
 * fetched again only when asked (`useDiskUsage` does when sessions change; clean-up does).
 */
export function diskUsageQuery(backend: Backend) {
  return {
    queryKey: keys.disk,
    queryFn: () => backend.call("disk_usage", {}),
    staleTime: Number.POSITIVE_INFINITY,
  };
}

export function questionQuery<C extends Question>(backend: Backend, command: C) {
  return {
    queryKey: keys.question(command),
    queryFn: (): Promise<ResultOf<C>> => backend.call(command, {} as CommandMap[C]["args"]),
  };
}

/**
 * Applies an operation's answer to a query unless the query changed since the operation was
 * sent (`since`: its dataUpdateCount then): an event that came meanwhile is at least as new.
 */
export function applyAnswer<T>(client: QueryClient, key: QueryKey, answer: T, since: number) {
  if ((client.getQueryState(key)?.dataUpdateCount ?? 0) === since) client.setQueryData(key, answer);
}

/** A query's dataUpdateCount now, for applyAnswer. */
export function updatesOf(client: QueryClient, key: QueryKey): number {
  return client.getQueryState(key)?.dataUpdateCount ?? 0;
}
