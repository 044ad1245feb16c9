// A tiny hash router: #/ (dashboard), #/new, #/group/<id> (a group's comparison), #/session/<id> (`?preview=1` opens its preview), #/session/<id>/deliver (eject), #/settings, #/workspace, #/workspace/setup and #/help.
import { useSyncExternalStore } from "react";

export type Route =
  | { name: "dashboard" }
  | { name: "new" }
  | { name: "workspace" }
  | { name: "setup" }
  | { name: "settings" }
  | { name: "help" }
  | { name: "session"; id: string; preview?: true }
  | { name: "deliver"; id: string }
  | { name: "group"; id: string }
  | { name: "notFound"; path: string };

export function parseHash(hash: string): Route {
  const path = hash.replace(/^#/, "").replace(/\/+$/, "") || "/";
  if (path === "/") return { name: "dashboard" };
  if (path === "/new") return { name: "new" };
  if (path === "/workspace") return { name: "workspace" };
  if (path === "/workspace/setup") return { name: "setup" };
  if (path === "/settings") return { name: "settings" };
  if (path === "/help") return { name: "help" };
  const group = /^\/group\/([^/?]+)$/.exec(path);
  if (group) {
    try {
      return { name: "group", id: decodeURIComponent(group[1]) };
    } catch {
      return { name: "notFound", path };
    }
  }
  const deliver = /^\/session\/([^/?]+)\/deliver$/.exec(path);
  if (deliver) {
    try {
      return { name: "deliver", id: decodeURIComponent(deliver[1]) };
    } catch {
      return { name: "notFound", path };
    }
  }
  const session = /^\/session\/([^/?]+)(?:\?([^/]*))?$/.exec(path);
  if (session) {
    try {
      const id = decodeURIComponent(session[1]);
      return new URLSearchParams(session[2] ?? "").get("preview") === "1"
        ? { name: "session", id, preview: true }
        : { name: "session", id };
    } catch {
      return { name: "notFound", path };
    }
  }
  return { name: "notFound", path };
}

export const paths = {
  dashboard: "#/",
  newSession: "#/new",
  workspace: "#/workspace",
  /** The open workspace's set-up: what Kiln detected, "Save as kiln.toml". */
  setup: "#/workspace/setup",
  settings: "#/settings",
  /** The local help page (Help ▸ Documentation): Kiln has no project site to send people to. */
  help: "#/help",
  session: (id: string) => `#/session/${encodeURIComponent(id)}`,
  /** The session with its preview card open (e.g. KILN_UI_ROUTE for the desktop check). */
  /** The session's eject screen: the delivery plan, its confirmation and the live steps. */
  deliver: (id: string) => `#/session/${encodeURIComponent(id)}/deliver`,
  /** A group of candidate sessions side by side, with Pick. */
  group: (id: string) => `#/group/${encodeURIComponent(id)}`,
  sessionPreview: (id: string) => `#/session/${encodeURIComponent(id)}?preview=1`,
};

export function navigate(hash: string): void {
  if (window.location.hash !== hash) window.location.hash = hash;
}

function subscribe(listener: () => void): () => void {
  window.addEventListener("hashchange", listener);
  return () => window.removeEventListener("hashchange", listener);
}

export function useRoute(): Route {
  const hash = useSyncExternalStore(subscribe, () => window.location.hash);
  return parseHash(hash);
}
