// When the working copy's setup (its dependencies' install) failed and nothing runs: says so, with Retry setup (retry_setup).
import { useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { SessionView } from "../../api/types";
import { useStore } from "../../state/store";
import { ErrorMessage } from "../../components/ErrorMessage";

export function SetupFailedBar({ session }: { session: SessionView }) {
  const { backend, dispatch } = useStore();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<KilnError | null>(null);

  async function retry() {
    setBusy(true);
    setError(null);
    try {
      dispatch({ type: "sessionUpserted", session: await backend.call("retry_setup", { sessionId: session.id }) });
    } catch (e) {
      setError(toKilnError(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="running-bar blocked-bar" data-testid="setup-failed" role="status">
      <span className="running-text">
        <strong>Setup failed:</strong> the dependencies did not install (the chat says why). Fix the cause, then retry.
      </span>
      <button
        type="button"
        className="btn btn-small btn-primary"
        onClick={() => void retry()}
        disabled={busy}
        data-testid="retry-setup"
      >
        {busy ? "Retrying…" : "Retry setup"}
      </button>
      {error && <ErrorMessage error={error} />}
    </div>
  );
}
