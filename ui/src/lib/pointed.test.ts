import { describe, expect, it } from "vitest";
import type { ScreenshotView } from "../api/types";
import { captureArgs, contextOf, pointedLabel, readPickMessage } from "./pointed";

const element = {
  kiln: "picked",
  kind: "element",
  selector: "#screen > h1",
  html: "<h1>Catalog</h1>",
  htmlCut: false,
  styles: { color: "rgb(0, 0, 0)", display: "block", "font-size": 12 },
  rect: { x: 10, y: 2000.4, width: 300.5, height: 40 },
  viewport: { width: 900, height: 700 },
  path: "/?module=catalog",
};

const shot: ScreenshotView = {
  id: 7,
  kind: "element",
  checkpoint: 0,
  moduleId: "@shop/catalog",
  pagePath: "/?module=catalog",
  width: 301,
  height: 40,
  takenAt: "2026-01-01T00:00:00Z",
};

describe("the picking script's answers", () => {
  it("reads an element, keeping only string styles", () => {
    const read = readPickMessage(element);
    expect(read).toMatchObject({ kind: "element", selector: "#screen > h1", path: "/?module=catalog" });
    expect(read !== "cancelled" && read?.kind === "element" && read.styles).toEqual({
      color: "rgb(0, 0, 0)",
      display: "block",
    });
  });

  it("reads a region and a cancel, and ignores everything else", () => {
    expect(readPickMessage({ kiln: "pick-cancelled" })).toBe("cancelled");
    expect(readPickMessage({ ...element, kind: "region" })).toMatchObject({ kind: "region", rect: element.rect });
    for (const other of [
      null,
      "picked",
      { type: "webpackHotUpdate" },
      { ...element, selector: "" },
      { ...element, selector: "a\nb" },
      { ...element, rect: { x: 1 } },
      { ...element, viewport: { width: Number.NaN, height: 1 } },
    ]) {
      expect(readPickMessage(other)).toBeNull();
    }
  });

  it("keeps a foreign path out of the capture", () => {
    const read = readPickMessage({ ...element, path: "//evil.example/" });
    expect(read !== "cancelled" && read?.path).toBe("/");
  });
});

describe("what a pick asks and sends", () => {
  it("captures the element by selector in the frame's viewport", () => {
    const read = readPickMessage(element);
    if (!read || read === "cancelled") throw new Error("not read");
    expect(captureArgs("s1", "@shop/catalog", read)).toEqual({
      sessionId: "s1",
      moduleId: "@shop/catalog",
      path: "/?module=catalog",
      viewportWidth: 900,
      viewportHeight: 700,
      selector: "#screen > h1",
    });
    expect(contextOf(read, shot)).toEqual({
      screenshotId: 7,
      pagePath: "/?module=catalog",
      selector: "#screen > h1",
      html: "<h1>Catalog</h1>",
      styles: { color: "rgb(0, 0, 0)", display: "block" },
    });
  });

  it("captures a region by its rectangle, in a viewport the engine takes", () => {
    const read = readPickMessage({ ...element, kind: "region", viewport: { width: 120, height: 90 } });
    if (!read || read === "cancelled") throw new Error("not read");
    const args = captureArgs("s1", "m", read);
    expect(args.region).toEqual(element.rect);
    expect([args.viewportWidth, args.viewportHeight, args.selector]).toEqual([200, 150, undefined]);
    expect(contextOf(read, { ...shot, kind: "region" })).toEqual({ screenshotId: 7, pagePath: "/?module=catalog" });
  });

  it("notes HTML the script cut", () => {
    const read = readPickMessage({ ...element, htmlCut: true });
    if (!read || read === "cancelled") throw new Error("not read");
    expect(contextOf(read, shot).html).toMatch(/<h1>Catalog<\/h1>\n<!-- cut/);
  });

  it("labels chips", () => {
    expect(pointedLabel("element", "#buy")).toBe("#buy");
    expect(pointedLabel("region", null, 300.4, 90)).toBe("Region 300×90");
    expect(pointedLabel("page", undefined)).toBe("Page");
  });
});
