// The session's checkpoints for the sidebar: sequence, the message that led to each (never two alike), time, which one the files are at now, and a restore button with its inline confirm.
import type { SessionView, TranscriptEntry } from "../../api/types";
import { nameCheckpoints } from "../../lib/checkpoints";
import { CheckpointRestore } from "./CheckpointRestore";
import { RelativeTime } from "../../components/RelativeTime";

export interface CheckpointListProps {
  session: SessionView;
  /** The session is closed: restoring is not offered. */
  closed?: boolean;
  /** The transcript the names come from (the message before each checkpoint); the engine's labels without it. */
  entries?: TranscriptEntry[];
}

export function CheckpointList({ session, closed = false, entries }: CheckpointListProps) {
  const named = nameCheckpoints(session.checkpoints, entries);
  if (named.length === 0) {
    return (
      <p className="muted small" data-testid="checkpoints">
        No checkpoints yet.
      </p>
    );
  }
  return (
    <ol className="checkpoints" data-testid="checkpoints">
      {named.map(({ checkpoint: cp, name, current, renamed }) => (
        <li
          key={cp.sequence}
          className={current ? "checkpoint checkpoint-current" : "checkpoint"}
          data-testid="checkpoint"
          data-sequence={cp.sequence}
          data-current={current || undefined}
          aria-current={current ? "step" : undefined}
        >
          <div className="checkpoint-head">
            <span className="checkpoint-seq" title={`Checkpoint ${cp.sequence}`}>
              #{cp.sequence}
            </span>
            <span className="checkpoint-label" data-testid="checkpoint-name" title={renamed ? cp.label : undefined}>
              {name}
            </span>
            {current && (
              <span
                className="badge badge-info checkpoint-now"
                data-testid="checkpoint-current"
                title="The working copy is at this checkpoint"
              >
                current
              </span>
            )}
          </div>
          <div className="checkpoint-meta">
            <RelativeTime value={cp.at} />
            <CheckpointRestore
              sessionId={session.id}
              checkpoint={cp}
              name={renamed ? name : undefined}
              running={session.running}
              closed={closed}
            />
          </div>
        </li>
      ))}
    </ol>
  );
}
