// The Gates tab: each gate's latest result grouped per module (the working copy's first), counts, and "Run gates" (check_modules); a not-configured gate is neutral and a failure there before the session amber, never a failure of the change; "not run yet" until a module gate ran, and after a restore.
import type { ReactNode } from "react";
import type { TranscriptEntry } from "../../api/types";
import type { GateCounts, GateGroup } from "../../lib/gates";
import { type GateFreshness, gateFreshness } from "../../lib/gateFreshness";
import { countGates, groupGates, statusLabel } from "../../lib/gates";
import type { GatesState } from "../../state/useGates";
import { ErrorMessage } from "../../components/ErrorMessage";
import { GateRow } from "./GateRow";
import { Loading } from "../../components/Loading";

export interface GatesPanelProps {
  gates: GatesState;
  /** The session's modules in their order (the groups follow it). */
  moduleOrder?: string[];
  /** A turn runs: gates cannot be checked now. */
  running: boolean;
  /** The session's transcript: a restore after the last gate run makes the results stale. */
  entries?: TranscriptEntry[];
}

/** Why the results shown do not vouch for the files as they are (null when they do). */
function FreshnessNote({ freshness, empty }: { freshness: GateFreshness; empty: boolean }) {
  if (freshness === "current") return null;
  if (freshness === "stale") {
    return (
      <div className="gates-note" role="status" data-testid="gates-not-run" data-state="stale">
        <p>
          <strong>Not run on the files as they are.</strong> These results are of the files before a restore or a change
          since.
        </p>
        <p className="muted small">Run gates runs them on the files as they are now; so does the next turn.</p>
      </div>
    );
  }
  return (
    <div className={empty ? undefined : "gates-note"} role="status" data-testid="gates-not-run" data-state="not-run">
      <p>
        <strong>Not run yet.</strong>
        {empty ? "" : " Only Kiln's own checks of the working copy ran; no module gate has."}
      </p>
      <p className="muted small">Gates run when a turn changes files; Run gates runs them all now.</p>
    </div>
  );
}

/** "5 passed · 1 failed · 1 failing before · 2 skipped · 1 not configured", leaving out zeros. */
export function GateCountsText({ counts }: { counts: GateCounts }) {
  const parts = (["passed", "failed", "failing-before", "skipped", "not-configured"] as const).filter(
    (s) => counts[s] > 0,
  );
  return (
    <span className="gates-summary small" data-testid="gates-summary">
      {parts.map((s, i) => (
        <span key={s} className={`gates-count gates-count-${s}`}>
          {i > 0 && " · "}
          {counts[s]} {statusLabel(s)}
        </span>
      ))}
    </span>
  );
}

function GateGroupView({ group }: { group: GateGroup }) {
  const title = group.module ?? "Working copy";
  const failed = group.gates.some((g) => g.status === "failed");
  return (
    <section className="gate-group" data-testid="gate-group" data-module={group.module ?? ""} aria-label={title}>
      <h3 className={`gate-group-title${failed ? " gate-group-failed" : ""}`}>
        {group.module ? <code className="module-id">{group.module}</code> : <span>Working copy</span>}
        {!group.module && <span className="muted small gate-group-note">specifications and manifests</span>}
      </h3>
      <ul className="gate-rows">
        {group.gates.map((g) => (
          <GateRow key={g.id} gate={g} />
        ))}
      </ul>
    </section>
  );
}

export function GatesPanel({ gates, moduleOrder = [], running, entries }: GatesPanelProps) {
  const { gates: list, loading, error, checking, checkError, reload, check } = gates;
  const busy = checking || running;
  const freshness = list ? gateFreshness(list, entries) : null;

  let body: ReactNode;
  if (list === null) {
    body = error ? null : <Loading label="Loading gates…" />;
  } else if (list.length === 0) {
    body = (
      <div className="gates-empty" data-testid="gates-empty">
        <FreshnessNote freshness="not-run" empty />
      </div>
    );
  } else {
    body = (
      <div
        className={freshness === "stale" ? "gate-groups gate-groups-stale" : "gate-groups"}
        data-freshness={freshness ?? undefined}
      >
        {freshness && <FreshnessNote freshness={freshness} empty={false} />}
        {groupGates(list, moduleOrder).map((group) => (
          <GateGroupView key={group.module ?? ""} group={group} />
        ))}
      </div>
    );
  }

  return (
    <div className="gates-panel" data-testid="gates-panel" aria-busy={loading || checking || undefined}>
      <div className="gates-toolbar">
        {list && list.length > 0 && freshness !== "stale" && <GateCountsText counts={countGates(list)} />}
        {loading && list && <span className="muted small gates-refreshing">Refreshing…</span>}
        {running && !checking && <span className="muted small">Gates can be checked once the turn ends.</span>}
        <button
          type="button"
          className="btn btn-small gates-check"
          onClick={() => void check()}
          disabled={busy}
          aria-busy={checking || undefined}
          title={running ? "The session is running" : "Run every gate now, on the files as they are"}
          data-testid="check-modules"
          data-state={checking ? "running" : "idle"}
        >
          {checking && <span className="spinner" aria-hidden="true" />}
          {checking ? "Running gates…" : "Run gates"}
        </button>
      </div>
      {checkError && <ErrorMessage error={checkError} subject="Run gates" testId="check-modules-error" />}
      {error && <ErrorMessage error={error} onRetry={reload} testId="gates-error" />}
      {body}
    </div>
  );
}
