// A delivery run's steps as they happen: state, title, module and duration, with the output behind a toggle (a failed step's is open).
import { useState } from "react";
import type { DeliveryStep, StepState } from "../../api/types";
import { formatDuration } from "../../lib/gates";
import { Icon, type IconName } from "../../components/Icon";

const STEP_ICON: Record<StepState, IconName | null> = {
  pending: null,
  running: null,
  passed: "check",
  failed: "cross",
  skipped: "skip",
};

function duration(step: DeliveryStep): string | null {
  if (!step.startedAt || !step.endedAt) return null;
  const ms = Date.parse(step.endedAt) - Date.parse(step.startedAt);
  return Number.isNaN(ms) ? null : formatDuration(ms);
}

function StepRow({ step }: { step: DeliveryStep }) {
  const [open, setOpen] = useState<boolean | null>(null);
  const shown = open ?? step.state === "failed";
  const icon = STEP_ICON[step.state];
  const took = duration(step);
  return (
    <li
      className={`delivery-step step-${step.state}`}
      data-testid="delivery-step"
      data-state={step.state}
      data-step={step.id}
    >
      <div className="step-head">
        <span className={`step-state step-state-${step.state}`}>
          {step.state === "running" ? (
            <span className="pulse" aria-hidden="true" />
          ) : icon ? (
            <Icon name={icon} size={13} />
          ) : (
            <span className="step-dot" aria-hidden="true" />
          )}
          {step.state}
        </span>
        <span className="step-title">{step.title}</span>
        {step.moduleId && <code className="module-id">{step.moduleId}</code>}
        {took && <span className="muted small">{took}</span>}
        {step.output && (
          <button
            type="button"
            className="btn btn-small step-toggle"
            aria-expanded={shown}
            onClick={() => setOpen(!shown)}
            data-testid="step-output-toggle"
          >
            Output
          </button>
        )}
      </div>
      {shown && step.output && (
        <pre className="gate-output" data-testid="step-output" tabIndex={0}>
          {step.output}
        </pre>
      )}
    </li>
  );
}

export function DeliverySteps({ steps }: { steps: DeliveryStep[] }) {
  return (
    <ol className="delivery-steps" data-testid="delivery-steps">
      {steps.map((s) => (
        <StepRow key={s.id} step={s} />
      ))}
    </ol>
  );
}
