// Whether the gate results describe the files as they are now: not run yet (no module gate ran), stale (a restore came after them) or current.
import type { GateResultView, TranscriptEntry } from "../api/types";
import { gateRan } from "./gates";

export type GateFreshness = "not-run" | "stale" | "current";

/** The engine's transcript line for a restore (checkpoint.rs): "Restored the session's working copy to the state after …" ("the workspace" before). */
export function isRestoreEntry(entry: TranscriptEntry): boolean {
  return entry.kind === "system" && /^Restored the (workspace|session's working copy)\b/.test(entry.text);
}

/** Whether a module's own gate (dependencies, typecheck, tests…) ran: Kiln's working-copy checks alone are no pass. */
export function moduleGateRan(gates: GateResultView[]): boolean {
  return gates.some((g) => g.module !== null && gateRan(g.status));
}

/**
 * How far the results can be trusted. A restore after the last gate entry puts back files the
 * results never saw: they are stale until the gates run again (a turn, Check modules).
 */
export function gateFreshness(gates: GateResultView[], entries: TranscriptEntry[] | undefined): GateFreshness {
  if (entries) {
    let lastGate = 0;
    let lastRestore = 0;
    for (const e of entries) {
      if (e.kind === "gate") lastGate = e.id;
      else if (isRestoreEntry(e)) lastRestore = e.id;
    }
    if (gates.length > 0 && lastRestore > lastGate) return "stale";
  }
  return moduleGateRan(gates) ? "current" : "not-run";
}
