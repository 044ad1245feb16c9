// The delivery target: a choice only when more than one target can be used; targets that cannot, listed with the reason.
import type { DeliveryTarget, TargetOption } from "../../api/types";

export const TARGET_LABEL: Record<DeliveryTarget, string> = {
  workspace: "Into the workspace",
  "git-pr": "As a pull request",
};

export interface TargetChoiceProps {
  options: TargetOption[];
  value: DeliveryTarget;
  onChange: (target: DeliveryTarget) => void;
  disabled?: boolean;
}

export function TargetChoice({ options, value, onChange, disabled }: TargetChoiceProps) {
  const usable = options.filter((o) => o.available);
  const unusable = options.filter((o) => !o.available);
  return (
    <div className="target-choice">
      {usable.length > 1 ? (
        <div className="segmented" role="radiogroup" aria-label="Delivery target">
          {usable.map((o) => (
            <button
              key={o.target}
              type="button"
              role="radio"
              aria-checked={o.target === value}
              className={o.target === value ? "btn btn-small btn-selected" : "btn btn-small"}
              disabled={disabled}
              onClick={() => onChange(o.target)}
              data-testid={`target-${o.target}`}
            >
              {TARGET_LABEL[o.target] ?? o.target}
            </button>
          ))}
        </div>
      ) : (
        <p className="small" data-testid="target-only">
          Target: <strong>{TARGET_LABEL[value] ?? value}</strong>
        </p>
      )}
      {unusable.length > 0 && (
        <ul className="target-unavailable muted small" data-testid="targets-unavailable">
          {unusable.map((o) => (
            <li key={o.target} data-target={o.target}>
              {TARGET_LABEL[o.target] ?? o.target}: {o.reason ?? "not available"}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
