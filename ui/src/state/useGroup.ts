// A group of candidate sessions (best-of-N): its comparison (get_group, a query fetched again, debounced, whenever one of its candidates changes as the session list sees it), the dashboard's list of groups (list_groups), the diff of two candidates (compare_candidates) and Pick (pick_candidate).
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { type KilnError, toKilnError } from "../api/backend";
import type { DiffView, GroupSummary, GroupView, SessionView } from "../api/types";
import { useDebounced } from "../lib/useDebounced";
import { keys } from "./queries";
import { useSessions } from "./sessions";
import { useBackend } from "./store";
import { useApp } from "./useApp";

/** How long the candidates must stay unchanged before the comparison is fetched again (a turn sends events in bursts). */
export const GROUP_REFRESH_MS = 700;

/** Changes when a candidate's figures may have: its state, turns, checkpoints, lifecycle. */
export function groupKey(groupId: string, sessions: readonly SessionView[] | undefined): string {
  return (sessions ?? [])
    .filter((s) => s.groupId === groupId)
    .map((s) =>
      [
        s.id,
        s.state,
        s.running,
        s.waiting ?? false,
        s.checkpoints.length,
        s.usage.total.turns,
        s.archivedAt,
        s.updatedAt,
      ].join(":"),
    )
    .sort()
    .join("|");
}

export interface GroupState {
  group: GroupView | null;
  /** When the comparison last arrived (0 before): what a diff of two candidates is asked again by. */
  updatedAt: number;
  loading: boolean;
  error: KilnError | null;
  retry: () => void;
  picking: string | null;
  pickError: KilnError | null;
  pick: (sessionId: string) => Promise<boolean>;
}

export function useGroup(groupId: string, debounceMs = GROUP_REFRESH_MS): GroupState {
  const { backend } = useBackend();
  const client = useQueryClient();
  const key = keys.group(groupId);
  const query = useQuery({ queryKey: key, queryFn: () => backend.call("get_group", { groupId }) });
  const { refetch } = query;
  const all = useSessions().all;
  const settled = useDebounced(groupKey(groupId, all), debounceMs);
  const seen = useRef(settled);
  useEffect(() => {
    if (seen.current !== settled) void refetch({ cancelRefetch: true });
    seen.current = settled;
  }, [settled, refetch]);

  const picking = useMutation({
    mutationFn: (sessionId: string) => backend.call("pick_candidate", { groupId, sessionId }),
    onSuccess: (group) => {
      void client.cancelQueries({ queryKey: key, exact: true });
      client.setQueryData(key, group);
      void client.invalidateQueries({ queryKey: keys.groups });
      void client.invalidateQueries({ queryKey: keys.sessionLists });
    },
  });
  const { mutateAsync } = picking;
  return {
    group: query.data ?? null,
    updatedAt: query.dataUpdatedAt,
    loading: query.isFetching,
    error: query.error ? toKilnError(query.error) : null,
    retry: () => void refetch(),
    picking: picking.isPending ? (picking.variables ?? null) : null,
    pickError: picking.error ? toKilnError(picking.error) : null,
    pick: (sessionId: string) =>
      mutateAsync(sessionId).then(
        () => true,
        () => false,
      ),
  };
}

/** The workspace's groups, for the dashboard's group headings; fetched again when a group appears in the list. */
export function useGroups(sessions: readonly SessionView[]): GroupSummary[] {
  const { backend } = useBackend();
  const root = useApp()?.workspace?.root;
  const ids = [...new Set(sessions.map((s) => s.groupId).filter((g): g is string => !!g))].sort().join(",");
  const query = useQuery({
    queryKey: [...keys.groups, ids],
    queryFn: () => backend.call("list_groups", {}),
    enabled: !!root && ids !== "",
    placeholderData: keepPreviousData,
  });
  return query.data ?? [];
}

/** `right`'s tree against `left`'s; nothing is asked until both are chosen and differ. */
export function useCompare(
  groupId: string,
  left: string | null,
  right: string | null,
  /** Asked again when this changes (the comparison was fetched again: the trees may have changed). */
  refreshKey: number,
): { diff: DiffView | null; loading: boolean; error: KilnError | null } {
  const { backend } = useBackend();
  const ready = !!left && !!right && left !== right;
  const query = useQuery({
    queryKey: [...keys.compare(groupId, left ?? "", right ?? ""), refreshKey],
    placeholderData: keepPreviousData,
    queryFn: () => backend.call("compare_candidates", { groupId, left: left ?? "", right: right ?? "" }),
    enabled: ready,
  });
  return {
    diff: ready ? (query.data ?? null) : null,
    loading: query.isFetching,
    error: query.error ? toKilnError(query.error) : null,
  };
}
