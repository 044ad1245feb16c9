// Opens an outside address (a pull request, a compare link, a preview) in the system browser:
// through the shell plugin in the desktop app (a webview's window.open goes nowhere useful there),
// with window.open(…, "noopener") in the browser. Only http(s) addresses are ever opened, in both.
import { open as shellOpen } from "@tauri-apps/plugin-shell";
import { isTauri } from "../api";

/** The address normalised (so what is checked is what is opened), or null unless it is http(s). */
export function httpUrl(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return null;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return null;
  if (!parsed.hostname) return null;
  return parsed.href;
}

export interface OpenExternalDeps {
  desktop: () => boolean;
  shellOpen: (url: string) => Promise<void>;
  windowOpen: (url: string) => void;
}

const defaultDeps: OpenExternalDeps = {
  desktop: isTauri,
  shellOpen: (url) => shellOpen(url),
  windowOpen: (url) => {
    window.open(url, "_blank", "noopener");
  },
};

/** Opens `url` outside Kiln; anything but http(s) is refused (false) and nothing opens. */
export function openExternal(url: string, deps: OpenExternalDeps = defaultDeps): boolean {
  const href = httpUrl(url);
  if (!href) {
    console.warn("kiln: not opening a non-http(s) address", url);
    return false;
  }
  if (deps.desktop()) {
    deps.shellOpen(href).catch((e: unknown) => console.error("kiln: could not open the address in the browser", e));
  } else {
    deps.windowOpen(href);
  }
  return true;
}
