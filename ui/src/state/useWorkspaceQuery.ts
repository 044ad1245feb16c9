// One engine answer about the open workspace (a query, asked once a workspace is open; reset when another opens, refetched on resync or reload): what useSettings and useDetection share.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";
import { type KilnError, type ResultOf, toKilnError } from "../api/backend";
import { keys, type Question, questionQuery } from "./queries";
import { useBackend } from "./store";
import { useApp } from "./useApp";

export interface WorkspaceQuery<T> {
  data: T | null;
  error: KilnError | null;
  loading: boolean;
  /** Replaces the held answer (e.g. with the answer of the operation that changed it). */
  setData: (data: T) => void;
  reload: () => void;
}

export function useWorkspaceQuery<C extends Question>(command: C): WorkspaceQuery<ResultOf<C>> {
  const { backend } = useBackend();
  const client = useQueryClient();
  const root = useApp()?.workspace?.root;
  const query = useQuery({ ...questionQuery(backend, command), enabled: !!root });
  const setData = useCallback(
    (data: ResultOf<C>) => {
      void client.cancelQueries({ queryKey: keys.question(command), exact: true });
      client.setQueryData(keys.question(command), data);
    },
    [client, command],
  );
  const { refetch } = query;
  const reload = useCallback(() => void refetch(), [refetch]);
  return {
    data: query.data ?? null,
    error: query.error && !query.isFetching ? toKilnError(query.error) : null,
    loading: query.isPending || query.isFetching,
    setData,
    reload,
  };
}
