// The session's "Auto-continue handoffs" checkbox (update_session): on, a handoff starts the next role's turn by itself.
import { useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { SessionView } from "../../api/types";
import { useStore } from "../../state/store";
import { ErrorMessage } from "../../components/ErrorMessage";

export function AutoContinueToggle({ session }: { session: SessionView }) {
  const { backend, dispatch } = useStore();
  // The value asked for, shown until the engine answers.
  const [pending, setPending] = useState<boolean | null>(null);
  const [error, setError] = useState<KilnError | null>(null);
  const checked = pending ?? session.autoContinue;

  async function set(autoContinue: boolean) {
    setPending(autoContinue);
    setError(null);
    try {
      const updated = await backend.call("update_session", { sessionId: session.id, autoContinue });
      dispatch({ type: "sessionUpserted", session: updated });
    } catch (e) {
      setError(toKilnError(e));
    } finally {
      setPending(null);
    }
  }

  return (
    <div className="auto-continue">
      <label className="checkbox">
        <input
          type="checkbox"
          data-testid="auto-continue"
          checked={checked}
          disabled={pending !== null || session.deletedAt !== null}
          onChange={(e) => void set(e.target.checked)}
          aria-describedby="auto-continue-hint"
        />
        Auto-continue handoffs
      </label>
      <p id="auto-continue-hint" className="hint">
        {checked ? "A handoff starts the next role's turn by itself." : "Each handoff waits for you to continue."}
      </p>
      {error && <ErrorMessage error={error} />}
    </div>
  );
}
