// What the chat's running command row shows live: the row it belongs to (the last row still running) and what the command has printed so far, from the session's live view.
import { createContext, useContext } from "react";
import type { Row } from "../../lib/transcript";

export interface RunningOutput {
  /** The key of the row the output belongs to: the last tool row still running. */
  rowKey: string | null;
  /** The end of what the command printed so far; null when the agent reports output only at the end. */
  output: string | null;
}

export const RunningOutputContext = createContext<RunningOutput>({ rowKey: null, output: null });

/** The key of the last tool row still running, which a live output belongs to. */
export function runningRowKey(rows: Row[]): string | null {
  for (let i = rows.length - 1; i >= 0; i--) {
    const row = rows[i];
    if (row.type === "tool" && row.status === "running") return row.key;
  }
  return null;
}

/** The live output for `rowKey`, when it is the running row. */
export function useRunningOutput(rowKey: string): string | null {
  const running = useContext(RunningOutputContext);
  return running.rowKey === rowKey ? running.output : null;
}
