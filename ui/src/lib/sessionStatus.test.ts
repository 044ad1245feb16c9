// Tests for the session sidebar's status dot.
import { describe, expect, it } from "vitest";
import { makePermissionCard, makeSession } from "../test/fixtures";
import { sessionStatus } from "./sessionStatus";

describe("sessionStatus", () => {
  it("running wins over everything", () => {
    expect(sessionStatus(makeSession({ running: true, state: "awaiting-approval" }))).toBe("running");
    expect(sessionStatus(makeSession({ setup: "running" }))).toBe("running");
  });

  it("a failed setup is failed, and so is a turn the provider failed, even while its process winds down", () => {
    expect(sessionStatus(makeSession({ setup: "failed", state: "editing" }))).toBe("failed");
    const status = {
      kind: "failed" as const,
      message: "401",
      attempt: null,
      maxAttempts: null,
      reason: "auth" as const,
      httpStatus: 401,
    };
    const live = { sessionId: "s1", phase: "turn" as const, role: null, module: null, text: null, status };
    expect(sessionStatus(makeSession({ running: true }), live)).toBe("failed");
    expect(sessionStatus(makeSession({ running: true }), { ...live, status: { ...status, kind: "retrying" } })).toBe(
      "running",
    );
  });

  it("a running turn waiting on a permission request needs the user", () => {
    const card = makePermissionCard();
    expect(sessionStatus(makeSession({ running: true, state: "running", permissions: [card] }))).toBe("needs-you");
    expect(sessionStatus(makeSession({ running: true, state: "running", permissions: [] }))).toBe("running");
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
