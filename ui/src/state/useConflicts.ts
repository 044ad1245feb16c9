// The conflicts an update from the workspace left in a session (get_conflicts, a query keyed by the files that still
// hold markers, so it is fetched again when the session's list changes) and the user's pick for one (resolve_conflict),
// whose answer replaces the list at once; the session event that follows updates the files.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ConflictKeep } from "../api/types";
import { keys } from "./queries";
import { useBackend } from "./store";

export function useConflicts(sessionId: string, paths: string[], refresh: string | number) {
  const { backend } = useBackend();
  const client = useQueryClient();
  const key = keys.conflicts(sessionId, `${paths.join("\n")}#${refresh}`);
  const query = useQuery({
    queryKey: key,
    queryFn: () => backend.call("get_conflicts", { sessionId }),
    enabled: paths.length > 0,
  });
  const resolve = useMutation({
    mutationFn: (args: { path: string; conflictId: string; keep: ConflictKeep }) =>
      backend.call("resolve_conflict", { sessionId, ...args }),
    onSuccess: (view) => client.setQueryData(key, view),
  });
  return { query, resolve };
}
