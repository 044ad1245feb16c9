// The tab's icon: Kiln's flame, with a dot coloured by what the session asks (running, needs you, failed): small SVG files beside favicon.svg in ui/public (the CSP allows images from 'self' only, so no data: URLs).
import type { Attention } from "./attention";

/** The icon file for `attention`, next to the page's own `favicon.svg`; null means the page's own. */
export function faviconHref(attention: Attention, original = "./favicon.svg"): string | null {
  if (!attention) return null;
  return original.replace(/favicon\.svg$/, `favicon-${attention}.svg`);
}

let original: string | null = null;

/** Shows `attention` on the tab's icon (the <link rel="icon"> of index.html). */
export function applyFavicon(attention: Attention): void {
  const link = document.querySelector<HTMLLinkElement>('link[rel="icon"]');
  if (!link) return;
  if (original === null) original = link.getAttribute("href") ?? "./favicon.svg";
  const href = faviconHref(attention, original) ?? original;
  if (link.getAttribute("href") !== href) link.setAttribute("href", href);
  link.dataset.attention = attention ?? "";
}
