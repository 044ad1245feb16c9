// The engine's live activity for a session (its streaming prose and one status line) and the words the chat shows for it.
import type { LiveStatus, LiveView } from "../api/types";

export type { LiveStatus, LiveView };

/** One line for the status: "The model provider is overloaded (529) — retry 3 of 10". */
export function liveStatusLine(status: LiveStatus): string {
  const message = status.message.trim().replace(/\.$/, "");
  if (status.kind !== "retrying") return message;
  if (status.attempt === null) return `${message} — retrying`;
  const of = status.maxAttempts !== null ? ` of ${status.maxAttempts}` : "";
  return `${message} — retry ${status.attempt}${of}`;
}

/** Danger for what needs the user (refused credentials, a failure that ended the phase); a warning while it retries. */
export function liveStatusTone(status: LiveStatus): "danger" | "warn" {
  return status.kind === "failed" || status.reason === "auth" ? "danger" : "warn";
}

/** The live view has something to show. */
export function liveShows(live: LiveView | null | undefined): live is LiveView {
  return Boolean(live && (live.text?.trim() || live.status));
}
