// The workspace's disk use (disk_usage, a query): fetched once a workspace is open, again after resync or clean-up, and (debounced, by the dashboard's summary) when a session appears, goes, is shelved, gets a checkpoint or attachment, or starts or ends a turn.
import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { type KilnError, toKilnError } from "../api/backend";
import type { DiskUsageView, SessionView } from "../api/types";
import { diskUsageQuery } from "./queries";
import { useSessions } from "./sessions";
import { useBackend } from "./store";
import { useApp } from "./useApp";
import { USAGE_REFRESH_MS } from "./useWorkspaceUsage";

/** Changes when what a session holds on disk may have: not on every event of a running turn. */
export function diskKey(sessions: readonly SessionView[]): string {
  return sessions
    .map((s) =>
      [s.id, s.archivedAt, s.rejectedAt, s.deletedAt, s.running, s.checkpoints.length, s.attachments.length].join(":"),
    )
    .sort()
    .join("|");
}

/** The disk use as last fetched (every row reads the one query). */
export function useDiskUsage(): { disk: DiskUsageView | null; error: KilnError | null; refetch: () => void } {
  const { backend } = useBackend();
  const root = useApp()?.workspace?.root;
  const query = useQuery({ ...diskUsageQuery(backend), enabled: !!root });
  const { refetch } = query;
  return {
    disk: query.data ?? null,
    error: query.error ? toKilnError(query.error) : null,
    refetch: () => void refetch(),
  };
}

/** Fetches the disk use again when sessions change (one caller: the dashboard's summary). */
export function useDiskRefresh(refetch: () => void) {
  const all = useSessions().all;
  const key = all ? diskKey(all) : null;
  const refetchRef = useRef(refetch);
  refetchRef.current = refetch;
  // The first list is what the first fetch measured; after it, a change makes one walk once a
  // burst of session events settles.
  const seenKey = useRef<string | null>(null);
  useEffect(() => {
    if (key === null) return;
    if (seenKey.current === null) {
      seenKey.current = key;
      return;
    }
    if (seenKey.current === key) return;
    const timer = setTimeout(() => {
      seenKey.current = key;
      refetchRef.current();
    }, USAGE_REFRESH_MS);
    return () => clearTimeout(timer);
  }, [key]);
}
