// The terminal contract's types (docs: /work/tools/terminal-contract.md), held here until the engine's generated ones land in api/types.ts.
export type TerminalKind = "shell" | "claude" | "codex";

export type TerminalState = "running" | "exited";

export interface TerminalView {
  id: string;
  sessionId: string;
  kind: TerminalKind;
  title: string;
  cols: number;
  rows: number;
  state: TerminalState;
  exitCode: number | null;
  startedAt: string;
  endedAt: string | null;
}

export type TerminalChunk = { type: "output"; data: string } | { type: "exit"; exitCode: number | null };

export interface OpenTerminalArgs {
  sessionId: string;
  kind: TerminalKind;
  cols?: number | null;
  rows?: number | null;
}
