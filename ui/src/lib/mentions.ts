// `@`-mentions of modules in a brief or a message: the mention at the caret, the modules it matches, and the text with the chosen module put in its place (as the planner reads modules: by id, or `module <directory>` for a bare-word id).
import type { ModuleInfo } from "../api/types";

export interface Mention {
  /** Where the `@` is. */
  start: number;
  /** The caret: the mention runs from `start` to here. */
  end: number;
  /** What follows the `@`, e.g. `sh` in `@sh`. */
  query: string;
}

/** How many modules the list offers at most. */
export const MAX_OPTIONS = 8;

/** The `@…` being typed right before the caret (after a space, a bracket or at the start), or null. */
export function mentionAt(value: string, caret: number): Mention | null {
  const before = value.slice(0, caret);
  const m = /(^|[\s([{"'`])@([A-Za-z0-9_./@-]*)$/.exec(before);
  if (!m) return null;
  const start = before.length - m[2].length - 1;
  return { start, end: caret, query: m[2] };
}

function rank(module: ModuleInfo, query: string): number {
  const q = query.toLowerCase();
  const id = module.id.toLowerCase();
  const bare = id.replace(/^@/, "");
  const dir = module.directory.toLowerCase();
  const short = bare.split("/").pop() ?? bare;
  if (!q) return 0;
  if (bare.startsWith(q) || id.startsWith(q)) return 1;
  if (short.startsWith(q)) return 2;
  if (dir.startsWith(q) || (dir.split("/").pop() ?? "").startsWith(q)) return 3;
  if (id.includes(q)) return 4;
  if (dir.includes(q)) return 5;
  return -1;
}

/** The modules a query matches by id or directory, best first (prefix of the id, of its short name, of the directory, then anywhere). */
export function matchModules(modules: ModuleInfo[], query: string, max = MAX_OPTIONS): ModuleInfo[] {
  return modules
    .map((m, i) => ({ m, i, r: rank(m, query) }))
    .filter((x) => x.r >= 0)
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .slice(0, max)
    .map((x) => x.m);
}

/**
 * How a module is named so the planner selects it: its id, unless the id is a bare word
 * (the planner never takes one for a module), then `module <directory>`.
 */
export function mentionText(module: ModuleInfo): string {
  if (/^[A-Za-z]+$/.test(module.id) && module.directory !== ".") return `module ${module.directory}`;
  return module.id;
}

/** The value with the mention replaced by the module's name and one space, and where the caret goes. */
export function applyMention(value: string, mention: Mention, module: ModuleInfo): { value: string; caret: number } {
  const after = value.slice(mention.end).replace(/^[A-Za-z0-9_./@-]*/, "");
  const name = mentionText(module);
  const spaced = after.startsWith(" ") ? name : `${name} `;
  const next = value.slice(0, mention.start) + spaced + after;
  return { value: next, caret: mention.start + name.length + 1 };
}

/**
 * The ids a MODULE_UNKNOWN answer names as not being modules ("`@shop/wishlist` is not a
 * module of this workspace. Modules: …"), in order; empty when the message says none.
 */
export function unknownModuleIds(message: string): string[] {
  const m = /^(.*?)\s+(?:is not a module|are not modules)\b/s.exec(message);
  if (!m) return [];
  return [...m[1].matchAll(/`([^`]+)`/g)].map((x) => x[1]);
}
