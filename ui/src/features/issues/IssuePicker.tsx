// "From a GitHub issue" on the new-session screen: paste an issue's address (or its number), or pick one of the delivery repository's open issues; the issue's title shows before the session is created.
import { useEffect, useState } from "react";
import type { IssueSummary } from "../../api/types";
import { ErrorMessage } from "../../components/ErrorMessage";
import { useIssue, useIssues } from "../../state/useIssues";
import { findListed, readIssueInput } from "./issueInput";

/** How long the field waits after the last keystroke before it asks GitHub. */
export const LOOKUP_DELAY_MS = 400;

interface Props {
  value: string;
  onChange: (value: string) => void;
  disabled?: boolean;
}

export function IssuePicker({ value, onChange, disabled }: Props) {
  const { issues, error: listError, loading: listLoading, reload } = useIssues(true);
  const input = readIssueInput(value);
  const listed = findListed(input, issues);
  // Ask about a typed address or number only once typing pauses, and only when the list lacks it.
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), LOOKUP_DELAY_MS);
    return () => clearTimeout(timer);
  }, [value]);
  const ask = input && !listed && settled === value && !listLoading ? value.trim() : null;
  const looked = useIssue(ask);
  const chosen = listed ?? looked.issue;

  return (
    <div className="issue-picker" data-testid="issue-picker">
      <label className="field-label" htmlFor="issue">
        Issue address or number
      </label>
      <input
        id="issue"
        className="input"
        data-testid="issue-input"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        placeholder="https://github.com/owner/name/issues/12, or #12"
        autoComplete="off"
        disabled={disabled}
      />
      <div className="issue-chosen" role="status" aria-live="polite">
        {value.trim() === "" ? null : !input ? (
          <p className="hint">Paste an issue's address, or type its number in the delivery repository.</p>
        ) : chosen ? (
          <p className="issue-title" data-testid="issue-title">
            <span className="muted">#{chosen.number}</span> {chosen.title}{" "}
            <span className="muted small">by {chosen.author}</span>
          </p>
        ) : looked.error ? (
          <ErrorMessage error={looked.error} />
        ) : (
          <p className="hint">Looking up the issue…</p>
        )}
      </div>
      <div className="issue-list-head">
        <span className="small muted">Open issues</span>
        <button type="button" className="btn btn-small" onClick={reload} disabled={disabled || listLoading}>
          {listLoading ? "Loading…" : "Reload"}
        </button>
      </div>
      {listError ? (
        <ErrorMessage error={listError} />
      ) : issues && issues.length === 0 ? (
        <p className="hint">The repository has no open issues.</p>
      ) : (
        issues && (
          <ul className="issue-list" data-testid="issue-list">
            {issues.map((issue) => (
              <IssueRow
                key={issue.number}
                issue={issue}
                picked={chosen?.url === issue.url}
                disabled={disabled}
                onPick={() => onChange(issue.url)}
              />
            ))}
          </ul>
        )
      )}
    </div>
  );
}

function IssueRow({
  issue,
  picked,
  disabled,
  onPick,
}: {
  issue: IssueSummary;
  picked: boolean;
  disabled?: boolean;
  onPick: () => void;
}) {
  return (
    <li>
      <button
        type="button"
        className={picked ? "issue-row picked" : "issue-row"}
        aria-pressed={picked}
        onClick={onPick}
        disabled={disabled}
        data-testid="issue-row"
      >
        <span className="muted">#{issue.number}</span>
        <span className="issue-row-title">{issue.title}</span>
        {issue.labels.map((label) => (
          <span key={label} className="chip">
            {label}
          </span>
        ))}
        <span className="muted small">{issue.author}</span>
      </button>
    </li>
  );
}
