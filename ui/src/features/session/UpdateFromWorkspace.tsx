// Update from the workspace (SPEC §4): the header button that takes in what changed in the workspace since the session's base (update_from_workspace), and the bar that lists the files its merge left with conflict markers, with "Show the conflicts" (the Changes tab, where each gets its pick) and "Ask the agent to resolve them" (a message to the session's agent).
import { useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { SessionView } from "../../api/types";
import { useStore } from "../../state/store";
import { ErrorMessage } from "../../components/ErrorMessage";

/** The message that hands the conflicts to the agent: which files, what the markers are, what to keep. */
export function resolveConflictsMessage(paths: string[]): string {
  const files = paths.map((p) => `\`${p}\``).join(", ");
  return (
    `Resolve the merge conflicts the update from the workspace left in ${files}. ` +
    "Each conflict holds the session's side between `<<<<<<< session` and `=======`, and the workspace's between `=======` and `>>>>>>> workspace`. " +
    "Keep what both changes meant, remove every marker line, and run the tests."
  );
}

/** update_from_workspace and the conflicts' hand-off to the agent, with their busy state and error. */
export function useUpdate(session: SessionView, onDone?: () => void) {
  const { backend, dispatch } = useStore();
  const [busy, setBusy] = useState<"update" | "resolve" | null>(null);
  const [error, setError] = useState<KilnError | null>(null);
  async function act(kind: "update" | "resolve") {
    setBusy(kind);
    setError(null);
    try {
      const next =
        kind === "update"
          ? await backend.call("update_from_workspace", { sessionId: session.id })
          : await backend.call("send_message", {
              sessionId: session.id,
              text: resolveConflictsMessage(session.conflicts ?? []),
            });
      dispatch({ type: "sessionUpserted", session: next });
      onDone?.();
    } catch (e) {
      setError(toKilnError(e));
    } finally {
      setBusy(null);
    }
  }
  return { busy, error, update: () => void act("update"), resolve: () => void act("resolve") };
}

/** The header's button: shown for an open session that is not delivered. */
export function UpdateButton({ session }: { session: SessionView }) {
  const { busy, error, update } = useUpdate(session);
  const conflicted = (session.conflicts?.length ?? 0) > 0;
  return (
    <>
      <button
        type="button"
        className="btn btn-small"
        onClick={update}
        disabled={busy !== null || session.running || conflicted}
        title={
          conflicted
            ? "Resolve the conflicts of the last update first"
            : "Take in what changed in the workspace since this session's base: a three-way merge into the session's copy, kept as a checkpoint"
        }
        data-testid="update-from-workspace"
      >
        {busy ? "Updating…" : "Update from workspace"}
      </button>
      {error && (
        <div className="update-error">
          <ErrorMessage error={error} />
        </div>
      )}
    </>
  );
}

/** While files hold the last update's conflict markers: which, and the way out. */
export function ConflictsBar({ session, onShow }: { session: SessionView; onShow?: () => void }) {
  const { busy, error, resolve } = useUpdate(session);
  const paths = session.conflicts ?? [];
  if (paths.length === 0) return null;
  return (
    <div className="running-bar blocked-bar conflicts-bar" data-testid="conflicts" role="status">
      <span className="running-text">
        <strong>
          {paths.length === 1 ? "1 file has conflicts" : `${paths.length} files have conflicts`} from the update:
        </strong>{" "}
        {paths.map((p, i) => (
          <span key={p}>
            {i > 0 && ", "}
            <code>{p}</code>
          </span>
        ))}
        . Pick a side for each in the Changes tab, edit the file between <code>{"<<<<<<< session"}</code> and{" "}
        <code>{">>>>>>> workspace"}</code> in the Terminal, or hand them to the agent. Nothing is delivered until they
        are resolved.
      </span>
      {onShow && (
        <button type="button" className="btn btn-small" onClick={onShow} data-testid="show-conflicts">
          Show the conflicts
        </button>
      )}
      <button
        type="button"
        className="btn btn-small btn-primary"
        onClick={resolve}
        disabled={busy !== null || session.running}
        data-testid="resolve-conflicts"
      >
        {busy ? "Sending…" : "Ask the agent to resolve them"}
      </button>
      {error && <ErrorMessage error={error} />}
    </div>
  );
}
