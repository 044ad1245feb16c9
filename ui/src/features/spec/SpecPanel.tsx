// A module's specification (get_spec): sanitized Markdown under a status badge, and an editor that saves it (save_spec).
import { useEffect, useId, useRef, useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { SessionView, SpecView, TranscriptEntry } from "../../api/types";
import { useStore } from "../../state/store";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { Md } from "../../components/Markdown";
import { Badge } from "../../components/StateBadge";

/** What a new specification starts from. */
export function specTemplate(moduleId: string): string {
  return `---\nstatus: draft\n---\n# ${moduleId}\n`;
}

/** The text without its leading `---` front matter (the status badge shows what matters of it). */
export function specBody(text: string): string {
  const m = /^\uFEFF?---[ \t]*\r?\n[\s\S]*?\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  return m ? text.slice(m[0].length) : text;
}

/** Changes when a specification may have changed: each new entry once no turn runs (none is fetched mid-turn). */
export function specRefreshKey(session: SessionView, entries: TranscriptEntry[] | undefined): string {
  return session.running ? "running" : `idle:${entries?.length ?? 0}`;
}

export function SpecStatus({ spec }: { spec: SpecView }) {
  if (spec.approved)
    return (
      <Badge tone="success" testId="spec-status">
        approved
      </Badge>
    );
  return <Badge tone="warn" testId="spec-status">{`${spec.status ?? "no status"} · not approved`}</Badge>;
}

/** Give it `key={moduleId}` where the module can change: its state belongs to one module. */
export interface SpecPanelProps {
  sessionId: string;
  moduleId: string;
  /** False for a closed session: read only. */
  editable?: boolean;
  /** A turn runs: saving waits for it to end. */
  running?: boolean;
  /** The specification is fetched again whenever this changes. */
  refreshKey?: string | number;
}

export function SpecPanel({ sessionId, moduleId, editable = true, running = false, refreshKey }: SpecPanelProps) {
  const { backend } = useStore();
  const textId = useId();
  const [spec, setSpec] = useState<SpecView | null>(null);
  const [loadError, setLoadError] = useState<KilnError | null>(null);
  const [draft, setDraft] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<KilnError | null>(null);
  // Answers that arrive after a newer request (a refetch racing a save) are dropped.
  const requestRef = useRef(0);

  useEffect(() => {
    const request = ++requestRef.current;
    backend
      .call("get_spec", { sessionId, moduleId })
      .then((view) => {
        if (request !== requestRef.current) return;
        setSpec(view);
        setLoadError(null);
      })
      .catch((e: unknown) => {
        if (request === requestRef.current) setLoadError(toKilnError(e));
      });
  }, [backend, sessionId, moduleId, refreshKey]);

  async function save() {
    if (draft === null) return;
    const request = ++requestRef.current;
    setSaving(true);
    setSaveError(null);
    try {
      const view = await backend.call("save_spec", { sessionId, moduleId, text: draft });
      // A fetch started since (the save's own transcript entry triggers one) reads this text or newer.
      if (request === requestRef.current) {
        setSpec(view);
        setLoadError(null);
      }
      setDraft(null);
    } catch (e) {
      setSaveError(toKilnError(e));
    } finally {
      setSaving(false);
    }
  }

  function edit() {
    setSaveError(null);
    setDraft(spec?.text ?? specTemplate(moduleId));
  }

  function cancel() {
    setSaveError(null);
    setDraft(null);
  }

  if (draft !== null) {
    return (
      <div className="spec-panel spec-editing" data-testid="spec-panel" data-module={moduleId}>
        <label className="field-label" htmlFor={textId}>
          Specification of <code className="module-id">{moduleId}</code>
          {spec && <code className="muted small spec-path">{spec.path}</code>}
        </label>
        <textarea
          id={textId}
          className="input textarea spec-text"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          spellCheck={false}
          rows={16}
          data-testid="spec-text"
        />
        {saveError && <ErrorMessage error={saveError} testId="spec-error" />}
        <div className="spec-actions">
          <button type="button" className="btn btn-small" onClick={cancel} disabled={saving}>
            Cancel
          </button>
          <button
            type="button"
            className="btn btn-small btn-primary"
            onClick={() => void save()}
            disabled={saving || running}
            title={running ? "Save when the turn has ended" : undefined}
            data-testid="save-spec"
          >
            {saving ? "Saving…" : "Save"}
          </button>
        </div>
      </div>
    );
  }

  if (!spec) {
    return (
      <div className="spec-panel" data-testid="spec-panel" data-module={moduleId}>
        {loadError ? (
          <ErrorMessage error={loadError} testId="spec-error" />
        ) : (
          <Loading label="Loading specification…" />
        )}
      </div>
    );
  }

  const editButton = editable && (
    <button type="button" className="btn btn-small" onClick={edit} data-testid="edit-spec">
      Edit
    </button>
  );

  return (
    <div className="spec-panel" data-testid="spec-panel" data-module={moduleId} data-approved={spec.approved}>
      <div className="spec-head">
        {spec.text !== null && <SpecStatus spec={spec} />}
        <code className="muted small spec-path">{spec.path}</code>
        {editButton}
      </div>
      {loadError && <ErrorMessage error={loadError} testId="spec-error" />}
      {spec.text === null ? (
        <p className="muted spec-empty" data-testid="spec-empty">
          No specification yet
        </p>
      ) : (
        <div className="markdown spec-body" data-testid="spec-body">
          <Md text={specBody(spec.text)} />
        </div>
      )}
    </div>
  );
}
