// Tests for the session sidebar's status dot.
import { describe, expect, it } from "vitest";
import { makeSession } from "../test/fixtures";
import { sessionStatus } from "./sessionStatus";

describe("sessionStatus", () => {
  it("running wins over everything", () => {
    expect(sessionStatus(makeSession({ running: true, state: "awaiting-approval" }))).toBe("running");
    expect(sessionStatus(makeSession({ setup: "running" }))).toBe("running");
  });

  it("a failed setup is failed", () => {
    expect(sessionStatus(makeSession({ setup: "failed", state: "editing" }))).toBe("failed");
  });

  it("approval, a blocked session and a question need the user", () => {
    expect(sessionStatus(makeSession({ state: "awaiting-approval" }))).toBe("needs-you");
    expect(sessionStatus(makeSession({ state: "blocked" }))).toBe("needs-you");
    expect(sessionStatus(makeSession({ state: "editing", pendingRole: "backend-engineer" }))).toBe("needs-you");
  });

  it("anything else is idle, delivered included", () => {
    expect(sessionStatus(makeSession({ state: "review" }))).toBe("idle");
    expect(sessionStatus(makeSession({ state: "delivered", deliveredAt: "2025-01-01T12:00:00Z" }))).toBe("idle");
  });
});
