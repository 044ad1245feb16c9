// Workspace set-up: what Kiln detected in the repository (workflow, toolchains, setup command, the environment its commands get, every module's gate commands with their sources), editable, saved as kiln.toml (save_config) or left as detected.
import { useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { DetectedGate, DetectedModule, DetectionView, ToolchainCheck } from "../../api/types";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Icon } from "../../components/Icon";
import { InlineCode } from "../../components/InlineCode";
import { Loading } from "../../components/Loading";
import { Badge } from "../../components/StateBadge";
import {
  editedGates,
  formOf,
  isDirty,
  markSetupDone,
  orderedGates,
  saveArgsOf,
  type SetupForm,
  WORKFLOWS,
} from "../../lib/setup";
import { navigate, paths } from "../../router";
import { useStore } from "../../state/store";
import { useApp } from "../../state/useApp";
import { useDetection } from "../../state/useDetection";
import { SetupEnvironment } from "./SetupEnvironment";

export function SetupScreen() {
  const workspace = useApp()?.workspace ?? null;
  const { detection, error, loading, setDetection, reload } = useDetection();
  // Bumped by each save: the form starts again from the saved set-up.
  const [version, setVersion] = useState(0);
  if (!workspace) return null;
  const fromToml = detection ? detection.configPath !== null : workspace.configPath !== null;
  return (
    <section className="screen setup-screen" data-testid="setup-screen" aria-labelledby="setup-title">
      <a className="back" href={paths.dashboard}>
        ← Sessions
      </a>
      <div className="screen-head">
        <div>
          <h1 id="setup-title">Set up {workspace.name}</h1>
          <p className="lead setup-lead">
            {fromToml ? (
              <>
                This workspace's set-up comes from its <code>kiln.toml</code>. Change any command and save to replace
                it.
              </>
            ) : (
              <>
                Kiln read your repository's own tooling: how it works, what it needs installed, and the command of every
                gate with where it came from. Change anything, then save it as <code>kiln.toml</code>, or continue
                without saving: Kiln detects the same each time it opens this workspace.
              </>
            )}
          </p>
        </div>
        {fromToml ? (
          <Badge tone="success" testId="setup-origin">
            From kiln.toml
          </Badge>
        ) : (
          <Badge tone="info" testId="setup-origin">
            Detected
          </Badge>
        )}
      </div>
      {error && <ErrorMessage error={error} onRetry={reload} />}
      {!detection ? (
        loading && !error && <Loading label="Detecting your repository's tooling…" />
      ) : (
        <SetupFormView
          key={version}
          root={workspace.root}
          detection={detection}
          justSaved={version > 0}
          onSaved={(next) => {
            setDetection(next);
            setVersion((v) => v + 1);
          }}
        />
      )}
    </section>
  );
}

interface SetupFormProps {
  root: string;
  detection: DetectionView;
  /** The detection is save_config's answer: say where it was saved until something changes. */
  justSaved: boolean;
  onSaved: (next: DetectionView) => void;
}

