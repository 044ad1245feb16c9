// The Gates tab's compact summary: a red count of failed gates, an amber count of gates failing as they did before the session, a green check when a module gate ran and every gate that ran passed, a spinner while checking, a neutral dash when the gates have not run (yet, or since a restore).
import type { GateResultView, TranscriptEntry } from "../../api/types";
import { countGates } from "../../lib/gates";
import { gateFreshness } from "../../lib/gateFreshness";
import { Icon } from "../../components/Icon";

export interface GatesTabBadgeProps {
  gates: GateResultView[] | null;
  checking?: boolean;
  /** The session's transcript: a restore after the last gate run makes the results stale. */
  entries?: TranscriptEntry[];
}

export function GatesTabBadge({ gates, checking = false, entries }: GatesTabBadgeProps) {
  if (checking) {
    return (
      <span className="tab-badge tab-badge-checking" data-testid="tab-gates-summary" data-state="checking">
        <span className="spinner" aria-hidden="true" />
        <span className="sr-only"> (checking)</span>
      </span>
    );
  }
  if (!gates) return null;
  // Never a pass (or a failure) the files as they are did not earn.
  const freshness = gateFreshness(gates, entries);
  if (freshness !== "current") {
    const title = freshness === "stale" ? "Not run on the files as they are" : "Not run yet";
    return (
      <span
        className="tab-badge tab-badge-neutral"
        data-testid="tab-gates-summary"
        data-state={freshness}
        title={title}
      >
        –<span className="sr-only"> ({title.toLowerCase()})</span>
      </span>
    );
  }
  const { passed, failed, "failing-before": before } = countGates(gates);
  if (failed > 0) {
    return (
      <span
        className="tab-badge tab-badge-failed"
        data-testid="tab-gates-summary"
        data-state="failed"
        title={`${failed} failed`}
      >
        {failed}
        <span className="sr-only"> failed</span>
      </span>
    );
  }
  // Failures there before the session block nothing, but they are no pass either.
  if (before > 0) {
    return (
      <span
        className="tab-badge tab-badge-before"
        data-testid="tab-gates-summary"
        data-state="failing-before"
        title={`${before} failing before: the failures were there before this session`}
      >
        {before}
        <span className="sr-only"> failing before</span>
      </span>
    );
  }
  // Skipped gates alone are not a pass.
  if (passed === 0) return null;
  return (
    <span
      className="tab-badge tab-badge-passed"
      data-testid="tab-gates-summary"
      data-state="passed"
      title="Every gate that ran passed"
    >
      <Icon name="check" size={11} />
      <span className="sr-only"> (all passed)</span>
    </span>
  );
}
