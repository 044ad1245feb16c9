// The session's checkpoints for the sidebar: sequence, label and time of each, with a restore button and its inline confirm.
import type { SessionView } from "../../api/types";
import { CheckpointRestore } from "./CheckpointRestore";
import { RelativeTime } from "../../components/RelativeTime";

export interface CheckpointListProps {
  session: SessionView;
  /** The session is closed: restoring is not offered. */
  closed?: boolean;
  onRestored?: () => void;
}

/** "the starting point" → "The starting point". */
function capitalized(label: string): string {
  return label ? label.charAt(0).toUpperCase() + label.slice(1) : label;
}

export function CheckpointList({ session, closed = false, onRestored }: CheckpointListProps) {
  const checkpoints = [...session.checkpoints].sort((a, b) => a.sequence - b.sequence);
  if (checkpoints.length === 0) {
    return (
      <p className="muted small" data-testid="checkpoints">
        No checkpoints yet.
      </p>
    );
  }
  return (
    <ol className="checkpoints" data-testid="checkpoints">
      {checkpoints.map((cp) => (
        <li key={cp.sequence} className="checkpoint" data-testid="checkpoint" data-sequence={cp.sequence}>
          <div className="checkpoint-head">
            <span className="checkpoint-seq" title={`Checkpoint ${cp.sequence}`}>
              #{cp.sequence}
            </span>
            <span className="checkpoint-label">{capitalized(cp.label)}</span>
          </div>
          <div className="checkpoint-meta">
            <RelativeTime value={cp.at} />
            <CheckpointRestore
              sessionId={session.id}
              checkpoint={cp}
              running={session.running}
              closed={closed}
              onRestored={onRestored}
            />
          </div>
        </li>
      ))}
    </ol>
  );
}
