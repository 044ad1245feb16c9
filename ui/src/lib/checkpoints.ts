// Checkpoint names: the operator message that led to each (the engine's label until then), never two alike, and which one the working copy is at.
import type { CheckpointView, TranscriptEntry } from "../api/types";

export interface NamedCheckpoint {
  checkpoint: CheckpointView;
  /** Unique within the session. */
  name: string;
  /** The working copy is at this checkpoint now. */
  current: boolean;
  /** The name is not the engine's label as it stands (a message, or a label made unique). */
  renamed: boolean;
}

const RESTORED = /^Restored the (?:workspace|session's working copy) to the state after .* \(turn (\d+)\)\.$/s;
const MAX_NAME = 60;

/** A message as a one-line name: the first line, cut at about 60 characters on a word. */
export function shortName(text: string): string {
  const line = text.trim().split("\n")[0].trim();
  if (line.length <= MAX_NAME) return line;
  const cut = line.slice(0, MAX_NAME);
  const space = cut.lastIndexOf(" ");
  return `${(space > 30 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** The last operator message before `entryId` (the entry that closed the checkpoint's turn). */
function messageBefore(entries: TranscriptEntry[], entryId: number): string | null {
  let found: string | null = null;
  for (const e of entries) {
    if (e.id >= entryId) break;
    if (e.kind === "user" && e.text.trim()) found = e.text;
  }
  return found;
}

function capitalized(label: string): string {
  return label ? label.charAt(0).toUpperCase() + label.slice(1) : label;
}

/**
 * The sequence the working copy is at: the engine's `current` marker when it sends one, else
 * the checkpoint named by the last restore line unless a later checkpoint came after it, else
 * the latest checkpoint.
 */
export function currentSequence(checkpoints: CheckpointView[], entries: TranscriptEntry[] | undefined): number | null {
  if (checkpoints.length === 0) return null;
  const marked = checkpoints.find((c) => c.current === true);
  if (marked) return marked.sequence;
  const latest = checkpoints.reduce((a, b) => (b.sequence > a.sequence ? b : a));
  if (!entries) return latest.sequence;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i];
    const m = e.kind === "system" ? RESTORED.exec(e.text.trim()) : null;
    if (!m) continue;
    const restored = Number(m[1]);
    // A checkpoint taken after the restore (a later turn) is where the files are now.
    const later = checkpoints.some((c) => c.sequence > restored && c.entryId != null && c.entryId > e.id);
    return later ? latest.sequence : restored;
  }
  return latest.sequence;
}

/**
 * Each checkpoint (in sequence order) with a name: the engine's label once it names them by
 * their message (it then marks the current one too), else the message before the checkpoint's
 * entry in the transcript, else the engine's label; a name already taken gets " (2)", " (3)"…
 * so no two read alike.
 */
export function nameCheckpoints(
  checkpoints: CheckpointView[],
  entries: TranscriptEntry[] | undefined,
): NamedCheckpoint[] {
  const sorted = [...checkpoints].sort((a, b) => a.sequence - b.sequence);
  const current = currentSequence(sorted, entries);
  // The engine names them by their message and marks the current one (issue 15); one from before did neither.
  const engineNames = sorted.some((c) => c.current === true);
  const taken = new Set<string>();
  return sorted.map((checkpoint) => {
    const message =
      !engineNames && checkpoint.sequence > 0 && entries && checkpoint.entryId != null
        ? messageBefore(entries, checkpoint.entryId)
        : null;
    const base = message ? `“${shortName(message)}”` : capitalized(checkpoint.label);
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base} (${n})`;
    taken.add(name);
    return {
      checkpoint,
      name,
      current: checkpoint.sequence === current,
      renamed: name !== capitalized(checkpoint.label),
    };
  });
}
