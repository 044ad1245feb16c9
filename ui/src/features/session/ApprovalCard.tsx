// While a session awaits approval: the waiting module's specification, one "Approve specification" per module (approve_spec) and "Request changes".
import { useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { SessionView, TranscriptEntry } from "../../api/types";
import { useStore } from "../../state/store";
import { ErrorMessage } from "../../components/ErrorMessage";
import { SpecPanel, specRefreshKey } from "../spec/SpecPanel";
import { Badge } from "../../components/StateBadge";

/** The module whose specification waits: the last system entry about an approval names it, else the primary. */
export function waitingModule(session: SessionView, entries: TranscriptEntry[] | undefined): string | null {
  const ids = new Set(session.modules.map((m) => m.id));
  for (let i = (entries?.length ?? 0) - 1; i >= 0; i--) {
    const e = entries![i];
    if (e.kind === "system" && e.module && ids.has(e.module) && /approv/i.test(e.text)) return e.module;
  }
  return session.modules[0]?.id ?? null;
}

export interface ApprovalCardProps {
  session: SessionView;
  entries: TranscriptEntry[] | undefined;
  onRequestChanges: () => void;
}

export function ApprovalCard({ session, entries, onRequestChanges }: ApprovalCardProps) {
  const { backend, dispatch } = useStore();
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<KilnError | null>(null);
  const waiting = waitingModule(session, entries);
  // The waiting module first, then the others in session order.
  const modules = [...session.modules].sort((a, b) => Number(b.id === waiting) - Number(a.id === waiting));

  async function approve(moduleId: string) {
    setBusy(moduleId);
    setError(null);
    try {
      const updated = await backend.call("approve_spec", { sessionId: session.id, moduleId });
      dispatch({ type: "sessionUpserted", session: updated });
    } catch (e) {
      setError(toKilnError(e));
    } finally {
      setBusy(null);
    }
  }

  return (
    <section className="approval-card" data-testid="approval-card" aria-labelledby="approval-title">
      <h2 id="approval-title" className="approval-title">
        Specification awaiting your approval
      </h2>
      <p className="muted small">
        Read the specification as it stands in the session's working copy. Approving records that exact text; the agents
        then go on to build it. An edit needs a new approval.
      </p>
      {waiting && (
        <SpecPanel
          key={waiting}
          sessionId={session.id}
          moduleId={waiting}
          running={session.running}
          refreshKey={specRefreshKey(session, entries)}
        />
      )}
      <ul className="approval-modules">
        {modules.map((m) => (
          <li key={m.id} className="approval-module" data-module={m.id}>
            <code className="module-id">{m.id}</code>
            {m.id === waiting && <Badge tone="warn">waiting</Badge>}
            <button
              type="button"
              className={m.id === waiting ? "btn btn-small btn-primary" : "btn btn-small"}
              onClick={() => void approve(m.id)}
              disabled={busy !== null || session.running}
              title={session.running ? "Approve when the turn has ended" : undefined}
              data-testid="approve"
            >
              {busy === m.id ? "Approving…" : "Approve specification"}
            </button>
          </li>
        ))}
      </ul>
      {error && <ErrorMessage error={error} />}
      <div className="approval-actions">
        <button type="button" className="btn btn-small" onClick={onRequestChanges} data-testid="request-changes">
          Request changes
        </button>
      </div>
    </section>
  );
}