function SetupFormView({ root, detection, justSaved, onSaved }: SetupFormProps) {
  const { backend, reloadApp } = useStore();
  const [form, setForm] = useState<SetupForm>(() => formOf(detection));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<KilnError | null>(null);
  // save_config answered CONFIG_EXISTS: offer to replace the file.
  const [exists, setExists] = useState(false);

  const dirty = isDirty(detection, form);
  const edited = new Set(editedGates(detection, form));
  const setGate = (moduleId: string, gate: string, command: string) =>
    setForm((f) => ({ ...f, gates: { ...f.gates, [moduleId]: { ...f.gates[moduleId], [gate]: command } } }));

  async function save(replace: boolean) {
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      const next = await backend.call("save_config", saveArgsOf(detection, form, replace));
      markSetupDone(root);
      setExists(false);
      onSaved(next);
      // The engine reopened the workspace with its kiln.toml: its workflow, roles and modules follow it.
      void reloadApp();
    } catch (e) {
      const err = toKilnError(e);
      setExists(err.code === "CONFIG_EXISTS");
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const skip = () => {
    markSetupDone(root);
    navigate(paths.dashboard);
  };

  return (
    <div className="setup-form">
      <h2 className="section-title">Workflow</h2>
      <div className="setup-workflows" role="radiogroup" aria-label="Workflow">
        {WORKFLOWS.map((w) => (
          <label
            key={w.id}
            className={`setup-workflow card${form.workflow === w.id ? " setup-workflow-on" : ""}`}
            data-testid={`workflow-${w.id}`}
          >
            <input
              type="radio"
              name="workflow"
              value={w.id}
              checked={form.workflow === w.id}
              onChange={() => setForm((f) => ({ ...f, workflow: w.id }))}
            />
            <span>
              <strong className="setup-workflow-name">
                {w.name}
                {w.id === detection.workflow && (
                  <span className="muted small"> {detection.configPath ? "· in kiln.toml" : "· the default"}</span>
                )}
              </strong>
              <span className="setup-workflow-text muted">{w.text}</span>
            </span>
          </label>
        ))}
      </div>

      <h2 className="section-title">Toolchains</h2>
      {detection.toolchains.length === 0 ? (
        <p className="muted small">This repository needs no toolchain Kiln knows about.</p>
      ) : (
        <ul className="setup-toolchains card" data-testid="setup-toolchains">
          {detection.toolchains.map((t) => (
            <ToolchainRow key={t.name} check={t} />
          ))}
        </ul>
      )}

      <h2 className="section-title">Setup</h2>
      <div className="card setup-setup">
        <label className="field-label" htmlFor="setup-command">
          Installs dependencies in each session's working copy
        </label>
        <input
          id="setup-command"
          className="input mono setup-input"
          data-testid="setup-command"
          value={form.setup}
          onChange={(e) => setForm((f) => ({ ...f, setup: e.target.value }))}
          placeholder="none"
          spellCheck={false}
          autoComplete="off"
        />
        <p className="setup-source muted small" data-testid="setup-source">
          {detection.setup
            ? form.setup.trim() === detection.setup.command
              ? `From ${detection.setup.source}`
              : `Edited; detected from ${detection.setup.source}`
            : form.setup.trim()
              ? "Edited; nothing was detected"
              : "No install step detected: sessions start without one."}
        </p>
      </div>

      <SetupEnvironment environment={detection.environment} configFiles={detection.configFiles} />

      <h2 className="section-title">Modules and their gates</h2>
      {detection.modules.length === 0 ? (
        <p className="muted small">No modules detected.</p>
      ) : (
        <div className="setup-modules">
          {detection.modules.map((m) => (
            <ModuleGates key={m.id} module={m} commands={form.gates[m.id] ?? {}} edited={edited} onChange={setGate} />
          ))}
        </div>
      )}

      <h2 className="section-title">kiln.toml</h2>
      <div className="setup-toml-box">
        <p className="muted small setup-toml-note" data-testid="setup-toml-note">
          {dirty
            ? "The set-up as it was detected; your changes are written when you save."
            : detection.configPath
              ? `The set-up in ${detection.configPath}.`
              : "What “Save as kiln.toml” writes at the root of the workspace."}
        </p>
        <pre className="setup-toml" data-testid="setup-toml" tabIndex={0}>
          {detection.toml}
        </pre>
      </div>

      <div className="setup-actions" data-testid="setup-actions">
        {error && <ErrorMessage error={error} subject={exists ? "kiln.toml exists" : "Save"} testId="setup-error" />}
        <div className="setup-buttons">
          {justSaved && !dirty && !error && detection.configPath && (
            <p className="setup-saved small" data-testid="setup-saved" role="status">
              <Icon name="check" size={14} />
              <span>
                Saved <code>{detection.configPath}</code>; Kiln reopened the workspace with it.
              </span>
            </p>
          )}
          {exists && (
            <>
              <span className="small warn-text">This workspace already has a kiln.toml.</span>
              <button
                type="button"
                className="btn btn-danger"
                onClick={() => void save(true)}
                disabled={busy}
                data-testid="replace-config"
              >
                Replace kiln.toml
              </button>
            </>
          )}
          <span className="grow" />
          {justSaved ? (
            <button type="button" className="btn" onClick={() => navigate(paths.dashboard)} data-testid="setup-done">
              Go to sessions
            </button>
          ) : (
            <button type="button" className="btn" onClick={skip} disabled={busy} data-testid="continue-without-saving">
              Continue without saving
            </button>
          )}
          <button
            type="button"
            className="btn btn-primary"
            onClick={() => void save(false)}
            disabled={busy}
            data-testid="save-config"
          >
            {busy ? "Saving…" : "Save as kiln.toml"}
          </button>
        </div>
      </div>
    </div>
  );
}

function ToolchainRow({ check }: { check: ToolchainCheck }) {
  return (
    <li
      className={`setup-toolchain${check.ok ? "" : " setup-toolchain-missing"}`}
      data-testid="toolchain"
      data-name={check.name}
      data-ok={check.ok}
    >
      <span className={`setup-toolchain-mark ${check.ok ? "ok" : "bad"}`}>
        <Icon name={check.ok ? "check" : "alert"} size={14} />
      </span>
      <code className="setup-toolchain-name">{check.name}</code>
      <span className="setup-toolchain-found small">
        {check.found ? <>found {check.found}</> : <span className="setup-missing">not found</span>}
      </span>
      <span className="setup-toolchain-required muted small">
        {check.required ? <>requires {check.required}</> : "any version"}
      </span>
      {!check.ok && (
        <p className="setup-toolchain-message" data-testid="toolchain-message">
          <InlineCode text={check.message ?? `Install ${check.name}${check.required ? ` ${check.required}` : ""}.`} />
        </p>
      )}
    </li>
  );
}

interface ModuleGatesProps {
  module: DetectedModule;
  commands: Record<string, string>;
  /** "module/gate" keys of the gates whose command was edited. */
  edited: Set<string>;
  onChange: (moduleId: string, gate: string, command: string) => void;
}

function ModuleGates({ module, commands, edited, onChange }: ModuleGatesProps) {
  return (
    <section className="setup-module card" data-testid="setup-module" data-module={module.id} aria-label={module.id}>
      <h3 className="setup-module-head">
        <code className="module-id">{module.id}</code>
        <span className="muted small mono">{module.directory === "." ? "the whole repository" : module.directory}</span>
        <span className={`toolchain toolchain-${module.toolchain}`}>{module.toolchain}</span>
      </h3>
      <table className="setup-gates">
        <thead>
          <tr>
            <th scope="col">Gate</th>
            <th scope="col">Command</th>
            <th scope="col">From</th>
          </tr>
        </thead>
        <tbody>
          {orderedGates(module.gates).map((g) => (
            <GateLine
              key={g.gate}
              moduleId={module.id}
              gate={g}
              value={commands[g.gate] ?? ""}
              edited={edited.has(`${module.id}/${g.gate}`)}
              onChange={(v) => onChange(module.id, g.gate, v)}
            />
          ))}
        </tbody>
      </table>
    </section>
  );
}

interface GateLineProps {
  moduleId: string;
  gate: DetectedGate;
  value: string;
  edited: boolean;
  onChange: (value: string) => void;
}

function GateLine({ moduleId, gate, value, edited, onChange }: GateLineProps) {
  const id = `${moduleId}-${gate.gate}`;
  const off = value.trim() === "";
  return (
    <tr
      className={off ? "setup-gate setup-gate-off" : "setup-gate"}
      data-testid="setup-gate"
      data-gate={gate.gate}
      data-configured={!off}
    >
      <th scope="row" className="setup-gate-name">
        <label htmlFor={`gate-${id}`}>{gate.gate}</label>
      </th>
      <td className="setup-gate-command">
        <input
          id={`gate-${id}`}
          className="input mono setup-input"
          data-testid={`gate-command-${id}`}
          value={value}
          onChange={(e) => onChange(e.target.value)}
          placeholder="not configured"
          spellCheck={false}
          autoComplete="off"
        />
      </td>
      <td className="setup-gate-source small" data-testid={`gate-source-${id}`}>
        {off ? (
          <>
            <span className="setup-tag setup-tag-off">not configured</span>
            <span className="setup-gate-hint muted" data-testid={`gate-hint-${id}`}>
              {edited && gate.command ? (
                <>
                  Turned off; detected: <code>{gate.command}</code>
                </>
              ) : (
                <InlineCode text={gate.hint ?? "No command applies."} />
              )}
            </span>
          </>
        ) : edited ? (
          <>
            <span className="setup-tag setup-tag-edited">edited</span>
            <span className="muted">{gate.command ? `detected from ${gate.source}` : "nothing was detected"}</span>
          </>
        ) : (
          <span className="muted">{gate.source}</span>
        )}
      </td>
    </tr>
  );
}
