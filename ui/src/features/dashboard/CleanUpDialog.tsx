// "Clean up…": lists what removing archived and rejected sessions' working copies would free (a clean_up dry run), and removes them once confirmed.
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { CleanUpView } from "../../api/types";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { Modal } from "../../components/Modal";
import { formatBytes } from "../../lib/bytes";
import { keys } from "../../state/queries";
import { useBackend } from "../../state/store";

export function CleanUpDialog({ onClose }: { onClose: () => void }) {
  const { backend } = useBackend();
  const client = useQueryClient();
  const [plan, setPlan] = useState<CleanUpView | null>(null);
  const [error, setError] = useState<KilnError | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let live = true;
    backend.call("clean_up", {}).then(
      (view) => live && setPlan(view),
      (e) => live && setError(toKilnError(e)),
    );
    return () => {
      live = false;
    };
  }, [backend]);

  async function apply() {
    setBusy(true);
    setError(null);
    try {
      const done = await backend.call("clean_up", { apply: true });
      void client.invalidateQueries({ queryKey: keys.disk });
      // What could not be removed stays on screen with its reason; otherwise the job is done.
      if (done.skipped.length > 0) setPlan({ ...done, sessions: [] });
      else onClose();
    } catch (e) {
      setError(toKilnError(e));
    } finally {
      setBusy(false);
    }
  }

  const count = plan?.sessions.length ?? 0;
  return (
    <Modal
      title="Clean up working copies?"
      onClose={onClose}
      footer={
        <>
          <button type="button" className="btn" onClick={onClose} data-autofocus>
            {plan?.applied ? "Close" : "Cancel"}
          </button>
          {!plan?.applied && (
            <button
              type="button"
              className="btn btn-primary"
              onClick={apply}
              disabled={busy || count === 0}
              data-testid="confirm"
            >
              {busy ? "Working…" : `Remove ${count} working ${count === 1 ? "copy" : "copies"}`}
            </button>
          )}
        </>
      }
    >
      {error && <ErrorMessage error={error} />}
      {!plan && !error && <Loading label="Measuring working copies…" />}
      {plan && (
        <div data-testid="clean-up-plan">
          <p>
            Archived and rejected sessions keep their checkpoints, attachments and transcript; only their working copy
            is removed. A working copy is rebuilt from its newest checkpoint when its session is used again, and one
            with changes since that checkpoint gets a new checkpoint first. Files your repository ignores (installed
            dependencies, build output) are not in checkpoints.
          </p>
          {count === 0 && !plan.applied && (
            <p className="muted" data-testid="clean-up-nothing">
              No archived or rejected session has a working copy to remove.
            </p>
          )}
          {count > 0 && (
            <ul className="clean-up-list">
              {plan.sessions.map((s) => (
                <li key={s.sessionId} data-testid="clean-up-item" data-session-id={s.sessionId}>
                  <span className="clean-up-title">{s.title || "Untitled session"}</span>
                  <span className="muted small">
                    {formatBytes(s.bytes)} · rebuilt from checkpoint {s.checkpoint}
                  </span>
                </li>
              ))}
            </ul>
          )}
          {count > 0 && (
            <p>
              Frees <strong data-testid="clean-up-total">{formatBytes(plan.freedBytes)}</strong>.
            </p>
          )}
          {plan.skipped.length > 0 && (
            <>
              <p className="small">{plan.applied ? "Not removed:" : "Left alone:"}</p>
              <ul className="clean-up-list">
                {plan.skipped.map((s) => (
                  <li key={s.sessionId} data-testid="clean-up-skipped">
                    <span className="clean-up-title">{s.title || "Untitled session"}</span>
                    <span className="muted small">{s.reason}</span>
                  </li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
    </Modal>
  );
}
