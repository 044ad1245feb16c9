// One gate's latest result: status (passed, failed, an amber "failing before" for a failure there before the session, a neutral "skipped", "not run" or "not configured" with its hint), name, duration, command and where it came from, time, the verdict's note, and its output behind a toggle.
import { useId, useState } from "react";
import type { GateResultView, GateStatus } from "../../api/types";
import {
  formatDuration,
  gateDisplayName,
  gateLabel,
  gateNoteText,
  gateNotRun,
  gateOutput,
  gateRan,
} from "../../lib/gates";
import { Icon, type IconName } from "../../components/Icon";
import { InlineCode } from "../../components/InlineCode";
import { RelativeTime } from "../../components/RelativeTime";
import { commandSummary } from "../../lib/commandSummary";

const STATUS_ICON: Record<GateStatus, IconName> = {
  passed: "check",
  failed: "cross",
  "failing-before": "alert",
  skipped: "skip",
  "not-configured": "dash",
};

/**
 * The status pill; each status has its own class, so neither a skipped nor a not-configured gate takes the passed
 * (or failed) look, and a failure there before the session is not red. `note` tells a gate that was not run.
 */
export function GateStatusLabel({ status, note = "" }: { status: GateStatus; note?: string }) {
  const notRun = gateNotRun({ status, note });
  return (
    <span
      className={`gate-status gate-status-${status}${notRun ? " gate-status-not-run" : ""}`}
      data-testid="gate-status"
    >
      <Icon name={STATUS_ICON[status]} size={13} />
      {gateLabel({ status, note })}
    </span>
  );
}

/** The verdict in words under the gate: which failures are new, which were there before, why it did not run. */
export function GateNote({ gate }: { gate: GateResultView }) {
  const text = gateNoteText(gate);
  if (!text) return null;
  return (
    <p className={`gate-note gate-note-${gate.status} small`} data-testid="gate-note">
      <InlineCode text={text} />
    </p>
  );
}

/** Where a gate's command came from (`package.json scripts.test`, `kiln.toml`…), small and muted. */
export function GateSource({ source, testId = "gate-source" }: { source: string; testId?: string }) {
  if (!source) return null;
  return (
    <span className="gate-source muted small" title={`From ${source}`} data-testid={testId}>
      {source}
    </span>
  );
}

export function GateOutput({ gate }: { gate: GateResultView }) {
  const { head, tail } = gateOutput(gate);
  if (!head && !tail) {
    return (
      <p className="gate-output-none muted small" data-testid="gate-output">
        No output.
      </p>
    );
  }
  return (
    <pre className="gate-output" data-testid="gate-output" tabIndex={0}>
      <span data-testid="gate-output-head">{head}</span>
      {tail && (
        <>
          {"\n"}
          <span
            className="gate-output-gap"
            data-testid="gate-output-gap"
            title="Output left out between the head and the tail"
          >
            …
          </span>
          {"\n"}
          <span data-testid="gate-output-tail">{tail}</span>
        </>
      )}
    </pre>
  );
}

export function GateRow({ gate }: { gate: GateResultView }) {
  const [open, setOpen] = useState(false);
  const outputId = useId();
  const ran = gateRan(gate.status);
  // A gate with no command has no output to show: the engine puts its hint where the output goes.
  if (gate.status === "not-configured") {
    const hint = gate.outputHead.trim();
    return (
      <li
        className="gate-row gate-row-not-configured"
        data-testid="gate-row"
        data-status={gate.status}
        data-gate={gate.gate}
      >
        <div className="gate-head">
          <GateStatusLabel status={gate.status} />
          <span className="gate-name" data-testid="gate-name" title={gate.gate}>
            {gateDisplayName(gate)}
          </span>
          <span className="gate-what">
            <span className="gate-hint small" data-testid="gate-hint">
              <InlineCode text={hint || "No command applies to this module."} />
            </span>
            {/* "turned off in kiln.toml …" already says where from. */}
            {!hint.includes(gate.source) && <GateSource source={gate.source} />}
          </span>
          <span className="gate-meta small">
            <RelativeTime value={gate.at} />
          </span>
        </div>
        {(gate.note ?? "").trim() !== hint && <GateNote gate={gate} />}
      </li>
    );
  }
  return (
    <li
      className={`gate-row gate-row-${gate.status}`}
      data-testid="gate-row"
      data-status={gate.status}
      data-gate={gate.gate}
    >
      <div className="gate-head">
        <GateStatusLabel status={gate.status} note={gate.note} />
        <span className="gate-name" data-testid="gate-name" title={gate.gate}>
          {gateDisplayName(gate)}
        </span>
        <span className="gate-what">
          {gate.command ? (
            <code className="gate-command" title={gate.command} data-testid="gate-command">
              {commandSummary(gate.command)}
            </code>
          ) : (
            <span className="gate-command gate-command-none muted small" data-testid="gate-command">
              no command applies
            </span>
          )}
          <GateSource source={gate.source} />
        </span>
        <span className="gate-meta small">
          {(gate.status === "failed" || gate.status === "failing-before") && gate.exitCode !== null && (
            <span className="gate-exit">exit {gate.exitCode}</span>
          )}
          <span className="gate-duration" data-testid="gate-duration">
            {ran ? formatDuration(gate.durationMs) : "—"}
          </span>
          <RelativeTime value={gate.at} />
        </span>
        <button
          type="button"
          className="gate-toggle btn btn-small"
          aria-expanded={open}
          aria-controls={outputId}
          onClick={() => setOpen((o) => !o)}
          data-testid="gate-output-toggle"
        >
          <Icon name="chevron" size={12} className="gate-toggle-icon" />
          Output
        </button>
      </div>
      <GateNote gate={gate} />
      <div id={outputId} hidden={!open}>
        {open && commandSummary(gate.command) !== gate.command && (
          <p className="gate-full-command small" data-testid="gate-full-command">
            Ran <code>{gate.command}</code>
          </p>
        )}
        {open && <GateOutput gate={gate} />}
      </div>
    </li>
  );
}
