// The session screen's remembered layout choices: where the preview shows (beside the chat or as a tab) and how wide it is.
export type PreviewLayout = "split" | "tab";

const LAYOUT_KEY = "kiln.preview.layout";
const WIDTH_KEY = "kiln.preview.width";

/** The preview's share of the split, and how far the divider may go. */
export const PREVIEW_WIDTH = { initial: 0.45, min: 0.25, max: 0.75 } as const;

function read(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key: string, value: string) {
  try {
    localStorage.setItem(key, value);
  } catch {
    // Storage refused (private mode, quota): the choice lasts until the page reloads.
  }
}

/** The remembered layout; without one, a narrow window starts with the preview as a tab. */
export function loadPreviewLayout(narrow: boolean): PreviewLayout {
  const stored = read(LAYOUT_KEY);
  if (stored === "split" || stored === "tab") return stored;
  return narrow ? "tab" : "split";
}

export function savePreviewLayout(layout: PreviewLayout) {
  write(LAYOUT_KEY, layout);
}

export function clampPreviewWidth(fraction: number): number {
  if (!Number.isFinite(fraction)) return PREVIEW_WIDTH.initial;
  return Math.min(PREVIEW_WIDTH.max, Math.max(PREVIEW_WIDTH.min, fraction));
}

export function loadPreviewWidth(): number {
  const stored = read(WIDTH_KEY);
  return stored === null ? PREVIEW_WIDTH.initial : clampPreviewWidth(Number(stored));
}

export function savePreviewWidth(fraction: number) {
  write(WIDTH_KEY, String(Math.round(clampPreviewWidth(fraction) * 1000) / 1000));
}
