// A session's usage: totals (turns, tokens, cost) and the per-role breakdown, for the session sidebar.
import type { UsageTotals, UsageView } from "../../api/types";
import { roleName } from "../../lib/roles";
import { costNote, formatCost, formatCount } from "../../lib/usage";

function Cost({ usage }: { usage: UsageTotals }) {
  return (
    <span className="usage-cost" title={costNote(usage)} data-unknown={usage.unknownCostTurns > 0 || undefined}>
      {formatCost(usage)}
    </span>
  );
}

export function UsagePanel({ usage }: { usage: UsageView | undefined }) {
  const total = usage?.total;
  if (!total || total.turns === 0)
    return (
      <p className="muted small" data-testid="usage">
        No turns yet.
      </p>
    );
  return (
    <div className="usage" data-testid="usage">
      <dl className="usage-totals">
        <dt>Turns</dt>
        <dd>{total.turns}</dd>
        <dt>Tokens in / out</dt>
        <dd>
          {formatCount(total.inputTokens)} / {formatCount(total.outputTokens)}
        </dd>
        {(total.cacheReadTokens > 0 || total.cacheWriteTokens > 0) && (
          <>
            <dt>Cache read / write</dt>
            <dd>
              {formatCount(total.cacheReadTokens)} / {formatCount(total.cacheWriteTokens)}
            </dd>
          </>
        )}
        <dt>Cost</dt>
        <dd data-testid="usage-cost">
          <Cost usage={total} />
        </dd>
      </dl>
      {usage.byRole.length > 0 && (
        <table className="usage-roles" data-testid="usage-roles">
          <thead>
            <tr>
              <th scope="col">Role</th>
              <th scope="col">Turns</th>
              <th scope="col">Tokens</th>
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {usage.byRole.map((r) => (
              <tr key={r.role}>
                <th scope="row">{roleName(r.role)}</th>
                <td>{r.usage.turns}</td>
                <td>{formatCount(r.usage.inputTokens + r.usage.outputTokens)}</td>
                <td>
                  <Cost usage={r.usage} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
