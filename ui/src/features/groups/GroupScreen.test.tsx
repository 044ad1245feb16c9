// Tests for best-of-N in the UI: the new-session form fans the brief out to candidates (create_session_group), and the comparison screen shows each candidate, waits for the pick's confirmation and shows the winner.
import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { CandidateView, GroupView } from "../../api/types";
import { fakeBackend, makeSettings, makeTotals } from "../../test/fixtures";
import { renderWithStore } from "../../test/render";
import { NewSession } from "../dashboard/NewSession";
import { GroupScreen } from "./GroupScreen";

function candidate(n: number, over: Partial<CandidateView> = {}): CandidateView {
  return {
    sessionId: `s${n}`,
    candidate: n,
    title: `Fix sum · ${n + 1}: claude`,
    driver: n === 2 ? "codex" : "claude",
    model: n === 2 ? "gpt-5.5" : null,
    state: "editing",
    running: false,
    waiting: false,
    archivedAt: null,
    deliveredAt: null,
    filesChanged: 1,
    additions: 2,
    deletions: 1,
    gates: [
      {
        module: "@numbers/sum",
        gate: "tests",
        status: n === 2 ? "failed" : "passed",
        tests: { passed: n === 2 ? 0 : 3, failed: n === 2 ? 1 : 0 },
      },
    ],
    reviews: [],
    usage: { ...makeTotals(), turns: 1, inputTokens: 1200, outputTokens: 300 },
    elapsedMs: 65_000,
    screenshotId: null,
    ...over,
  };
}

const group: GroupView = {
  id: "g1",
  title: "Fix sum",
  brief: "Fix the sum in @numbers/sum",
  createdAt: "2026-01-01T00:00:00Z",
  pickedSessionId: null,
  pickedAt: null,
  candidates: [candidate(0), candidate(1, { waiting: true, running: true, state: "running" }), candidate(2)],
};

describe("NewSession fanned out", () => {
  it("creates a group of the candidates' agents and models and opens its comparison", async () => {
    const backend = fakeBackend({
      get_settings: () => makeSettings(),
      create_session_group: () => group,
    });
    renderWithStore(<NewSession />, backend);
    fireEvent.change(await screen.findByTestId("brief"), { target: { value: "Fix the sum in @numbers/sum" } });
    fireEvent.click(screen.getByTestId("fan-out"));
    await waitFor(() => expect(screen.getAllByTestId("candidate-row")).toHaveLength(2));
    fireEvent.click(screen.getByTestId("candidate-add"));
    const rows = screen.getAllByTestId("candidate-row");
    expect(rows).toHaveLength(3);
    fireEvent.change(within(rows[2]).getByTestId("agent-model"), { target: { value: "gpt-5.5" } });
    fireEvent.change(within(rows[2]).getByTestId("agent-driver"), { target: { value: "codex" } });
    expect(screen.getByTestId("create-session")).toHaveTextContent("Create 3 candidates");
    fireEvent.click(screen.getByTestId("create-session"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("create_session_group", {
        brief: "Fix the sum in @numbers/sum",
        candidates: [{ driver: "claude" }, { driver: "claude" }, { driver: "codex", model: "gpt-5.5" }],
      }),
    );
    await waitFor(() => expect(window.location.hash).toBe("#/group/g1"));
  });
});

describe("GroupScreen", () => {
  it("shows a column per candidate, waiting included, and picks one after confirming", async () => {
    const picked: GroupView = {
      ...group,
      pickedSessionId: "s0",
      candidates: [
        candidate(0),
        candidate(1, { archivedAt: "2026-01-01T00:01:00Z" }),
        candidate(2, { archivedAt: "2026-01-01T00:01:00Z" }),
      ],
    };
    const backend = fakeBackend({
      get_group: () => group,
      compare_candidates: () => ({ modules: [] }),
      pick_candidate: () => picked,
    });
    renderWithStore(<GroupScreen groupId="g1" />, backend);
    const columns = await screen.findAllByTestId("candidate");
    expect(columns).toHaveLength(3);
    expect(within(columns[0]).getByTestId("candidate-agent")).toHaveTextContent("claude");
    expect(within(columns[2]).getByTestId("candidate-agent")).toHaveTextContent("codex (gpt-5.5)");
    expect(within(columns[1]).getByTestId("candidate-state")).toHaveTextContent("Waiting for a free slot");
    expect(within(columns[0]).getByTestId("candidate-changes")).toHaveTextContent("+2 −1 in 1 file");
    expect(within(columns[0]).getByTestId("candidate-tests")).toHaveTextContent("3 passed");
    expect(within(columns[2]).getByTestId("candidate-tests")).toHaveTextContent("0 passed, 1 failed");
    expect(within(columns[0]).getByTestId("candidate-usage")).toHaveTextContent("1.5k tok · unknown");
    expect(within(columns[0]).getByTestId("candidate-elapsed")).toHaveTextContent("1:05");
    expect(within(columns[0]).getByTestId("candidate-open")).toHaveAttribute("href", "#/session/s0");
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("compare_candidates", { groupId: "g1", left: "s0", right: "s1" }),
    );
    expect(await screen.findByTestId("diff-empty")).toHaveTextContent("Their trees are the same");

    fireEvent.click(within(columns[0]).getByTestId("candidate-pick"));
    expect(await screen.findByTestId("pick-confirm")).toHaveTextContent("The 2 other candidates are archived");
    expect(backend.call).not.toHaveBeenCalledWith("pick_candidate", expect.anything());
    fireEvent.click(screen.getByTestId("confirm"));
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("pick_candidate", { groupId: "g1", sessionId: "s0" }),
    );
    expect(await screen.findByTestId("group-winner")).toHaveTextContent("Candidate 1");
    const after = screen.getAllByTestId("candidate");
    expect(within(after[0]).getByTestId("candidate-deliver")).toHaveAttribute("href", "#/session/s0/deliver");
    expect(within(after[1]).getByTestId("candidate-state")).toHaveTextContent("Archived");
    expect(within(after[1]).getByTestId("candidate-pick")).toBeDisabled();
  });

  it("shows a candidate's newest screenshot as an image", async () => {
    const backend = fakeBackend({
      get_group: () => ({ ...group, candidates: [candidate(0, { screenshotId: 7 }), candidate(1)] }),
      compare_candidates: () => ({ modules: [] }),
      get_screenshot: () => ({
        screenshot: {
          id: 7,
          kind: "turn",
          checkpoint: 1,
          moduleId: "@numbers/sum",
          pagePath: "/",
          width: 1280,
          height: 800,
          bytes: 4,
          takenAt: "2026-01-01T00:00:00Z",
        },
        pngBase64: "iVBORw==",
      }),
    });
    renderWithStore(<GroupScreen groupId="g1" />, backend);
    const shot = await screen.findByRole("img");
    expect(shot).toHaveAttribute("src", "data:image/png;base64,iVBORw==");
    expect(backend.call).toHaveBeenCalledWith("get_screenshot", { sessionId: "s0", screenshotId: 7 });
    expect(screen.getAllByTestId("candidate-screenshot-none")).toHaveLength(1);
  });

  it("says when there is no such group", async () => {
    const backend = fakeBackend({
      get_group: () => {
        throw { code: "GROUP_NOT_FOUND", message: "no group nope in this workspace" };
      },
    });
    renderWithStore(<GroupScreen groupId="nope" />, backend);
    expect(await screen.findByText("No such group")).toBeInTheDocument();
  });
});
