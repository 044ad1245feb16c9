// One candidate's column of the comparison: its agent, state (waiting included), change size, gates with test counts, review verdicts, tokens and cost, elapsed time and newest screenshot, with Open (its session) and Pick.
import type { CandidateView, GateStatus } from "../../api/types";
import { Badge } from "../../components/StateBadge";
import {
  agentLabel,
  candidateName,
  candidateState,
  changeLabel,
  elapsedLabel,
  gatesPass,
  testsLabel,
} from "../../lib/candidates";
import { statusLabel } from "../../lib/gates";
import { costNote, formatCost, formatTokens } from "../../lib/usage";
import { paths } from "../../router";
import { CandidateScreenshot } from "./CandidateScreenshot";

const STATUS_TONE: Record<GateStatus, string> = {
  passed: "success",
  failed: "danger",
  "failing-before": "warn",
  skipped: "warn",
  "not-configured": "muted",
};

export interface CandidateColumnProps {
  candidate: CandidateView;
  picked: boolean;
  /** Another candidate was picked: this one lost. */
  decided: boolean;
  picking: boolean;
  onPick: () => void;
}

export function CandidateColumn({ candidate: c, picked, decided, picking, onPick }: CandidateColumnProps) {
  const ran = c.gates.filter((g) => g.status !== "not-configured");
  const state = candidateState(c);
  return (
    <article
      className={picked ? "candidate candidate-picked" : "candidate"}
      data-testid="candidate"
      data-session-id={c.sessionId}
      aria-label={`${candidateName(c)}: ${agentLabel(c)}`}
    >
      <header className="candidate-head">
        <h2 className="candidate-name">{candidateName(c)}</h2>
        <code className="candidate-agent" data-testid="candidate-agent">
          {agentLabel(c)}
        </code>
        {picked && (
          <Badge tone="success" testId="candidate-picked">
            Picked
          </Badge>
        )}
      </header>
      <dl className="candidate-facts">
        <dt>State</dt>
        <dd data-testid="candidate-state" data-waiting={c.waiting || undefined}>
          {state}
        </dd>
        <dt>Changes</dt>
        <dd data-testid="candidate-changes">{changeLabel(c)}</dd>
        <dt>Gates</dt>
        <dd data-testid="candidate-gates" data-pass={gatesPass(c.gates) || undefined}>
          {ran.length === 0 ? (
            <span className="muted">none ran yet</span>
          ) : (
            <ul className="candidate-gate-list">
              {ran.map((g) => (
                <li
                  key={`${g.module ?? ""}:${g.gate}`}
                  data-testid="candidate-gate"
                  data-gate={g.gate}
                  data-status={g.status}
                >
                  <Badge tone={STATUS_TONE[g.status] ?? "neutral"}>{statusLabel(g.status)}</Badge> <span>{g.gate}</span>
                  {g.module && <code className="muted small"> {g.module}</code>}
                  {testsLabel(g) && (
                    <span className="small" data-testid="candidate-tests">
                      {" "}
                      · {testsLabel(g)}
                    </span>
                  )}
                </li>
              ))}
            </ul>
          )}
        </dd>
        <dt>Review</dt>
        <dd data-testid="candidate-review">
          {c.reviews.length === 0 ? (
            <span className="muted">none</span>
          ) : (
            c.reviews.map((r) => (
              <div key={r.moduleId} title={r.summary}>
                <Badge tone={r.stale ? "muted" : r.passed ? "success" : "danger"}>
                  {r.stale ? "stale" : r.passed ? "pass" : "changes"}
                </Badge>{" "}
                <code className="small">{r.moduleId}</code>
              </div>
            ))
          )}
        </dd>
        <dt>Usage</dt>
        <dd data-testid="candidate-usage" title={costNote(c.usage)}>
          {c.usage.turns === 0 ? "no turns yet" : `${formatTokens(c.usage)} · ${formatCost(c.usage)}`}
        </dd>
        <dt>Time</dt>
        <dd data-testid="candidate-elapsed">{elapsedLabel(c.elapsedMs)}</dd>
      </dl>
      <CandidateScreenshot sessionId={c.sessionId} screenshotId={c.screenshotId} />
      <div className="candidate-actions">
        <a className="btn" href={paths.session(c.sessionId)} data-testid="candidate-open">
          Open
        </a>
        {picked ? (
          <a className="btn btn-primary" href={paths.deliver(c.sessionId)} data-testid="candidate-deliver">
            Deliver
          </a>
        ) : (
          <button
            type="button"
            className="btn btn-primary"
            onClick={onPick}
            disabled={picking || c.archivedAt !== null}
            data-testid="candidate-pick"
            title={
              decided
                ? "Pick this one instead: the current winner stays as it is"
                : "Keep this one for delivery and archive the others (their checkpoints stay)"
            }
          >
            {picking ? "Picking…" : "Pick"}
          </button>
        )}
      </div>
    </article>
  );
}
