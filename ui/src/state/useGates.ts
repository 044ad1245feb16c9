// A session's latest gate results (get_gates): fetched at once, when the Gates tab opens and after new gate entries (debounced); Check modules runs them all now (check_modules).
import { useCallback, useEffect, useRef, useState } from "react";
import { type KilnError, toKilnError } from "../api/backend";
import type { GateResultView } from "../api/types";
import { useDebounced } from "../lib/useDebounced";
import { useStore } from "./store";

/** How long the transcript's last gate entry must stay put before the gates are fetched again (gates finish in bursts). */
export const GATES_REFRESH_MS = 500;

export interface GatesOptions {
  sessionId: string;
  /** The transcript's last gate entry (lastGateEntryId): a change fetches again, debounced; null while the transcript loads. */
  gateKey: number | null;
  /** The Gates tab is shown: turning true fetches again. */
  active: boolean;
  debounceMs?: number;
}

export interface GatesState {
  /** null until the first answer. */
  gates: GateResultView[] | null;
  /** A get_gates request is in flight. */
  loading: boolean;
  /** The last get_gates failure, cleared by the next result. */
  error: KilnError | null;
  /** check_modules is in flight. */
  checking: boolean;
  checkError: KilnError | null;
  reload: () => void;
  /** Runs every gate of every module now; its answer replaces the results. */
  check: () => Promise<void>;
}

export function useGates({ sessionId, gateKey, active, debounceMs = GATES_REFRESH_MS }: GatesOptions): GatesState {
  const { backend, state } = useStore();
  const [gates, setGates] = useState<GateResultView[] | null>(null);
  const [pending, setPending] = useState(0);
  const [error, setError] = useState<KilnError | null>(null);
  const [checking, setChecking] = useState(false);
  const [checkError, setCheckError] = useState<KilnError | null>(null);
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  // Every answer takes a number when it is asked for (check_modules: when it answers, as it reads
  // the results last); an answer older than the one shown is dropped.
  const issuedRef = useRef(0);
  const shownRef = useRef(0);
  const aliveRef = useRef(true);
  useEffect(() => {
    aliveRef.current = true;
    return () => {
      aliveRef.current = false;
    };
  }, []);

  const show = useCallback((seq: number, list: GateResultView[]) => {
    if (!aliveRef.current || seq <= shownRef.current) return;
    shownRef.current = seq;
    setGates(list);
    setError(null);
  }, []);

  useEffect(() => {
    const seq = ++issuedRef.current;
    setPending((n) => n + 1);
    backend
      .call("get_gates", { sessionId })
      .then((list) => show(seq, list))
      .catch((e: unknown) => {
        if (aliveRef.current && seq > shownRef.current) setError(toKilnError(e));
      })
      .finally(() => {
        if (aliveRef.current) setPending((n) => n - 1);
      });
  }, [backend, sessionId, state.epoch, tick, show]);

  // Opening the tab fetches again (the first render's fetch covers a tab open from the start).
  const wasActiveRef = useRef(active);
  useEffect(() => {
    if (active && !wasActiveRef.current) reload();
    wasActiveRef.current = active;
  }, [active, reload]);

  // A new gate entry fetches again once they settle; the transcript's first load does not.
  const settledKey = useDebounced(gateKey, debounceMs);
  const seenKeyRef = useRef(settledKey);
  useEffect(() => {
    const seen = seenKeyRef.current;
    seenKeyRef.current = settledKey;
    if (seen !== null && settledKey !== null && settledKey !== seen) reload();
  }, [settledKey, reload]);

  const check = useCallback(async () => {
    setChecking(true);
    setCheckError(null);
    try {
      const list = await backend.call("check_modules", { sessionId });
      show(++issuedRef.current, list);
    } catch (e: unknown) {
      if (aliveRef.current) setCheckError(toKilnError(e));
    } finally {
      if (aliveRef.current) setChecking(false);
    }
  }, [backend, sessionId, show]);

  return { gates, loading: pending > 0, error, checking, checkError, reload, check };
}
