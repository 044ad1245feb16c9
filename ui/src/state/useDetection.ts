// Loads what Kiln detected in the open workspace (detect_workspace) for the set-up screen.
import { useCallback, useEffect, useState } from "react";
import { type KilnError, toKilnError } from "../api/backend";
import type { DetectionView } from "../api/types";
import { useStore } from "./store";

export interface DetectionState {
  detection: DetectionView | null;
  error: KilnError | null;
  loading: boolean;
  /** Replaces the held detection (e.g. with save_config's answer). */
  setDetection: (detection: DetectionView) => void;
  reload: () => void;
}

export function useDetection(): DetectionState {
  const { backend, state } = useStore();
  const root = state.app?.workspace?.root;
  const [detection, setDetection] = useState<DetectionView | null>(null);
  const [error, setError] = useState<KilnError | null>(null);
  const [loading, setLoading] = useState(true);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    if (!root) return;
    let cancelled = false;
    setLoading(true);
    setError(null);
    backend
      .call("detect_workspace", {})
      .then((d) => {
        if (!cancelled) setDetection(d);
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
  }, [backend, root, state.epoch, attempt]);

  const reload = useCallback(() => setAttempt((a) => a + 1), []);
  return { detection, error, loading, setDetection, reload };
}
