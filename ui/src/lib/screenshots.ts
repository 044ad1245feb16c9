// The session's `turn` screenshots as the filmstrip and the transcript show them: oldest first, one per checkpoint, labelled ("Before" for checkpoint 0).
import type { ScreenshotView } from "../api/types";

/** The `turn` screenshots, oldest first; of two at one checkpoint, the newer. */
export function turnShots(shots: ScreenshotView[] | undefined): ScreenshotView[] {
  const byCheckpoint = shotsByCheckpoint(shots);
  return [...byCheckpoint.values()].sort((a, b) => a.id - b.id);
}

/** Each checkpoint's `turn` screenshot (the newest, should a checkpoint have two). */
export function shotsByCheckpoint(shots: ScreenshotView[] | undefined): Map<number, ScreenshotView> {
  const map = new Map<number, ScreenshotView>();
  for (const s of shots ?? []) {
    if (s.kind !== "turn" || s.checkpoint === null) continue;
    const held = map.get(s.checkpoint);
    if (!held || held.id < s.id) map.set(s.checkpoint, s);
  }
  return map;
}

/** "Before" for the look at the session's start, else "Checkpoint N". */
export function shotLabel(shot: ScreenshotView): string {
  return shot.checkpoint === 0 ? "Before" : `Checkpoint ${shot.checkpoint ?? "?"}`;
}

/** What a screenshot shows, for its alt text and title. */
export function shotDescription(shot: ScreenshotView): string {
  const where = shot.moduleId ? `${shot.moduleId} (${shot.pagePath})` : shot.pagePath;
  return `${shotLabel(shot)}: the preview of ${where}, ${shot.width} × ${shot.height}`;
}
