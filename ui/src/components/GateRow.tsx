// One gate's latest result: status (passed, failed, or a neutral "skipped"), name, duration, command, time, and its output behind a toggle.
import { useId, useState } from "react";
import type { GateResultView, GateStatus } from "../api/types";
import { formatDuration, gateOutput } from "../lib/gates";
import { Icon, type IconName } from "./Icon";
import { RelativeTime } from "./RelativeTime";

const STATUS_ICON: Record<GateStatus, IconName> = { passed: "check", failed: "cross", skipped: "skip" };

/** The status pill; each status has its own class, so a skipped gate never takes the passed look. */
export function GateStatusLabel({ status }: { status: GateStatus }) {
  return (
    <span className={`gate-status gate-status-${status}`} data-testid="gate-status">
      <Icon name={STATUS_ICON[status]} size={13} />
      {status}
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
          <span className="gate-output-gap" data-testid="gate-output-gap" title="Output left out between the head and the tail">
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
  const skipped = gate.status === "skipped";
  return (
    <li className={`gate-row gate-row-${gate.status}`} data-testid="gate-row" data-status={gate.status} data-gate={gate.gate}>
      <div className="gate-head">
        <GateStatusLabel status={gate.status} />
        <span className="gate-name" data-testid="gate-name">
          {gate.gate}
        </span>
        {gate.command ? (
          <code className="gate-command" title={gate.command} data-testid="gate-command">
            {gate.command}
          </code>
        ) : (
          <span className="gate-command gate-command-none muted small" data-testid="gate-command">
            no command applies
          </span>
        )}
        <span className="gate-meta small">
          {gate.status === "failed" && gate.exitCode !== null && <span className="gate-exit">exit {gate.exitCode}</span>}
          <span className="gate-duration" data-testid="gate-duration">
            {skipped ? "—" : formatDuration(gate.durationMs)}
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
      <div id={outputId} hidden={!open}>
        {open && <GateOutput gate={gate} />}
      </div>
    </li>
  );
}
