// Tests for a group on the dashboard: its candidates in one row under the group's title, a waiting candidate's badge, and the link to the comparison.
import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { fakeBackend, makeSession } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { Dashboard } from "../dashboard/Dashboard";

describe("a group on the dashboard", () => {
  it("holds its candidates in one row that links to the comparison", async () => {
    const sessions = [
      makeSession({ id: "solo", title: "Add coupons", createdAt: "2025-01-01T10:00:00Z" }),
      makeSession({
        id: "c2",
        title: "Fix sum · 2: codex",
        groupId: "g1",
        candidate: 1,
        createdAt: "2025-01-02T10:00:00Z",
        running: true,
        state: "running",
        waiting: true,
      }),
      makeSession({
        id: "c1",
        title: "Fix sum · 1: claude",
        groupId: "g1",
        candidate: 0,
        createdAt: "2025-01-02T10:00:00Z",
      }),
    ];
    const backend = fakeBackend({
      list_sessions: () => sessions,
      list_groups: () => [
        {
          id: "g1",
          title: "Fix sum",
          createdAt: "2025-01-02T10:00:00Z",
          pickedSessionId: null,
          sessionIds: ["c1", "c2"],
        },
      ],
    });
    renderWithStore(<Dashboard />, backend);
    const group = await screen.findByTestId("group-row");
    expect(await within(group).findByText("Fix sum")).toHaveAttribute("href", "#/group/g1");
    expect(within(group).getByText("Best of 2")).toBeInTheDocument();
    const candidates = within(group).getAllByTestId("session-row");
    expect(candidates.map((r) => r.getAttribute("data-session-id"))).toEqual(["c1", "c2"]);
    expect(within(candidates[1]).getByTestId("waiting-badge")).toHaveTextContent("Waiting for a free slot");
    // The session outside the group keeps its own row.
    expect(screen.getAllByTestId("session-row")).toHaveLength(3);
  });
});
