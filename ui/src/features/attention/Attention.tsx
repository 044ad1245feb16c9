// Keeps the tab's title and icon on what the sessions ask (running, needs you, failed), and notifies when a turn ends, waits on the user or fails.
import { type QueryClient, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import type { SessionView } from "../../api/types";
import { navigate, paths, useRoute } from "../../router";
import { keys } from "../../state/queries";
import { newerSession } from "../../state/reducer";
import { documentTitle, faviconOf, notificationFor } from "./attention";
import { applyFavicon } from "./favicon";
import { showNotification } from "./notify";

/** Prefix of every single-session query (keys.session(id)); engine `session` events write there. */
const SESSION_PREFIX = keys.session("").slice(0, 2);

/** Every session of the open workspace the cache holds: the lists' copies, and each session's own (newer wins). */
function sessionsHeld(client: QueryClient): Record<string, SessionView> {
  const out: Record<string, SessionView> = {};
  for (const [, session] of client.getQueriesData<SessionView | null>({ queryKey: SESSION_PREFIX })) {
    if (session) out[session.id] = session;
  }
  for (const [, list] of client.getQueriesData<SessionView[]>({ queryKey: keys.sessionLists })) {
    for (const s of list ?? []) out[s.id] = out[s.id] ? newerSession(out[s.id], s) : s;
  }
  return out;
}

/** Whether the user is looking at this session now (then a notification would only repeat the page). */
function watching(sessionId: string, routeSession: string | null): boolean {
  return routeSession === sessionId && document.visibilityState === "visible" && document.hasFocus();
}

export function Attention() {
  const client = useQueryClient();
  const route = useRoute();
  const routeSession = route.name === "session" || route.name === "deliver" ? route.id : null;
  const routeRef = useRef(routeSession);
  routeRef.current = routeSession;
  const [sessions, setSessions] = useState<Record<string, SessionView>>({});

  useEffect(() => {
    // The last copy of each session seen here: a notification needs a transition, not a first sight.
    const seen: Record<string, SessionView> = {};
    const update = () => {
      const held = sessionsHeld(client);
      for (const session of Object.values(held)) {
        const previous = seen[session.id];
        seen[session.id] = session;
        if (!previous || previous === session) continue;
        const text = notificationFor(previous, session);
        if (text && !watching(session.id, routeRef.current)) {
          showNotification(text.title, { body: text.body, tag: text.tag }, () => navigate(paths.session(session.id)));
        }
      }
      setSessions(held);
    };
    update();
    // Checked on each write to a session or a list, so no transition is lost between renders.
    return client.getQueryCache().subscribe((event) => {
      const [scope, kind] = event.query.queryKey as unknown[];
      if (scope !== "ws" || (kind !== "session" && kind !== "sessions")) return;
      if (event.type === "updated" || event.type === "added" || event.type === "removed") update();
    });
  }, [client]);

  const current = routeSession ? (sessions[routeSession] ?? null) : null;
  const all = Object.values(sessions);
  const title = documentTitle(current, all);
  const icon = faviconOf(current, all);
  useEffect(() => {
    document.title = title;
  }, [title]);
  useEffect(() => {
    applyFavicon(icon);
  }, [icon]);

  return null;
}
