// A session's preview: the store's copy (kept live by `preview` events) and the calls that start, stop and restart it.
import { useCallback, useEffect, useRef, useState } from "react";
import { type Command, type KilnError, toKilnError } from "../api/backend";
import type { PreviewView } from "../api/types";
import { useStore } from "./store";

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
  const { backend, dispatch, state } = useStore();
  const preview = state.previews[sessionId] ?? null;
  const [error, setError] = useState<KilnError | null>(null);
  const [busy, setBusy] = useState<PreviewCommand | null>(null);
  // Read when a call is made: an answer is dropped when an event came while it was on its way.
  const eventsRef = useRef(0);
  eventsRef.current = state.previewEvents[sessionId] ?? 0;
  const aliveRef = useRef(true);
  useEffect(() => {
    aliveRef.current = true;
    return () => {
      aliveRef.current = false;
    };
  }, []);

  const run = useCallback(
    async (command: PreviewCommand): Promise<boolean> => {
      const eventsSeen = eventsRef.current;
      setBusy(command);
      try {
        const answer = await backend.call(command, { sessionId });
        dispatch({ type: "previewLoaded", preview: answer, eventsSeen });
        if (aliveRef.current) setError(null);
        return true;
      } catch (e) {
        if (aliveRef.current) setError(toKilnError(e));
        return false;
      } finally {
        if (aliveRef.current) setBusy(null);
      }
    },
    [backend, dispatch, sessionId],
  );

  // After a resync (the event stream missed something), ask again.
  const epoch = state.epoch;
  useEffect(() => {
    if (open && epoch > 0) void run("get_preview");
  }, [open, epoch, run]);

  const start = useCallback(() => run("start_preview"), [run]);
  const stop = useCallback(() => run("stop_preview"), [run]);
  const restart = useCallback(() => run("restart_preview"), [run]);
  return { preview, error, busy, start, stop, restart };
}
