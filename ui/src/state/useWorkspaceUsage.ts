// The workspace's usage (workspace_usage, a query): fetched once a workspace is open, again after resync, and (debounced) when sessions' usage changes.
import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { type KilnError, toKilnError } from "../api/backend";
import type { SessionView, UsageView } from "../api/types";
import { keys } from "./queries";
import { useSessions } from "./sessions";
import { useBackend } from "./store";
import { useApp } from "./useApp";

/** How long session changes settle before the usage is fetched again. */
export const USAGE_REFRESH_MS = 800;

/** Changes whenever a session appears, goes, or its usage moves (not on every running/state event). */
export function usageKey(sessions: readonly SessionView[]): string {
  return sessions
    .map((s) => {
      const t = s.usage?.total;
      return t
        ? `${s.id}:${t.turns}:${t.inputTokens}:${t.outputTokens}:${t.costUsd ?? "?"}:${t.unknownCostTurns}`
        : s.id;
    })
    .sort()
    .join("|");
}

export function useWorkspaceUsage(): { usage: UsageView | null; error: KilnError | null } {
  const { backend } = useBackend();
  const root = useApp()?.workspace?.root;
  const query = useQuery({ queryKey: keys.usage, queryFn: () => backend.call("workspace_usage", {}), enabled: !!root });
  const key = usageKey(useSessions().all ?? []);

  // Debounced: a burst of session events makes one fetch once it settles.
  const seenKey = useRef(key);
  const { refetch } = query;
  useEffect(() => {
    if (seenKey.current === key) return;
    const timer = setTimeout(() => {
      seenKey.current = key;
      void refetch();
    }, USAGE_REFRESH_MS);
    return () => clearTimeout(timer);
  }, [key, refetch]);

  return { usage: query.data ?? null, error: query.error ? toKilnError(query.error) : null };
}
