// A group's comparison screen (best-of-N): the brief, a column per candidate side by side (what the operator decides on, Open and Pick), and "Compare diffs" between any two candidates.
import { type CSSProperties, useState } from "react";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { EmptyState } from "../../components/EmptyState";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { RelativeTime } from "../../components/RelativeTime";
import { agentLabel, candidateName, pickedCandidate } from "../../lib/candidates";
import { paths } from "../../router";
import { useGroup } from "../../state/useGroup";
import { CandidateColumn } from "./CandidateColumn";
import { CompareDiffs } from "./CompareDiffs";

export function GroupScreen({ groupId }: { groupId: string }) {
  const { group, updatedAt, error, retry, pick, picking, pickError } = useGroup(groupId);
  const [asking, setAsking] = useState<string | null>(null);

  if (!group) {
    return (
      <section className="screen">
        <a className="back" href={paths.dashboard}>
          ← Sessions
        </a>
        {error ? (
          error.code === "GROUP_NOT_FOUND" ? (
            <EmptyState title="No such group">
              <p>This workspace has no group of candidates with that id.</p>
            </EmptyState>
          ) : (
            <ErrorMessage error={error} onRetry={retry} />
          )
        ) : (
          <Loading label="Loading the candidates…" />
        )}
      </section>
    );
  }
  const winner = pickedCandidate(group);
  const asked = group.candidates.find((c) => c.sessionId === asking) ?? null;
  const others = group.candidates.filter((c) => c.sessionId !== asking && c.archivedAt === null).length;

  return (
    <section className="screen group-screen" aria-labelledby="group-title" data-testid="group-screen">
      <a className="back" href={paths.dashboard}>
        ← Sessions
      </a>
      <div className="screen-head">
        <div>
          <h1 id="group-title">{group.title}</h1>
          <p className="muted small">
            {group.candidates.length} candidates · <RelativeTime value={group.createdAt} />
            {winner && (
              <>
                {" "}
                · picked <strong data-testid="group-winner">{candidateName(winner)}</strong> ({agentLabel(winner)})
              </>
            )}
          </p>
        </div>
      </div>
      <details className="group-brief">
        <summary className="small">Brief</summary>
        <p className="small">{group.brief}</p>
      </details>
      {pickError && <ErrorMessage error={pickError} />}
      <div
        className="candidates"
        data-testid="candidates"
        style={{ "--columns": group.candidates.length } as CSSProperties}
      >
        {group.candidates.map((c) => (
          <CandidateColumn
            key={c.sessionId}
            candidate={c}
            picked={group.pickedSessionId === c.sessionId}
            decided={group.pickedSessionId !== null}
            picking={picking === c.sessionId}
            onPick={() => setAsking(c.sessionId)}
          />
        ))}
      </div>
      {group.candidates.length >= 2 && (
        <CompareDiffs groupId={group.id} candidates={group.candidates} refreshKey={updatedAt} />
      )}
      {asked && (
        <ConfirmDialog
          title={`Pick ${candidateName(asked)}?`}
          confirmLabel="Pick"
          onConfirm={() => {
            setAsking(null);
            void pick(asked.sessionId);
          }}
          onCancel={() => setAsking(null)}
        >
          <p data-testid="pick-confirm">
            {candidateName(asked)} ({agentLabel(asked)}) is kept for delivery.{" "}
            {others > 0
              ? `The ${others} other candidate${others === 1 ? " is" : "s are"} archived, stopping what ${others === 1 ? "it runs" : "they run"}; their checkpoints stay and they can be restored.`
              : "No other candidate is open."}
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
