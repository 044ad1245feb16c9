// What stops a delivery, shown first: each blocker in words (its code on hover), message and paths, marked when it is a failing gate one may deliver past, with "Run review" for a module whose review is missing, stale or asks for changes, "Send the failure to the agent" for a failing gate, "Re-run gates" otherwise, "Update from workspace" for a conflict with the workspace and "Ask the agent to resolve them" for conflicts the update left.
import { useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { Blocker, SessionView } from "../../api/types";
import { reviewOf, reviewState } from "../../lib/reviews";
import { useStore } from "../../state/store";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Icon } from "../../components/Icon";
import { InlineCode } from "../../components/InlineCode";
import { errorWords } from "../../lib/errorWords";
import { navigate, paths } from "../../router";
import { useUpdate } from "../session/UpdateFromWorkspace";

export interface DeliveryBlockersProps {
  session: SessionView;
  blockers: Blocker[];
  /** Called after gates ran, so the plan is made again. */
  onChecked: () => void;
}

export function DeliveryBlockers({ session, blockers, onChecked }: DeliveryBlockersProps) {
  const { backend, dispatch } = useStore();
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<KilnError | null>(null);
  // The update re-plans here; handing conflicts to the agent goes to the chat, where the turn runs.
  const update = useUpdate(session, onChecked);
  const resolve = useUpdate(session, () => navigate(paths.session(session.id)));
  if (blockers.length === 0) return null;

  async function act(key: string, work: () => Promise<void>) {
    setBusy(key);
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(toKilnError(e));
    } finally {
      setBusy(null);
    }
  }
  const review = (moduleId: string) =>
    act(`review:${moduleId}`, async () =>
      dispatch({
        type: "sessionUpserted",
        session: await backend.call("review_module", { sessionId: session.id, moduleId }),
      }),
    );
  // The turn that fixes it runs in the chat: the session page shows it.
  const sendFailure = (b: Blocker) =>
    act(`send:${b.message}`, async () => {
      const text = `Fix this before the change can be delivered: ${b.message}. Run the failing check again to confirm it passes.`;
      dispatch({
        type: "sessionUpserted",
        session: await backend.call("send_message", { sessionId: session.id, text }),
      });
      navigate(paths.session(session.id));
    });
  const gates = () =>
    act("gates", async () => {
      await backend.call("check_modules", { sessionId: session.id });
      onChecked();
    });

  return (
    <div className="delivery-blockers" role="alert" data-testid="delivery-blockers">
      <h2 className="blockers-title">
        <Icon name="alert" /> Delivery is blocked
      </h2>
      <ul>
        {blockers.map((b, i) => {
          // A failing gate's way out is a fix, not a review; a review blocker's is the review.
          const failingGate = b.overridable;
          const needsReview =
            !failingGate && b.moduleId !== null && reviewState(reviewOf(session, b.moduleId)) !== "passed";
          return (
            <li
              key={`${i}:${b.code}:${b.moduleId ?? ""}`}
              className="blocker"
              data-testid="blocker"
              data-code={b.code}
              data-module={b.moduleId ?? ""}
              data-overridable={b.overridable || undefined}
            >
              <div className="blocker-head">
                <strong className="blocker-words" title={b.code}>
                  {errorWords(b.code)}
                </strong>
                {b.moduleId && <code className="module-id">{b.moduleId}</code>}
                {b.overridable && (
                  <span
                    className="badge badge-warn"
                    title="A failing gate: you may deliver past it with a written reason"
                    data-testid="blocker-overridable"
                  >
                    failing gate: can deliver anyway
                  </span>
                )}
                <span className="blocker-message">
                  <InlineCode text={b.message} />
                </span>
                {b.moduleId && needsReview && (
                  <button
                    type="button"
                    className="btn btn-small"
                    disabled={busy !== null || session.running}
                    onClick={() => void review(b.moduleId as string)}
                    data-testid="run-review"
                  >
                    {session.running ? "Review running…" : busy === `review:${b.moduleId}` ? "Starting…" : "Run review"}
                  </button>
                )}
                {failingGate && (
                  <button
                    type="button"
                    className="btn btn-small"
                    disabled={busy !== null || session.running}
                    onClick={() => void sendFailure(b)}
                    data-testid="send-failure"
                  >
                    {busy === `send:${b.message}` ? "Sending…" : "Send the failure to the agent"}
                  </button>
                )}
                {b.moduleId && !needsReview && (
                  <button
                    type="button"
                    className="btn btn-small"
                    disabled={busy !== null || session.running}
                    onClick={() => void gates()}
                    data-testid="run-gates"
                  >
                    {busy === "gates" ? "Running gates…" : "Re-run gates"}
                  </button>
                )}
                {b.code === "DELIVERY_CONFLICT" && (
                  <button
                    type="button"
                    className="btn btn-small"
                    disabled={update.busy !== null || session.running}
                    onClick={update.update}
                    title="A three-way merge of the workspace's changes into the session's copy, kept as a checkpoint"
                    data-testid="update-from-workspace"
                  >
                    {update.busy ? "Updating…" : "Update from workspace"}
                  </button>
                )}
                {b.code === "CONFLICTS_UNRESOLVED" && (
                  <button
                    type="button"
                    className="btn btn-small"
                    disabled={resolve.busy !== null || session.running}
                    onClick={resolve.resolve}
                    data-testid="resolve-conflicts"
                  >
                    {resolve.busy ? "Sending…" : "Ask the agent to resolve them"}
                  </button>
                )}
              </div>
              {b.paths.length > 0 && (
                <ul className="blocker-paths">
                  {b.paths.map((p) => (
                    <li key={p}>
                      <code>{p}</code>
                    </li>
                  ))}
                </ul>
              )}
            </li>
          );
        })}
      </ul>
      <OverrideNote blockers={blockers} />
      {error && <ErrorMessage error={error} />}
      {update.error && <ErrorMessage error={update.error} />}
      {resolve.error && <ErrorMessage error={resolve.error} />}
    </div>
  );
}

/** Which blockers can be delivered past: all (failing gates alone), some (the others must be cleared first) or none. */
function OverrideNote({ blockers }: { blockers: Blocker[] }) {
  const gates = blockers.filter((b) => b.overridable).length;
  if (gates === 0) return null;
  return (
    <p className="small blockers-override" data-testid="blockers-override">
      {gates === blockers.length
        ? "Only failing gates block this delivery: you can deliver anyway, with a reason."
        : "Failing gates can be delivered past with a reason, but the other blockers cannot: clear them first."}
    </p>
  );
}
