// One file's changes drawn by react-diff-view (unified or split), with syntax tokens; placeholders for binary and too-large files.
// With `commenting`, the new side's line numbers are buttons that select lines to comment on (click, Shift+click or
// Shift+Enter to extend, or drag), commented lines are marked in the gutter, and what sits at a line (its comments, the
// form for the selection) is drawn under it.
import { type ReactNode, useMemo, useRef } from "react";
import {
  type ChangeData,
  Decoration,
  Diff,
  findChangeByNewLineNumber,
  getChangeKey,
  type GutterOptions,
  Hunk,
  type HunkData,
} from "react-diff-view";
import "react-diff-view/style/index.css";
import type { FileDiff } from "../../api/types";
import { diffTypeOf, languageOf, toHunkData } from "../../lib/diff";
import { diffTokens } from "../../lib/highlight";
import { inRange, type LineRange } from "../../lib/lineSelection";
import { DiffFileName, DiffStat, StatusLetter } from "./DiffFileList";

export type DiffMode = "unified" | "split";

export interface Commenting {
  /** The selected lines of this file, if any. */
  selection: LineRange | null;
  /** Lines under a comment that is not resolved. */
  commented: Set<number>;
  /** Picks a line; `extend` moves the selection's far end there. */
  onPick: (line: number, extend: boolean) => void;
  /** What to draw under a line (its comments, the form): by new-side line number. */
  below: Map<number, ReactNode>;
}

/** The working copy's line a change shows, or null for a removed line. */
export function newLineOf(change: ChangeData): number | null {
  if (change.type === "insert") return change.lineNumber;
  if (change.type === "normal") return change.newLineNumber;
  return null;
}

function Placeholder({ testId, children }: { testId: string; children: string }) {
  return (
    <p className="diff-placeholder" data-testid={testId}>
      {children}
    </p>
  );
}

/** react-diff-view's inputs for commenting: the selected changes, the widgets, and a gutter of line buttons. */
function useCommenting(hunks: HunkData[], commenting: Commenting | undefined) {
  // A drag in progress: the line it started at (mouse down) until the button is released.
  const dragging = useRef(false);
  return useMemo(() => {
    if (!commenting) return {};
    const { selection, commented, onPick, below } = commenting;
    const selectedChanges: string[] = [];
    if (selection) {
      for (const hunk of hunks) {
        for (const change of hunk.changes) {
          const line = newLineOf(change);
          if (line !== null && inRange(line, selection)) selectedChanges.push(getChangeKey(change));
        }
      }
    }
    const widgets: Record<string, ReactNode> = {};
    for (const [line, node] of below) {
      const change = findChangeByNewLineNumber(hunks, line);
      if (change) widgets[getChangeKey(change)] = node;
    }
    const renderGutter = ({ change, side, renderDefault }: GutterOptions) => {
      const line = newLineOf(change);
      if (side !== "new" || line === null) return renderDefault();
      const selected = selection !== null && inRange(line, selection);
      return (
        <button
          type="button"
          className="diff-line-pick"
          data-testid="diff-line-pick"
          data-line={line}
          data-commented={commented.has(line) || undefined}
          aria-pressed={selected}
          aria-label={`Line ${line}${commented.has(line) ? ", commented" : ""}: select to comment (Shift to extend)`}
          onMouseDown={(e) => {
            if (e.button !== 0) return;
            // No text selection while picking lines.
            e.preventDefault();
            dragging.current = true;
            onPick(line, e.shiftKey);
            const stop = () => {
              dragging.current = false;
              window.removeEventListener("mouseup", stop);
            };
            window.addEventListener("mouseup", stop);
          }}
          onMouseEnter={(e) => {
            if (dragging.current && e.buttons === 1) onPick(line, true);
          }}
          onClick={(e) => {
            // A mouse click was handled on mouse down; Enter and Space arrive here with no detail.
            if (e.detail === 0) onPick(line, e.shiftKey);
          }}
        >
          {line}
        </button>
      );
    };
    return { selectedChanges, widgets, renderGutter };
  }, [hunks, commenting]);
}

function FileBody({ file, mode, commenting }: { file: FileDiff; mode: DiffMode; commenting?: Commenting }) {
  const hunks = useMemo(() => file.hunks.map(toHunkData), [file.hunks]);
  const tokens = useMemo(() => diffTokens(hunks, languageOf(file.path)), [hunks, file.path]);
  const extra = useCommenting(hunks, commenting);
  if (file.binary) return <Placeholder testId="diff-binary">Binary file</Placeholder>;
  if (file.tooLarge) return <Placeholder testId="diff-too-large">Too large to show</Placeholder>;
  if (hunks.length === 0) return <Placeholder testId="diff-no-content">No changes to its content</Placeholder>;
  return (
    <Diff
      viewType={mode}
      diffType={diffTypeOf(file.status)}
      hunks={hunks}
      tokens={tokens}
      className="diff-table"
      {...extra}
    >
      {(shown) =>
        shown.flatMap((hunk) => [
          <Decoration key={`d${hunk.content}`} className="diff-hunk-header">
            {hunk.content}
          </Decoration>,
          <Hunk key={`h${hunk.content}`} hunk={hunk} />,
        ])
      }
    </Diff>
  );
}

export function FileDiffView({ file, mode, commenting }: { file: FileDiff; mode: DiffMode; commenting?: Commenting }) {
  return (
    <section className="file-diff" data-testid="file-diff" data-path={file.path} aria-label={`Changes to ${file.path}`}>
      <header className="file-diff-head">
        <StatusLetter status={file.status} />
        <DiffFileName file={file} />
        <DiffStat file={file} />
      </header>
      <div className="file-diff-body">
        <FileBody file={file} mode={mode} commenting={commenting} />
      </div>
    </section>
  );
}
