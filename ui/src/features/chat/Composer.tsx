// The message composer: text (from the session's draft), attachments, role/module/driver/model pickers, Send (Enter, or Ctrl/⌘+Enter by a setting; a hint says which) and "Continue with <role>".
import { type FormEvent, type KeyboardEvent, useEffect, useRef, useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { SendMessageArgs, SessionView, SettingsView } from "../../api/types";
import { pickerRoles, roleName } from "../../lib/roles";
import { pasteFiles, useFileDrop } from "../../lib/useFileDrop";
import { useStore } from "../../state/store";
import { useApp } from "../../state/useApp";
import { useSessionAttachments } from "../../state/useAttachments";
import { AttachButton } from "./AttachButton";
import { AttachmentChips, AttachmentRefusals } from "./AttachmentChips";
import { PointedChips } from "./PointedChips";
import { ErrorMessage } from "../../components/ErrorMessage";
import { InlineCode } from "../../components/InlineCode";
import { ModuleAutocomplete } from "../modules/ModuleAutocomplete";
import { lifecycleOf } from "../../components/StateBadge";
import { isSendKey, sendHint, useSendKey } from "../shortcuts/keymap";
import { useShortcut } from "../shortcuts/bus";
import { noteSent } from "../../lib/sent";
import { driverLabel, pickable } from "../../lib/driverChoice";
import { useModuleWords } from "../../lib/moduleWords";
import { ModelPicker } from "./ModelPicker";

/** Asks the composer to preselect a role and take focus; `seq` makes a repeated request count. */
export interface ComposerPreset {
  role: string;
  seq: number;
}

export interface ComposerProps {
  session: SessionView;
  settings: SettingsView | null;
  preset?: ComposerPreset | null;
}

/** Why the composer is closed for this session, or null when messages can be sent. */
export function composerClosedReason(session: SessionView): string | null {
  const lifecycle = lifecycleOf(session);
  if (lifecycle === "deleted") return "This session was deleted.";
  if (lifecycle === "rejected") return "This session was rejected: restore it to send messages.";
  if (lifecycle === "archived") return "This session is archived: restore it to send messages.";
  if (session.state === "delivered" || session.deliveredAt) return "This session was delivered.";
  return null;
}

export function Composer({ session, settings, preset }: ComposerProps) {
  const { backend, dispatch, state } = useStore();
  const workspaceRoles = useApp()?.workspace?.roles;
  const workspaceModules = useApp()?.workspace?.modules;
  const textRef = useRef<HTMLTextAreaElement>(null);
  // A draft (e.g. a brief whose first turn did not start) is where the composer starts.
  const draft = state.drafts[session.id];
  const [text, setText] = useState(() => draft?.text ?? "");
  const [note, setNote] = useState<string | null>(() => draft?.note ?? null);
  const [role, setRole] = useState("");
  const [moduleId, setModuleId] = useState("");
  const moduleWords = useModuleWords();
  const [driver, setDriver] = useState("");
  const [model, setModel] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<KilnError | null>(() => draft?.error ?? null);
  const attachments = useSessionAttachments(session);
  // Picked in the preview (features/preview/usePick.ts), sent with the next message.
  const pointed = state.pointed[session.id] ?? [];
  const sendKey = useSendKey();

  // Leaving the session keeps unsent text as its draft.
  const latestText = useRef(text);
  latestText.current = text;
  useEffect(() => {
    const sessionId = session.id;
    return () => {
      const unsent = latestText.current;
      dispatch(
        unsent.trim()
          ? { type: "draftSet", sessionId, draft: { text: unsent, error: null } }
          : { type: "draftCleared", sessionId },
      );
    };
  }, [dispatch, session.id]);

  useEffect(() => {
    if (!preset) return;
    setRole(preset.role);
    textRef.current?.focus();
  }, [preset]);

  const closed = composerClosedReason(session);
  // The `/` shortcut: the session screen shows Chat first, so focus once it has rendered.
  useShortcut("focus-composer", () => requestAnimationFrame(() => textRef.current?.focus()), closed === null);
  const primary = session.modules[0]?.id ?? "";
  const module = session.modules.some((m) => m.id === moduleId) ? moduleId : primary;
  const drivers = settings?.drivers ?? [];
  const defaultDriver = session.driver ?? settings?.defaultDriver ?? "";
  const chosenDriver = driver || defaultDriver;
  const driverStatus = drivers.find((d) => d.id === chosenDriver);
  const pending = session.pendingRole;
  // The workspace's roles (engineer and its own in direct, the specialists in specs); "Auto" lets routing decide.
  const roles = pickerRoles(workspaceRoles, [pending, role]);
  const disabled = closed !== null || busy;
  // A message sent now would start a turn that does not see the files still uploading.
  const uploading = attachments.uploads.length > 0;
  const drop = useFileDrop(attachments.add, closed !== null);

  async function send(message: string, turnRole: string, clearAfter: boolean) {
    if (disabled || uploading || !message.trim()) return;
    noteSent(session.id);
    setBusy(true);
    setError(null);
    const args: SendMessageArgs = { sessionId: session.id, text: message.trim() };
    if (turnRole) args.role = turnRole;
    if (module) args.module = module;
    if (chosenDriver) args.driver = chosenDriver;
    if (model.trim()) args.model = model.trim();
    if (pointed.length) args.context = pointed.map((p) => p.context);
    try {
      const updated = await backend.call("send_message", args);
      dispatch({ type: "sessionUpserted", session: updated });
      if (pointed.length) dispatch({ type: "pointedCleared", sessionId: session.id });
      setNote(null);
      attachments.dismiss();
      if (clearAfter) {
        latestText.current = "";
        dispatch({ type: "draftCleared", sessionId: session.id });
        setText("");
        setRole("");
      }
    } catch (e) {
      setError(toKilnError(e));
    } finally {
      setBusy(false);
    }
  }

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    void send(text, role, true);
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (isSendKey(e.nativeEvent, sendKey)) {
      e.preventDefault();
      void send(text, role, true);
    }
  };

  return (
    <form
      className={drop.dragging ? "composer composer-dragging" : "composer"}
      data-testid="composer"
      onSubmit={onSubmit}
      aria-label="Message the agents"
      {...drop.dropProps}
    >
      {closed && (
        <p className="hint composer-closed" data-testid="composer-closed">
          {closed}
        </p>
      )}
      {pending && !closed && (
        <div className="composer-pending" data-testid="pending-role">
          <span>
            {role ? (
              <>
                <strong>{roleName(pending)}</strong> is waiting for you; this message goes to {roleName(role)}.
              </>
            ) : (
              <>
                Your message goes to <strong>{roleName(pending)}</strong>.
              </>
            )}
          </span>
          <button
            type="button"
            className="btn btn-small"
            onClick={() => void send("Continue.", pending, false)}
            disabled={disabled || uploading}
            data-testid="continue"
          >
            Continue with {roleName(pending)}
          </button>
        </div>
      )}
      <textarea
        ref={textRef}
        className="input textarea composer-text"
        data-testid="message"
        aria-label="Message"
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKeyDown}
        onPaste={(e) => pasteFiles(e, attachments.add)}
        placeholder={closed ? "" : "Ask for a change, answer a question, or give feedback…"}
        rows={3}
        disabled={closed !== null}
      />
      <ModuleAutocomplete
        inputRef={textRef}
        value={text}
        onChange={setText}
        modules={workspaceModules ?? []}
        enabled={closed === null}
      />
      {drop.dragging && <p className="hint drop-hint">Drop the files to attach them to this session.</p>}
      <AttachmentChips
        items={session.attachments.map((a) => ({ ...a, removing: attachments.removing.has(a.id) }))}
        uploads={attachments.uploads}
        onRemove={attachments.remove}
        disabled={closed !== null}
      />
      <PointedChips
        sessionId={session.id}
        items={pointed.map((p) => ({
          ...p.context,
          kind: p.screenshot.kind,
          width: p.screenshot.width,
          height: p.screenshot.height,
        }))}
        onRemove={(screenshotId) => dispatch({ type: "pointedRemoved", sessionId: session.id, screenshotId })}
        disabled={busy}
      />
      <AttachmentRefusals refusals={attachments.refusals} />
      {note && (
        <p className="hint composer-note" data-testid="composer-note">
          {note}
        </p>
      )}
      {error && <ErrorMessage error={error} />}
      <div className="composer-bar">
        <AttachButton onFiles={attachments.add} disabled={closed !== null} />
        <label className="composer-field">
          <span className="composer-label">Role</span>
          <select value={role} onChange={(e) => setRole(e.target.value)} disabled={disabled} data-testid="role-picker">
            <option value="">Auto</option>
            {roles.map((r) => (
              <option key={r.id} value={r.id}>
                {r.name}
              </option>
            ))}
          </select>
        </label>
        {moduleWords && (
          <label className="composer-field">
            <span className="composer-label">Module</span>
            <select
              value={module}
              onChange={(e) => setModuleId(e.target.value)}
              disabled={disabled || session.modules.length === 0}
              data-testid="module-picker"
            >
              {/* A direct session whose brief named no module works on the whole repository until one joins. */}
              {session.modules.length === 0 && <option value="">Whole repository</option>}
              {session.modules.map((m, i) => (
                <option key={m.id} value={m.id}>
                  {i === 0 ? `${m.id} (primary)` : m.id}
                </option>
              ))}
            </select>
          </label>
        )}
        <label className="composer-field">
          <span className="composer-label">Agent</span>
          <select
            value={chosenDriver}
            onChange={(e) => {
              setDriver(e.target.value);
              // Another agent has other models: its default until one is picked.
              setModel("");
            }}
            disabled={disabled || drivers.length === 0}
            data-testid="driver-picker"
          >
            {drivers.length === 0 && <option value="">{settings ? "No agents" : "Default"}</option>}
            {pickable(drivers, chosenDriver).map((d) => (
              <option key={d.id} value={d.id} disabled={!d.available} title={d.detail}>
                {d.available ? driverLabel(d) : `${driverLabel(d)} (unavailable)`}
              </option>
            ))}
          </select>
        </label>
        <div className="composer-field composer-model">
          <span className="composer-label">Model</span>
          <ModelPicker
            driver={chosenDriver}
            value={model}
            onChange={setModel}
            placeholder={session.model ?? "default"}
            disabled={disabled}
          />
        </div>
        <button
          type="submit"
          className="btn btn-primary composer-send"
          disabled={disabled || uploading || !text.trim()}
          data-testid="send"
          title={
            uploading ? "Wait until the attachments are uploaded" : `Send (${sendHint(sendKey).split(" to send")[0]})`
          }
        >
          {busy ? "Sending…" : "Send"}
        </button>
      </div>
      {!closed && (
        <p className="hint composer-hint" data-testid="send-hint">
          {sendHint(sendKey)}
        </p>
      )}
      {driverStatus && !driverStatus.available && !closed && error?.code !== "DRIVER_NOT_FOUND" && (
        // Said once: a send refused for the missing driver already shows why above.
        <p className="hint warn-text" data-testid="driver-unavailable">
          {driverLabel(driverStatus)} is not available: <InlineCode text={driverStatus.detail} />
        </p>
      )}
    </form>
  );
}
