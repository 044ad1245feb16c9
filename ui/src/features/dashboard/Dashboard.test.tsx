// Tests for the dashboard: rows from the backend, lifecycle actions and their args, the archived toggle, workspace usage, when a session was delivered.
import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { fakeBackend, makeSession, makeTotals } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { Dashboard } from "./Dashboard";

const sessions = [
  makeSession({ id: "s1", title: "Add coupons", createdAt: "2025-01-01T10:00:00Z" }),
  makeSession({
    id: "s2",
    title: "Rate limit the API",
    state: "review",
    createdAt: "2025-01-02T10:00:00Z",
    modules: [
      { id: "@shop/api", directory: "modules/api", kind: "new", joinedAt: "2025-01-02T10:00:00Z", baseSequence: 0 },
    ],
  }),
];

describe("Dashboard", () => {
  it("renders one row per session, newest first, with modules, badges and times", async () => {
    const backend = fakeBackend({ list_sessions: () => sessions });
    renderWithStore(<Dashboard />, backend);

    const rows = await screen.findAllByTestId("session-row");
    expect(rows).toHaveLength(2);
    expect(rows[0]).toHaveTextContent("Rate limit the API");
    expect(rows[0]).toHaveTextContent("@shop/api");
    expect(within(rows[0]).getByTestId("state-badge")).toHaveTextContent("Review");
    expect(rows[1]).toHaveTextContent("Add coupons");
    const time = rows[1].querySelector("time")!;
    expect(time.getAttribute("datetime")).toBe("2025-01-01T10:00:00Z");
    expect(time.getAttribute("title")).toContain("2025");
    expect(screen.getByText("shop")).toBeInTheDocument();
    expect(backend.call).toHaveBeenCalledWith("list_sessions", {});
  });

  it("archives a session with the right args and updates the row", async () => {
    const backend = fakeBackend({
      list_sessions: () => sessions,
      archive_session: (args) =>
        makeSession({ id: args.sessionId, title: "Add coupons", archivedAt: "2025-01-03T00:00:00Z" }),
    });
    renderWithStore(<Dashboard />, backend);
    const row = (await screen.findAllByTestId("session-row")).find((r) => r.textContent?.includes("Add coupons"))!;

    fireEvent.click(within(row).getByTestId("archive"));

    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("archive_session", { sessionId: "s1" }));
    // Archived sessions are hidden unless "Show archived" is on.
    await waitFor(() => expect(screen.getAllByTestId("session-row")).toHaveLength(1));
    expect(window.location.hash).toBe("");
  });

  it("asks before deleting, with Keep transcript on by default", async () => {
    const backend = fakeBackend({ list_sessions: () => [sessions[0]], delete_session: () => null });
    renderWithStore(<Dashboard />, backend);
    const row = await screen.findByTestId("session-row");

    fireEvent.click(within(row).getByTestId("delete"));
    const dialog = screen.getByRole("dialog", { name: "Delete session?" });
    expect(within(dialog).getByLabelText("Keep transcript")).toBeChecked();
    fireEvent.click(within(dialog).getByTestId("confirm"));

    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("delete_session", { sessionId: "s1", keepTranscript: true }),
    );
    await waitFor(() => expect(screen.queryByTestId("session-row")).not.toBeInTheDocument());
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
  });

  it("rejects only after confirmation and shows an engine error with its code", async () => {
    const backend = fakeBackend({
      list_sessions: () => [makeSession({ running: true })],
      reject_session: () => {
        throw { code: "SESSION_RUNNING", message: "The agent is still running" };
      },
    });
    renderWithStore(<Dashboard />, backend);
    const row = await screen.findByTestId("session-row");

    fireEvent.click(within(row).getByTestId("reject"));
    expect(backend.call).not.toHaveBeenCalledWith("reject_session", expect.anything());
    fireEvent.click(screen.getByTestId("confirm"));

    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("reject_session", { sessionId: "s1", stop: true }));
    const error = await screen.findByTestId("error");
    expect(error).toHaveTextContent("The agent is still running");
    expect(error).toHaveTextContent("SESSION_RUNNING");
  });

  it("asks to stop and archive when the engine says the session is running", async () => {
    const backend = fakeBackend({
      list_sessions: () => [sessions[0]],
      archive_session: (args) => {
        if (!args.stop) throw { code: "SESSION_RUNNING", message: "session s1 is running" };
        return makeSession({ archivedAt: "2025-01-03T00:00:00Z" });
      },
    });
    renderWithStore(<Dashboard />, backend);
    fireEvent.click(within(await screen.findByTestId("session-row")).getByTestId("archive"));

    const dialog = await screen.findByRole("dialog", { name: "Archive session?" });
    expect(screen.queryByTestId("error")).not.toBeInTheDocument();
    fireEvent.click(within(dialog).getByTestId("confirm"));
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("archive_session", { sessionId: "s1", stop: true }));
    await waitFor(() => expect(screen.queryByTestId("session-row")).not.toBeInTheDocument());
  });

  it("removes a deleted session's tombstone for good (keepTranscript: false)", async () => {
    const tombstone = makeSession({ deletedAt: "2025-01-04T00:00:00Z" });
    const backend = fakeBackend({ list_sessions: () => [tombstone], delete_session: () => null });
    renderWithStore(<Dashboard />, backend);
    fireEvent.click(await screen.findByTestId("show-archived"));
    const row = await screen.findByTestId("session-row");
    expect(within(row).getByTestId("lifecycle-badge")).toHaveTextContent("Deleted");
    expect(within(row).queryByTestId("restore")).not.toBeInTheDocument();

    fireEvent.click(within(row).getByTestId("delete"));
    fireEvent.click(within(screen.getByRole("dialog")).getByTestId("confirm"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("delete_session", { sessionId: "s1", keepTranscript: false }),
    );
  });

  it("refetches with includeArchived and offers Restore on archived rows", async () => {
    const archived = makeSession({ id: "s3", title: "Old idea", archivedAt: "2025-01-05T00:00:00Z" });
    const backend = fakeBackend({
      list_sessions: (args) => (args.includeArchived ? [sessions[0], archived] : [sessions[0]]),
      restore_session: (args) => makeSession({ id: args.sessionId, title: "Old idea" }),
    });
    renderWithStore(<Dashboard />, backend);
    await screen.findByTestId("session-row");

    const toggle = screen.getByLabelText("Show archived");
    expect(toggle).toBe(screen.getByTestId("show-archived"));
    fireEvent.click(toggle);

    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("list_sessions", { includeArchived: true }));
    const row = (await screen.findAllByTestId("session-row")).find((r) => r.textContent?.includes("Old idea"))!;
    expect(within(row).getByTestId("lifecycle-badge")).toHaveTextContent("Archived");
    expect(within(row).queryByTestId("archive")).not.toBeInTheDocument();
    fireEvent.click(within(row).getByTestId("restore"));
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("restore_session", { sessionId: "s3" }));
  });

  it("explains sessions when there are none, and opens a row on click", async () => {
    const backend = fakeBackend({ list_sessions: () => [] });
    renderWithStore(<Dashboard />, backend);
    expect(await screen.findByTestId("empty")).toHaveTextContent("A session is one change to your codebase");

    backend.emit({ id: 1, at: "2025-01-01T00:00:00Z", body: { type: "session", session: sessions[0] } });
    fireEvent.click(await screen.findByTestId("session-row"));
    expect(window.location.hash).toBe("#/session/s1");
  });

  it("shows a list error with its code", async () => {
    const backend = fakeBackend({
      list_sessions: () => {
        throw { code: "WORKSPACE_NOT_OPEN", message: "No workspace is open" };
      },
    });
    renderWithStore(<Dashboard />, backend);
    const error = await screen.findByTestId("error");
    expect(error).toHaveTextContent("No workspace is open");
    expect(error).toHaveTextContent("WORKSPACE_NOT_OPEN");
  });

  it("shows each row's tokens and cost, never an unknown cost as $0", async () => {
    const backend = fakeBackend({
      list_sessions: () => [
        makeSession({
          id: "a",
          title: "Known",
          usage: {
            total: makeTotals({ turns: 2, inputTokens: 12_000, outputTokens: 300, costUsd: 0.0123 }),
            byRole: [],
          },
        }),
        makeSession({
          id: "b",
          title: "Unknown",
          createdAt: "2024-12-01T00:00:00Z",
          usage: {
            total: makeTotals({ turns: 1, inputTokens: 900, outputTokens: 50, costUsd: null, unknownCostTurns: 1 }),
            byRole: [],
          },
        }),
        makeSession({ id: "c", title: "Fresh", createdAt: "2024-11-01T00:00:00Z" }),
      ],
    });
    renderWithStore(<Dashboard />, backend);
    const rows = await screen.findAllByTestId("session-row");
    expect(within(rows[0]).getByTestId("row-usage")).toHaveTextContent("12.3k tok · $0.0123");
    expect(within(rows[1]).getByTestId("row-usage")).toHaveTextContent("950 tok · unknown");
    expect(within(rows[2]).queryByTestId("row-usage")).not.toBeInTheDocument();
  });

  it("shows the workspace's total usage in the header, never an unknown cost as free", async () => {
    const backend = fakeBackend({
      list_sessions: () => sessions,
      workspace_usage: () => ({
        total: makeTotals({ turns: 4, inputTokens: 20_000, outputTokens: 1_000, costUsd: 0.5, unknownCostTurns: 1 }),
        byRole: [
          {
            role: "backend-engineer",
            usage: makeTotals({
              turns: 4,
              inputTokens: 20_000,
              outputTokens: 1_000,
              costUsd: 0.5,
              unknownCostTurns: 1,
            }),
          },
        ],
      }),
    });
    renderWithStore(<Dashboard />, backend);
    const usage = await screen.findByTestId("workspace-usage");
    await waitFor(() => expect(usage).toHaveTextContent("Usage: 4 turns · 21k tok · $0.5000 + unknown"));
    expect(usage.getAttribute("title")).toContain("Backend Engineer");
    expect(usage.getAttribute("title")).toContain("reported no cost");
    expect(backend.call).toHaveBeenCalledWith("workspace_usage", {});
  });

  it("shows an all-unknown workspace cost as unknown, and no turns as such", async () => {
    const backend = fakeBackend({
      workspace_usage: () => ({
        total: makeTotals({ turns: 2, inputTokens: 900, outputTokens: 50, costUsd: null, unknownCostTurns: 2 }),
        byRole: [],
      }),
    });
    const { unmount } = renderWithStore(<Dashboard />, backend);
    await waitFor(() => expect(screen.getByTestId("workspace-usage")).toHaveTextContent("2 turns · 950 tok · unknown"));
    expect(screen.getByTestId("workspace-usage")).not.toHaveTextContent("$0");
    unmount();

    renderWithStore(<Dashboard />, fakeBackend());
    expect(await screen.findByTestId("workspace-usage")).toHaveTextContent("Usage: no turns yet");
  });

  it("fetches the workspace usage again, once, after sessions' usage changes", async () => {
    let cost = 0.01;
    const backend = fakeBackend({
      list_sessions: () => [sessions[0]],
      workspace_usage: () => ({
        total: makeTotals({ turns: 1, inputTokens: 100, outputTokens: 0, costUsd: cost }),
        byRole: [],
      }),
    });
    renderWithStore(<Dashboard />, backend);
    await waitFor(() => expect(screen.getByTestId("workspace-usage")).toHaveTextContent("$0.0100"));
    const fetches = () => backend.call.mock.calls.filter((c) => c[0] === "workspace_usage").length;
    // Once on mount, once more after the list's first load settles.
    await waitFor(() => expect(fetches()).toBe(2), { timeout: 3000 });

    cost = 0.02;
    const at = "2025-01-03T00:00:00Z";
    const used = (turns: number) => ({
      total: makeTotals({ turns, inputTokens: 100 * turns, costUsd: cost }),
      byRole: [],
    });
    act(() => {
      backend.emit({ id: 1, at, body: { type: "session", session: { ...sessions[0], running: true, updatedAt: at } } });
      backend.emit({
        id: 2,
        at,
        body: { type: "session", session: { ...sessions[0], usage: used(1), updatedAt: at } },
      });
      backend.emit({
        id: 3,
        at,
        body: { type: "session", session: { ...sessions[0], usage: used(2), updatedAt: at } },
      });
    });
    await waitFor(() => expect(screen.getByTestId("workspace-usage")).toHaveTextContent("$0.0200"), { timeout: 3000 });
    expect(fetches()).toBe(3);
  });

  it("says the usage is unavailable when workspace_usage fails, without hiding the sessions", async () => {
    const backend = fakeBackend({
      list_sessions: () => sessions,
      workspace_usage: () => {
        throw { code: "INTERNAL", message: "database is locked" };
      },
    });
    renderWithStore(<Dashboard />, backend);
    expect(await screen.findAllByTestId("session-row")).toHaveLength(2);
    const usage = await screen.findByTestId("workspace-usage");
    expect(usage).toHaveTextContent("Usage: unavailable");
    expect(usage).toHaveAttribute("title", "INTERNAL: database is locked");
    expect(screen.queryByTestId("error")).not.toBeInTheDocument();
  });

  it("says when a delivered session landed, and nothing for the others", async () => {
    const landed = new Date(Date.now() - 2 * 3600_000 - 60_000).toISOString();
    const backend = fakeBackend({
      list_sessions: () => [
        sessions[0],
        makeSession({
          id: "s3",
          title: "Ship coupons",
          state: "delivered",
          deliveredAt: landed,
          createdAt: "2025-01-03T10:00:00Z",
        }),
      ],
    });
    renderWithStore(<Dashboard />, backend);
    const rows = await screen.findAllByTestId("session-row");
    const delivered = rows.find((r) => r.dataset.sessionId === "s3")!;
    expect(within(delivered).getByTestId("delivered")).toHaveTextContent("Delivered 2 hours ago");
    expect(within(delivered).getByTestId("delivered").querySelector("time")).toHaveAttribute("datetime", landed);
    const other = rows.find((r) => r.dataset.sessionId === "s1")!;
    expect(within(other).queryByTestId("delivered")).toBeNull();
  });
});
