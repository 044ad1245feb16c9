// Engine events into the query cache, in one place: each event writes the queries it is news for; `resync` (the stream missed something) refetches everything.
import type { QueryClient } from "@tanstack/react-query";
import type { KilnEvent } from "../api/types";
import { appendEntry, putSession, putTerminal, putWorkspace, removeSession } from "./cache";
import { putCheckpoint } from "./checkpoints";
import { putLive, settleLiveText } from "./live";
import { keys } from "./queries";

/** `reloadApp`: the start-up fetch of the app state (it also reconnects a lost loopback connection). */
export function applyEvent(client: QueryClient, event: KilnEvent, reloadApp: () => void) {
  const body = event.body;
  switch (body.type) {
    case "session":
      return putSession(client, body.session);
    case "transcript":
      if (body.entry.kind === "agent") settleLiveText(client, body.entry.sessionId);
      return appendEntry(client, body.entry);
    case "sessionRemoved":
      return removeSession(client, body.sessionId);
    case "workspace":
      return putWorkspace(client, body.workspace);
    case "preview":
      void client.cancelQueries({ queryKey: keys.preview(body.preview.sessionId), exact: true });
      client.setQueryData(keys.preview(body.preview.sessionId), body.preview);
      return;
    case "delivery":
      void client.cancelQueries({ queryKey: keys.delivery(body.run.sessionId), exact: true });
      client.setQueryData(keys.delivery(body.run.sessionId), body.run);
      return;
    case "live":
      return putLive(client, body.live);
    case "terminal":
      return putTerminal(client, body.terminal);
    case "gates":
      // The results as get_gates answers now: an answer still on its way is older.
      void client.cancelQueries({ queryKey: keys.gates(body.sessionId), exact: true });
      client.setQueryData(keys.gates(body.sessionId), body.gates);
      return;
    case "checkpoint":
      // The files changed: which results judged them did too, and the diff is another.
      void client.invalidateQueries({ queryKey: keys.gates(body.sessionId), exact: true });
      return putCheckpoint(client, body.sessionId);
    case "resync":
      reloadApp();
      void client.invalidateQueries({ queryKey: keys.workspace });
      return;
    default:
      return;
  }
}
