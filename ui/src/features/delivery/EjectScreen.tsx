// Eject (#/session/<id>/deliver): the delivery plan with its blockers and target choice (or that nothing changed), one confirmation (or, when only failing gates block it, Deliver anyway with a reason), then the live steps and the done or failed screen.
import { type ReactNode, useEffect, useRef, useState } from "react";
import { toKilnError } from "../../api/backend";
import { DeliverAnywayForm } from "./DeliverAnyway";
import { DeliveryBlockers } from "./DeliveryBlockers";
import { DeliveryDone } from "./DeliveryDone";
import { DeliveryPlanView } from "./DeliveryPlanView";
import { DeliverySteps } from "./DeliverySteps";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { ReviewStates } from "../session/ReviewStates";
import { TargetChoice } from "./TargetChoice";
import { reviewsKey } from "../../lib/reviews";
import { canDeliverAnyway, nothingChangedText, planIsEmpty } from "../../lib/deliverable";
import { paths } from "../../router";
import { useDelivery } from "../../state/useDelivery";
import { useSession } from "../../state/sessions";
import { useApp } from "../../state/useApp";

export function EjectScreen({ sessionId }: { sessionId: string }) {
  // The session query fetches it when this screen opens first (a reload on #/session/<id>/deliver).
  const { session } = useSession(sessionId);
  const isGit = useApp()?.workspace?.isGit;
  const delivery = useDelivery(sessionId);
  const { plan, run, replan } = delivery;
  // "run" once a run is shown (one was going on or finished, or this screen started one); Retry goes back to the plan.
  const [view, setView] = useState<"plan" | "run" | null>(null);
  // The Deliver anyway form is open (it is offered only while every blocker is a gate's).
  const [anyway, setAnyway] = useState(false);
  useEffect(() => {
    if (view === null && run !== undefined) setView(run ? "run" : "plan");
  }, [run, view]);

  // A review finished (or went stale): the blockers may have changed.
  const key = reviewsKey(session);
  const lastKey = useRef(key);
  useEffect(() => {
    if (lastKey.current === key) return;
    lastKey.current = key;
    if (view !== "run") void replan(plan?.target);
  }, [key, view, replan, plan?.target]);

  const title = session?.title || "Untitled session";
  const back = (
    <a className="back" href={paths.session(sessionId)}>
      ← {title}
    </a>
  );

  async function confirm(reason?: string) {
    if (await delivery.confirm(reason)) {
      setAnyway(false);
      setView("run");
    }
  }

  function retry() {
    setView("plan");
    void replan(run?.target ?? plan?.target);
  }

  let body: ReactNode;
  if (view === "run" && run) {
    const failed = run.steps.find((s) => s.state === "failed");
    body = (
      <>
        <p className="lead" role="status" data-testid="delivery-state" data-state={run.state}>
          {run.state === "running"
            ? "Delivering… each step shows as it runs."
            : run.state === "delivered"
              ? "Every step passed."
              : `Delivery stopped${failed ? ` at “${failed.title}”` : ""}.`}
        </p>
        {run.state === "delivered" && <DeliveryDone run={run} isGit={isGit} />}
        {run.state === "delivered" && plan?.restartNeeded && (
          <p className="warn-text small">Restart the running application to pick the change up.</p>
        )}
        {run.state === "failed" && (
          <div className="delivery-failed" data-testid="delivery-failed">
            {run.error && <ErrorMessage error={toKilnError(run.error)} />}
            <p className="small">Nothing was left half done; fix the cause and try again.</p>
            <button type="button" className="btn btn-primary" onClick={retry} data-testid="retry-delivery">
              Retry
            </button>
          </div>
        )}
        <h2 className="section-title">Steps</h2>
        <DeliverySteps steps={run.steps} />
        {run.state === "delivered" && run.target === "git-pr" && (
          <button type="button" className="btn btn-small" onClick={retry} data-testid="deliver-again">
            Deliver again (updates the branch)
          </button>
        )}
      </>
    );
  } else if (!plan) {
    body = delivery.planError ? (
      <ErrorMessage error={delivery.planError} onRetry={() => void replan()} />
    ) : (
      <Loading label="Planning the delivery…" />
    );
  } else {
    const blocked = plan.blockers.length > 0;
    // Nothing to deliver is said as such, never offered as ready.
    const nothing = planIsEmpty(plan)
      ? ((session && nothingChangedText(session)) ?? "No file differs from the workspace")
      : null;
    const overridable = canDeliverAnyway(plan) && nothing === null;
    const busy = delivery.planning || delivery.confirming;
    body = (
      <>
        {delivery.note && (
          <p className="notice" role="status" data-testid="replanned">
            {delivery.note}
          </p>
        )}
        {delivery.planError && <ErrorMessage error={delivery.planError} onRetry={() => void replan(plan.target)} />}
        <TargetChoice
          options={plan.availableTargets}
          value={plan.target}
          onChange={(t) => void replan(t)}
          disabled={delivery.planning || delivery.confirming}
        />
        {nothing && (
          <p className="notice eject-nothing" role="status" data-testid="nothing-to-deliver">
            {nothing}: there is nothing to deliver.
          </p>
        )}
        {session && (
          <DeliveryBlockers session={session} blockers={plan.blockers} onChecked={() => void replan(plan.target)} />
        )}
        <DeliveryPlanView plan={plan} />
        {delivery.confirmError && !(overridable && anyway) && (
          <ErrorMessage error={delivery.confirmError} testId="confirm-error" />
        )}
        <div className="form-actions eject-actions">
          {blocked && (
            <span className="muted small">
              {overridable
                ? "Clear the blockers above to deliver, or deliver anyway with a reason."
                : "Clear the blockers above to deliver."}
            </span>
          )}
          <a className="btn" href={paths.session(sessionId)}>
            Cancel
          </a>
          {overridable && (
            <button
              type="button"
              className="btn"
              aria-expanded={anyway}
              onClick={() => setAnyway((open) => !open)}
              data-testid="deliver-anyway"
              title="Deliver past the failing gates, with a written reason"
            >
              Deliver anyway
            </button>
          )}
          <button
            type="button"
            className="btn btn-primary"
            disabled={blocked || nothing !== null || busy}
            onClick={() => void confirm()}
            data-testid="confirm-delivery"
          >
            {delivery.confirming
              ? "Starting…"
              : plan.target === "git-pr"
                ? "Open the pull request"
                : "Apply to the workspace"}
          </button>
        </div>
        {overridable && anyway && (
          <DeliverAnywayForm
            busy={busy}
            error={delivery.confirmError}
            onConfirm={(reason) => void confirm(reason)}
            onCancel={() => setAnyway(false)}
          />
        )}
      </>
    );
  }

  return (
    <section className="screen narrow eject-screen" aria-labelledby="eject-title" data-testid="eject-screen">
      {back}
      <div className="screen-head">
        <div>
          <h1 id="eject-title">Deliver “{title}”</h1>
          {session && (
            <div className="session-meta">
              <ReviewStates session={session} />
            </div>
          )}
        </div>
      </div>
      <p className="lead">
        Delivers the session's modules as code, after running their gates. One confirmation covers every module.
      </p>
      {body}
    </section>
  );
}
