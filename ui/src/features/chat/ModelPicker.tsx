// The composer's model: a list of what the agent offers (list_models: the endpoint's own list, Claude Code's aliases), with "Other…" for a typed id where the list is not all the agent takes; a plain field when the agent lists nothing.
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { keys } from "../../state/queries";
import { useBackend } from "../../state/store";

const OTHER = "\u0000other";

export interface ModelPickerProps {
  driver: string;
  value: string;
  onChange: (model: string) => void;
  /** The model a turn runs with when none is chosen, when the list does not say. */
  placeholder: string;
  disabled: boolean;
}

/** "Default (scripted)"; just "Default" when the agent's own default has no name here. */
function defaultLabel(model: string): string {
  return model && model !== "default" ? `Default (${model})` : "Default";
}

export function ModelPicker({ driver, value, onChange, placeholder, disabled }: ModelPickerProps) {
  const { backend } = useBackend();
  const query = useQuery({
    queryKey: keys.models(driver),
    queryFn: () => backend.call("list_models", { driver }),
    enabled: driver !== "",
    staleTime: 60_000,
    retry: false,
  });
  const [typing, setTyping] = useState(false);
  const list = query.data;
  const models = list?.models ?? [];
  const field = (
    <input
      className="input"
      value={value}
      onChange={(e) => onChange(e.target.value)}
      placeholder={placeholder}
      disabled={disabled}
      data-testid="model"
      aria-label="Model"
      autoComplete="off"
      title={list?.source}
    />
  );
  if (!list || models.length === 0) return field;

  const typed = !list.complete && (typing || (value !== "" && !models.includes(value)));
  const chosen = typed ? OTHER : models.includes(value) ? value : "";
  return (
    <span className="model-picker">
      <select
        value={chosen}
        onChange={(e) => {
          const next = e.target.value;
          setTyping(next === OTHER);
          onChange(next === OTHER ? "" : next);
        }}
        disabled={disabled}
        data-testid="model-picker"
        aria-label="Model"
        title={`From ${list.source}`}
      >
        <option value="">{defaultLabel(list.defaultModel ?? placeholder)}</option>
        {models.map((m) => (
          <option key={m} value={m}>
            {m}
          </option>
        ))}
        {!list.complete && <option value={OTHER}>Other…</option>}
      </select>
      {typed && field}
    </span>
  );
}
