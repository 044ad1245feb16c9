// "Compare diffs": two candidates picked, the second's tree against the first's (compare_candidates), shown with the Changes tab's file list and diff.
import { useState } from "react";
import type { CandidateView } from "../../api/types";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { agentLabel, candidateName } from "../../lib/candidates";
import { diffFiles } from "../../lib/diff";
import { useCompare } from "../../state/useGroup";
import { DiffFileList } from "../changes/DiffFileList";
import { type DiffMode, FileDiffView } from "../changes/FileDiffView";

export interface CompareDiffsProps {
  groupId: string;
  candidates: CandidateView[];
  /** Changes when the comparison was fetched again: the trees may have changed. */
  refreshKey: number;
}

function CandidateSelect(props: {
  label: string;
  value: string;
  candidates: CandidateView[];
  onChange: (id: string) => void;
  testId: string;
}) {
  return (
    <label className="composer-field">
      <span className="field-label">{props.label}</span>
      <select value={props.value} onChange={(e) => props.onChange(e.target.value)} data-testid={props.testId}>
        {props.candidates.map((c) => (
          <option key={c.sessionId} value={c.sessionId}>
            {candidateName(c)}: {agentLabel(c)}
          </option>
        ))}
      </select>
    </label>
  );
}

export function CompareDiffs({ groupId, candidates, refreshKey }: CompareDiffsProps) {
  const [left, setLeft] = useState(candidates[0]?.sessionId ?? "");
  const [right, setRight] = useState(candidates[1]?.sessionId ?? "");
  const [selected, setSelected] = useState<string | null>(null);
  const [mode, setMode] = useState<DiffMode>("unified");
  const { diff, loading, error } = useCompare(groupId, left || null, right || null, refreshKey);
  const files = diffFiles(diff);
  const shown = files.find((f) => f.key === selected) ?? files[0] ?? null;
  const same = left === right;

  return (
    <section className="card compare-diffs" aria-labelledby="compare-title" data-testid="compare-diffs">
      <div className="compare-head">
        <h2 id="compare-title" className="section-title">
          Compare diffs
        </h2>
        <CandidateSelect label="From" value={left} candidates={candidates} onChange={setLeft} testId="compare-left" />
        <CandidateSelect label="To" value={right} candidates={candidates} onChange={setRight} testId="compare-right" />
        <button
          type="button"
          className="btn btn-small"
          aria-pressed={mode === "split"}
          onClick={() => setMode((m) => (m === "split" ? "unified" : "split"))}
          data-testid="diff-mode"
        >
          Side by side
        </button>
      </div>
      {error && <ErrorMessage error={error} />}
      {same ? (
        <p className="muted small">Pick two different candidates to compare their trees.</p>
      ) : !diff ? (
        !error && loading && <Loading label="Comparing…" />
      ) : files.length === 0 ? (
        <p className="diff-empty muted" data-testid="diff-empty">
          Their trees are the same
        </p>
      ) : (
        <div className="diff-panel" data-mode={mode}>
          <div className="diff-content">
            <DiffFileList files={files} selected={shown?.key ?? null} onSelect={setSelected} />
            <div className="diff-viewer" data-testid="diff-viewer">
              {shown && <FileDiffView key={shown.key} file={shown.file} mode={mode} />}
            </div>
          </div>
        </div>
      )}
    </section>
  );
}
