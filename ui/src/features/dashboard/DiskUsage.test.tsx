// Tests for the dashboard's disk use: the header's total and store, each row's size or removed copy, one refetch when a session changes, and Clean up… (a dry run listed, applied on confirmation).
import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { CleanUpView, DiskUsageView } from "../../api/types";
import { fakeBackend, makeSession } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { Dashboard } from "./Dashboard";

const session = makeSession({ id: "s1", title: "Add coupons", createdAt: "2025-01-01T10:00:00Z" });
const measured = (workingCopyBytes: number | null): DiskUsageView => ({
  storeBytes: 300_000_000,
  sessionsBytes: 900_000_000,
  sessions: [{ sessionId: "s1", workingCopyBytes, attachmentsBytes: 2_000, otherBytes: 48_000 }],
  measuredAt: "2025-01-03T00:00:00Z",
});

describe("Disk use on the dashboard", () => {
  it("shows the total, the store and each session's size", async () => {
    const backend = fakeBackend({ list_sessions: () => [session], disk_usage: () => measured(1_160_000_000) });
    renderWithStore(<Dashboard />, backend);
    await waitFor(() => expect(screen.getByTestId("disk-total")).toHaveTextContent("1.2 GB"));
    expect(screen.getByTestId("disk-store")).toHaveTextContent("300 MB");
    const row = await screen.findByTestId("row-disk");
    expect(row).toHaveTextContent("1.2 GB on disk");
    expect(row.getAttribute("title")).toContain("Working copy: 1.2 GB");
  });

  it("says when a working copy was removed, and measures again once when a session changes", async () => {
    let copy: number | null = 5_430_000;
    const backend = fakeBackend({ list_sessions: () => [session], disk_usage: () => measured(copy) });
    renderWithStore(<Dashboard />, backend);
    await waitFor(() => expect(screen.getByTestId("row-disk")).toHaveTextContent("5.5 MB on disk"));
    const fetches = () => backend.call.mock.calls.filter((c) => c[0] === "disk_usage").length;
    expect(fetches()).toBe(1);

    copy = null;
    const at = "2025-01-04T00:00:00Z";
    const checkpoint = { sequence: 1, at, label: "Turn 1", role: null, module: null, current: true };
    act(() => {
      // A new title is no news for the disk; a new checkpoint is, once however many events come.
      backend.emit({ id: 1, at, body: { type: "session", session: { ...session, title: "Renamed", updatedAt: at } } });
      backend.emit({ id: 2, at, body: { type: "session", session: { ...session, checkpoints: [checkpoint] } } });
      backend.emit({ id: 3, at, body: { type: "session", session: { ...session, checkpoints: [checkpoint] } } });
    });
    await waitFor(() => expect(screen.getByTestId("row-disk")).toHaveTextContent("Working copy removed"), {
      timeout: 3000,
    });
    expect(fetches()).toBe(2);
  });

  it("lists what Clean up… would remove and removes it once confirmed", async () => {
    const plan = (applied: boolean): CleanUpView => ({
      applied,
      sessions: [
        { sessionId: "s1", title: "Add coupons", bytes: 1_160_000_000, checkpoint: 3, checkpointTaken: false },
      ],
      skipped: [{ sessionId: "s2", title: "Busy one", reason: "it is running (a turn, the planner or its setup)" }],
      freedBytes: 1_160_000_000,
    });
    const backend = fakeBackend({
      list_sessions: () => [session],
      disk_usage: () => measured(1_160_000_000),
      clean_up: (args) => plan(args.apply === true),
    });
    renderWithStore(<Dashboard />, backend);
    fireEvent.click(await screen.findByTestId("clean-up"));
    const dialog = await screen.findByRole("dialog", { name: "Clean up working copies?" });
    const item = await within(dialog).findByTestId("clean-up-item");
    expect(item).toHaveTextContent("Add coupons");
    expect(item).toHaveTextContent("1.2 GB");
    expect(within(dialog).getByTestId("clean-up-total")).toHaveTextContent("1.2 GB");
    expect(within(dialog).getByTestId("clean-up-skipped")).toHaveTextContent("Busy one");
    expect(backend.call).toHaveBeenCalledWith("clean_up", {});
    expect(backend.call).not.toHaveBeenCalledWith("clean_up", { apply: true });

    fireEvent.click(within(dialog).getByTestId("confirm"));
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("clean_up", { apply: true }));
    // The skipped session stays on screen with its reason until the dialog is closed.
    await waitFor(() => expect(within(dialog).getByText("Not removed:")).toBeInTheDocument());
    expect(within(dialog).queryByTestId("confirm")).not.toBeInTheDocument();
  });
});
