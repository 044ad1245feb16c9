// The agent roles the composer offers, and their display names.

export const ROLES = ["business-manager", "ux-designer", "frontend-engineer", "backend-engineer", "agentic-engineer"] as const;

const NAMES: Record<string, string> = {
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
