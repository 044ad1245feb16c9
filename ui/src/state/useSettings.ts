// Loads the workspace's driver settings (get_settings) for the composer and the settings screen.
import type { KilnError } from "../api/backend";
import type { SettingsView } from "../api/types";
import { useWorkspaceQuery } from "./useWorkspaceQuery";

export interface SettingsState {
  settings: SettingsView | null;
  error: KilnError | null;
  loading: boolean;
  /** Replaces the held settings (e.g. with update_settings' answer). */
  setSettings: (settings: SettingsView) => void;
  reload: () => void;
}

export function useSettings(): SettingsState {
  const { data, error, loading, setData, reload } = useWorkspaceQuery("get_settings");
  return { settings: data, error, loading, setSettings: setData, reload };
}
