// Gate helpers: results grouped per module (working copy first) in gate order, counts, status words (a failure there before the session, a gate not run), durations, output and the transcript's gate key.
import type { GateResultView, GateStatus, TranscriptEntry } from "../api/types";

/** A module's gates in the order they run (ARCHITECTURE.md: Gates). */
export const MODULE_GATES = ["dependencies", "typecheck", "tests", "format", "lint"] as const;

/** The engine's gates in the order they run: the working copy's, then each module's. */
export const GATE_ORDER: readonly string[] = ["spec-schema", "module-schema", ...MODULE_GATES];

export interface GateGroup {
  /** null: the whole working copy. */
  module: string | null;
  gates: GateResultView[];
}

export type GateCounts = Record<GateStatus, number>;

function gateRank(gate: string): number {
  const i = GATE_ORDER.indexOf(gate);
  return i === -1 ? GATE_ORDER.length : i;
}

/**
 * The results per module: the working copy's gates first, then the modules in `moduleOrder`
 * (the session's), then any other module by name; within a group, in GATE_ORDER.
 */
export function groupGates(gates: GateResultView[], moduleOrder: string[] = []): GateGroup[] {
  const byModule = new Map<string | null, GateResultView[]>();
  for (const g of gates) {
    const list = byModule.get(g.module);
    if (list) list.push(g);
    else byModule.set(g.module, [g]);
  }
  const moduleRank = (m: string | null) => {
    if (m === null) return -1;
    const i = moduleOrder.indexOf(m);
    return i === -1 ? moduleOrder.length : i;
  };
  return [...byModule.entries()]
    .sort(([a], [b]) => moduleRank(a) - moduleRank(b) || (a ?? "").localeCompare(b ?? ""))
    .map(([module, list]) => ({
      module,
      gates: [...list].sort((a, b) => gateRank(a.gate) - gateRank(b.gate) || a.gate.localeCompare(b.gate)),
    }));
}

/** A gate's name for people: Kiln's own checks of the working copy by what they check ("manifests" parse and name
 * their module; "specifications" are well-formed), the setup as "setup", the project's gates by their own names. */
export function gateDisplayName(gate: Pick<GateResultView, "module" | "gate">): string {
  if (isSetupResult(gate)) return "setup";
  if (gate.gate === "module-schema") return "manifests";
  if (gate.gate === "spec-schema") return "specifications";
  return gate.gate;
}

/** The session's setup (its dependencies installed in the working copy when it started): listed with the gates, but no gate of the change. */
export function isSetupResult(gate: Pick<GateResultView, "module" | "gate">): boolean {
  return gate.module === null && gate.gate === "dependencies";
}

/** The gates' counts, as the chat's gate runs count them: a setup that passed is no gate of the change (a failed one blocks, and counts). */
export function countGates(gates: GateResultView[]): GateCounts {
  const counts: GateCounts = { passed: 0, failed: 0, "failing-before": 0, skipped: 0, "not-configured": 0 };
  for (const g of gates) if (!(isSetupResult(g) && g.status === "passed")) counts[g.status] += 1;
  return counts;
}

/** A status as words: "not-configured" reads "not configured", "failing-before" "failing before". */
export function statusLabel(status: GateStatus): string {
  if (status === "not-configured") return "not configured";
  if (status === "failing-before") return "failing before";
  return status;
}

/** A skipped gate that did not run for a reason its note gives ("not run: setup failed: …"). */
export function gateNotRun(gate: Pick<GateResultView, "status" | "note">): boolean {
  return gate.status === "skipped" && /^not run\b/i.test(gate.note ?? "");
}

/** The status as the row says it: "not run" for a gate that did not run, else the status's words. */
export function gateLabel(gate: Pick<GateResultView, "status" | "note">): string {
  return gateNotRun(gate) ? "not run" : statusLabel(gate.status);
}

/** The verdict in words beside the status (a not-run gate's without its "not run: "); "" when there is none. */
export function gateNoteText(gate: Pick<GateResultView, "status" | "note">): string {
  const note = (gate.note ?? "").trim();
  return gateNotRun(gate) ? note.replace(/^not run\s*:?\s*/i, "") : note;
}

/** Whether the gate's command ran (and so has a duration and output): a failure from before the session ran too. */
export function gateRan(status: GateStatus): boolean {
  return status === "passed" || status === "failed" || status === "failing-before";
}

/** "0 ms", "420 ms", "3.2 s", "2 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const total = Math.round(ms / 1000);
  const s = total % 60;
  return `${Math.floor(total / 60)} min${s ? ` ${s} s` : ""}`;
}

/** The output as head and tail (tail empty when the whole output fit in the head), without the newlines at the seam. */
export function gateOutput(gate: GateResultView): { head: string; tail: string } {
  if (!gate.outputTail) return { head: gate.outputHead, tail: "" };
  return { head: gate.outputHead.replace(/[\r\n]+$/, ""), tail: gate.outputTail.replace(/^[\r\n]+/, "") };
}

/** The engine's transcript line for a restore (checkpoint.rs): "Restored the session's working copy to the state after …" ("the workspace" before). */
export function isRestoreEntry(entry: TranscriptEntry): boolean {
  return entry.kind === "system" && /^Restored the (workspace|session's working copy)\b/.test(entry.text);
}
