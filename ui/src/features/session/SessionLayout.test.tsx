// Tests for the session screen's layout: the session rail and its status dots, the details drawer on a narrow window,
// the composer belonging to the Chat tab, and the preview docked beside the chat (resizable) or as its own tab.
import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { fakeBackend, makePreview, makeSession } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { SessionScreen } from "./SessionScreen";
import { initials } from "./SessionSidebar";

const session = makeSession({ id: "s1", title: "Add coupons", state: "editing", setup: "passed" });
const others = [
  makeSession({ id: "s2", title: "Approve me", state: "awaiting-approval", createdAt: "2025-01-02T10:00:00Z" }),
  makeSession({ id: "s3", title: "Busy one", running: true, createdAt: "2025-01-03T10:00:00Z" }),
  makeSession({ id: "s4", title: "Broken setup", setup: "failed", createdAt: "2025-01-04T10:00:00Z" }),
  makeSession({ id: "s5", title: "Shelved", archivedAt: "2025-01-05T10:00:00Z", createdAt: "2025-01-05T10:00:00Z" }),
];

function setup(handlers: Parameters<typeof fakeBackend>[0] = {}) {
  const backend = fakeBackend({
    get_session: () => session,
    get_transcript: () => [],
    list_sessions: () => [session, ...others],
    get_diff: () => ({ modules: [] }),
    start_preview: () => makePreview(),
    stop_preview: () => makePreview({ state: "stopped", origin: null, enterUrl: null, message: "stopped" }),
    ...handlers,
  });
  renderWithStore(<SessionScreen sessionId="s1" />, backend);
  return backend;
}

/** A window narrower than 1100 px: matchMedia answers the session's narrow query. */
function narrowWindow() {
  vi.stubGlobal(
    "matchMedia",
    (query: string) =>
      ({
        matches: query.includes("max-width: 1099px"),
        media: query,
        addEventListener: () => {},
        removeEventListener: () => {},
      }) as unknown as MediaQueryList,
  );
}

afterEach(() => {
  vi.unstubAllGlobals();
  localStorage.clear();
});

