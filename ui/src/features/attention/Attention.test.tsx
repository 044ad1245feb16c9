// Tests for the tab's title and icon and the notifications, fed by the query cache as engine `session` events write it.
import { act, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { SessionView } from "../../api/types";
import { putSession } from "../../state/cache";
import { fakeBackend, makeSession } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { Attention } from "./Attention";

const shown: { title: string; body: string }[] = [];

class FakeNotification {
  static permission = "granted";
  static requestPermission = vi.fn(async () => "granted");
  onclick: (() => void) | null = null;
  constructor(title: string, options: { body: string }) {
    shown.push({ title, body: options.body });
  }
  close() {}
}

const idle = makeSession({ title: "Wishlist", state: "review" });
const running: SessionView = { ...idle, state: "running", running: true, updatedAt: "2025-01-01T10:01:00Z" };
const done: SessionView = { ...idle, updatedAt: "2025-01-01T10:02:00Z" };

describe("Attention", () => {
  beforeEach(() => {
    shown.length = 0;
    vi.stubGlobal("Notification", FakeNotification);
    document.head.innerHTML = '<link rel="icon" href="./favicon.svg">';
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
    localStorage.clear();
    document.title = "";
  });

  it("shows the session's state in the title and icon, and notifies when its turn ends elsewhere", async () => {
    localStorage.setItem("kiln.notify", "on");
    const { client } = renderWithStore(<Attention />, fakeBackend());
    act(() => putSession(client, running));
    await waitFor(() => expect(document.title).toBe("● 1 running — Kiln"));
    expect(document.querySelector('link[rel="icon"]')?.getAttribute("href")).toBe("./favicon-running.svg");
    expect(shown).toEqual([]);

    act(() => putSession(client, done));
    await waitFor(() => expect(document.title).toBe("Kiln"));
    expect(document.querySelector('link[rel="icon"]')?.getAttribute("href")).toBe("./favicon.svg");
    expect(shown).toEqual([{ title: "Turn finished — Wishlist", body: "Ready for review." }]);
  });

  it("on the session's own page names it, and does not notify while the user looks at it", async () => {
    localStorage.setItem("kiln.notify", "on");
    window.location.hash = "#/session/s1";
    vi.spyOn(document, "hasFocus").mockReturnValue(true);
    const { client } = renderWithStore(<Attention />, fakeBackend());
    act(() => putSession(client, running));
    await waitFor(() => expect(document.title).toBe("● Running — Wishlist — Kiln"));
    act(() => putSession(client, { ...done, state: "blocked" }));
    await waitFor(() => expect(document.title).toBe("✕ Failed — Wishlist — Kiln"));
    expect(shown).toEqual([]);
  });

  it("notifies nothing unless the user turned notifications on", async () => {
    const { client } = renderWithStore(<Attention />, fakeBackend());
    act(() => putSession(client, running));
    act(() => putSession(client, done));
    await waitFor(() => expect(document.title).toBe("Kiln"));
    expect(shown).toEqual([]);
  });
});
