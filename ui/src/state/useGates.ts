// A session's latest gate results (get_gates, a query): fetched at once and when the Gates tab opens; a `gates` event replaces them as they come (state/events.ts), a `checkpoint` event asks again; Run gates runs them all now (check_modules) and its answer replaces them.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useRef } from "react";
import { type KilnError, toKilnError } from "../api/backend";
import type { GateResultView } from "../api/types";
import { keys } from "./queries";
import { useBackend } from "./store";

export interface GatesOptions {
  sessionId: string;
  /** The Gates tab is shown: turning true fetches again. */
  active: boolean;
}

export interface GatesState {
  /** null until the first answer. */
  gates: GateResultView[] | null;
  /** A get_gates request is in flight. */
  loading: boolean;
  /** The last get_gates failure, cleared by the next result. */
  error: KilnError | null;
  /** check_modules is in flight. */
  checking: boolean;
  checkError: KilnError | null;
  reload: () => void;
  /** Runs every gate of every module now; its answer replaces the results. */
  check: () => Promise<void>;
}

export function useGates({ sessionId, active }: GatesOptions): GatesState {
  const { backend } = useBackend();
  const client = useQueryClient();
  const key = keys.gates(sessionId);
  const query = useQuery({ queryKey: key, queryFn: () => backend.call("get_gates", { sessionId }) });
  const { refetch } = query;
  // A reload asks again even while a fetch is on its way: gates may have finished since it was sent.
  const reload = useCallback(() => void refetch({ cancelRefetch: true }), [refetch]);

  // Opening the tab fetches again (the first render's fetch covers a tab open from the start).
  const wasActiveRef = useRef(active);
  useEffect(() => {
    if (active && !wasActiveRef.current) reload();
    wasActiveRef.current = active;
  }, [active, reload]);

  // check_modules reads the results last: its answer cancels a get_gates still on its way and replaces them.
  const checking = useMutation({
    mutationFn: () => backend.call("check_modules", { sessionId }),
    onSuccess: (list) => {
      void client.cancelQueries({ queryKey: key, exact: true });
      client.setQueryData(key, list);
    },
  });
  const { mutateAsync } = checking;
  const check = useCallback(async () => {
    await mutateAsync().catch(() => {
      // Shown as checkError.
    });
  }, [mutateAsync]);

  return {
    gates: query.data ?? null,
    loading: query.isFetching,
    error: query.error ? toKilnError(query.error) : null,
    checking: checking.isPending,
    checkError: checking.error ? toKilnError(checking.error) : null,
    reload,
    check,
  };
}
