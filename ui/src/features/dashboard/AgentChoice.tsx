// The new-session form's agent line: which driver and model the first turn runs (the workspace default unless another is picked) and the driver's health as get_settings reports it (installed, version, signed in); what the engine cannot tell reads "unknown".
import type { DriverStatus, SettingsView } from "../../api/types";
import { InlineCode } from "../../components/InlineCode";
import { Badge } from "../../components/StateBadge";
import { signInLabel, signInTone, versionLabel } from "../../lib/agentHealth";
import { driverLabel, pickable } from "../../lib/driverChoice";

/** Older engines sent no version or sign-in: absent reads "unknown", as null does. */
type DriverHealth = Omit<DriverStatus, "version" | "signedIn"> & Partial<Pick<DriverStatus, "version" | "signedIn">>;

export interface AgentChoiceProps {
  settings: SettingsView | null;
  /** "" for the workspace default. */
  driver: string;
  onDriver: (driver: string) => void;
  model: string;
  onModel: (model: string) => void;
  disabled?: boolean;
}

/** "installed" for a local CLI, "configured" for an endpoint. */
function presence(status: DriverHealth): { tone: string; label: string } {
  const endpoint = status.id === "openai-compatible";
  if (status.available) return { tone: "success", label: endpoint ? "configured" : "installed" };
  return { tone: "danger", label: endpoint ? "not configured" : "not installed" };
}

/** The model the turn runs when none is typed. */
export function defaultModel(settings: SettingsView | null, driver: string): string {
  if (driver === "openai-compatible") return settings?.openaiModel ?? "none set";
  const status = settings?.drivers.find((d) => d.id === driver);
  return `${status ? driverLabel(status) : driver}'s default`;
}

export function AgentHealth({ status }: { status: DriverHealth }) {
  const { tone, label } = presence(status);
  return (
    <p
      className="agent-health small"
      data-testid="agent-health"
      data-driver={status.id}
      data-available={status.available}
    >
      <Badge tone={tone} testId="agent-installed">
        {label}
      </Badge>
      <span className="muted" data-testid="agent-detail" title={status.detail}>
        <InlineCode text={status.detail} />
      </span>
      {status.available && status.id !== "openai-compatible" && (
        <span data-testid="agent-version" title={status.version ?? undefined}>
          {versionLabel(status)}
        </span>
      )}
      {status.available && (
        <Badge tone={signInTone(status)} testId="agent-signed-in">
          {signInLabel(status)}
        </Badge>
      )}
    </p>
  );
}

export function AgentChoice({ settings, driver, onDriver, model, onModel, disabled }: AgentChoiceProps) {
  if (!settings) {
    return (
      <p className="hint" data-testid="agent-choice">
        Agent: the workspace default; its status is unknown until Settings answer.
      </p>
    );
  }
  const chosen = driver || settings.defaultDriver;
  const status = settings.drivers.find((d) => d.id === chosen) as DriverHealth | undefined;
  return (
    <div data-testid="agent-choice" data-driver={chosen}>
      <div className="agent-line">
        <label className="composer-field">
          <span className="field-label">Agent</span>
          <select
            value={chosen}
            onChange={(e) => onDriver(e.target.value === settings.defaultDriver ? "" : e.target.value)}
            disabled={disabled}
            data-testid="agent-driver"
          >
            {!settings.drivers.some((d) => d.id === settings.defaultDriver) && (
              <option value={settings.defaultDriver}>{settings.defaultDriver} (default)</option>
            )}
            {pickable(settings.drivers, chosen).map((d) => (
              <option key={d.id} value={d.id}>
                {driverLabel(d)}
                {d.id === settings.defaultDriver ? " (default)" : ""}
                {d.available ? "" : " (unavailable)"}
              </option>
            ))}
          </select>
        </label>
        <label className="composer-field">
          <span className="field-label">Model</span>
          <input
            className="input"
            value={model}
            onChange={(e) => onModel(e.target.value)}
            placeholder={defaultModel(settings, chosen)}
            disabled={disabled}
            data-testid="agent-model"
            autoComplete="off"
          />
        </label>
      </div>
      {status ? (
        <AgentHealth status={status} />
      ) : (
        <p className="agent-health small warn-text" data-testid="agent-health">
          {chosen} is not offered here.
        </p>
      )}
      {status && !status.available && (
        <p className="hint warn-text" data-testid="agent-unavailable">
          The first turn would fail: {chosen} cannot run here. Pick another agent, or fix it in Settings.
        </p>
      )}
    </div>
  );
}
