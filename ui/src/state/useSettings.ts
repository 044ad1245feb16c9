// Loads the workspace's driver settings (get_settings) for the composer and the settings screen.
import { useCallback, useEffect, useState } from "react";
import { type KilnError, toKilnError } from "../api/backend";
import type { SettingsView } from "../api/types";
import { useStore } from "./store";

export interface SettingsState {
  settings: SettingsView | null;
  error: KilnError | null;
  loading: boolean;
  /** Replaces the held settings (e.g. with update_settings' answer). */
  setSettings: (settings: SettingsView) => void;
  reload: () => void;
}

export function useSettings(): SettingsState {
  const { backend, state } = useStore();
  const root = state.app?.workspace?.root;
  const [settings, setSettings] = useState<SettingsView | null>(null);
  const [error, setError] = useState<KilnError | null>(null);
  const [loading, setLoading] = useState(true);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    if (!root) return;
    let cancelled = false;
    setLoading(true);
    setError(null);
    backend
      .call("get_settings", {})
      .then((s) => {
        if (!cancelled) setSettings(s);
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
  return { settings, error, loading, setSettings, reload };
}
