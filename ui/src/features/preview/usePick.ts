// Picking in the preview: asks the picking script in the frame (served by the preview gateway) to pick an element or a region, takes its answer (only from that frame, on the preview's origin), captures it with capture_preview and adds it to the composer.
import { type RefObject, useCallback, useEffect, useRef, useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import { captureArgs, contextOf, type PickMode, readPickMessage } from "../../lib/pointed";
import { useBackend } from "../../state/store";

export interface PickHandle {
  /** What the frame waits for, null when nothing. */
  mode: PickMode | null;
  /** A capture of what was picked is on its way. */
  capturing: boolean;
  error: KilnError | null;
  start: (mode: PickMode) => void;
  cancel: () => void;
}

/** `origin`: the preview gateway's; `resetKey`: changes when the frame loads another page (picking stops). */
export function usePick(
  sessionId: string,
  moduleId: string,
  frame: RefObject<HTMLIFrameElement | null>,
  origin: string | null,
  resetKey: string,
): PickHandle {
  const { backend, dispatch } = useBackend();
  const [mode, setMode] = useState<PickMode | null>(null);
  const [capturing, setCapturing] = useState(false);
  const [error, setError] = useState<KilnError | null>(null);
  const where = useRef({ sessionId, moduleId });
  where.current = { sessionId, moduleId };

  const post = useCallback(
    (message: { kiln: "pick"; mode: PickMode | "cancel" }) => {
      const target = frame.current?.contentWindow;
      if (target && origin) target.postMessage(message, origin);
    },
    [frame, origin],
  );
  const start = useCallback(
    (next: PickMode) => {
      setError(null);
      setMode(next);
      post({ kiln: "pick", mode: next });
    },
    [post],
  );
  const cancel = useCallback(() => {
    setMode(null);
    post({ kiln: "pick", mode: "cancel" });
  }, [post]);

  // Another page in the frame knows nothing of the pick (state adjusted while rendering, as React advises).
  const [pageKey, setPageKey] = useState(resetKey);
  if (pageKey !== resetKey) {
    setPageKey(resetKey);
    setMode(null);
  }

  useEffect(() => {
    const onMessage = (e: MessageEvent) => {
      if (!frame.current || e.source !== frame.current.contentWindow || e.origin !== origin) return;
      const read = readPickMessage(e.data);
      if (read === null) return;
      setMode(null);
      if (read === "cancelled") return;
      const { sessionId, moduleId } = where.current;
      setCapturing(true);
      backend
        .call("capture_preview", captureArgs(sessionId, moduleId, read))
        .then((screenshot) =>
          dispatch({ type: "pointedAdded", sessionId, item: { screenshot, context: contextOf(read, screenshot) } }),
        )
        .catch((failure: unknown) => setError(toKilnError(failure)))
        .finally(() => setCapturing(false));
    };
    window.addEventListener("message", onMessage);
    return () => window.removeEventListener("message", onMessage);
  }, [backend, dispatch, frame, origin]);

  // Escape in Kiln's own window cancels too (in the frame, the script hears it).
  useEffect(() => {
    if (!mode) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      e.stopPropagation();
      cancel();
    };
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, [mode, cancel]);

  return { mode, capturing, error, start, cancel };
}
