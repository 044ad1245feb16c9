// What a session asks of the user, for the tab title, the favicon and browser notifications: running, needs you, failed, or nothing.
import type { SessionView } from "../../api/types";
import { roleName } from "../../lib/roles";

export type Attention = "running" | "needs-you" | "failed" | null;

/**
 * A process of the session runs: a turn, its setup, or its planning (the engine counts planning
 * and setup as running; the state alone is not enough, since a stopped planner leaves it).
 */
export function isActive(session: SessionView): boolean {
  return session.running || session.setup === "running";
}

/** A turn waits for the user to answer the agent's permission request in the chat (it still runs). */
export function asksPermission(session: SessionView): boolean {
  return (session.permissions?.length ?? 0) > 0;
}

/**
 * A permission request first: the turn runs but waits on the user. Then running wins (the user can only wait); then
 * a failure (a blocked turn, a failed setup); then a wait on the user (an approval, a question or a paused chain).
 */
export function attentionOf(session: SessionView): Attention {
  if (session.deletedAt || session.archivedAt || session.rejectedAt) return null;
  if (session.deliveredAt || session.state === "delivered") return null;
  if (asksPermission(session)) return "needs-you";
  if (isActive(session)) return "running";
  if (session.state === "blocked" || session.setup === "failed") return "failed";
  if (session.state === "awaiting-approval" || session.pendingRole) return "needs-you";
  return null;
}

const MARK: Record<Exclude<Attention, null>, string> = {
  running: "● Running",
  "needs-you": "◆ Needs you",
  failed: "✕ Failed",
};

/** The most urgent of several: failed, then needs you, then running. */
export function worstOf(list: Attention[]): Attention {
  if (list.includes("failed")) return "failed";
  if (list.includes("needs-you")) return "needs-you";
  if (list.includes("running")) return "running";
  return null;
}

/**
 * The document title. On a session: its state and title ("● Running — Wishlist — Kiln").
 * Elsewhere: how many sessions of the workspace run or wait ("● 2 running — Kiln").
 */
export function documentTitle(current: SessionView | null, all: SessionView[]): string {
  if (current) {
    const name = current.title || "Untitled session";
    const attention = attentionOf(current);
    return attention ? `${MARK[attention]} — ${name} — Kiln` : `${name} — Kiln`;
  }
  const marks = all.map(attentionOf);
  const count = (a: Attention) => marks.filter((m) => m === a).length;
  const worst = worstOf(marks);
  if (!worst) return "Kiln";
  const n = count(worst);
  const word = worst === "running" ? "running" : worst === "failed" ? "failed" : n === 1 ? "needs you" : "need you";
  return `${MARK[worst].split(" ")[0]} ${n} ${word} — Kiln`;
}

/** The favicon variant: the flame with a coloured dot, or the plain flame. */
export function faviconOf(current: SessionView | null, all: SessionView[]): Attention {
  return current ? attentionOf(current) : worstOf(all.map(attentionOf));
}

export interface NotificationText {
  title: string;
  body: string;
  /** One notification per session and kind: a newer one replaces it. */
  tag: string;
}

/** What to tell the user when a session went from `before` to `after`, or null. */
export function notificationFor(before: SessionView, after: SessionView): NotificationText | null {
  const was = attentionOf(before);
  const now = attentionOf(after);
  const name = after.title || "Untitled session";
  const tag = `kiln-${after.id}`;
  if (now === "failed" && was !== "failed") {
    return {
      title: `Failed — ${name}`,
      body:
        after.setup === "failed"
          ? "The working copy's setup failed."
          : "The turn failed: the session is blocked. Open it to retry.",
      tag,
    };
  }
  const newRequest = (after.permissions ?? []).some((c) => !(before.permissions ?? []).some((b) => b.id === c.id));
  if (
    now === "needs-you" &&
    (was !== "needs-you" || (after.pendingRole !== before.pendingRole && after.pendingRole) || newRequest)
  ) {
    const body = asksPermission(after)
      ? "The agent asks your permission: answer it in the chat."
      : after.state === "awaiting-approval"
        ? "A specification waits for your approval."
        : `${after.pendingRole ? roleName(after.pendingRole) : "The agent"} is waiting for your answer.`;
    return { title: `Needs you — ${name}`, body, tag };
  }
  if (was === "running" && now === null) {
    return {
      title: `Turn finished — ${name}`,
      body: after.state === "review" ? "Ready for review." : "The agent has finished.",
      tag,
    };
  }
  return null;
}
