// Under a transcript entry that closed a turn with a checkpoint: its number, its name (the message that led to it), whether the working copy is at it now, the preview's look after the turn, and "Restore to here".
import type { CheckpointView, ScreenshotView, SessionView } from "../../api/types";
import { ScreenshotThumb } from "../screenshots/ScreenshotThumb";
import { CheckpointRestore } from "../checkpoints/CheckpointRestore";
import { Icon } from "../../components/Icon";

/** Each linked entry's checkpoint (the latest, should two name one entry). */
export function checkpointsByEntry(checkpoints: CheckpointView[]): Map<number, CheckpointView> {
  const map = new Map<number, CheckpointView>();
  for (const cp of checkpoints) {
    if (cp.entryId === undefined || cp.entryId === null) continue;
    const held = map.get(cp.entryId);
    if (!held || held.sequence < cp.sequence) map.set(cp.entryId, cp);
  }
  return map;
}

export interface EntryCheckpointProps {
  session: SessionView;
  checkpoint: CheckpointView;
  closed?: boolean;
  /** The preview after this turn, when it was captured. */
  screenshot?: ScreenshotView;
}

export function EntryCheckpoint({ session, checkpoint, closed, screenshot }: EntryCheckpointProps) {
  return (
    <div className="entry-checkpoint" data-testid="entry-checkpoint" data-sequence={checkpoint.sequence}>
      <span className="entry-checkpoint-label">
        <Icon name="history" className="entry-icon" />
        <span title={checkpoint.label}>Checkpoint {checkpoint.sequence}</span>
        {checkpoint.current && (
          <span
            className="badge badge-info checkpoint-now"
            data-testid="entry-checkpoint-current"
            title="The working copy is at this checkpoint"
          >
            current
          </span>
        )}
      </span>
      {screenshot && <ScreenshotThumb sessionId={session.id} shot={screenshot} />}
      <CheckpointRestore
        sessionId={session.id}
        checkpoint={checkpoint}
        running={session.running}
        closed={closed}
        label="Restore to here"
        testId="restore-here"
      />
    </div>
  );
}
