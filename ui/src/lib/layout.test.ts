// Tests for the remembered preview layout and width.
import { afterEach, describe, expect, it } from "vitest";
import {
  clampPreviewWidth,
  loadPreviewLayout,
  loadPreviewWidth,
  PREVIEW_WIDTH,
  savePreviewLayout,
  savePreviewWidth,
} from "./layout";

afterEach(() => localStorage.clear());

describe("preview layout", () => {
  it("defaults to the split when wide and to a tab when narrow, and remembers a choice", () => {
    expect(loadPreviewLayout(false)).toBe("split");
    expect(loadPreviewLayout(true)).toBe("tab");
    savePreviewLayout("tab");
    expect(loadPreviewLayout(false)).toBe("tab");
  });

  it("keeps the width within bounds and remembers it", () => {
    expect(loadPreviewWidth()).toBe(PREVIEW_WIDTH.initial);
    expect(clampPreviewWidth(0.01)).toBe(PREVIEW_WIDTH.min);
    expect(clampPreviewWidth(2)).toBe(PREVIEW_WIDTH.max);
    expect(clampPreviewWidth(Number.NaN)).toBe(PREVIEW_WIDTH.initial);
    savePreviewWidth(0.6);
    expect(loadPreviewWidth()).toBe(0.6);
    localStorage.setItem("kiln.preview.width", "banana");
    expect(loadPreviewWidth()).toBe(PREVIEW_WIDTH.initial);
  });
});
