// The Settings screen's ACP agents: each preset (Gemini CLI, OpenCode, Goose, the Claude and Codex adapters) found or missing with its version, the command to install it and a path field; then the custom command line and its environment lines (write-only: only the variables' names come back).
import type { SettingsView } from "../../api/types";
import { InlineCode } from "../../components/InlineCode";
import type { SecretInput } from "../../components/SecretField";
import { Badge } from "../../components/StateBadge";
import { TextField } from "../../components/TextField";
import { versionLabel } from "../../lib/agentHealth";
import { ACP_CUSTOM, type SettingsForm } from "./settingsForm";

export interface AcpAgentsFieldsProps {
  view: SettingsView;
  form: SettingsForm;
  onCommand: (value: string) => void;
  onPath: (id: string, value: string) => void;
  env: SecretInput;
  onEnv: (input: SecretInput) => void;
}

export function AcpAgentsFields({ view, form, onCommand, onPath, env, onEnv }: AcpAgentsFieldsProps) {
  const agents = view.acpAgents ?? [];
  if (agents.length === 0) return null;
  const statusOf = (id: string) => view.drivers.find((d) => d.id === id);
  const presets = agents.filter((a) => a.id !== ACP_CUSTOM);
  const names = view.acpCustomEnvNames ?? [];
  const saved = agents.find((a) => a.id === ACP_CUSTOM)?.command.trim() ?? "";
  return (
    <div data-testid="acp-agents">
      <h2 className="section-title">ACP agents</h2>
      <p className="hint">
        Agents Kiln drives through the Agent Client Protocol. An installed one can be picked in the composer like Claude
        Code; it keeps its own login and provider settings.
      </p>
      <ul className="driver-list" data-testid="acp-agent-list">
        {presets.map((agent) => {
          const status = statusOf(agent.id);
          const found = status?.available === true;
          return (
            <li key={agent.id} className="driver-item" data-driver={agent.id} data-available={found}>
              <strong>{agent.name}</strong>
              <code className="small">{agent.command}</code>
              <Badge tone={found ? "success" : "muted"} testId="acp-found">
                {found ? "found" : "missing"}
              </Badge>
              {found && (
                <span className="small" data-testid="acp-version" title={status?.version ?? undefined}>
                  {versionLabel(status ?? {})}
                </span>
              )}
              <span className="muted small driver-detail" data-testid="acp-detail">
                {found ? (
                  <InlineCode text={status?.detail ?? ""} />
                ) : (
                  <>
                    Install: <code data-testid="acp-install">{agent.installHint}</code>
                  </>
                )}
              </span>
            </li>
          );
        })}
      </ul>
      <details className="acp-paths">
        <summary className="small">Binary paths, for agents not on PATH</summary>
        {presets.map((agent) => (
          <TextField
            key={agent.id}
            id={`acp-path-${agent.id.slice("acp:".length)}`}
            label={`${agent.name} binary`}
            value={form.acpPaths[agent.id] ?? ""}
            onChange={(value) => onPath(agent.id, value)}
            placeholder={statusOf(agent.id)?.available ? `found: ${statusOf(agent.id)?.detail}` : "not found on PATH"}
          />
        ))}
        <p className="hint">An absolute path; leave empty to search PATH.</p>
      </details>

      <h3 className="field-label">Custom ACP agent</h3>
      <TextField
        id="acp-custom-command"
        label="Command line"
        value={form.acpCustomCommand}
        onChange={onCommand}
        placeholder="e.g. my-agent --acp"
        hint="The program and its arguments, quoted as in a shell; it is run directly, never through a shell."
      />
      {/* The status is the saved command's: said only while the field still holds it. */}
      {saved !== "" && form.acpCustomCommand.trim() === saved && statusOf(ACP_CUSTOM) && (
        <p className="hint" data-testid="acp-custom-status">
          <Badge tone={statusOf(ACP_CUSTOM)?.available ? "success" : "muted"}>
            {statusOf(ACP_CUSTOM)?.available ? "found" : "missing"}
          </Badge>{" "}
          {statusOf(ACP_CUSTOM)?.available && `${versionLabel(statusOf(ACP_CUSTOM) ?? {})} · `}
          <InlineCode text={statusOf(ACP_CUSTOM)?.detail ?? ""} />
        </p>
      )}
      <label className="field-label" htmlFor="acp-custom-env">
        Environment
      </label>
      <textarea
        id="acp-custom-env"
        className="input textarea acp-env"
        rows={3}
        value={env.value}
        onChange={(e) => onEnv({ value: e.target.value, clear: false })}
        placeholder={
          names.length > 0 ? "type every KEY=VALUE line again to replace the stored ones" : "KEY=VALUE, one a line"
        }
        spellCheck={false}
        autoComplete="off"
        data-testid="acp-custom-env"
      />
      <div className="key-status">
        {names.length > 0 && !env.clear && (
          <>
            <span className="muted small" data-testid="acp-env-names">
              stored, sealed: {names.join(", ")}
            </span>
            <button
              type="button"
              className="btn btn-small btn-danger-ghost"
              onClick={() => onEnv({ value: "", clear: true })}
              data-testid="clear-acp-env"
            >
              Clear
            </button>
          </>
        )}
        {env.clear && (
          <>
            <span className="warn-text small">The stored environment is removed when you save.</span>
            <button type="button" className="btn btn-small" onClick={() => onEnv({ value: "", clear: false })}>
              Keep it
            </button>
          </>
        )}
      </div>
    </div>
  );
}
