import { describe, expect, it } from "vitest";
import type { CandidateView, SessionView } from "../api/types";
import {
  addRow,
  agentLabel,
  candidateChoices,
  candidateState,
  changeLabel,
  elapsedLabel,
  gatesPass,
  groupSessions,
  MAX_CANDIDATES,
  removeRow,
  startRows,
  testsLabel,
  updateRow,
} from "./candidates";

describe("candidate rows", () => {
  it("start at two, grow to five and never shrink below two", () => {
    let rows = startRows();
    expect(rows).toHaveLength(2);
    expect(removeRow(rows, rows[0].key)).toBe(rows);
    for (let i = 0; i < 10; i++) rows = addRow(rows);
    expect(rows).toHaveLength(MAX_CANDIDATES);
    rows = removeRow(rows, rows[1].key);
    expect(rows).toHaveLength(4);
  });

  it("become the engine's candidates with the default agent spelled out and blank models left out", () => {
    let rows = startRows();
    rows = updateRow(rows, rows[1].key, { driver: "codex", model: "  o4-mini " });
    expect(candidateChoices(rows, "claude")).toEqual([{ driver: "claude" }, { driver: "codex", model: "o4-mini" }]);
  });
});

const candidate = (over: Partial<CandidateView> = {}): CandidateView => ({
  sessionId: "s1",
  candidate: 0,
  title: "t",
  driver: "claude",
  model: null,
  state: "editing",
  running: false,
  waiting: false,
  archivedAt: null,
  deliveredAt: null,
  filesChanged: 2,
  additions: 12,
  deletions: 3,
  gates: [],
  reviews: [],
  usage: {
    turns: 1,
    inputTokens: 1,
    outputTokens: 1,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costUsd: null,
    unknownCostTurns: 1,
  },
  elapsedMs: 62_000,
  screenshotId: null,
  ...over,
});

describe("a candidate in words", () => {
  it("names its agent, its change and its time, unknown staying unknown", () => {
    expect(agentLabel(candidate({ model: "sonnet" }))).toBe("claude (sonnet)");
    expect(changeLabel(candidate())).toBe("+12 −3 in 2 files");
    expect(changeLabel(candidate({ filesChanged: 0, additions: 0, deletions: 0 }))).toBe("no changes");
    expect(changeLabel(candidate({ filesChanged: null }))).toBe("unknown");
    expect(elapsedLabel(62_000)).toBe("1:02");
    expect(elapsedLabel(null)).toBe("not started");
  });

  it("says when it waits for a slot, and when it was archived", () => {
    expect(candidateState(candidate({ running: true, waiting: true, state: "running" }))).toBe(
      "Waiting for a free slot",
    );
    expect(candidateState(candidate({ running: true, state: "running" }))).toBe("Running");
    expect(candidateState(candidate({ archivedAt: "2026-01-01T00:00:00Z" }))).toBe("Archived");
    expect(candidateState(candidate({ state: "blocked" }))).toBe("Blocked");
  });

  it("counts tests and tells whether the gates pass", () => {
    expect(testsLabel({ module: "m", gate: "tests", status: "failed", tests: { passed: 3, failed: 1 } })).toBe(
      "3 passed, 1 failed",
    );
    expect(testsLabel({ module: "m", gate: "tests", status: "passed", tests: null })).toBeNull();
    expect(gatesPass([{ module: "m", gate: "tests", status: "passed", tests: null }])).toBe(true);
    expect(
      gatesPass([
        { module: "m", gate: "tests", status: "passed", tests: null },
        { module: "m", gate: "lint", status: "skipped", tests: null },
      ]),
    ).toBe(false);
    expect(gatesPass([])).toBe(false);
    // A failure there before the session is no failure of this candidate, but no pass on its own either.
    expect(
      gatesPass([
        { module: "m", gate: "tests", status: "failing-before", tests: { passed: 3, failed: 1 } },
        { module: "m", gate: "typecheck", status: "passed", tests: null },
      ]),
    ).toBe(true);
    expect(gatesPass([{ module: "m", gate: "tests", status: "failing-before", tests: null }])).toBe(false);
  });
});

describe("the dashboard's grouping", () => {
  it("keeps a group's candidates together, in candidate order, where the first of them is listed", () => {
    const s = (id: string, groupId?: string, n?: number) => ({ id, groupId, candidate: n }) as unknown as SessionView;
    const out = groupSessions([s("a"), s("g2", "G", 1), s("b"), s("g1", "G", 0)]);
    expect(
      out.map((x) =>
        "groupId" in x && "sessions" in x ? `G:${x.sessions.map((m) => m.id).join(",")}` : (x as SessionView).id,
      ),
    ).toEqual(["a", "G:g1,g2", "b"]);
  });
});
