// Settings: the default driver, the planner agent, driver binaries, the OpenAI-compatible endpoint and its write-only key; Save sends only changes.
import { type FormEvent, useState } from "react";
import { type KilnError, toKilnError } from "../api/backend";
import type { SettingsView, UpdateSettingsArgs } from "../api/types";
import { ErrorMessage } from "../components/ErrorMessage";
import { Loading } from "../components/Loading";
import { Badge } from "../components/StateBadge";
import { paths } from "../router";
import { useStore } from "../state/store";
import { useSettings } from "../state/useSettings";

/** The editable text fields, as the form holds them ("" for unset). */
export interface SettingsForm {
  defaultDriver: string;
  claudePath: string;
  codexPath: string;
  openaiBaseUrl: string;
  openaiModel: string;
  plannerAgent: boolean;
}

const TEXT_FIELDS = ["defaultDriver", "claudePath", "codexPath", "openaiBaseUrl", "openaiModel"] as const;

export function formOf(view: SettingsView): SettingsForm {
  return {
    defaultDriver: view.defaultDriver,
    claudePath: view.claudePath ?? "",
    codexPath: view.codexPath ?? "",
    openaiBaseUrl: view.openaiBaseUrl ?? "",
    openaiModel: view.openaiModel ?? "",
    plannerAgent: view.plannerAgent,
  };
}

/** The update to send: only fields that differ from the view ("" clears); the key only when typed or cleared. */
export function changedFields(view: SettingsView, form: SettingsForm, key: string, clearKey: boolean): UpdateSettingsArgs {
  const before = formOf(view);
  const args: UpdateSettingsArgs = {};
  for (const field of TEXT_FIELDS) {
    const value = form[field].trim();
    if (value !== before[field].trim()) args[field] = value;
  }
  if (form.plannerAgent !== before.plannerAgent) args.plannerAgent = form.plannerAgent;
  if (clearKey) args.openaiKey = "";
  else if (key.trim()) args.openaiKey = key.trim();
  return args;
}

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
  // The key typed here is sent once and never shown back: the view only carries its fingerprint.
  const [key, setKey] = useState("");
  const [clearKey, setClearKey] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<KilnError | null>(null);

  const changes = changedFields(view, form, key, clearKey);
  const dirty = Object.keys(changes).length > 0;
  const urlChanged = "openaiBaseUrl" in changes;
  const needsKey = urlChanged && view.openaiKeyFingerprint !== null && !key.trim() && !clearKey;
  const set = (field: (typeof TEXT_FIELDS)[number]) => (value: string) => {
    setForm((f) => ({ ...f, [field]: value }));
  };
  const driverIds = view.drivers.map((d) => d.id);
  if (!driverIds.includes(view.defaultDriver)) driverIds.unshift(view.defaultDriver);

  async function save(e: FormEvent) {
    e.preventDefault();
    if (!dirty || busy) return;
    setBusy(true);
    setError(null);
    try {
      const next = await backend.call("update_settings", changes);
      setKey("");
      onSaved(next);
    } catch (err) {
      setError(toKilnError(err));
      setBusy(false);
    }
  }

  return (
    <form className="card form settings" onSubmit={(e) => void save(e)} data-testid="settings-form">
      <label className="field-label" htmlFor="default-driver">
        Default driver
      </label>
      <select id="default-driver" value={form.defaultDriver} onChange={(e) => set("defaultDriver")(e.target.value)} data-testid="default-driver">
        {driverIds.map((id) => (
          <option key={id} value={id}>
            {id}
          </option>
        ))}
      </select>

      <label className="checkbox settings-checkbox">
        <input
          type="checkbox"
          checked={form.plannerAgent}
          onChange={(e) => setForm((f) => ({ ...f, plannerAgent: e.target.checked }))}
          data-testid="planner-agent"
        />
        Let the planner agent amend the rules' classification of a new session
      </label>

      <h2 className="section-title">Drivers</h2>
      <ul className="driver-list" data-testid="driver-list">
        {view.drivers.map((d) => (
          <li key={d.id} className="driver-item" data-driver={d.id} data-available={d.available}>
            <code>{d.id}</code>
            <Badge tone={d.available ? "success" : "muted"}>{d.available ? "available" : "unavailable"}</Badge>
            <span className="muted small driver-detail">{d.detail}</span>
          </li>
        ))}
      </ul>

      <TextField id="claude-path" label="Claude Code binary" value={form.claudePath} onChange={set("claudePath")} placeholder="found on PATH" hint="An absolute path; leave empty to search PATH." />
      <TextField id="codex-path" label="Codex binary" value={form.codexPath} onChange={set("codexPath")} placeholder="found on PATH" hint="An absolute path; leave empty to search PATH." />

      <h2 className="section-title">OpenAI-compatible endpoint</h2>
      <TextField id="openai-base-url" label="Base URL" value={form.openaiBaseUrl} onChange={set("openaiBaseUrl")} placeholder="https://api.example.com/v1" />
      <TextField id="openai-model" label="Model" value={form.openaiModel} onChange={set("openaiModel")} placeholder="e.g. gpt-4.1" />

      <label className="field-label" htmlFor="openai-key">
        API key
      </label>
      <input
        id="openai-key"
        className="input"
        type="password"
        value={key}
        onChange={(e) => {
          setKey(e.target.value);
          setClearKey(false);
        }}
        placeholder={view.openaiKeyFingerprint ? "type a new key to replace the stored one" : "not set"}
        autoComplete="new-password"
        spellCheck={false}
        data-testid="openai-key"
      />
      <div className="key-status">
        {view.openaiKeyFingerprint && !clearKey && (
          <>
            <span className="muted small" data-testid="key-fingerprint">
              stored: <code>{view.openaiKeyFingerprint}</code>
            </span>
            <button type="button" className="btn btn-small btn-danger-ghost" onClick={() => { setClearKey(true); setKey(""); }} data-testid="clear-key">
              Clear
            </button>
          </>
        )}
        {clearKey && (
          <>
            <span className="warn-text small">The stored key is removed when you save.</span>
            <button type="button" className="btn btn-small" onClick={() => setClearKey(false)}>
              Keep it
            </button>
          </>
        )}
      </div>
      {needsKey && (
        <p className="hint warn-text" data-testid="key-needed">
          Give the API key again with the new base URL: a stored key is never sent to another host.
        </p>
      )}

      {error && <ErrorMessage error={error} />}
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
    </form>
  );
}

interface TextFieldProps {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  placeholder?: string;
  hint?: string;
}

function TextField({ id, label, value, onChange, placeholder, hint }: TextFieldProps) {
  return (
    <>
      <label className="field-label" htmlFor={id}>
        {label}
      </label>
      <input id={id} className="input" value={value} onChange={(e) => onChange(e.target.value)} placeholder={placeholder} autoComplete="off" spellCheck={false} data-testid={id} />
      {hint && <p className="hint">{hint}</p>}
    </>
  );
}