describe("session layout", () => {
  it("the rail lists the open sessions with their status, marks the current one and folds", async () => {
    const backend = setup();
    const rail = await screen.findByTestId("session-rail");
    await waitFor(() => expect(within(rail).getAllByTestId("rail-session")).toHaveLength(4));
    const items = within(rail).getAllByTestId("rail-session");
    expect(items.map((i) => [i.dataset.sessionId, i.dataset.status])).toEqual([
      ["s4", "failed"],
      ["s3", "running"],
      ["s2", "needs-you"],
      ["s1", "idle"],
    ]);
    expect(items[3]).toHaveAttribute("aria-current", "page");
    expect(items[2]).toHaveAttribute("href", "#/session/s2");
    expect(items[2]).toHaveAccessibleName(/Approve me.*needs you/);

    // A session event changes its dot at once.
    act(() =>
      backend.emit({
        id: 40,
        at: "",
        body: { type: "session", session: { ...others[0], state: "editing", updatedAt: "2025-01-09T00:00:00Z" } },
      }),
    );
    await waitFor(() =>
      expect(within(rail).getByText("Approve me").closest("a")).toHaveAttribute("data-status", "idle"),
    );
    // A provider failure in another session's live view turns its dot red at once.
    const status = {
      kind: "failed" as const,
      message: "401 Unauthorized",
      attempt: null,
      maxAttempts: null,
      reason: "auth" as const,
      httpStatus: 401,
    };
    act(() =>
      backend.emit({
        id: 41,
        at: "",
        body: { type: "live", live: { sessionId: "s3", phase: "turn", role: null, module: null, text: null, status } },
      }),
    );
    await waitFor(() =>
      expect(within(rail).getByText("Busy one").closest("a")).toHaveAttribute("data-status", "failed"),
    );

    fireEvent.click(within(rail).getByTestId("session-rail-toggle"));
    expect(rail).toHaveClass("session-rail-collapsed");
    expect(within(rail).getByTestId("session-rail-toggle")).toHaveAttribute("aria-expanded", "false");
    // Folded, the sessions are told apart by their initials, each with its status dot.
    expect(within(rail).getAllByTestId("rail-initials")).toHaveLength(4);
    expect(within(rail).getByText("AM").querySelector(".status-dot")).toHaveClass("status-idle");
    expect(within(rail).getByText("BO").querySelector(".status-dot")).toHaveClass("status-failed");
    expect([initials("Fix the cart"), initials("  — "), initials("3 bugs in über")]).toEqual(["C", "?", "3B"]);
    // Sessions that start alike ("Add a …") still differ by what they change.
    expect([initials("Add a coupon helper to @shop/cart"), initials("Add a wishlist to @shop/catalog")]).toEqual([
      "CH",
      "WS",
    ]);
    expect(initials("Add the")).toBe("AT");
  });

  it("on a narrow window the details move into a drawer opened from the header", async () => {
    narrowWindow();
    setup();
    await screen.findByRole("heading", { name: "Add coupons" });
    expect(screen.queryByTestId("session-side")).toBeNull();
    expect(screen.getByTestId("session-rail")).toHaveClass("session-rail-collapsed");

    const button = screen.getByTestId("details-button");
    button.focus();
    fireEvent.click(button);
    const drawer = screen.getByRole("dialog", { name: "Session details" });
    expect(within(drawer).getByTestId("session-modules")).toBeInTheDocument();
    expect(within(drawer).getByTestId("usage")).toBeInTheDocument();
    fireEvent.keyDown(drawer, { key: "Escape" });
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(button).toHaveFocus();
  });

  it("on a wide window the details sit beside the work, with no Details button", async () => {
    setup();
    expect(await screen.findByTestId("session-side")).toHaveTextContent("Checkpoints");
    expect(screen.queryByTestId("details-button")).toBeNull();
  });

  it("the composer belongs to the Chat tab", async () => {
    setup();
    const composer = await screen.findByTestId("composer");
    expect(composer.closest("[hidden]")).toBeNull();
    fireEvent.click(screen.getByTestId("tab-changes"));
    expect(composer.closest("[hidden]")).not.toBeNull();
    fireEvent.click(screen.getByTestId("tab-chat"));
    expect(composer.closest("[hidden]")).toBeNull();
  });

  it("the preview docks beside the chat with a divider the keyboard moves, remembered", async () => {
    setup();
    const composer = await screen.findByTestId("composer");
    fireEvent.click(await screen.findByTestId("preview-button"));
    const card = await screen.findByTestId("preview-card");
    expect(card).toHaveAttribute("data-layout", "split");
    const divider = screen.getByRole("separator", { name: "Resize the preview" });
    expect(divider).toHaveAttribute("aria-valuenow", "45");
    fireEvent.keyDown(divider, { key: "ArrowLeft" });
    expect(divider).toHaveAttribute("aria-valuenow", "47");
    fireEvent.keyDown(divider, { key: "ArrowRight", shiftKey: true });
    expect(divider).toHaveAttribute("aria-valuenow", "37");
    fireEvent.keyDown(divider, { key: "End" });
    expect(divider).toHaveAttribute("aria-valuenow", "25");
    expect(localStorage.getItem("kiln.preview.width")).toBe("0.25");
    // The chat stays beside it, the same one (not made again: its draft and scroll are kept).
    expect(screen.getByTestId("composer")).toBe(composer);
    expect(composer.closest("[hidden]")).toBeNull();
    // The details give their column to the preview and open from the header.
    expect(screen.queryByTestId("session-side")).toBeNull();
    fireEvent.click(screen.getByTestId("details-button"));
    expect(
      within(screen.getByRole("dialog", { name: "Session details" })).getByTestId("session-modules"),
    ).toBeInTheDocument();
  });

  it("the preview can fill its own tab, and back; closing it removes the tab", async () => {
    setup();
    fireEvent.click(await screen.findByTestId("preview-button"));
    await screen.findByTestId("preview-card");
    fireEvent.click(screen.getByTestId("preview-layout"));

    const tab = screen.getByTestId("tab-preview");
    expect(tab).toHaveAttribute("aria-selected", "true");
    expect(screen.getByTestId("preview-card")).toHaveAttribute("data-layout", "tab");
    expect(screen.queryByTestId("split-divider")).toBeNull();
    expect(screen.getByTestId("composer").closest("[hidden]")).not.toBeNull();
    expect(localStorage.getItem("kiln.preview.layout")).toBe("tab");

    fireEvent.click(screen.getByTestId("tab-chat"));
    expect(screen.getByTestId("preview-card").closest("[hidden]")).not.toBeNull();
    fireEvent.click(screen.getByTestId("tab-preview"));

    // Through the More menu (the narrow toolbar's), back beside the chat.
    fireEvent.click(screen.getByTestId("preview-more"));
    fireEvent.click(within(screen.getByTestId("preview-menu")).getByTestId("preview-menu-layout"));
    expect(screen.getByTestId("preview-card")).toHaveAttribute("data-layout", "split");
    expect(screen.queryByTestId("tab-preview")).toBeNull();
    expect(screen.getByTestId("tab-chat")).toHaveAttribute("aria-selected", "true");

    fireEvent.click(screen.getByTestId("preview-layout"));
    fireEvent.click(screen.getByTestId("preview-close"));
    await waitFor(() => expect(screen.queryByTestId("preview-card")).toBeNull());
    expect(screen.queryByTestId("tab-preview")).toBeNull();
    expect(screen.getByTestId("tab-chat")).toHaveAttribute("aria-selected", "true");
  });

  it("the tabs follow the arrow keys, Home and End", async () => {
    setup();
    const chat = await screen.findByTestId("tab-chat");
    fireEvent.keyDown(chat, { key: "End" });
    expect(screen.getByTestId("tab-gates")).toHaveAttribute("aria-selected", "true");
    expect(screen.getByTestId("tab-gates")).toHaveFocus();
    fireEvent.keyDown(screen.getByTestId("tab-gates"), { key: "ArrowRight" });
    expect(chat).toHaveAttribute("aria-selected", "true");
    fireEvent.keyDown(chat, { key: "ArrowLeft" });
    expect(screen.getByTestId("tab-gates")).toHaveAttribute("aria-selected", "true");
    fireEvent.keyDown(screen.getByTestId("tab-gates"), { key: "Home" });
    expect(chat).toHaveAttribute("aria-selected", "true");
  });

  it("a narrow window opens the preview as a tab unless a choice was remembered", async () => {
    narrowWindow();
    setup();
    fireEvent.click(await screen.findByTestId("preview-button"));
    expect(await screen.findByTestId("tab-preview")).toHaveAttribute("aria-selected", "true");
  });
});
