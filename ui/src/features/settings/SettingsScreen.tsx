// Settings: the default driver (asking first before saving an unavailable one), the planner agent, the command policy with how commands are confined here, the offered drivers (binaries, OpenAI-compatible endpoint and write-only key), the ACP agents, the connected application and delivery; Save sends only changes. The MCP servers are saved one at a time, below.
import { type FormEvent, useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { SettingsView } from "../../api/types";
import { DeliverySettingsFields } from "../delivery/DeliverySettingsFields";
import { AcpAgentsFields } from "./AcpAgentsFields";
import { McpServersSection } from "./McpServersSection";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { ErrorMessage } from "../../components/ErrorMessage";
import { InlineCode } from "../../components/InlineCode";
import { Loading } from "../../components/Loading";
import { SecretField } from "../../components/SecretField";
import { Badge } from "../../components/StateBadge";
import { TextField } from "../../components/TextField";
import { paths } from "../../router";
import { useStore } from "../../state/store";
import { signInLabel, signInTone, versionLabel } from "../../lib/agentHealth";
import { driverLabel, isAcp, pickable } from "../../lib/driverChoice";
import { useSettings } from "../../state/useSettings";
import { SendKeySetting } from "../shortcuts/SendKeySetting";
import {
  binaryPlaceholder,
  changedFields,
  COMMAND_POLICIES,
  confinementTone,
  formOf,
  needsSecret,
  NO_SECRETS,
  type Secrets,
  type SettingsForm,
  type TextFieldName,
  unavailableDefault,
} from "./settingsForm";

export function SettingsScreen() {
  const { settings, error, loading, setSettings, reload } = useSettings();
  const [version, setVersion] = useState(0);
  return (
    <section className="screen narrow" aria-labelledby="settings-title">
      <a className="back" href={paths.dashboard}>
        ← Sessions
      </a>
      <h1 id="settings-title">Settings</h1>
      <p className="lead">How this workspace runs its agents. Settings are stored in the workspace's Kiln database.</p>
      {error && <ErrorMessage error={error} onRetry={reload} />}
      {!settings ? (
        loading && !error && <Loading label="Loading settings…" />
      ) : (
        <SettingsFormView
          key={version}
          view={settings}
          justSaved={version > 0}
          onSaved={(next) => {
            setSettings(next);
            setVersion((v) => v + 1);
          }}
        />
      )}
      {settings && (
        <McpServersSection
          view={settings}
          onChanged={setSettings}
          readOnly={!settings.drivers.some((d) => d.id === "claude")}
        />
      )}
      <h2 className="section-title">Keyboard</h2>
      <SendKeySetting />
    </section>
  );
}

interface SettingsFormProps {
  view: SettingsView;
  /** The view is update_settings' answer: say "Saved" until something changes. */
  justSaved: boolean;
  onSaved: (next: SettingsView) => void;
}

function SettingsFormView({ view, justSaved, onSaved }: SettingsFormProps) {
  const { backend } = useStore();
  const [form, setForm] = useState<SettingsForm>(() => formOf(view));
  // Secrets typed here are sent once and never shown back: the view only carries their fingerprints.
  const [secrets, setSecrets] = useState<Secrets>(NO_SECRETS);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<KilnError | null>(null);
  // Save with an unavailable default driver waits here for the operator's word.
  const [confirming, setConfirming] = useState(false);

  const changes = changedFields(view, form, secrets);
  const dirty = Object.keys(changes).length > 0;
  const keyNeeded = needsSecret("openaiBaseUrl" in changes, view.openaiKeyFingerprint, secrets.openaiKey);
  const tokenNeeded = needsSecret("bridgeUrl" in changes, view.bridgeTokenFingerprint, secrets.bridgeToken);
  // The server's refusal of an API URL change goes next to that field.
  const apiError = error?.code === "INVALID_INPUT" && "deliveryApiUrl" in changes;
  const set = (field: TextFieldName) => (value: string) => setForm((f) => ({ ...f, [field]: value }));
  const setSecret = (name: keyof Secrets) => (input: Secrets[keyof Secrets]) =>
    setSecrets((s) => ({ ...s, [name]: input }));
  // Only the drivers this server offers (self-hosted: bring-your-own-key only).
  const offered = new Set(view.drivers.map((d) => d.id));
  const defaultOffered = offered.has(view.defaultDriver);
  const confined = confinementTone(view.confinement);

  const unavailable = unavailableDefault(view, changes);
  const statusOf = (id: string) => view.drivers.find((d) => d.id === id);

  function save(e: FormEvent) {
    e.preventDefault();
    if (!dirty || busy) return;
    if (unavailable) setConfirming(true);
    else void send();
  }

  async function send() {
    setConfirming(false);
    setBusy(true);
    setError(null);
    try {
      onSaved(await backend.call("update_settings", changes));
    } catch (err) {
      setError(toKilnError(err));
      setBusy(false);
    }
  }

  return (
    <form className="card form settings" onSubmit={save} data-testid="settings-form">
      <label className="field-label" htmlFor="default-driver">
        Default driver
      </label>
      <select
        id="default-driver"
        value={form.defaultDriver}
        onChange={(e) => set("defaultDriver")(e.target.value)}
        data-testid="default-driver"
      >
        {!defaultOffered && (
          <option value={view.defaultDriver} disabled>
            {view.defaultDriver} (not offered here)
          </option>
        )}
        {pickable(view.drivers, form.defaultDriver).map((d) => (
          <option key={d.id} value={d.id}>
            {d.available ? driverLabel(d) : `${driverLabel(d)} (unavailable)`}
          </option>
        ))}
      </select>
      {statusOf(form.defaultDriver)?.available === false && (
        <p className="hint warn-text" data-testid="default-driver-unavailable">
          {driverLabel(statusOf(form.defaultDriver) ?? { id: form.defaultDriver })} is unavailable:{" "}
          <InlineCode text={statusOf(form.defaultDriver)?.detail ?? ""} />
        </p>
      )}

      <label className="checkbox settings-checkbox">
        <input
          type="checkbox"
          checked={form.plannerAgent}
          onChange={(e) => setForm((f) => ({ ...f, plannerAgent: e.target.checked }))}
          data-testid="planner-agent"
        />
        Let the planner agent amend the rules' classification of a new session
      </label>

      <h2 className="section-title">Commands</h2>
      <p className="field-label" id="command-policy-label">
        What agents may run
      </p>
      <div role="radiogroup" aria-labelledby="command-policy-label" data-testid="command-policy">
        {COMMAND_POLICIES.map((p) => (
          <label key={p.value} className="checkbox settings-checkbox">
            <input
              type="radio"
              name="command-policy"
              value={p.value}
              checked={form.commandPolicy === p.value}
              disabled={p.value === "workdir" && !view.commandsAllowed}
              onChange={() => setForm((f) => ({ ...f, commandPolicy: p.value }))}
              data-testid={`command-policy-${p.value}`}
            />
            {p.label} <span className="muted small">{p.hint}</span>
          </label>
        ))}
      </div>
      {!view.commandsAllowed && (
        <p className="hint" data-testid="commands-not-allowed">
          This server lets agents run no commands. Its operator can allow them by starting it with{" "}
          <code style={{ whiteSpace: "nowrap" }}>kiln serve --allow-agent-commands</code>.
        </p>
      )}
      <p className="hint confinement" data-testid="confinement" data-available={view.confinement.available}>
        <Badge tone={confined.tone}>{confined.label}</Badge> {view.confinement.detail}
      </p>

      <h2 className="section-title">Drivers</h2>
      <ul className="driver-list" data-testid="driver-list">
        {view.drivers
          .filter((d) => !isAcp(d.id))
          .map((d) => (
            <li key={d.id} className="driver-item" data-driver={d.id} data-available={d.available}>
              <code>{d.id}</code>
              <Badge tone={d.available ? "success" : "muted"}>{d.available ? "available" : "unavailable"}</Badge>
              {d.available && d.id !== "openai-compatible" && (
                <span className="small" data-testid="driver-version" title={d.version ?? undefined}>
                  {versionLabel(d)}
                </span>
              )}
              {d.available && (
                <Badge tone={signInTone(d)} testId="driver-signed-in">
                  {signInLabel(d)}
                </Badge>
              )}
              <span className="muted small driver-detail">
                <InlineCode text={d.detail} />
              </span>
            </li>
          ))}
      </ul>

      {offered.has("claude") && (
        <TextField
          id="claude-path"
          label="Claude Code binary"
          value={form.claudePath}
          onChange={set("claudePath")}
          placeholder={binaryPlaceholder(statusOf("claude"))}
          hint="An absolute path; leave empty to search PATH."
        />
      )}
      {offered.has("codex") && (
        <TextField
          id="codex-path"
          label="Codex binary"
          value={form.codexPath}
          onChange={set("codexPath")}
          placeholder={binaryPlaceholder(statusOf("codex"))}
          hint="An absolute path; leave empty to search PATH."
        />
      )}

      {offered.has("openai-compatible") && (
        <>
          <h2 className="section-title">OpenAI-compatible endpoint</h2>
          <TextField
            id="openai-base-url"
            label="Base URL"
            value={form.openaiBaseUrl}
            onChange={set("openaiBaseUrl")}
            placeholder="https://api.example.com/v1"
          />
          <TextField
            id="openai-model"
            label="Model"
            value={form.openaiModel}
            onChange={set("openaiModel")}
            placeholder="e.g. gpt-4.1"
          />
          <SecretField
            id="openai-key"
            label="API key"
            noun="key"
            input={secrets.openaiKey}
            onChange={setSecret("openaiKey")}
            fingerprint={view.openaiKeyFingerprint}
            fingerprintTestId="key-fingerprint"
            clearTestId="clear-key"
          />
          {keyNeeded && (
            <p className="hint warn-text" data-testid="key-needed">
              Give the API key again with the new base URL: a stored key is never sent to another host.
            </p>
          )}
        </>
      )}

      <AcpAgentsFields
        view={view}
        form={form}
        onCommand={set("acpCustomCommand")}
        onPath={(id, value) => setForm((f) => ({ ...f, acpPaths: { ...f.acpPaths, [id]: value } }))}
        env={secrets.acpCustomEnv}
        onEnv={setSecret("acpCustomEnv")}
      />

      <h2 className="section-title">Connected application</h2>
      <p className="hint">
        The application the preview talks to. Its access token is stored sealed, bound to this address.
      </p>
      <TextField
        id="bridge-url"
        label="Address"
        value={form.bridgeUrl}
        onChange={set("bridgeUrl")}
        placeholder="https://app.example.com"
      />
      <SecretField
        id="bridge-token"
        label="Access token"
        noun="token"
        input={secrets.bridgeToken}
        onChange={setSecret("bridgeToken")}
        fingerprint={view.bridgeTokenFingerprint}
        fingerprintTestId="bridge-token-fingerprint"
        clearTestId="clear-bridge-token"
      />
      {tokenNeeded && (
        <p className="hint warn-text" data-testid="bridge-token-needed">
          Give the access token again with the new address: a stored token is never sent to another host.
        </p>
      )}

      <DeliverySettingsFields
        view={view.delivery}
        form={form}
        set={set}
        token={secrets.deliveryToken}
        onToken={setSecret("deliveryToken")}
        apiError={apiError ? error : null}
      />

      {error && !apiError && <ErrorMessage error={error} />}
      <div className="form-actions">
        {justSaved && !dirty && (
          <span className="muted small" role="status" data-testid="saved">
            Saved.
          </span>
        )}
        <button type="submit" className="btn btn-primary" disabled={!dirty || busy} data-testid="save-settings">
          {busy ? "Saving…" : "Save"}
        </button>
      </div>
      {confirming && unavailable && (
        <ConfirmDialog
          title={`Make ${driverLabel(unavailable)} the default while it is unavailable?`}
          confirmLabel="Save anyway"
          onConfirm={() => void send()}
          onCancel={() => setConfirming(false)}
        >
          <p data-testid="unavailable-default-reason">
            New sessions would start with <code>{driverLabel(unavailable)}</code>, which cannot run here:{" "}
            <InlineCode text={unavailable.detail} />
          </p>
          <p className="muted small">Their turns fail until it is installed or configured.</p>
        </ConfirmDialog>
      )}
    </form>
  );
}
