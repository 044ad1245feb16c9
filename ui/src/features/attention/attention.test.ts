// Tests for what the tab shows and what is notified: a session's attention, the document title, the favicon variant, and the transitions that notify.
import { describe, expect, it } from "vitest";
import { makePermissionCard, makeSession } from "../../test/fixtures";
import { attentionOf, documentTitle, faviconOf, notificationFor } from "./attention";
import { faviconHref } from "./favicon";

const idle = makeSession({ title: "Wishlist", state: "review" });
const running = { ...idle, state: "running" as const, running: true };

describe("attentionOf", () => {
  it("tells running, failed and needs-you apart, running first", () => {
    expect(attentionOf(idle)).toBeNull();
    expect(attentionOf(running)).toBe("running");
    expect(attentionOf({ ...idle, state: "planning", running: true })).toBe("running");
    expect(attentionOf({ ...idle, setup: "running" })).toBe("running");
    expect(attentionOf({ ...idle, state: "blocked" })).toBe("failed");
    expect(attentionOf({ ...idle, setup: "failed" })).toBe("failed");
    expect(attentionOf({ ...idle, state: "awaiting-approval" })).toBe("needs-you");
    expect(attentionOf({ ...idle, pendingRole: "ux-designer" })).toBe("needs-you");
    expect(attentionOf({ ...idle, state: "blocked", running: true })).toBe("running");
  });

  it("needs the user while a running turn waits on a permission request, and notifies each new request", () => {
    const card = makePermissionCard({ why: "The command policy does not decide fetches." });
    const asking = { ...running, permissions: [card] };
    expect(attentionOf(asking)).toBe("needs-you");
    expect(notificationFor(running, asking)?.body).toBe("The agent asks your permission: answer it in the chat.");
    expect(notificationFor(asking, asking)).toBeNull();
    const again = { ...running, permissions: [card, { ...card, id: "req-2" }] };
    expect(notificationFor(asking, again)?.title).toBe("Needs you — Wishlist");
    expect(notificationFor(asking, running)).toBeNull();
  });

  it("asks nothing of shelved or delivered sessions", () => {
    expect(attentionOf({ ...idle, state: "blocked", archivedAt: "2025-01-02T00:00:00Z" })).toBeNull();
    expect(attentionOf({ ...idle, state: "delivered" })).toBeNull();
  });
});

describe("documentTitle", () => {
  it("names the session and its state on a session", () => {
    expect(documentTitle(running, [running])).toBe("● Running — Wishlist — Kiln");
    expect(documentTitle({ ...idle, state: "awaiting-approval" }, [])).toBe("◆ Needs you — Wishlist — Kiln");
    expect(documentTitle({ ...idle, state: "blocked" }, [])).toBe("✕ Failed — Wishlist — Kiln");
    expect(documentTitle(idle, [idle])).toBe("Wishlist — Kiln");
    expect(documentTitle({ ...idle, title: "" }, [])).toBe("Untitled session — Kiln");
  });

  it("counts the most urgent state elsewhere", () => {
    expect(documentTitle(null, [])).toBe("Kiln");
    expect(documentTitle(null, [idle])).toBe("Kiln");
    expect(documentTitle(null, [running, { ...running, id: "s2" }, idle])).toBe("● 2 running — Kiln");
    expect(documentTitle(null, [running, { ...idle, id: "s2", state: "awaiting-approval" }])).toBe(
      "◆ 1 needs you — Kiln",
    );
    expect(documentTitle(null, [running, { ...idle, id: "s2", state: "blocked" }])).toBe("✕ 1 failed — Kiln");
  });
});

describe("the favicon", () => {
  it("has a dot coloured by the state, and is the page's own icon otherwise", () => {
    expect(faviconOf(running, [])).toBe("running");
    expect(faviconOf(null, [idle, { ...idle, id: "s2", state: "blocked" }])).toBe("failed");
    expect(faviconOf(idle, [running])).toBeNull();
    expect(faviconHref(null)).toBeNull();
    expect(faviconHref("failed")).toBe("./favicon-failed.svg");
    expect(faviconHref("running", "/ui/favicon.svg")).toBe("/ui/favicon-running.svg");
    expect(faviconHref("needs-you")).toBe("./favicon-needs-you.svg");
  });
});

describe("notificationFor", () => {
  it("notifies when a turn ends, when the session needs the user, and when it fails", () => {
    expect(notificationFor(running, idle)).toMatchObject({
      title: "Turn finished — Wishlist",
      body: "Ready for review.",
    });
    expect(notificationFor(running, { ...idle, state: "awaiting-approval" })?.title).toBe("Needs you — Wishlist");
    expect(notificationFor(running, { ...idle, pendingRole: "ux-designer" })?.body).toBe(
      "UX Designer is waiting for your answer.",
    );
    expect(notificationFor(running, { ...idle, state: "blocked" })?.title).toBe("Failed — Wishlist");
  });

  it("stays quiet when nothing changed for the user", () => {
    expect(notificationFor(idle, idle)).toBeNull();
    expect(notificationFor(idle, running)).toBeNull();
    expect(notificationFor(running, { ...running, updatedAt: "2025-01-02T00:00:00Z" })).toBeNull();
    expect(notificationFor({ ...idle, state: "blocked" }, { ...idle, state: "blocked", updatedAt: "x" })).toBeNull();
  });
});
