// One file's changes drawn by react-diff-view (unified or split), with syntax tokens; placeholders for binary and too-large files.
import { useMemo } from "react";
import { Decoration, Diff, Hunk } from "react-diff-view";
import "react-diff-view/style/index.css";
import type { FileDiff } from "../../api/types";
import { diffTypeOf, languageOf, toHunkData } from "../../lib/diff";
import { diffTokens } from "../../lib/highlight";
import { DiffFileName, DiffStat, StatusLetter } from "./DiffFileList";

export type DiffMode = "unified" | "split";

function Placeholder({ testId, children }: { testId: string; children: string }) {
  return (
    <p className="diff-placeholder" data-testid={testId}>
      {children}
    </p>
  );
}

function FileBody({ file, mode }: { file: FileDiff; mode: DiffMode }) {
  const hunks = useMemo(() => file.hunks.map(toHunkData), [file.hunks]);
  const tokens = useMemo(() => diffTokens(hunks, languageOf(file.path)), [hunks, file.path]);
  if (file.binary) return <Placeholder testId="diff-binary">Binary file</Placeholder>;
  if (file.tooLarge) return <Placeholder testId="diff-too-large">Too large to show</Placeholder>;
  if (hunks.length === 0) return <Placeholder testId="diff-no-content">No changes to its content</Placeholder>;
  return (
    <Diff viewType={mode} diffType={diffTypeOf(file.status)} hunks={hunks} tokens={tokens} className="diff-table">
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

export function FileDiffView({ file, mode }: { file: FileDiff; mode: DiffMode }) {
  return (
    <section className="file-diff" data-testid="file-diff" data-path={file.path} aria-label={`Changes to ${file.path}`}>
      <header className="file-diff-head">
        <StatusLetter status={file.status} />
        <DiffFileName file={file} />
        <DiffStat file={file} />
      </header>
      <div className="file-diff-body">
        <FileBody file={file} mode={mode} />
      </div>
    </section>
  );
}
