// One engine answer about the open workspace, loaded when the workspace opens and again
// when it is reopened (its epoch) or on reload: what useSettings and useDetection share.
import { useCallback, useEffect, useState } from "react";
import { type Command, type CommandMap, type KilnError, type ResultOf, toKilnError } from "../api/backend";
import { useStore } from "./store";

/** The operations an empty argument object satisfies: what a workspace query may ask. */
type Question = { [C in Command]: Record<string, never> extends CommandMap[C]["args"] ? C : never }[Command];

export interface WorkspaceQuery<T> {
  data: T | null;
  error: KilnError | null;
  loading: boolean;
  /** Replaces the held answer (e.g. with the answer of the operation that changed it). */
  setData: (data: T) => void;
  reload: () => void;
}

export function useWorkspaceQuery<C extends Question>(command: C): WorkspaceQuery<ResultOf<C>> {
  const { backend, state } = useStore();
  const root = state.app?.workspace?.root;
  const [data, setData] = useState<ResultOf<C> | null>(null);
  const [error, setError] = useState<KilnError | null>(null);
  const [loading, setLoading] = useState(true);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    if (!root) return;
    let cancelled = false;
    setLoading(true);
    setError(null);
    backend
      .call(command, {} as CommandMap[C]["args"])
      .then((d) => {
        if (!cancelled) setData(d);
      })
      .catch((e: unknown) => {
        if (!cancelled) setError(toKilnError(e));
      })
      .finally(() => {
        if (!cancelled) setLoading(false);
      });
    return () => {
      cancelled = true;
    };
  }, [backend, command, root, state.epoch, attempt]);

  const reload = useCallback(() => setAttempt((a) => a + 1), []);
  return { data, error, loading, setData, reload };
}
