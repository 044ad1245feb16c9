// The dashboard header's workspace usage (workspace_usage): turns, tokens and cost, refetched when sessions' usage changes.
import { useEffect, useRef, useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { SessionView, UsageView } from "../../api/types";
import { roleName } from "../../lib/roles";
import { costNote, formatCost, formatTokens } from "../../lib/usage";
import { useStore } from "../../state/store";

/** How long session changes settle before the usage is fetched again. */
export const USAGE_REFRESH_MS = 800;

/** Changes whenever a session appears, goes, or its usage moves (not on every running/state event). */
export function usageKey(sessions: Record<string, SessionView>): string {
  return Object.values(sessions)
    .map((s) => {
      const t = s.usage?.total;
      return t ? `${s.id}:${t.turns}:${t.inputTokens}:${t.outputTokens}:${t.costUsd ?? "?"}:${t.unknownCostTurns}` : s.id;
    })
    .sort()
    .join("|");
}

function describe(usage: UsageView): string {
  const lines = usage.byRole.map((r) => `${roleName(r.role)}: ${formatTokens(r.usage)} · ${formatCost(r.usage)}`);
  const note = costNote(usage.total);
  return [...lines, ...(note ? [note] : [])].join("\n");
}

export function WorkspaceUsage() {
  const { backend, state } = useStore();
  const root = state.app?.workspace?.root;
  const key = usageKey(state.sessions);
  const [usage, setUsage] = useState<UsageView | null>(null);
  const [error, setError] = useState<KilnError | null>(null);
  const [tick, setTick] = useState(0);

  // Debounced: a burst of session events makes one fetch once it settles.
  const seenKey = useRef(key);
  useEffect(() => {
    if (seenKey.current === key) return;
    const timer = setTimeout(() => {
      seenKey.current = key;
      setTick((t) => t + 1);
    }, USAGE_REFRESH_MS);
    return () => clearTimeout(timer);
  }, [key]);

  useEffect(() => {
    if (!root) return;
    let cancelled = false;
    backend
      .call("workspace_usage", {})
      .then((u) => {
        if (cancelled) return;
        setUsage(u);
        setError(null);
      })
      .catch((e: unknown) => {
        if (!cancelled) setError(toKilnError(e));
      });
    return () => {
      cancelled = true;
    };
  }, [backend, root, state.epoch, tick]);

  if (error && !usage) {
    return (
      <span className="workspace-usage muted small" data-testid="workspace-usage" data-error={error.code} title={`${error.code}: ${error.message}`}>
        Usage: unavailable
      </span>
    );
  }
  if (!usage) return null;
  const total = usage.total;
  if (total.turns === 0) {
    return (
      <span className="workspace-usage muted small" data-testid="workspace-usage">
        Usage: no turns yet
      </span>
    );
  }
  return (
    <span className="workspace-usage small" data-testid="workspace-usage" title={describe(usage) || undefined}>
      <span className="muted">
        Usage: {total.turns} turn{total.turns === 1 ? "" : "s"} ·{" "}
      </span>
      {formatTokens(total)} · <span data-unknown={total.unknownCostTurns > 0 || undefined}>{formatCost(total)}</span>
    </span>
  );
}
