// Tests for a session's terminal list: news replaces a terminal's copy or adds it, an exited terminal never reads as running again, which one the tab shows, and how each is named and its state reads.
import { describe, expect, it } from "vitest";
import type { TerminalView } from "../api/types";
import { mergeTerminal, shownTerminal, terminalLabels, terminalStateLabel } from "./terminalList";

const view = (id: string, extra: Partial<TerminalView> = {}): TerminalView => ({
  id,
  sessionId: "s1",
  kind: "shell",
  title: "bash",
  cols: 80,
  rows: 24,
  state: "running",
  exitCode: null,
  startedAt: "2026-01-01T00:00:00Z",
  endedAt: null,
  ...extra,
});

describe("mergeTerminal", () => {
  it("adds a new terminal at the end and replaces a known one in place", () => {
    const list = mergeTerminal(mergeTerminal([], view("a")), view("b"));
    expect(list.map((t) => t.id)).toEqual(["a", "b"]);
    const resized = mergeTerminal(list, view("a", { cols: 120 }));
    expect(resized.map((t) => [t.id, t.cols])).toEqual([
      ["a", 120],
      ["b", 80],
    ]);
  });

  it("keeps an exited terminal exited when an older answer says running", () => {
    const exited = mergeTerminal([view("a")], view("a", { state: "exited", exitCode: 0 }));
    expect(mergeTerminal(exited, view("a", { cols: 100 }))).toBe(exited);
  });
});

describe("shownTerminal", () => {
  const list = [view("a"), view("b"), view("c", { state: "exited", exitCode: 1 })];

  it("shows the chosen one while listed, else the newest running one, else the newest", () => {
    expect(shownTerminal(list, "a")?.id).toBe("a");
    expect(shownTerminal(list, "gone")?.id).toBe("b");
    expect(shownTerminal([view("x", { state: "exited", exitCode: 0 })], undefined)?.id).toBe("x");
    expect(shownTerminal([], "a")).toBeUndefined();
  });
});

describe("terminalStateLabel", () => {
  it("says running, the exit code, or ended when a signal ended it", () => {
    expect(terminalStateLabel(view("a"))).toBe("running");
    expect(terminalStateLabel(view("a", { state: "exited", exitCode: 130 }))).toBe("exit 130");
    expect(terminalStateLabel(view("a", { state: "exited", exitCode: null }))).toBe("ended");
  });
});

describe("terminalLabels", () => {
  it("numbers the titles several terminals share, in order, and leaves a lone title alone", () => {
    const labels = terminalLabels([view("a"), view("b", { title: "claude --resume" }), view("c"), view("d")]);
    expect([...labels.values()]).toEqual(["bash 1", "claude --resume", "bash 2", "bash 3"]);
  });
});
