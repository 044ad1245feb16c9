// A restore button for one checkpoint with its inline confirm; restore_checkpoint, errors shown inline with their code.
import { useEffect, useRef, useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { CheckpointView } from "../../api/types";
import { useStore } from "../../state/store";
import { ErrorMessage } from "../../components/ErrorMessage";

export interface CheckpointRestoreProps {
  sessionId: string;
  checkpoint: CheckpointView;
  /** A turn or setup runs: restoring waits for it to end. */
  running: boolean;
  /** The session is archived, rejected, deleted or delivered: nothing to restore. */
  closed?: boolean;
  label?: string;
  /** What the confirm calls the checkpoint (its message); the engine's label otherwise. */
  name?: string;
  testId?: string;
}

export function CheckpointRestore(props: CheckpointRestoreProps) {
  const {
    sessionId,
    checkpoint,
    running,
    closed = false,
    label = "Restore",
    name,
    testId = "restore-checkpoint",
  } = props;
  const { backend, dispatch } = useStore();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<KilnError | null>(null);
  const blocked = running || closed;
  // Opening the confirm focuses Cancel; closing it without restoring focuses the button again.
  const buttonRef = useRef<HTMLButtonElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const focusRef = useRef<"cancel" | "button" | null>(null);
  useEffect(() => {
    if (focusRef.current === "cancel") cancelRef.current?.focus();
    else if (focusRef.current === "button") buttonRef.current?.focus();
    focusRef.current = null;
  }, [confirming]);

  function open() {
    setError(null);
    focusRef.current = "cancel";
    setConfirming(true);
  }

  function cancel() {
    focusRef.current = "button";
    setConfirming(false);
  }

  async function restore() {
    setBusy(true);
    setError(null);
    try {
      const session = await backend.call("restore_checkpoint", { sessionId, sequence: checkpoint.sequence });
      dispatch({ type: "sessionUpserted", session });
      setConfirming(false);
    } catch (e) {
      focusRef.current = "button";
      setConfirming(false);
      setError(toKilnError(e));
    } finally {
      setBusy(false);
    }
  }

  const title = running
    ? "Restore when the turn has ended"
    : closed
      ? "This session is closed"
      : `Restore the working copy to checkpoint ${checkpoint.sequence}`;

  return (
    <div className="checkpoint-restore" data-open={confirming || error !== null || undefined}>
      {!confirming && (
        <button
          type="button"
          className="btn btn-small"
          disabled={blocked || busy}
          title={title}
          onClick={open}
          ref={buttonRef}
          data-testid={testId}
          data-sequence={checkpoint.sequence}
        >
          {label}
        </button>
      )}
      {confirming && (
        <div
          className="restore-confirm"
          role="group"
          aria-label={`Restore to checkpoint ${checkpoint.sequence}`}
          onKeyDown={(e) => {
            if (e.key === "Escape" && !busy) {
              e.stopPropagation();
              cancel();
            }
          }}
          data-testid="restore-confirm"
        >
          <p>
            Restore the working copy to the state after <strong>{name ?? checkpoint.label}</strong>? Later changes stay
            in their checkpoints.
          </p>
          <div className="restore-confirm-actions">
            <button
              type="button"
              className="btn btn-small"
              onClick={cancel}
              disabled={busy}
              ref={cancelRef}
              data-testid="cancel-restore"
            >
              Cancel
            </button>
            <button
              type="button"
              className="btn btn-small btn-primary"
              onClick={() => void restore()}
              disabled={busy || blocked}
              title={blocked ? title : undefined}
              data-testid="confirm-restore"
            >
              {busy ? "Restoring…" : "Confirm"}
            </button>
          </div>
        </div>
      )}
      {error && <ErrorMessage error={error} testId="restore-error" />}
    </div>
  );
}
