// A session's delivery: its plan (plan_delivery, a query per target: re-planned on demand, when reviews change, and when a confirmation was of a stale plan), the confirmation (deliver, or deliver past the gate blockers with a reason) and the latest run (get_delivery, kept live by `delivery` events).
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useRef, useState } from "react";
import { type KilnError, toKilnError } from "../api/backend";
import type { DeliveryPlan, DeliveryRun, DeliveryTarget } from "../api/types";
import { canDeliverAnyway } from "../lib/deliverable";
import { applyAnswer, keys, updatesOf } from "./queries";
import { useBackend } from "./store";

/** Refusals of a confirmation that mean the plan no longer holds: plan again so the screen shows why. */
const REPLAN_ON = new Set([
  "PLAN_STALE",
  "DELIVERY_BLOCKED",
  "DELIVERY_CONFLICT",
  "TARGET_UNAVAILABLE",
  "BRANCH_MOVED",
]);

const STALE_NOTE =
  "The session changed since this plan was made, so Kiln planned again. Check the plan below and confirm again.";

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
  /**
   * Delivers the plan shown; true when a run started. With `anyway` (the reason), delivers past the plan's
   * blockers when every one is a gate blocker (`overridable`).
   */
  confirm: (anyway?: string) => Promise<boolean>;
}

export function useDelivery(sessionId: string): DeliveryHandle {
  const { backend } = useBackend();
  const client = useQueryClient();
  const runKey = keys.delivery(sessionId);
  const runQuery = useQuery({ queryKey: runKey, queryFn: () => backend.call("get_delivery", { sessionId }) });

  // The target asked for (null: the engine's default); the plan shown stays while another target's is fetched.
  const [target, setTarget] = useState<DeliveryTarget | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const planQueryOf = useCallback(
    (t: DeliveryTarget | null) => ({
      queryKey: keys.plan(sessionId, t),
      queryFn: () => backend.call("plan_delivery", t ? { sessionId, target: t } : { sessionId }),
    }),
    [backend, sessionId],
  );
  // Planned when the screen opens and when replan asks (not again when replan's answer meets a new observer).
  const planQuery = useQuery({
    ...planQueryOf(target),
    placeholderData: keepPreviousData,
    staleTime: Infinity,
    refetchOnMount: "always",
  });
  const plan = planQuery.data ?? null;
  const planRef = useRef(plan);
  planRef.current = plan;

  const replan = useCallback(
    async (t?: DeliveryTarget, nextNote: string | null = null) => {
      const next = t ?? null;
      setTarget(next);
      // A plan still on its way was asked before whatever made us plan again.
      await client.cancelQueries({ queryKey: keys.plan(sessionId, next), exact: true });
      try {
        await client.fetchQuery({ ...planQueryOf(next), staleTime: 0 });
        setNote(nextNote);
      } catch {
        // Shown as planError.
      }
    },
    [client, planQueryOf, sessionId],
  );

  const delivering = useMutation({
    mutationFn: async ({ current, anyway }: { current: DeliveryPlan; anyway?: string }) => {
      await client.cancelQueries({ queryKey: runKey, exact: true });
      const since = updatesOf(client, runKey);
      const args = { sessionId, target: current.target, planId: current.planId };
      const run = await backend.call("deliver", anyway === undefined ? args : { ...args, anyway });
      // A `delivery` event about the run that came meanwhile is at least as new as this answer.
      applyAnswer(client, runKey, run, since);
      return run;
    },
  });
  const { mutateAsync } = delivering;

  const confirm = useCallback(
    async (anyway?: string) => {
      const current = planRef.current;
      if (!current) return false;
      if (anyway === undefined ? current.blockers.length > 0 : !canDeliverAnyway(current)) return false;
      try {
        await mutateAsync({ current, anyway });
        return true;
      } catch (e) {
        const error = toKilnError(e);
        if (error.code === "PLAN_STALE") await replan(current.target, STALE_NOTE);
        else if (REPLAN_ON.has(error.code)) await replan(current.target);
        return false;
      }
    },
    [mutateAsync, replan],
  );

  const confirmError = delivering.error ? toKilnError(delivering.error) : null;
  return {
    plan,
    planning: planQuery.isFetching,
    planError: planQuery.error ? toKilnError(planQuery.error) : null,
    note,
    run: runQuery.data !== undefined ? runQuery.data : runQuery.isFetched ? null : undefined,
    confirming: delivering.isPending,
    // A stale plan is not a failure to show: the re-plan's note says what happened.
    confirmError: confirmError?.code === "PLAN_STALE" ? null : confirmError,
    replan,
    confirm,
  };
}
