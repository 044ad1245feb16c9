// The roles the composer's picker offers (the workspace's own, from WorkspaceView.roles), and display names.
import type { RoleSummary } from "../api/types";

const NAMES: Record<string, string> = {
  engineer: "Engineer",
  "business-manager": "Business Manager",
  "ux-designer": "UX Designer",
  "frontend-engineer": "Frontend Engineer",
  "backend-engineer": "Backend Engineer",
  "agentic-engineer": "Agentic Engineer",
};

/** A role's display name: the bundled name, else the id with words capitalised. */
export function roleName(id: string): string {
  return NAMES[id] ?? id.replace(/[-_]+/g, " ").replace(/\b\w/g, (c) => c.toUpperCase());
}

/**
 * The choices of the composer's role picker besides "Auto": the workspace's roles as the engine
 * lists them (`engineer` and the workspace's `kiln/roles/` in the direct workflow, the specialists
 * in specs), then any of `also` (a role asked for by "Continue with…", the selected one) that the
 * list lacks, so a selected role is always shown. Names come from the engine, else roleName.
 */
export function pickerRoles(
  roles: readonly RoleSummary[] | null | undefined,
  also: readonly (string | null | undefined)[] = [],
): RoleSummary[] {
  const out: RoleSummary[] = [];
  const seen = new Set<string>();
  for (const r of roles ?? []) {
    if (!r.id || seen.has(r.id)) continue;
    seen.add(r.id);
    out.push({ id: r.id, name: r.name || roleName(r.id) });
  }
  for (const id of also) {
    if (!id || seen.has(id)) continue;
    seen.add(id);
    out.push({ id, name: roleName(id) });
  }
  return out;
}
