// Loads what Kiln detected in the open workspace (detect_workspace) for the set-up screen.
import type { KilnError } from "../api/backend";
import type { DetectionView } from "../api/types";
import { useWorkspaceQuery } from "./useWorkspaceQuery";

export interface DetectionState {
  detection: DetectionView | null;
  error: KilnError | null;
  loading: boolean;
  /** Replaces the held detection (e.g. with save_config's answer). */
  setDetection: (detection: DetectionView) => void;
  reload: () => void;
}

export function useDetection(): DetectionState {
  const { data, error, loading, setData, reload } = useWorkspaceQuery("detect_workspace");
  return { detection: data, error, loading, setDetection: setData, reload };
}
