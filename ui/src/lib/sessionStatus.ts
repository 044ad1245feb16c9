// A session's status for the session sidebar's dot: running, needs you (approval, a question, blocked), failed, or idle.
import type { LiveView, SessionView } from "../api/types";

export type SessionStatus = "running" | "needs-you" | "failed" | "idle";

export const STATUS_LABEL: Record<SessionStatus, string> = {
  running: "running",
  "needs-you": "needs you",
  failed: "failed",
  idle: "idle",
};

/**
 * What the user should know at a glance: a failure the provider reported (the live view), a running process, a failed
 * setup, then a wait on the user. `live`: the session's live view from events, when there is one.
 */
export function sessionStatus(session: SessionView, live: LiveView | null = null): SessionStatus {
  if (live?.status?.kind === "failed") return "failed";
  // The turn runs, but waits for the user to answer the agent's permission request.
  if ((session.permissions?.length ?? 0) > 0) return "needs-you";
  if (session.running || session.setup === "running") return "running";
  if (session.setup === "failed") return "failed";
  if (session.deliveredAt || session.state === "delivered") return "idle";
  if (session.state === "awaiting-approval" || session.state === "blocked") return "needs-you";
  // An agent asked a question, or a chain paused: the next message is awaited.
  if (session.pendingRole) return "needs-you";
  return "idle";
}
