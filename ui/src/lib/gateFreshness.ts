// Whether the gate results describe the files as they are now: not run yet (no module gate ran), stale (of other files: a restore or an edit came after them) or current.
import type { GateResultView, TranscriptEntry } from "../api/types";
import { gateRan, isRestoreEntry } from "./gates";

export type GateFreshness = "not-run" | "stale" | "current";

/** Whether a module's own gate (dependencies, typecheck, tests…) ran: Kiln's working-copy checks alone are no pass. */
export function moduleGateRan(gates: GateResultView[]): boolean {
  return gates.some((g) => g.module !== null && gateRan(g.status));
}

/**
 * How far the results can be trusted. Each result says whether it judged the files as they are
 * (`current`; after a restore, the engine picks the results of the restored files when there are
 * some): one that did not makes them stale until the gates run again (a turn, Run gates).
 * Results that do not say (kept before Kiln recorded it) are stale after a restore that came
 * after the last gate entry.
 */
export function gateFreshness(gates: GateResultView[], entries: TranscriptEntry[] | undefined): GateFreshness {
  const judged = gates.filter((g) => g.current !== undefined && g.current !== null);
  if (judged.length > 0) {
    if (judged.some((g) => g.current === false)) return "stale";
    return moduleGateRan(gates) ? "current" : "not-run";
  }
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
