// The Gates tab's compact summary: a red count of failed gates, a green check when every gate that ran passed, a spinner while checking.
import type { GateResultView } from "../../api/types";
import { countGates } from "../../lib/gates";
import { Icon } from "../../components/Icon";

export function GatesTabBadge({ gates, checking = false }: { gates: GateResultView[] | null; checking?: boolean }) {
  if (checking) {
    return (
      <span className="tab-badge tab-badge-checking" data-testid="tab-gates-summary" data-state="checking">
        <span className="spinner" aria-hidden="true" />
        <span className="sr-only"> (checking)</span>
      </span>
    );
  }
  if (!gates || gates.length === 0) return null;
  const { passed, failed } = countGates(gates);
  if (failed > 0) {
    return (
      <span className="tab-badge tab-badge-failed" data-testid="tab-gates-summary" data-state="failed" title={`${failed} failed`}>
        {failed}
        <span className="sr-only"> failed</span>
      </span>
    );
  }
  // Skipped gates alone are not a pass.
  if (passed === 0) return null;
  return (
    <span className="tab-badge tab-badge-passed" data-testid="tab-gates-summary" data-state="passed" title="Every gate that ran passed">
      <Icon name="check" size={11} />
      <span className="sr-only"> (all passed)</span>
    </span>
  );
}
