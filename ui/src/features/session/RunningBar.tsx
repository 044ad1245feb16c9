// While the session works (planning, setup or a turn): who is working, the time since it started, and Stop (stop_turn, also Ctrl/⌘+.). When a turn blocked the session: Retry (retry_turn); when its setup failed: Retry setup (SetupFailedBar).
import { useEffect, useRef, useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { SessionView, TranscriptEntry } from "../../api/types";
import { formatElapsed, lastTurnStart, turnStartedAt } from "../../lib/elapsed";
import { roleName } from "../../lib/roles";
import { useStore } from "../../state/store";
import { ErrorMessage } from "../../components/ErrorMessage";
import { lifecycleOf } from "../../components/StateBadge";
import { asksPermission, isActive } from "../attention/attention";
import { SetupFailedBar } from "./SetupFailedBar";
import { useShortcut } from "../shortcuts/bus";

export function RunningBar({ session, entries }: { session: SessionView; entries: TranscriptEntry[] | undefined }) {
  const active = isActive(session);
  // Whether this screen saw the session idle: then the work began here, and its clock starts now.
  const sawIdle = useRef(false);
  if (!active) sawIdle.current = true;
  if (active) return <WorkingBar session={session} entries={entries} startedHere={sawIdle.current} />;
  if (lifecycleOf(session) !== null) return null;
  // A delivered session's setup is not retried.
  const setupFailed = session.setup === "failed" && !session.deliveredAt && session.state !== "delivered";
  const blocked = session.state === "blocked";
  if (!setupFailed && !blocked) return null;
  return (
    <>
      {setupFailed && <SetupFailedBar session={session} />}
      {blocked && <BlockedBar session={session} />}
    </>
  );
}

/** What the session is doing now, in words. */
function doing(session: SessionView, entries: TranscriptEntry[] | undefined) {
  if (session.setup === "running") return "Setting up the working copy";
  if (session.state === "planning") return "Planning: reading the brief and choosing the modules and the first role";
  // Over the engine's turn limit ([session] max_parallel_turns): the turn starts when a slot frees.
  if (session.waiting) return "Waiting for a free slot: other agents' turns run now";
  const who = lastTurnStart(entries)?.role ?? session.role;
  // The turn runs, but it waits on the operator's answer in the chat.
  if (asksPermission(session))
    return (
      <>
        <strong>{who ? roleName(who) : "The agent"}</strong> waits for your answer to its permission request
      </>
    );
  return (
    <>
      <strong>{who ? roleName(who) : "The agent"}</strong> is working
    </>
  );
}

function WorkingBar({
  session,
  entries,
  startedHere,
}: {
  session: SessionView;
  entries: TranscriptEntry[] | undefined;
  startedHere: boolean;
}) {
  const { backend, dispatch } = useStore();
  const [mountedAt] = useState(() => Date.now());
  // The moment work was seen to begin here (null when it already ran at first sight); a new phase starts the clock again.
  const phase = session.setup === "running" ? "setup" : session.state === "planning" ? "planning" : "turn";
  const [runningSince, setRunningSince] = useState<number | null>(() => (startedHere ? Date.now() : null));
  const lastPhase = useRef(phase);
  const [now, setNow] = useState(() => Date.now());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<KilnError | null>(null);

  useEffect(() => {
    if (lastPhase.current !== phase) setRunningSince(Date.now());
    lastPhase.current = phase;
  }, [phase]);

  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);

  async function stop() {
    if (busy) return;
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
  useShortcut("stop", () => void stop());

  const start = phase === "turn" ? lastTurnStart(entries) : null;
  const since = turnStartedAt(start, runningSince, mountedAt);
  const what = phase === "setup" ? "setup" : phase === "planning" ? "planning" : "turn";

  return (
    <div className="running-bar" data-testid="running" data-phase={phase} role="status">
      <span className="pulse" aria-hidden="true" />
      <span className="running-text">{doing(session, entries)}</span>
      <span className="running-elapsed mono" data-testid="elapsed" aria-label="Elapsed time">
        {formatElapsed(now - since)}
      </span>
      <button
        type="button"
        className="btn btn-small btn-danger-ghost"
        onClick={() => void stop()}
        disabled={busy}
        data-testid="stop-turn"
        title={`Stop the ${what} (Ctrl/⌘+.)`}
      >
        {busy ? "Stopping…" : "Stop"}
      </button>
      {error && <ErrorMessage error={error} />}
    </div>
  );
}

function BlockedBar({ session }: { session: SessionView }) {
  const { backend, dispatch } = useStore();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<KilnError | null>(null);

  async function retry() {
    setBusy(true);
    setError(null);
    try {
      dispatch({ type: "sessionUpserted", session: await backend.call("retry_turn", { sessionId: session.id }) });
    } catch (e) {
      setError(toKilnError(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="running-bar blocked-bar" data-testid="blocked" role="status">
      <span className="running-text">
        <strong>The last turn failed.</strong> Nothing continues until you retry it or send a message.
      </span>
      <button
        type="button"
        className="btn btn-small btn-primary"
        onClick={() => void retry()}
        disabled={busy}
        data-testid="retry-turn"
      >
        {busy ? "Retrying…" : "Retry"}
      </button>
      {error && <ErrorMessage error={error} />}
    </div>
  );
}
