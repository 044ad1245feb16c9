// New-session screen: the brief (with module chips that insert ids), an optional title, Create.
import { type FormEvent, type KeyboardEvent, useRef, useState } from "react";
import { type KilnError, toKilnError } from "../api/backend";
import type { CreateSessionArgs } from "../api/types";
import { ErrorMessage } from "../components/ErrorMessage";
import { navigate, paths } from "../router";
import { useStore } from "../state/store";

/** Inserts text at the selection of a textarea value, padded with spaces where needed. */
export function insertAt(value: string, start: number, end: number, text: string): { value: string; caret: number } {
  const before = value.slice(0, start);
  const after = value.slice(end);
  const lead = before && !/\s$/.test(before) ? " " : "";
  const trail = !after || !/^\s/.test(after) ? " " : "";
  const inserted = `${lead}${text}${trail}`;
  return { value: before + inserted + after, caret: before.length + inserted.length };
}

export function NewSession() {
  const { backend, dispatch, state } = useStore();
  const modules = state.app?.workspace?.modules ?? [];
  const [brief, setBrief] = useState("");
  const [title, setTitle] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<KilnError | null>(null);
  const briefRef = useRef<HTMLTextAreaElement>(null);

  function insertModule(id: string) {
    const el = briefRef.current;
    const start = el?.selectionStart ?? brief.length;
    const end = el?.selectionEnd ?? brief.length;
    const next = insertAt(brief, start, end, id);
    setBrief(next.value);
    requestAnimationFrame(() => {
      if (!el) return;
      el.focus();
      el.setSelectionRange(next.caret, next.caret);
    });
  }

  async function submit() {
    if (busy || !brief.trim()) return;
    setBusy(true);
    setError(null);
    const args: CreateSessionArgs = { brief: brief.trim() };
    if (title.trim()) args.title = title.trim();
    try {
      const session = await backend.call("create_session", args);
      dispatch({ type: "sessionUpserted", session });
      navigate(paths.session(session.id));
    } catch (e) {
      setError(toKilnError(e));
      setBusy(false);
    }
  }

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    void submit();
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      void submit();
    }
  };

  return (
    <section className="screen narrow" aria-labelledby="new-title">
      <a className="back" href={paths.dashboard}>
        ← Sessions
      </a>
      <h1 id="new-title">New session</h1>
      <form className="card form" onSubmit={onSubmit} onKeyDown={onKeyDown}>
        <label className="field-label" htmlFor="brief">
          Brief
        </label>
        <textarea
          id="brief"
          ref={briefRef}
          className="input textarea"
          data-testid="brief"
          value={brief}
          onChange={(e) => setBrief(e.target.value)}
          placeholder="Describe the change you want…"
          rows={8}
          autoFocus
          aria-describedby="brief-hint"
        />
        <p id="brief-hint" className="hint">
          Name a module by its id, e.g. <code>@shop/cart</code>, or as <code>module modules/cart</code>. Press{" "}
          <kbd>Ctrl</kbd>/<kbd>⌘</kbd>+<kbd>Enter</kbd> to create.
        </p>
        {modules.length > 0 && (
          <div className="module-picker">
            <span className="small muted">Insert a module:</span>
            <ul className="chips">
              {modules.map((m) => (
                <li key={m.id}>
                  <button type="button" className="chip chip-button" onClick={() => insertModule(m.id)} data-testid="module-chip" title={m.directory}>
                    <code>{m.id}</code>
                  </button>
                </li>
              ))}
            </ul>
          </div>
        )}
        <label className="field-label" htmlFor="title">
          Title <span className="muted">(optional)</span>
        </label>
        <input id="title" className="input" value={title} onChange={(e) => setTitle(e.target.value)} data-testid="title" autoComplete="off" />
        {error && <ErrorMessage error={error} />}
        <div className="form-actions">
          <a className="btn" href={paths.dashboard}>
            Cancel
          </a>
          <button type="submit" className="btn btn-primary" disabled={busy || !brief.trim()} data-testid="create-session">
            {busy ? "Creating…" : "Create session"}
          </button>
        </div>
      </form>
    </section>
  );
}
