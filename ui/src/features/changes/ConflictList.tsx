// The conflicts the last update from the workspace left in the shown file, one card each: the session's lines and the
// workspace's side by side, and the pick that resolves it ("Keep this session's", "Keep the workspace's", "Keep both").
// A file whose markers no longer make whole conflicts (edited half way) is the user's or the agent's to finish.
import { toKilnError } from "../../api/backend";
import type { ConflictKeep, ConflictView } from "../../api/types";
import { ErrorMessage } from "../../components/ErrorMessage";
import { useConflicts } from "../../state/useConflicts";

/** The picks for a conflict, in the order offered. */
const PICKS: { keep: ConflictKeep; label: string; title?: string }[] = [
  { keep: "session", label: "Keep this session's" },
  { keep: "workspace", label: "Keep the workspace's" },
  { keep: "both", label: "Keep both", title: "This session's lines, then the workspace's" },
];

export interface ConflictListProps {
  sessionId: string;
  /** The shown file. */
  path: string;
  /** Every file of the session that still holds markers. */
  paths: string[];
  /** A turn runs, or the session is closed: nothing is picked meanwhile. */
  locked: boolean;
  /** Changes with the diff's own refresh, so an edit made elsewhere is read again. */
  refresh: string | number;
  onResolved: () => void;
}

export function ConflictList({ sessionId, path, paths, locked, refresh, onResolved }: ConflictListProps) {
  const { query, resolve } = useConflicts(sessionId, paths, refresh);
  const file = query.data?.files.find((f) => f.path === path);
  if (query.error) return <ErrorMessage error={toKilnError(query.error)} onRetry={() => query.refetch()} />;
  if (!file) return null;
  const pick = (conflict: ConflictView, keep: ConflictKeep) =>
    resolve.mutate({ path, conflictId: conflict.id, keep }, { onSettled: onResolved });
  return (
    <section className="conflicts" data-testid="conflict-list" aria-label={`Conflicts in ${path}`}>
      {file.conflicts.length === 0 ? (
        <p className="muted small">
          This file still holds conflict markers that no longer make a whole conflict; finish it in the Terminal tab, or
          ask the agent.
        </p>
      ) : (
        file.conflicts.map((c, i) => (
          <article key={c.id} className="conflict" data-testid="conflict">
            <header className="conflict-head small">
              <strong>Conflict{file.conflicts.length > 1 ? ` ${i + 1} of ${file.conflicts.length}` : ""}</strong>{" "}
              <span className="muted">at line {c.line}: both changed these lines</span>
            </header>
            <div className="conflict-sides">
              <Side title="This session" text={c.session} testId="conflict-session" />
              <Side title="The workspace" text={c.workspace} testId="conflict-workspace" />
            </div>
            <div className="conflict-actions">
              {PICKS.map((p) => (
                <button
                  key={p.keep}
                  type="button"
                  className="btn btn-small"
                  disabled={locked || resolve.isPending}
                  onClick={() => pick(c, p.keep)}
                  title={p.title}
                  data-testid={`keep-${p.keep}`}
                >
                  {p.label}
                </button>
              ))}
            </div>
          </article>
        ))
      )}
      {resolve.error && <ErrorMessage error={toKilnError(resolve.error)} testId="conflict-error" />}
    </section>
  );
}

function Side({ title, text, testId }: { title: string; text: string; testId: string }) {
  return (
    <div className="conflict-side" data-testid={testId}>
      <div className="conflict-side-title small muted">{title}</div>
      {text === "" ? (
        <p className="conflict-empty small muted">No lines: this side removed them</p>
      ) : (
        <pre className="conflict-text">{text.replace(/\r?\n$/, "")}</pre>
      )}
    </div>
  );
}
