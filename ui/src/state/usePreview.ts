// A session's preview: its query (written by `preview` events and the calls' answers, fetched again after a resync while the card shows) and the calls that start, stop and restart it.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";
import { type Command, type KilnError, toKilnError } from "../api/backend";
import type { PreviewView } from "../api/types";
import { applyAnswer, keys, updatesOf } from "./queries";
import { useBackend } from "./store";

type PreviewCommand = Extract<Command, "get_preview" | "start_preview" | "stop_preview" | "restart_preview">;

export interface PreviewHandle {
  /** null until a call answered or an event came. */
  preview: PreviewView | null;
  /** The last refusal (e.g. PREVIEW_NOT_CONFIGURED), cleared by the next answer. */
  error: KilnError | null;
  /** A call is in flight. */
  busy: PreviewCommand | null;
  /** Each resolves true when the engine answered, false when it refused (see error). */
  start: () => Promise<boolean>;
  stop: () => Promise<boolean>;
  restart: () => Promise<boolean>;
}

/** `open`: the card shows, so a resync fetches the preview again. */
export function usePreview(sessionId: string, open: boolean): PreviewHandle {
  const { backend } = useBackend();
  const client = useQueryClient();
  const key = keys.preview(sessionId);
  // Not fetched on its own at first (the card's Start answers with it); once held, a resync's invalidation refetches it while the card shows.
  const query = useQuery({
    queryKey: key,
    queryFn: () => backend.call("get_preview", { sessionId }),
    staleTime: Infinity,
    enabled: (q) => open && q.state.data !== undefined,
  });

  const call = useMutation({
    mutationFn: async (command: PreviewCommand) => {
      // A get_preview still on its way was sent before this call: its answer is older than this one's.
      await client.cancelQueries({ queryKey: key, exact: true });
      const since = updatesOf(client, key);
      const answer = await backend.call(command, { sessionId });
      // A `preview` event that came while the call was on its way is at least as new as its answer.
      applyAnswer(client, key, answer, since);
      return answer;
    },
  });
  const { mutateAsync } = call;
  const run = useCallback(
    (command: PreviewCommand) =>
      mutateAsync(command).then(
        () => true,
        () => false,
      ),
    [mutateAsync],
  );
  const start = useCallback(() => run("start_preview"), [run]);
  const stop = useCallback(() => run("stop_preview"), [run]);
  const restart = useCallback(() => run("restart_preview"), [run]);

  const failure = call.error ?? query.error;
  return {
    preview: query.data ?? null,
    error: failure ? toKilnError(failure) : null,
    busy: call.isPending ? (call.variables ?? null) : null,
    start,
    stop,
    restart,
  };
}
