// Writes to the query cache shared by engine events (events.ts) and operations' answers (the store's dispatch): a fetch still on its way for the same key is cancelled first, so an older answer cannot overwrite what is written.
import type { QueryClient } from "@tanstack/react-query";
import type { AppState, AttachmentView, SessionView, TerminalView, TranscriptEntry, WorkspaceView } from "../api/types";
import { mergeTerminal } from "../lib/terminalList";
import { holdEarlyEntry, keys } from "./queries";
import { mergeEntries, newerSession } from "./reducer";

/** Cancels a fetch of exactly this key on its way (its answer is older than what comes next), then writes. */
function put<T>(client: QueryClient, key: readonly unknown[], data: T | ((old: T | undefined) => T | undefined)) {
  void client.cancelQueries({ queryKey: key, exact: true });
  client.setQueryData<T>(key, data);
}

export function putSession(client: QueryClient, session: SessionView) {
  put<SessionView | null>(client, keys.session(session.id), session);
  // Lists are not cancelled: their answer keeps a copy an event made newer (sessionListQuery).
  client.setQueriesData<SessionView[]>({ queryKey: keys.sessionLists }, (list) => {
    if (!list) return list;
    const at = list.findIndex((s) => s.id === session.id);
    if (at < 0) return [...list, session];
    const next = list.slice();
    next[at] = session;
    return next;
  });
}

/** An operation's answer about a session: a copy an event made newer while it was on its way stays. */
export function putSessionAnswer(client: QueryClient, session: SessionView) {
  const held = client.getQueryData<SessionView | null>(keys.session(session.id));
  if (held && newerSession(session, held) === held) return;
  putSession(client, session);
}

/** A removed session: its query holds null (the screen says so), the lists drop it, its other queries go. */
export function removeSession(client: QueryClient, sessionId: string) {
  put<SessionView | null>(client, keys.session(sessionId), null);
  client.setQueriesData<SessionView[]>({ queryKey: keys.sessionLists }, (list) =>
    list?.filter((s) => s.id !== sessionId),
  );
  for (const key of [
    keys.transcript(sessionId),
    keys.preview(sessionId),
    keys.gates(sessionId),
    keys.live(sessionId),
    keys.checkpoints(sessionId),
  ]) {
    client.removeQueries({ queryKey: key, exact: true });
  }
}

/** add_attachment answers with the attachment only; the session event may come before or after. */
export function addAttachment(client: QueryClient, sessionId: string, attachment: AttachmentView) {
  const session = client.getQueryData<SessionView | null>(keys.session(sessionId));
  if (!session || session.attachments.some((a) => a.id === attachment.id)) return;
  putSession(client, { ...session, attachments: [...session.attachments, attachment] });
}

/** Appends an entry (by id, in id order, once). Before the first fetch answered, the entry waits for it. */
export function appendEntry(client: QueryClient, entry: TranscriptEntry) {
  const key = keys.transcript(entry.sessionId);
  const state = client.getQueryState<TranscriptEntry[]>(key);
  if (state?.data === undefined) {
    if (state?.fetchStatus === "fetching") holdEarlyEntry(client, entry);
    return;
  }
  client.setQueryData<TranscriptEntry[]>(key, (old) => (old ? mergeEntries(old, [entry]) : old));
}

/** The app state from a start-up or a reload; another workspace's root drops everything of the old one. */
export function putApp(client: QueryClient, app: AppState) {
  const before = client.getQueryData<AppState>(keys.app);
  client.setQueryData(keys.app, app);
  if (before && before.workspace?.root !== app.workspace?.root) void client.resetQueries({ queryKey: keys.workspace });
}

export function putWorkspace(client: QueryClient, workspace: WorkspaceView) {
  const before = client.getQueryData<AppState>(keys.app);
  if (before) putApp(client, { ...before, workspace });
}

/** A terminal's news (an event or an answer) into its session's list, when that list is held. A list
 * on its way is not cancelled: its query keeps an exit heard meanwhile (useTerminals). */
export function putTerminal(client: QueryClient, view: TerminalView) {
  client.setQueryData<TerminalView[]>(keys.terminals(view.sessionId), (list) => list && mergeTerminal(list, view));
}
