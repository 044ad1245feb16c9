// The new-session form's fan-out: 2 to 5 candidate rows, each an agent and a model (the form's own AgentChoice), with Add and Remove.
import type { SettingsView } from "../../api/types";
import { AgentChoice } from "../dashboard/AgentChoice";
import { addRow, type CandidateRow, MAX_CANDIDATES, MIN_CANDIDATES, removeRow, updateRow } from "../../lib/candidates";

export interface CandidateRowsProps {
  settings: SettingsView | null;
  rows: CandidateRow[];
  onRows: (rows: CandidateRow[]) => void;
  disabled?: boolean;
}

export function CandidateRows({ settings, rows, onRows, disabled }: CandidateRowsProps) {
  return (
    <div data-testid="candidate-rows">
      <ol className="candidate-rows">
        {rows.map((row, i) => (
          <li key={row.key} className="candidate-row" data-testid="candidate-row">
            <span className="candidate-row-number">
              <span className="sr-only">Candidate </span>
              {i + 1}
            </span>
            <AgentChoice
              settings={settings}
              driver={row.driver}
              onDriver={(driver) => onRows(updateRow(rows, row.key, { driver }))}
              model={row.model}
              onModel={(model) => onRows(updateRow(rows, row.key, { model }))}
              disabled={disabled}
            />
            <button
              type="button"
              className="btn btn-small"
              onClick={() => onRows(removeRow(rows, row.key))}
              disabled={disabled || rows.length <= MIN_CANDIDATES}
              data-testid="candidate-remove"
              aria-label={`Remove candidate ${i + 1}`}
            >
              Remove
            </button>
          </li>
        ))}
      </ol>
      <button
        type="button"
        className="btn btn-small"
        onClick={() => onRows(addRow(rows))}
        disabled={disabled || rows.length >= MAX_CANDIDATES}
        data-testid="candidate-add"
      >
        Add a candidate
      </button>
      <p className="hint">
        Each candidate is a session of its own, in its own working copy, sent the brief with its agent and model. Kiln
        runs as many turns at once as <code>[session] max_parallel_turns</code> allows; the others wait for a free slot.
      </p>
    </div>
  );
}
