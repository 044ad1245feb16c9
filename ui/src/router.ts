// A tiny hash router: #/ (dashboard), #/new, #/session/<id>, #/settings and #/workspace.
import { useSyncExternalStore } from "react";

export type Route =
  | { name: "dashboard" }
  | { name: "new" }
  | { name: "workspace" }
  | { name: "settings" }
  | { name: "session"; id: string }
  | { name: "notFound"; path: string };

export function parseHash(hash: string): Route {
  const path = hash.replace(/^#/, "").replace(/\/+$/, "") || "/";
  if (path === "/") return { name: "dashboard" };
  if (path === "/new") return { name: "new" };
  if (path === "/workspace") return { name: "workspace" };
  if (path === "/settings") return { name: "settings" };
  const session = /^\/session\/([^/]+)$/.exec(path);
  if (session) {
    try {
      return { name: "session", id: decodeURIComponent(session[1]) };
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
  settings: "#/settings",
  session: (id: string) => `#/session/${encodeURIComponent(id)}`,
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
