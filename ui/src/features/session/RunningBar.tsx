// While a turn runs: who is working, the time since the turn started, and Stop (stop_turn).
import { useEffect, useRef, useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { SessionView, TranscriptEntry } from "../../api/types";
import { formatElapsed, lastTurnStart, turnStartedAt } from "../../lib/elapsed";
import { roleName } from "../../lib/roles";
import { useStore } from "../../state/store";
import { ErrorMessage } from "../../components/ErrorMessage";

export function RunningBar({ session, entries }: { session: SessionView; entries: TranscriptEntry[] | undefined }) {
  const { backend, dispatch } = useStore();
  const running = session.running;
  const [mountedAt] = useState(() => Date.now());
  // The moment running was seen to turn true here (null when it already was at first sight).
  const [runningSince, setRunningSince] = useState<number | null>(null);
  const wasRunning = useRef(running);
  const [now, setNow] = useState(() => Date.now());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<KilnError | null>(null);

  useEffect(() => {
    if (running && !wasRunning.current) setRunningSince(Date.now());
    if (!running) setError(null);
    wasRunning.current = running;
  }, [running]);

  useEffect(() => {
    if (!running) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [running]);

  if (!running) return null;
  const start = lastTurnStart(entries);
  const since = turnStartedAt(start, runningSince, mountedAt);
  const who = start?.role ?? session.role;

  async function stop() {
    setBusy(true);
    setError(null);
    try {
      const updated = await backend.call("stop_turn", { sessionId: session.id });
      dispatch({ type: "sessionUpserted", session: updated });
    } catch (e) {
      setError(toKilnError(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="running-bar" data-testid="running" role="status">
      <span className="pulse" aria-hidden="true" />
      <span className="running-text">
        {who ? (
          <>
            <strong>{roleName(who)}</strong> is working
          </>
        ) : session.setup === "running" ? (
          "Setting up the working copy"
        ) : (
          <>
            <strong>The agent</strong> is working
          </>
        )}
      </span>
      <span className="running-elapsed mono" data-testid="elapsed" aria-label="Elapsed time">
        {formatElapsed(now - since)}
      </span>
      <button type="button" className="btn btn-small btn-danger-ghost" onClick={() => void stop()} disabled={busy} data-testid="stop-turn">
        {busy ? "Stopping…" : "Stop"}
      </button>
      {error && <ErrorMessage error={error} />}
    </div>
  );
}
