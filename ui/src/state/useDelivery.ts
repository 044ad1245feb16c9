// A session's delivery: its plan (plan_delivery, re-planned on demand, when reviews change, and when a confirmation was of a stale plan), the confirmation (deliver) and the latest run, kept live by `delivery` events.
import { useCallback, useEffect, useRef, useState } from "react";
import { type KilnError, toKilnError } from "../api/backend";
import type { DeliveryPlan, DeliveryRun, DeliveryTarget } from "../api/types";
import { useStore } from "./store";

/** Refusals of a confirmation that mean the plan no longer holds: plan again so the screen shows why. */
const REPLAN_ON = new Set(["PLAN_STALE", "DELIVERY_BLOCKED", "DELIVERY_CONFLICT", "TARGET_UNAVAILABLE", "BRANCH_MOVED"]);

export interface DeliveryHandle {
  plan: DeliveryPlan | null;
  planning: boolean;
  planError: KilnError | null;
  /** Said after an automatic re-plan (e.g. the confirmed plan was stale). */
  note: string | null;
  /** The latest run (null: none yet); undefined until get_delivery answered. */
  run: DeliveryRun | null | undefined;
  confirming: boolean;
  confirmError: KilnError | null;
  replan: (target?: DeliveryTarget, note?: string | null) => Promise<void>;
  /** Delivers the plan shown; true when a run started. */
  confirm: () => Promise<boolean>;
}

export function useDelivery(sessionId: string): DeliveryHandle {
  const { backend, dispatch, state } = useStore();
  const held = state.deliveries[sessionId];
  const [fetched, setFetched] = useState(false);
  const [plan, setPlan] = useState<DeliveryPlan | null>(null);
  const [planning, setPlanning] = useState(false);
  const [planError, setPlanError] = useState<KilnError | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [confirmError, setConfirmError] = useState<KilnError | null>(null);
  const eventsRef = useRef(0);
  eventsRef.current = state.deliveryEvents[sessionId] ?? 0;
  const planRef = useRef<DeliveryPlan | null>(null);
  planRef.current = plan;
  const seq = useRef(0);

  const replan = useCallback(
    async (target?: DeliveryTarget, nextNote: string | null = null) => {
      const mine = ++seq.current;
      setPlanning(true);
      setPlanError(null);
      try {
        const answer = await backend.call("plan_delivery", target ? { sessionId, target } : { sessionId });
        if (mine !== seq.current) return;
        setPlan(answer);
        setNote(nextNote);
      } catch (e) {
        if (mine === seq.current) setPlanError(toKilnError(e));
      } finally {
        if (mine === seq.current) setPlanning(false);
      }
    },
    [backend, sessionId],
  );

  // The latest run, and a first plan.
  const epoch = state.epoch;
  useEffect(() => {
    let cancelled = false;
    const eventsSeen = eventsRef.current;
    backend
      .call("get_delivery", { sessionId })
      .then((run) => {
        if (!cancelled) dispatch({ type: "deliveryLoaded", sessionId, run, eventsSeen });
      })
      .catch(() => {
        // No run to show: the plan below says what can be done.
      })
      .finally(() => {
        if (!cancelled) setFetched(true);
      });
    void replan(planRef.current?.target);
    return () => {
      cancelled = true;
    };
  }, [backend, dispatch, sessionId, epoch, replan]);

  const confirm = useCallback(async () => {
    const current = planRef.current;
    if (!current || current.blockers.length > 0) return false;
    setConfirming(true);
    setConfirmError(null);
    const eventsSeen = eventsRef.current;
    try {
      const run = await backend.call("deliver", { sessionId, target: current.target, planId: current.planId });
      dispatch({ type: "deliveryLoaded", sessionId, run, eventsSeen });
      return true;
    } catch (e) {
      const error = toKilnError(e);
      if (error.code === "PLAN_STALE") {
        await replan(current.target, "The session changed since this plan was made, so Kiln planned again. Check the plan below and confirm again.");
      } else {
        setConfirmError(error);
        if (REPLAN_ON.has(error.code)) await replan(current.target);
      }
      return false;
    } finally {
      setConfirming(false);
    }
  }, [backend, dispatch, replan, sessionId]);

  return {
    plan,
    planning,
    planError,
    note,
    run: held ?? (fetched ? null : undefined),
    confirming,
    confirmError,
    replan,
    confirm,
  };
}
