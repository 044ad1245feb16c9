// A session's terminals: the list's query (fetched when the Terminal tab opens, kept current by `terminal` events and the answers of open and stop), and the calls that open and stop them (the screen writes and resizes, TerminalPane).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useMemo } from "react";
import { type KilnError, toKilnError } from "../api/backend";
import type { OpenTerminalArgs, TerminalKind, TerminalView } from "../api/types";
import { putTerminal } from "./cache";
import { keys } from "./queries";
import { useBackend } from "./store";

const NONE: TerminalView[] = [];

export interface TerminalsHandle {
  terminals: TerminalView[];
  loading: boolean;
  /** The list's failure, or the last refused open or stop (cleared by the next call). */
  error: KilnError | null;
  retry: () => void;
  /** Resolves with the new terminal, or null when the engine refused (see error). */
  open: (kind: TerminalKind, size?: { cols: number; rows: number }) => Promise<TerminalView | null>;
  stop: (terminalId: string) => Promise<void>;
  /** A kind being opened. */
  opening: TerminalKind | null;
}

/** `enabled`: the engine offers terminals (AppState.terminals) and the tab shows. */
export function useTerminals(sessionId: string, enabled: boolean): TerminalsHandle {
  const { backend } = useBackend();
  const client = useQueryClient();
  const query = useQuery({
    queryKey: keys.terminals(sessionId),
    queryFn: async () => {
      const answer = await backend.call("list_terminals", { sessionId });
      // An exit heard by event while the list was on its way is newer than the answer.
      const held = client.getQueryData<TerminalView[]>(keys.terminals(sessionId)) ?? [];
      return answer.map((t) => held.find((h) => h.id === t.id && h.state === "exited" && t.state === "running") ?? t);
    },
    enabled,
  });
  const opener = useMutation({
    mutationFn: (args: OpenTerminalArgs) => backend.call("open_terminal", args),
    onSuccess: (view) => putTerminal(client, view),
  });
  const stopper = useMutation({
    mutationFn: (terminalId: string) => backend.call("stop_terminal", { terminalId }),
    onSuccess: (view) => putTerminal(client, view),
  });
  const { mutateAsync: openAsync, reset: resetOpen } = opener;
  const { mutateAsync: stopAsync, reset: resetStop } = stopper;
  const open = useCallback(
    (kind: TerminalKind, size?: { cols: number; rows: number }) => {
      resetStop();
      return openAsync({ sessionId, kind, ...size }).catch(() => null);
    },
    [openAsync, resetStop, sessionId],
  );
  const stop = useCallback(
    (terminalId: string) => {
      resetOpen();
      return stopAsync(terminalId).then(
        () => {},
        () => {},
      );
    },
    [stopAsync, resetOpen],
  );
  const { refetch } = query;
  const retry = useCallback(() => void refetch(), [refetch]);
  const failure = opener.error ?? stopper.error ?? query.error;
  const error = useMemo(() => (failure ? toKilnError(failure) : null), [failure]);
  return {
    terminals: query.data ?? NONE,
    loading: query.isPending && enabled,
    error,
    retry,
    open,
    stop,
    opening: opener.isPending ? (opener.variables?.kind ?? null) : null,
  };
}
