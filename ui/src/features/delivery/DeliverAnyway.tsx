// "Deliver anyway": when only failing gates block the plan, the operator may deliver past them with a written reason (deliver's `anyway`); the reason is required, at most 2000 characters.
import { type FormEvent, useId, useState } from "react";
import type { KilnError } from "../../api/backend";
import { ErrorMessage } from "../../components/ErrorMessage";

/** The longest reason the form takes. */
export const MAX_REASON = 2000;

export interface DeliverAnywayFormProps {
  /** A confirmation or a plan is on its way: nothing can be sent now. */
  busy: boolean;
  /** The engine's refusal of the last confirmation (DELIVERY_BLOCKED, INVALID_INPUT…). */
  error: KilnError | null;
  /** Delivers past the gate blockers, for this reason (trimmed, never empty). */
  onConfirm: (reason: string) => void;
  onCancel: () => void;
}

export function DeliverAnywayForm({ busy, error, onConfirm, onCancel }: DeliverAnywayFormProps) {
  const id = useId();
  const [reason, setReason] = useState("");
  const text = reason.trim();

  function submit(e: FormEvent) {
    e.preventDefault();
    if (text && !busy) onConfirm(text);
  }

  return (
    <form className="card deliver-anyway" onSubmit={submit} data-testid="deliver-anyway-form">
      <label className="field-label" htmlFor={id}>
        Why deliver past the failing gates?
      </label>
      <textarea
        id={id}
        className="input textarea deliver-anyway-reason"
        value={reason}
        onChange={(e) => setReason(e.target.value)}
        required
        maxLength={MAX_REASON}
        rows={3}
        placeholder="e.g. the flaky checkout test fails on main too; tracked in #123"
        data-testid="deliver-anyway-reason"
      />
      <p className="hint">
        Kept with the delivery: in the session's transcript, and in the pull request when there is one.{" "}
        <span className="muted">
          {reason.length}/{MAX_REASON}
        </span>
      </p>
      {error && <ErrorMessage error={error} testId="confirm-error" />}
      <div className="form-actions">
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="btn btn-danger" disabled={!text || busy} data-testid="confirm-deliver-anyway">
          {busy ? "Starting…" : "Deliver anyway"}
        </button>
      </div>
    </form>
  );
}
