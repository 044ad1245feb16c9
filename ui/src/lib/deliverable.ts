// Whether a session has anything to deliver: its files changed (SessionView.changed, derived from its checkpoints until the engine sends it), when Eject is the primary action, and when a plan may be delivered anyway past its gate blockers.
import type { DeliveryPlan, SessionView } from "../api/types";

/**
 * Whether the session's working copy differs from its base. Until the engine says, a
 * checkpoint after the starting point stands for it: one is taken only after a turn that
 * changed files (a restore to the start is the case this misses).
 */
export function sessionChanged(session: SessionView): boolean {
  // An engine from before issue 15 leaves it out.
  const changed = session.changed as boolean | undefined;
  if (typeof changed === "boolean") return changed;
  return session.checkpoints.some((c) => c.sequence > 0);
}

/** "No changes yet" before any turn ended, "Restored to the start: no changes" when a restore went back past the turns' checkpoints, "The agent's turns changed no files" otherwise; null when something changed. */
export function nothingChangedText(session: SessionView): string | null {
  if (sessionChanged(session)) return null;
  const current = session.checkpoints.find((c) => c.current);
  if (current && session.checkpoints.some((c) => c.sequence > current.sequence)) {
    return "Restored to the start: no changes";
  }
  return session.usage.total.turns === 0 ? "No changes yet" : "The agent's turns changed no files";
}

export interface EjectAction {
  /** Eject is the orange primary button: there is something to deliver now. */
  primary: boolean;
  /** Why it is not (its title), or what it does. */
  reason: string;
}

/** Deliver is primary only when it can succeed: files changed, no turn running, not planning, awaiting approval or blocked, no unresolved conflict, no review asking for changes or stale. */
export function ejectAction(session: SessionView): EjectAction {
  if (session.deliveredAt || session.state === "delivered") return { primary: false, reason: "See the delivery" };
  if (session.state === "planning")
    return { primary: false, reason: "The session is still planning: nothing to deliver yet" };
  if (session.state === "awaiting-approval")
    return { primary: false, reason: "The specification awaits approval: nothing to deliver yet" };
  if (session.state === "blocked") return { primary: false, reason: "The session is blocked: clear that first" };
  if (session.running) return { primary: false, reason: "A turn is running: deliver once it ends" };
  const conflicts = session.conflicts?.length ?? 0;
  if (conflicts > 0)
    return {
      primary: false,
      reason: "Conflicts from the update from the workspace are unresolved: resolve them first",
    };
  if (session.reviews.some((r) => !r.passed && !r.stale))
    return { primary: false, reason: "The review asks for changes: nothing is delivered before it passes" };
  if (session.reviews.some((r) => r.stale))
    return { primary: false, reason: "The files changed since the review: review again before delivering" };
  const nothing = nothingChangedText(session);
  if (nothing) return { primary: false, reason: `${nothing}: nothing to deliver` };
  return { primary: true, reason: "Deliver the session's modules as code" };
}

/** The plan lands no file in any module. */
export function planIsEmpty(plan: DeliveryPlan): boolean {
  return plan.modules.every((m) => m.added.length + m.overwritten.length + m.deleted.length === 0);
}

/** The plan is blocked only by gates, which the operator may deliver past with a reason ("Deliver anyway"). */
export function canDeliverAnyway(plan: DeliveryPlan): boolean {
  return plan.blockers.length > 0 && plan.blockers.every((b) => b.overridable === true);
}
