// Tests for what a session can deliver: changed or not, the nothing-changed words, and when Eject is primary.
import { describe, expect, it } from "vitest";
import type { SessionView } from "../api/types";
import { makeCheckpoint, makeSession, makeTotals } from "../test/fixtures";
import { ejectAction, nothingChangedText, sessionChanged } from "./deliverable";

const changedSession = (o: Partial<SessionView> = {}) => makeSession({ state: "review", checkpoints: [makeCheckpoint(0), makeCheckpoint(1)], ...o });

describe("deliverable", () => {
  it("reads changed from the engine, else from a checkpoint after the start", () => {
    expect(sessionChanged(makeSession({ checkpoints: [makeCheckpoint(0)] }))).toBe(false);
    expect(sessionChanged(changedSession())).toBe(true);
    expect(sessionChanged({ ...changedSession(), changed: false } as SessionView)).toBe(false);
    expect(sessionChanged({ ...makeSession(), changed: true } as SessionView)).toBe(true);
  });

  it("says no changes yet before a turn, and that the turns changed nothing after", () => {
    expect(nothingChangedText(makeSession())).toBe("No changes yet");
    expect(nothingChangedText(makeSession({ usage: { total: makeTotals({ turns: 2 }), byRole: [] } }))).toBe("The agent's turns changed no files");
    expect(nothingChangedText(changedSession())).toBeNull();
  });

  it("makes Eject primary only when something can be delivered", () => {
    expect(ejectAction(changedSession()).primary).toBe(true);
    expect(ejectAction(changedSession({ state: "editing" })).primary).toBe(true);
    for (const state of ["planning", "awaiting-approval", "blocked", "delivered"] as const) {
      expect(ejectAction(changedSession({ state })).primary, state).toBe(false);
    }
    expect(ejectAction(changedSession({ running: true })).primary).toBe(false);
    expect(ejectAction(makeSession({ state: "review" })).primary).toBe(false);
    expect(ejectAction(makeSession({ state: "review" })).reason).toMatch(/No changes yet/);
  });
});
