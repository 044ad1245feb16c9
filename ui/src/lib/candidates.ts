// Best-of-N in words and shapes: the new-session form's candidate rows (2 to 5, each an agent and a model) as create_session_group's candidates, and how the comparison names a candidate, its gates and its time.
import type { CandidateChoice, CandidateGate, CandidateView, GroupView, SessionView } from "../api/types";
import { formatElapsed } from "./elapsed";

export const MIN_CANDIDATES = 2;
export const MAX_CANDIDATES = 5;

/** One row of the fan-out: "" for the workspace default agent, "" for its default model. */
export interface CandidateRow {
  key: string;
  driver: string;
  model: string;
}

let rowKeys = 0;

export function newRow(driver = "", model = ""): CandidateRow {
  return { key: `c${++rowKeys}`, driver, model };
}

/** The rows a fan-out starts with: two, both the workspace default. */
export function startRows(): CandidateRow[] {
  return [newRow(), newRow()];
}

export function addRow(rows: CandidateRow[]): CandidateRow[] {
  return rows.length >= MAX_CANDIDATES ? rows : [...rows, newRow()];
}

export function removeRow(rows: CandidateRow[], key: string): CandidateRow[] {
  return rows.length <= MIN_CANDIDATES ? rows : rows.filter((r) => r.key !== key);
}

export function updateRow(
  rows: CandidateRow[],
  key: string,
  change: Partial<Omit<CandidateRow, "key">>,
): CandidateRow[] {
  return rows.map((r) => (r.key === key ? { ...r, ...change } : r));
}

/** The rows as the engine takes them: every candidate names its agent (the default spelled out), a blank model is left out. */
export function candidateChoices(rows: CandidateRow[], defaultDriver: string): CandidateChoice[] {
  return rows.map((r) => {
    const choice: CandidateChoice = { driver: r.driver || defaultDriver };
    if (r.model.trim()) choice.model = r.model.trim();
    return choice;
  });
}

/** "claude", "codex (o4-mini)", or "unknown agent" before it is known. */
export function agentLabel(c: Pick<CandidateView, "driver" | "model">): string {
  const driver = c.driver ?? "unknown agent";
  return c.model ? `${driver} (${c.model})` : driver;
}

/** "Candidate 2". */
export function candidateName(c: Pick<CandidateView, "candidate">): string {
  return `Candidate ${c.candidate + 1}`;
}

/** A tests gate's counts, "3 passed, 1 failed"; null when its output carried none. */
export function testsLabel(gate: CandidateGate): string | null {
  if (!gate.tests) return null;
  const { passed, failed } = gate.tests;
  return failed > 0 ? `${passed} passed, ${failed} failed` : `${passed} passed`;
}

/** "+12 −3 in 2 files"; "unknown" when the working copy could not be read. */
export function changeLabel(c: Pick<CandidateView, "filesChanged" | "additions" | "deletions">): string {
  if (c.filesChanged === null || c.additions === null || c.deletions === null) return "unknown";
  if (c.filesChanged === 0) return "no changes";
  return `+${c.additions} −${c.deletions} in ${c.filesChanged} file${c.filesChanged === 1 ? "" : "s"}`;
}

/** "1:02" since the candidate started; "not started" before any turn. */
export function elapsedLabel(ms: number | null): string {
  return ms === null ? "not started" : formatElapsed(ms);
}

/** What the candidate is doing, in words, waiting included. */
export function candidateState(c: Pick<CandidateView, "state" | "running" | "waiting" | "archivedAt">): string {
  if (c.archivedAt) return "Archived";
  if (c.waiting) return "Waiting for a free slot";
  if (c.running) return "Running";
  const words: Record<string, string> = {
    planning: "Planning",
    "awaiting-approval": "Awaiting approval",
    editing: "Editing",
    running: "Running",
    review: "Review",
    blocked: "Blocked",
    delivered: "Delivered",
  };
  return words[c.state] ?? c.state;
}

/**
 * Whether a gate list passes: at least one gate passed, and every other is not configured or fails
 * as it did before the session (no failure of this change; every candidate started from the same point).
 */
export function gatesPass(gates: CandidateGate[]): boolean {
  return (
    gates.some((g) => g.status === "passed") &&
    gates.every((g) => g.status === "passed" || g.status === "not-configured" || g.status === "failing-before")
  );
}

/** The dashboard's grouping: sessions of one group together, in the order the list first shows one of them. */
export function groupSessions(sessions: SessionView[]): (SessionView | { groupId: string; sessions: SessionView[] })[] {
  const out: (SessionView | { groupId: string; sessions: SessionView[] })[] = [];
  const groups = new Map<string, SessionView[]>();
  for (const s of sessions) {
    if (!s.groupId) {
      out.push(s);
      continue;
    }
    let members = groups.get(s.groupId);
    if (!members) {
      members = [];
      groups.set(s.groupId, members);
      out.push({ groupId: s.groupId, sessions: members });
    }
    members.push(s);
  }
  for (const members of groups.values()) members.sort((a, b) => (a.candidate ?? 0) - (b.candidate ?? 0));
  return out;
}

/** The picked candidate of a group, if one was picked. */
export function pickedCandidate(group: GroupView): CandidateView | null {
  return group.candidates.find((c) => c.sessionId === group.pickedSessionId) ?? null;
}
