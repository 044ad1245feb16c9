// New-session screen: the brief (with @-autocomplete and chips that insert module ids) or a GitHub issue to start from (then the brief is optional), the agent and model the first turn runs with their health, or the brief fanned out to 2–5 candidates (best of N, each an agent and a model), files to attach, an optional title, "Start the first turn now", Create; an id that names no module asks before it becomes a new one.
import { type FormEvent, type KeyboardEvent, useRef, useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { CreateSessionArgs, CreateSessionGroupArgs, SendMessageArgs, SessionView } from "../../api/types";
import { AttachButton } from "../chat/AttachButton";
import { AttachmentChips, AttachmentRefusals } from "../chat/AttachmentChips";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { ErrorMessage } from "../../components/ErrorMessage";
import { ModuleAutocomplete } from "../modules/ModuleAutocomplete";
import { AgentChoice } from "./AgentChoice";
import { CandidateRows } from "../groups/CandidateRows";
import { candidateChoices, type CandidateRow, startRows } from "../../lib/candidates";
import { IssuePicker } from "../issues/IssuePicker";
import { unknownModuleIds } from "../../lib/mentions";
import { useSettings } from "../../state/useSettings";
import { kindOf, nameOf, precheck, readBase64, type Refusal } from "../../lib/attachments";
import { pasteFiles, useFileDrop } from "../../lib/useFileDrop";
import { navigate, paths } from "../../router";
import type { Draft } from "../../state/reducer";
import { useStore } from "../../state/store";
import { useApp } from "../../state/useApp";

/** Ids the brief names that are no module yet, waiting for the operator's word; `retry` creates again with them confirmed. */
interface UnknownModules {
  ids: string[];
  message: string;
  retry: (ids: string[]) => void;
}

/** A file chosen before the session exists, attached right after it is created. */
interface HeldFile {
  id: string;
  name: string;
  file: File;
}

let heldKeys = 0;

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
  const { backend, dispatch } = useStore();
  const modules = useApp()?.workspace?.modules ?? [];
  // The hint's example is one of this repository's own modules; a repository of one needs no module words.
  const example = modules.length > 1 ? modules[0] : null;
  const [brief, setBrief] = useState("");
  /** "From a GitHub issue": the issue's address or number, sent as createSession's `issue`. */
  const [fromIssue, setFromIssue] = useState(false);
  const [issue, setIssue] = useState("");
  const issueRef = fromIssue ? issue.trim() : "";
  const ready = brief.trim() !== "" || issueRef !== "";
  const [title, setTitle] = useState("");
  const [startNow, setStartNow] = useState(true);
  const [held, setHeld] = useState<HeldFile[]>([]);
  const [refusals, setRefusals] = useState<Refusal[]>([]);
  /** What Create is doing now ("Creating…", "Attaching 1 of 2…", "Starting the first turn…"), null when idle. */
  const [stage, setStage] = useState<string | null>(null);
  const busy = stage !== null;
  const [error, setError] = useState<KilnError | null>(null);
  const [unknown, setUnknown] = useState<UnknownModules | null>(null);
  const { settings } = useSettings();
  // "" runs the workspace default; the first turn's send_message carries a picked one.
  const [driver, setDriver] = useState("");
  const [model, setModel] = useState("");
  // Best of N: the brief goes to 2–5 candidate sessions instead of one.
  const [fanOut, setFanOut] = useState(false);
  const [rows, setRows] = useState<CandidateRow[]>(startRows);
  const briefRef = useRef<HTMLTextAreaElement>(null);

  /** Holds the files that pass the client-side checks; the engine checks them again on Create. */
  function hold(files: File[]) {
    if (busy || fanOut) return;
    const kept: HeldFile[] = [];
    const refused: Refusal[] = [];
    for (const file of files) {
      const id = `h${++heldKeys}`;
      const name = nameOf(file);
      const early = precheck(name, file.size, held.length + kept.length);
      if (early) refused.push({ key: id, name, error: early });
      else kept.push({ id, name, file });
    }
    if (kept.length > 0) setHeld((h) => [...h, ...kept]);
    setRefusals(refused);
  }
  const drop = useFileDrop(hold, busy || fanOut);

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
    if (busy || !ready) return;
    const args: CreateSessionArgs = { brief: brief.trim() };
    if (issueRef) args.issue = issueRef;
    if (title.trim()) args.title = title.trim();
    if (fanOut) await createGroup({ ...args, candidates: candidateChoices(rows, settings?.defaultDriver ?? "") });
    else await create(args);
  }

  /** create_session_group: the candidates are made and each sent the brief; the comparison opens. */
  async function createGroup(args: CreateSessionGroupArgs) {
    setStage("Creating the candidates…");
    setError(null);
    try {
      const group = await backend.call("create_session_group", args);
      navigate(paths.group(group.id));
    } catch (e) {
      const err = toKilnError(e);
      const ids = err.code === "MODULE_UNKNOWN" ? unknownModuleIds(err.message) : [];
      const retry = (more: string[]) =>
        void createGroup({ ...args, createModules: [...(args.createModules ?? []), ...more] });
      if (ids.length > 0) setUnknown({ ids, message: err.message, retry });
      else setError(err);
      setStage(null);
    }
  }

  /** create_session; an id that names no module stops here and asks (nothing ran yet). */
  async function create(args: CreateSessionArgs) {
    setStage("Creating…");
    setError(null);
    let session: SessionView;
    try {
      session = await backend.call("create_session", args);
    } catch (e) {
      const err = toKilnError(e);
      const ids = err.code === "MODULE_UNKNOWN" ? unknownModuleIds(err.message) : [];
      const retry = (more: string[]) =>
        void create({ ...args, createModules: [...(args.createModules ?? []), ...more] });
      if (ids.length > 0) setUnknown({ ids, message: err.message, retry });
      else setError(err);
      setStage(null);
      return;
    }
    dispatch({ type: "sessionUpserted", session });
    // From an issue, the engine wrote the brief (the typed text, then the issue): that is the first message.
    await attachAndStart(session, args.issue ? session.brief : args.brief);
  }

  /** "Create": the same brief again, confirming the new modules. */
  function createModules() {
    if (!unknown) return;
    const { retry, ids } = unknown;
    setUnknown(null);
    retry(ids);
  }

  /**
   * After create_session: add_attachment for each held file, then send_message with the brief.
   * Whatever fails, the session exists: it opens, and the brief waits in its composer with the error.
   */
  async function attachAndStart(session: SessionView, text: string) {
    const sessionId = session.id;
    const open = (draft?: Draft) => {
      if (draft) dispatch({ type: "draftSet", sessionId, draft });
      navigate(paths.session(sessionId));
    };
    for (const [i, h] of held.entries()) {
      setStage(`Attaching ${i + 1} of ${held.length}…`);
      try {
        const dataBase64 = await readBase64(h.file);
        const attachment = await backend.call("add_attachment", { sessionId, name: h.name, dataBase64 });
        dispatch({ type: "attachmentAdded", sessionId, attachment });
      } catch (e) {
        const rest = held.length - i - 1;
        const skipped =
          rest > 0
            ? ` The ${rest} file${rest === 1 ? "" : "s"} after it ${rest === 1 ? "was" : "were"} not attached either.`
            : "";
        const turn = startNow ? " The first turn has not started: the brief waits here." : "";
        open({
          text,
          error: toKilnError(e),
          note: `The session was created, but ${h.name} was not attached.${skipped}${turn}`,
        });
        return;
      }
    }
    if (!startNow) {
      open({ text, error: null, note: "The brief is ready to send as the first message." });
      return;
    }
    setStage("Starting the first turn…");
    try {
      const first: SendMessageArgs = { sessionId, text };
      if (driver) first.driver = driver;
      if (model.trim()) first.model = model.trim();
      const updated = await backend.call("send_message", first);
      dispatch({ type: "sessionUpserted", session: updated });
      open();
    } catch (e) {
      open({
        text,
        error: toKilnError(e),
        note: "The session was created, but its first turn could not start: the brief waits here.",
      });
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
      <form
        className={drop.dragging ? "card form drop-target dragging" : "card form drop-target"}
        onSubmit={onSubmit}
        onKeyDown={onKeyDown}
        {...drop.dropProps}
      >
        <div className="issue-source">
          <button
            type="button"
            className="btn btn-small"
            aria-pressed={fromIssue}
            onClick={() => setFromIssue((on) => !on)}
            disabled={busy || fanOut}
            title={fanOut ? "Racing several agents starts from a typed brief" : undefined}
            data-testid="from-issue"
          >
            From a GitHub issue
          </button>
        </div>
        {fromIssue && <IssuePicker value={issue} onChange={setIssue} disabled={busy} />}
        <label className="field-label" htmlFor="brief">
          {fromIssue ? (
            <>
              Anything to add <span className="muted">(optional: the issue's title, body and comments follow it)</span>
            </>
          ) : (
            "Brief"
          )}
        </label>
        <textarea
          id="brief"
          ref={briefRef}
          className="input textarea"
          data-testid="brief"
          value={brief}
          onChange={(e) => setBrief(e.target.value)}
          onPaste={(e) => pasteFiles(e, hold)}
          placeholder="Describe the change you want…"
          rows={8}
          autoFocus
          aria-describedby="brief-hint"
        />
        <ModuleAutocomplete inputRef={briefRef} value={brief} onChange={setBrief} modules={modules} enabled={!busy} />
        <p id="brief-hint" className="hint">
          {example ? (
            <>
              Type <kbd>@</kbd> to pick a module, or name one by its id, e.g. <code>{example.id}</code>, or as{" "}
              <code>module {example.directory}</code>.{" "}
            </>
          ) : (
            "Kiln works on the whole repository; name a file or folder in the brief if it helps. "
          )}
          Press <kbd>Ctrl</kbd>/<kbd>⌘</kbd>+<kbd>Enter</kbd> to create.
        </p>
        {modules.length > 1 && (
          <div className="module-picker">
            <span className="small muted">Insert a module:</span>
            <ul className="chips">
              {modules.map((m) => (
                <li key={m.id}>
                  <button
                    type="button"
                    className="chip chip-button"
                    onClick={() => insertModule(m.id)}
                    data-testid="module-chip"
                    title={m.directory}
                  >
                    <code>{m.id}</code>
                  </button>
                </li>
              ))}
            </ul>
          </div>
        )}
        <label className="checkbox fan-out" title="Run the brief on several agents at once and keep the best result">
          <input
            type="checkbox"
            data-testid="fan-out"
            checked={fanOut}
            onChange={(e) => {
              setFanOut(e.target.checked);
              // Candidates start with the brief alone (the hint below says so): no files, no issue
              // (a group takes a typed brief).
              if (e.target.checked) {
                setHeld([]);
                setFromIssue(false);
              }
            }}
            disabled={busy}
          />
          Race several agents on this brief (best of 2–5)
        </label>
        {fanOut ? (
          <CandidateRows settings={settings} rows={rows} onRows={setRows} disabled={busy} />
        ) : (
          <AgentChoice
            settings={settings}
            driver={driver}
            onDriver={setDriver}
            model={model}
            onModel={setModel}
            disabled={busy}
          />
        )}
        <div className="attach-row">
          <AttachButton onFiles={hold} disabled={busy || fanOut} />
          <span className="hint">
            {fanOut
              ? "Candidates start at once with the brief alone: attach files to a candidate's session afterwards."
              : drop.dragging
                ? "Drop the files to attach them."
                : "Screenshots, mock-ups, specs: paste or drop them here too (up to 10, 5 MB each)."}
          </span>
        </div>
        <AttachmentChips
          items={held.map((h) => ({ id: h.id, name: h.name, size: h.file.size, kind: kindOf(h.name) }))}
          onRemove={(id) => setHeld((hs) => hs.filter((h) => h.id !== id))}
          disabled={busy}
        />
        <AttachmentRefusals refusals={refusals} />
        <label className="field-label" htmlFor="title">
          Title <span className="muted">(optional)</span>
        </label>
        <input
          id="title"
          className="input"
          value={title}
          onChange={(e) => setTitle(e.target.value)}
          data-testid="title"
          autoComplete="off"
        />
        {error && <ErrorMessage error={error} />}
        <div className="form-actions">
          <label
            className="checkbox start-now"
            title="Off: the session is created and the brief waits in its composer"
            hidden={fanOut}
          >
            <input
              type="checkbox"
              data-testid="start-now"
              checked={startNow}
              onChange={(e) => setStartNow(e.target.checked)}
              disabled={busy}
            />
            Start the first turn now
          </label>
          <a className="btn" href={paths.dashboard}>
            Cancel
          </a>
          <button type="submit" className="btn btn-primary" disabled={busy || !ready} data-testid="create-session">
            {stage ?? (fanOut ? `Create ${rows.length} candidates` : "Create session")}
          </button>
        </div>
        {unknown && (
          <ConfirmDialog
            title={
              unknown.ids.length === 1
                ? `Create new module ${unknown.ids[0]}?`
                : `Create ${unknown.ids.length} new modules?`
            }
            confirmLabel="Create"
            onConfirm={createModules}
            onCancel={() => {
              setUnknown(null);
              briefRef.current?.focus();
            }}
          >
            <div data-testid="create-modules-confirm">
              <p>
                No module of this workspace has the id{unknown.ids.length === 1 ? "" : "s"}{" "}
                {unknown.ids.map((id, i) => (
                  <span key={id}>
                    {i > 0 && ", "}
                    <code data-testid="unknown-module">{id}</code>
                  </span>
                ))}
                . Create {unknown.ids.length === 1 ? "it as a new module" : "them as new modules"}, or cancel and name
                an existing one (type <kbd>@</kbd>).
              </p>
              <p className="muted small">No agent has run: the session is created only once you choose.</p>
            </div>
          </ConfirmDialog>
        )}
        {stage?.startsWith("Starting") && (
          <p className="hint form-progress" data-testid="create-progress" role="status">
            The session exists; its first turn starts once the planner has read the brief, which can take a minute.
          </p>
        )}
      </form>
    </section>
  );
}
