// Query hooks for sessions: the dashboard's list, one session, and its transcript (kept current by events, see events.ts).
import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useMemo } from "react";
import { type KilnError, toKilnError } from "../api/backend";
import type { SessionView, TranscriptEntry } from "../api/types";
import { useApp } from "./useApp";
import { sessionListQuery, sessionQuery, transcriptQuery } from "./queries";
import { visibleSessions } from "./reducer";
import { useBackend, useUi } from "./store";

export interface SessionsState {
  /** The sessions the dashboard lists (shelved ones only with "Show archived"), newest first. */
  sessions: SessionView[];
  /** The list as last fetched and updated by events; undefined until the first answer. */
  all: SessionView[] | undefined;
  loading: boolean;
  error: KilnError | null;
  retry: () => void;
}

const NONE: SessionView[] = [];

export function useSessions(): SessionsState {
  const { backend } = useBackend();
  const client = useQueryClient();
  const { includeArchived } = useUi();
  const root = useApp()?.workspace?.root;
  // Ticking "Show archived" keeps the list shown until the other one answers.
  const query = useQuery({
    ...sessionListQuery(backend, client, includeArchived),
    enabled: !!root,
    placeholderData: keepPreviousData,
  });
  const sessions = useMemo(() => visibleSessions(query.data ?? NONE, includeArchived), [query.data, includeArchived]);
  const { refetch } = query;
  const retry = useCallback(() => void refetch(), [refetch]);
  return {
    sessions,
    all: query.data,
    loading: query.isFetching,
    error: query.error ? toKilnError(query.error) : null,
    retry,
  };
}

export interface SessionState {
  /** undefined until get_session answered (or after it failed). */
  session: SessionView | undefined;
  /** The session's record was removed while the UI was open. */
  removed: boolean;
  loading: boolean;
  error: KilnError | null;
  retry: () => void;
}

export function useSession(sessionId: string): SessionState {
  const { backend } = useBackend();
  const query = useQuery(sessionQuery(backend, sessionId));
  const { refetch } = query;
  const retry = useCallback(() => void refetch(), [refetch]);
  return {
    session: query.data ?? undefined,
    removed: query.data === null,
    loading: query.isFetching,
    error: query.error ? toKilnError(query.error) : null,
    retry,
  };
}

export interface TranscriptState {
  /** undefined until the first get_transcript answered. */
  entries: TranscriptEntry[] | undefined;
  loading: boolean;
  error: KilnError | null;
  retry: () => void;
}

export function useTranscript(sessionId: string): TranscriptState {
  const { backend } = useBackend();
  const client = useQueryClient();
  const query = useQuery(transcriptQuery(backend, client, sessionId));
  const { refetch } = query;
  const retry = useCallback(() => void refetch(), [refetch]);
  return {
    entries: query.data,
    loading: query.isFetching,
    error: query.error ? toKilnError(query.error) : null,
    retry,
  };
}
