// The workspace set-up: whether a workspace still wants its set-up screen (no kiln.toml, not yet
// saved or dismissed here, remembered per root in localStorage), and the editable form over
// detect_workspace's answer that "Save as kiln.toml" sends as save_config's args.
import type { DetectedGate, DetectionView, SaveConfigArgs, WorkspaceView, Workflow } from "../api/types";
import { MODULE_GATES } from "./gates";

const KEY = "kiln.setup.done";

function readDone(): string[] {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(KEY) ?? "[]");
    return Array.isArray(parsed) ? parsed.filter((r): r is string => typeof r === "string") : [];
  } catch {
    return [];
  }
}

/** Whether the set-up of this workspace root was saved or dismissed in this browser (or webview). */
export function setupDone(root: string): boolean {
  return readDone().includes(root);
}

/** Remembers that the set-up of `root` was saved or dismissed: it no longer opens by itself. */
export function markSetupDone(root: string): void {
  const done = readDone();
  if (done.includes(root)) return;
  try {
    // The most recent 200 roots are plenty.
    localStorage.setItem(KEY, JSON.stringify([...done, root].slice(-200)));
  } catch {
    // Storage full or blocked: the screen opens again next time, which is harmless.
  }
}

/** A workspace opened for the first time: no kiln.toml, and its set-up neither saved nor dismissed here. */
export function wantsSetup(workspace: WorkspaceView | null | undefined): boolean {
  return !!workspace && workspace.configPath === null && !setupDone(workspace.root);
}

/** The two workflows as the set-up screen explains them (ARCHITECTURE.md: Workflows and the chain). */
export const WORKFLOWS: { id: Workflow; name: string; text: string }[] = [
  {
    id: "direct",
    name: "Direct",
    text: "One engineer role changes anything in the working copy; specifications optional.",
  },
  {
    id: "specs",
    name: "Specs",
    text: "Specialists, spec-first, approval: modules built from an approved specification.",
  },
];

/** What the operator can edit: the workflow, the setup command and every module's gate commands ("" = not configured). */
export interface SetupForm {
  workflow: Workflow;
  setup: string;
  /** Module id → gate → command. */
  gates: Record<string, Record<string, string>>;
}

/** A module's gates in MODULE_GATES order, any other the engine lists after them. */
export function orderedGates(gates: DetectedGate[]): DetectedGate[] {
  const rank = (g: string) => {
    const i = (MODULE_GATES as readonly string[]).indexOf(g);
    return i === -1 ? MODULE_GATES.length : i;
  };
  return [...gates].sort((a, b) => rank(a.gate) - rank(b.gate) || a.gate.localeCompare(b.gate));
}

export function formOf(detection: DetectionView): SetupForm {
  const gates: SetupForm["gates"] = {};
  for (const m of detection.modules) {
    gates[m.id] = {};
    for (const g of m.gates) gates[m.id][g.gate] = g.command ?? "";
  }
  return { workflow: detection.workflow, setup: detection.setup?.command ?? "", gates };
}

/** The gates whose command differs from what was detected, as "module/gate" keys. */
export function editedGates(detection: DetectionView, form: SetupForm): string[] {
  const edited: string[] = [];
  for (const m of detection.modules) {
    for (const g of m.gates) {
      if ((form.gates[m.id]?.[g.gate] ?? "").trim() !== (g.command ?? "")) edited.push(`${m.id}/${g.gate}`);
    }
  }
  return edited;
}

/** Whether anything in the form differs from the detection. */
export function isDirty(detection: DetectionView, form: SetupForm): boolean {
  return (
    form.workflow !== detection.workflow ||
    form.setup.trim() !== (detection.setup?.command ?? "") ||
    editedGates(detection, form).length > 0
  );
}

/**
 * save_config's args: every module with all its gates as shown (an empty command is a gate that is
 * off); the setup command trimmed ("" turns off a detected one, null leaves none detected alone).
 */
export function saveArgsOf(detection: DetectionView, form: SetupForm, replace: boolean): SaveConfigArgs {
  const setup = form.setup.trim();
  return {
    workflow: form.workflow,
    setup: setup || detection.setup ? setup : null,
    modules: detection.modules.map((m) => ({
      id: m.id,
      gates: Object.fromEntries(m.gates.map((g) => [g.gate, (form.gates[m.id]?.[g.gate] ?? "").trim()])),
    })),
    replace,
  };
}
