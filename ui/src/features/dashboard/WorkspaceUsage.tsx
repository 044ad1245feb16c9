// The dashboard header's workspace usage (workspace_usage): turns, tokens and cost, refetched when sessions' usage changes.
import type { UsageView } from "../../api/types";
import { roleName } from "../../lib/roles";
import { costNote, formatCost, formatTokens } from "../../lib/usage";
import { useWorkspaceUsage } from "../../state/useWorkspaceUsage";

function describe(usage: UsageView): string {
  const lines = usage.byRole.map((r) => `${roleName(r.role)}: ${formatTokens(r.usage)} · ${formatCost(r.usage)}`);
  const note = costNote(usage.total);
  return [...lines, ...(note ? [note] : [])].join("\n");
}

export function WorkspaceUsage() {
  const { usage, error } = useWorkspaceUsage();

  if (error && !usage) {
    return (
      <span
        className="workspace-usage muted small"
        data-testid="workspace-usage"
        data-error={error.code}
        title={`${error.code}: ${error.message}`}
      >
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
