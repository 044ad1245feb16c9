// Tests for the preview helpers: entry URLs per module, when the frame shows, the log's last lines.
import { describe, expect, it } from "vitest";
import { makePreview, PREVIEW_SECRET } from "../test/fixtures";
import { enterUrlFor, frameShown, lastLines, modulePath } from "./preview";

describe("enterUrlFor", () => {
  it("keeps the secret from enterUrl and sets `to` to the path, encoded", () => {
    const url = enterUrlFor(makePreview(), "/?module=coupons&x=a b");
    expect(url).toBe(
      `http://127.0.0.1:41234/__kiln/enter?secret=${PREVIEW_SECRET}&to=%2F%3Fmodule%3Dcoupons%26x%3Da%20b`,
    );
    const parsed = new URL(url!);
    expect(parsed.searchParams.get("secret")).toBe(PREVIEW_SECRET);
    expect(parsed.searchParams.get("to")).toBe("/?module=coupons&x=a b");
  });

  it("is the preview's own enterUrl without a path, and null without a gateway or a secret", () => {
    const preview = makePreview();
    expect(enterUrlFor(preview, null)).toBe(preview.enterUrl);
    expect(enterUrlFor(makePreview({ origin: null, enterUrl: null }), "/")).toBeNull();
    expect(enterUrlFor(makePreview({ enterUrl: "http://127.0.0.1:41234/__kiln/enter?to=%2F" }), "/")).toBeNull();
    expect(enterUrlFor(makePreview({ enterUrl: "not a url" }), "/")).toBeNull();
  });
});

describe("modulePath", () => {
  it("finds the module's first screen, else the first module's", () => {
    const preview = makePreview({
      moduleUrls: [
        { moduleId: "@shop/cart", path: "/?module=cart" },
        { moduleId: "@shop/coupons", path: "/?module=coupons" },
      ],
    });
    expect(modulePath(preview, "@shop/coupons")).toBe("/?module=coupons");
    expect(modulePath(preview, "@shop/gone")).toBe("/?module=cart");
    expect(modulePath(makePreview({ moduleUrls: [] }), "@shop/cart")).toBeNull();
  });
});

describe("frameShown", () => {
  it("shows the frame when ready, or for static files while they are served", () => {
    expect(frameShown(makePreview())).toBe(true);
    for (const state of ["starting", "restarting", "crashed", "stopped"] as const) {
      expect(frameShown(makePreview({ state }))).toBe(false);
    }
    expect(frameShown(makePreview({ kind: "static", state: "starting" }))).toBe(true);
    expect(frameShown(makePreview({ kind: "static", state: "stopped" }))).toBe(false);
    expect(frameShown(makePreview({ enterUrl: null }))).toBe(false);
  });
});

describe("lastLines", () => {
  it("keeps the last lines only", () => {
    const log = Array.from({ length: 250 }, (_, i) => `line ${i}`);
    expect(lastLines(log)).toHaveLength(200);
    expect(lastLines(log)[0]).toBe("line 50");
    expect(lastLines(["a"], 200)).toEqual(["a"]);
  });
});
