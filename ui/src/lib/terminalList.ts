// A session's terminal list: how news about a terminal goes into it, which terminal the tab shows, and the words for a terminal's state.
import type { TerminalView } from "../api/types";

/**
 * `list` with `view` in it: a newer copy replaces the one it has (or joins at the end). An exited
 * terminal never reads as running again: an answer sent before the exit may arrive after its event.
 */
export function mergeTerminal(list: TerminalView[], view: TerminalView): TerminalView[] {
  const at = list.findIndex((t) => t.id === view.id);
  if (at < 0) return [...list, view];
  if (list[at].state === "exited" && view.state === "running") return list;
  const next = list.slice();
  next[at] = view;
  return next;
}

/** What the list shows after a terminal's title. */
export function terminalStateLabel(t: TerminalView): string {
  if (t.state === "running") return "running";
  return t.exitCode === null ? "ended" : `exit ${t.exitCode}`;
}

/** The one shown: the chosen one while it is listed, else the newest running one, else the newest. */
export function shownTerminal(terminals: TerminalView[], chosen: string | undefined): TerminalView | undefined {
  const picked = terminals.find((t) => t.id === chosen);
  if (picked) return picked;
  const running = terminals.filter((t) => t.state === "running");
  return running[running.length - 1] ?? terminals[terminals.length - 1];
}

/** What each terminal is called in the list: its title, numbered in order when several share it ("bash 1", "bash 2"). */
export function terminalLabels(terminals: TerminalView[]): Map<string, string> {
  const counts = new Map<string, number>();
  for (const t of terminals) counts.set(t.title, (counts.get(t.title) ?? 0) + 1);
  const seen = new Map<string, number>();
  const labels = new Map<string, string>();
  for (const t of terminals) {
    const n = (seen.get(t.title) ?? 0) + 1;
    seen.set(t.title, n);
    labels.set(t.id, (counts.get(t.title) ?? 0) > 1 ? `${t.title} ${n}` : t.title);
  }
  return labels;
}
