// What stops a delivery, shown first: each blocker in words (its code on hover), message and paths, with "Run review" for a module whose review is missing, stale or asks for changes, and "Run gates" otherwise.
import { useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { Blocker, SessionView } from "../../api/types";
import { reviewOf, reviewState } from "../../lib/reviews";
import { useStore } from "../../state/store";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Icon } from "../../components/Icon";
import { InlineCode } from "../../components/InlineCode";
import { errorWords } from "../../lib/errorWords";

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
          const needsReview = b.moduleId !== null && reviewState(reviewOf(session, b.moduleId)) !== "passed";
          return (
            <li
              key={`${i}:${b.code}:${b.moduleId ?? ""}`}
              className="blocker"
              data-testid="blocker"
              data-code={b.code}
              data-module={b.moduleId ?? ""}
            >
              <div className="blocker-head">
                <strong className="blocker-words" title={b.code}>
                  {errorWords(b.code)}
                </strong>
                {b.moduleId && <code className="module-id">{b.moduleId}</code>}
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
                {b.moduleId && !needsReview && (
                  <button
                    type="button"
                    className="btn btn-small"
                    disabled={busy !== null || session.running}
                    onClick={() => void gates()}
                    data-testid="run-gates"
                  >
                    {busy === "gates" ? "Running gates…" : "Run gates"}
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
      {error && <ErrorMessage error={error} />}
    </div>
  );
}
