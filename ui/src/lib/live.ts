// The engine's live activity for a session (its streaming prose and one status line) and the words the chat shows for it.

// Local copies of the engine's `LiveView`/`LiveStatus` (src-tauri/engine/src/api/types.rs) until ui/src/api/types.ts carries them.
export interface LiveStatus {
  kind: "retrying" | "failed";
  /** Words for people, e.g. "The model provider is overloaded (529)". */
  message: string;
  attempt: number | null;
  maxAttempts: number | null;
  /** `auth`, `rate-limit`, `overloaded`, `network` or `other`. */
  reason: string;
  httpStatus: number | null;
}

export interface LiveView {
  sessionId: string;
  phase: "planning" | "setup" | "turn";
  role: string | null;
  module: string | null;
  /** The agent's prose so far, not yet in the transcript. */
  text: string | null;
  status: LiveStatus | null;
}

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
  return Boolean(live && ((live.text && live.text.trim()) || live.status));
}
