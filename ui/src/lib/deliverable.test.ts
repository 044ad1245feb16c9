// Tests for what a session can deliver: changed or not, the nothing-changed words, when Eject is primary, and when a plan may be delivered anyway.
import { describe, expect, it } from "vitest";
import type { Blocker, ReviewView, DeliveryPlan, SessionView } from "../api/types";
import { makeCheckpoint, makeSession, makeTotals } from "../test/fixtures";
import { canDeliverAnyway, ejectAction, nothingChangedText, sessionChanged } from "./deliverable";

const changedSession = (o: Partial<SessionView> = {}) =>
  makeSession({ state: "review", checkpoints: [makeCheckpoint(0), makeCheckpoint(1)], changed: true, ...o });
/** A session from an engine before issue 15, which does not say whether it changed. */
const older = (o: Partial<SessionView> = {}) => ({ ...makeSession(o), changed: undefined }) as unknown as SessionView;

describe("deliverable", () => {
  it("reads changed from the engine, else from a checkpoint after the start", () => {
    expect(sessionChanged(older({ checkpoints: [makeCheckpoint(0)] }))).toBe(false);
    expect(sessionChanged(older({ checkpoints: [makeCheckpoint(0), makeCheckpoint(1)] }))).toBe(true);
    expect(sessionChanged(changedSession({ changed: false }))).toBe(false);
    expect(sessionChanged(makeSession({ changed: true }))).toBe(true);
  });

  it("says no changes yet before a turn, and that the turns changed nothing after", () => {
    expect(nothingChangedText(makeSession({ changed: false }))).toBe("No changes yet");
    expect(
      nothingChangedText(makeSession({ changed: false, usage: { total: makeTotals({ turns: 2 }), byRole: [] } })),
    ).toBe("The agent's turns changed no files");
    expect(nothingChangedText(changedSession())).toBeNull();
    const restored = makeSession({
      changed: false,
      usage: { total: makeTotals({ turns: 2 }), byRole: [] },
      checkpoints: [makeCheckpoint(0, { current: true }), makeCheckpoint(1, { current: false })],
    });
    expect(nothingChangedText(restored)).toBe("Restored to the start: no changes");
  });

  it("makes Eject primary only when something can be delivered", () => {
    expect(ejectAction(changedSession()).primary).toBe(true);
    expect(ejectAction(changedSession({ state: "editing" })).primary).toBe(true);
    for (const state of ["planning", "awaiting-approval", "blocked", "delivered"] as const) {
      expect(ejectAction(changedSession({ state })).primary, state).toBe(false);
    }
    expect(ejectAction(changedSession({ running: true })).primary).toBe(false);
    expect(ejectAction(makeSession({ state: "review", changed: false })).primary).toBe(false);
    expect(ejectAction(makeSession({ state: "review", changed: false })).reason).toMatch(/No changes yet/);
    expect(ejectAction(changedSession({ conflicts: ["a.js"] })).reason).toMatch(/Conflicts from the update/);
    const review: ReviewView = {
      moduleId: "m",
      passed: true,
      stale: false,
      summary: "",
      report: "",
      createdAt: "2025-01-01T00:00:00Z",
    };
    expect(ejectAction(changedSession({ reviews: [review] })).primary).toBe(true);
    expect(ejectAction(changedSession({ reviews: [{ ...review, stale: true }] })).reason).toMatch(/review again/);
    expect(ejectAction(changedSession({ reviews: [{ ...review, passed: false }] })).primary).toBe(false);
  });

  it("offers delivering anyway only when every blocker is a gate's", () => {
    const blocker = (overridable: boolean): Blocker => ({
      code: "DELIVERY_BLOCKED",
      message: overridable ? "tests failed in @shop/cart" : "@shop/cart's review asks for changes",
      moduleId: "@shop/cart",
      paths: [],
      overridable,
    });
    const plan = (blockers: Blocker[]) => ({ blockers }) as unknown as DeliveryPlan;
    expect(canDeliverAnyway(plan([]))).toBe(false);
    expect(canDeliverAnyway(plan([blocker(true), blocker(true)]))).toBe(true);
    expect(canDeliverAnyway(plan([blocker(true), blocker(false)]))).toBe(false);
  });
});
