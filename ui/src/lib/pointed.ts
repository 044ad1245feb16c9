// What the operator points at in the preview: the picking script's answers (read defensively: they come from the previewed page), the capture they ask for, and the context they add to the next message.
import type { CapturePreviewArgs, PointedContext, ScreenshotView } from "../api/types";

export type PickMode = "element" | "region";

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** An answer of the picking script in the preview's frame. */
export type Picked =
  | {
      kind: "element";
      selector: string;
      html: string;
      htmlCut: boolean;
      styles: Record<string, string>;
      rect: Rect;
      viewport: { width: number; height: number };
      path: string;
    }
  | { kind: "region"; rect: Rect; viewport: { width: number; height: number }; path: string };

/** Something picked and captured, waiting in the composer for the next message. */
export interface PointedItem {
  screenshot: ScreenshotView;
  context: PointedContext;
}

/** At most this many go with one message (the engine refuses more). */
export const MAX_POINTED = 8;
/** The engine's caps, kept here so a page's oversized answer is trimmed rather than refused. */
const MAX_HTML = 8 * 1024;
const MAX_STYLES = 32;
const MAX_TEXT = 512;
const MAX_SELECTOR = 2000;

const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

function rectOf(v: unknown): Rect | null {
  if (!v || typeof v !== "object") return null;
  const r = v as Record<string, unknown>;
  return isNumber(r.x) && isNumber(r.y) && isNumber(r.width) && isNumber(r.height)
    ? { x: r.x, y: r.y, width: r.width, height: r.height }
    : null;
}

function localPath(v: unknown): string {
  return typeof v === "string" && v.startsWith("/") && !v.startsWith("//") && v.length <= 2000 ? v : "/";
}

function stylesOf(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!v || typeof v !== "object") return out;
  for (const [name, value] of Object.entries(v as Record<string, unknown>).slice(0, MAX_STYLES)) {
    if (typeof value === "string" && name.length <= MAX_TEXT && !/[\n\r]/.test(value)) {
      out[name] = value.slice(0, MAX_TEXT);
    }
  }
  return out;
}

/** The script's message as a pick, "cancelled", or null for anything else. */
export function readPickMessage(data: unknown): Picked | "cancelled" | null {
  if (!data || typeof data !== "object") return null;
  const d = data as Record<string, unknown>;
  if (d.kiln === "pick-cancelled") return "cancelled";
  if (d.kiln !== "picked") return null;
  const rect = rectOf(d.rect);
  const viewport = d.viewport as Record<string, unknown> | undefined;
  if (!rect || !viewport || !isNumber(viewport.width) || !isNumber(viewport.height)) return null;
  const common = { rect, viewport: { width: viewport.width, height: viewport.height }, path: localPath(d.path) };
  if (d.kind === "region") return { kind: "region", ...common };
  if (d.kind !== "element" || typeof d.selector !== "string" || !d.selector.trim()) return null;
  if (d.selector.length > MAX_SELECTOR || /[\n\r]/.test(d.selector)) return null;
  const html = typeof d.html === "string" ? d.html : "";
  return {
    kind: "element",
    selector: d.selector,
    html: html.slice(0, MAX_HTML - 64),
    htmlCut: d.htmlCut === true || html.length > MAX_HTML - 64,
    styles: stylesOf(d.styles),
    ...common,
  };
}

/** The capture of what was picked: the element by its selector, or the region, in the frame's viewport. */
export function captureArgs(sessionId: string, moduleId: string, picked: Picked): CapturePreviewArgs {
  const clamp = (v: number, lo: number, hi: number) => Math.round(Math.min(hi, Math.max(lo, v)));
  const args: CapturePreviewArgs = {
    sessionId,
    moduleId,
    path: picked.path,
    viewportWidth: clamp(picked.viewport.width, 200, 4000),
    viewportHeight: clamp(picked.viewport.height, 150, 4000),
  };
  if (picked.kind === "element") args.selector = picked.selector;
  else {
    const { x, y, width, height } = picked.rect;
    args.region = { x: Math.max(0, x), y: Math.max(0, y), width: Math.max(1, width), height: Math.max(1, height) };
  }
  return args;
}

/** What goes with the next message for a pick and its screenshot. */
export function contextOf(picked: Picked, screenshot: ScreenshotView): PointedContext {
  const context: PointedContext = { screenshotId: screenshot.id, pagePath: picked.path };
  if (picked.kind === "element") {
    context.selector = picked.selector;
    context.html = picked.htmlCut ? `${picked.html}\n<!-- cut: the element's HTML is longer -->` : picked.html;
    context.styles = picked.styles;
  }
  return context;
}

/** A chip's label: the element's selector, or the region's size. */
export function pointedLabel(
  kind: ScreenshotView["kind"],
  selector: string | null | undefined,
  width?: number,
  height?: number,
): string {
  if (selector) return selector;
  if (kind === "region") return width && height ? `Region ${Math.round(width)}×${Math.round(height)}` : "Region";
  return "Page";
}
