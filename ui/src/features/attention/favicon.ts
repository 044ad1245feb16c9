// The tab's icon: Kiln's flame, with a dot coloured by what the session asks (running, needs you, failed), as SVG data URLs.
import type { Attention } from "./attention";

const FLAME =
  '<rect width="32" height="32" rx="7" fill="#1c1f26"/><path d="M16 5c1 4 6 7 6 13a6 6 0 0 1-12 0c0-3 1.5-5 3-6.5 0 2 1 3.5 2.5 4C15 12 14 9 16 5z" fill="#f0883e"/>';

export const DOT_COLOUR: Record<Exclude<Attention, null>, string> = {
  running: "#3fb950",
  "needs-you": "#d29922",
  failed: "#f85149",
};

/** The icon for `attention` as a data URL; null means the page's own favicon. */
export function faviconHref(attention: Attention): string | null {
  if (!attention) return null;
  // The dot sits on a ring of the page colour so it reads on light and dark tab strips.
  const dot = `<circle cx="24" cy="24" r="8" fill="#0d1117"/><circle cx="24" cy="24" r="6" fill="${DOT_COLOUR[attention]}"/>`;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">${FLAME}${dot}</svg>`;
  return `data:image/svg+xml,${encodeURIComponent(svg)}`;
}

let original: string | null = null;

/** Shows `attention` on the tab's icon (the <link rel="icon"> of index.html). */
export function applyFavicon(attention: Attention): void {
  const link = document.querySelector<HTMLLinkElement>('link[rel="icon"]');
  if (!link) return;
  if (original === null) original = link.getAttribute("href") ?? "";
  const href = faviconHref(attention) ?? original;
  if (link.getAttribute("href") !== href) link.setAttribute("href", href);
  link.dataset.attention = attention ?? "";
}
