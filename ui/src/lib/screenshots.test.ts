import { describe, expect, it } from "vitest";
import type { ScreenshotView } from "../api/types";
import { shotDescription, shotLabel, shotsByCheckpoint, turnShots } from "./screenshots";

function shot(id: number, checkpoint: number | null, kind: ScreenshotView["kind"] = "turn"): ScreenshotView {
  return {
    id,
    kind,
    checkpoint,
    moduleId: "app",
    pagePath: "/",
    width: 1280,
    height: 800,
    takenAt: "2026-12-02T14:00:00Z",
  };
}

describe("turn screenshots", () => {
  it("keeps turn screenshots only, oldest first, the newer of two at one checkpoint", () => {
    const shots = [shot(5, 2), shot(1, 0), shot(2, 1, "element"), shot(3, 1), shot(4, 1), shot(6, null)];
    expect(turnShots(shots).map((s) => s.id)).toEqual([1, 4, 5]);
    expect(shotsByCheckpoint(shots).get(1)?.id).toBe(4);
    expect(shotsByCheckpoint(shots).has(3)).toBe(false);
    expect(turnShots(undefined)).toEqual([]);
  });

  it("labels the start as before and the rest by checkpoint", () => {
    expect(shotLabel(shot(1, 0))).toBe("Before");
    expect(shotLabel(shot(2, 3))).toBe("Checkpoint 3");
    expect(shotDescription(shot(2, 3))).toBe("Checkpoint 3: the preview of app (/), 1280 × 800");
  });
});
