// The session's changes (get_diff): a module filter, the changed files, and the selected file's diff, unified or split.
// In the direct workflow the diff also has groups beyond the session's modules (the repository root, a changed module
// not in the session): the filter offers those seen in the unfiltered view. With `review`, lines of the shown file can be
// selected and commented on; the comments sit under their lines and in a list with "Send to agent (N)". A file with
// conflicts from an update from the workspace shows them above its diff, each with its pick (ConflictList).
import { type ReactNode, useEffect, useId, useMemo, useRef, useState } from "react";
import { type KilnError, toKilnError } from "../../api/backend";
import type { DiffGroup, DiffView, ReviewCommentView, SessionModule } from "../../api/types";
import { diffFiles, groupLabel } from "../../lib/diff";
import { useDebounced } from "../../lib/useDebounced";
import { useStore } from "../../state/store";
import { DiffFileList } from "./DiffFileList";
import { useDiffFileShortcuts } from "../shortcuts/useDiffFileShortcuts";
import { ErrorMessage } from "../../components/ErrorMessage";
import { type Commenting, type DiffMode, FileDiffView } from "./FileDiffView";
import { Loading } from "../../components/Loading";
import {
  commentedLines,
  commentsByEndLine,
  type LineSelection,
  pickLine,
  rangeLabel,
  rangeOf,
} from "../../lib/lineSelection";
import { useReviewComments } from "../../state/useReviewComments";
import { CommentForm } from "./CommentForm";
import { ReviewCommentCard } from "./ReviewCommentCard";
import { ReviewCommentList } from "./ReviewCommentList";
import { ConflictList } from "./ConflictList";
import { useModuleWords } from "../../lib/moduleWords";

/** How long the refresh key must stay put before the diff is fetched again (a turn adds entries in bursts). */
export const DIFF_REFRESH_MS = 500;

export interface DiffPanelProps {
  sessionId: string;
  modules: SessionModule[];
  /** The diff is fetched again (debounced) whenever this changes: the transcript's length, the checkpoints heard of. */
  refreshKey?: string | number;
  /** False while the panel is hidden: nothing is fetched; it is fetched again when shown. */
  active?: boolean;
  debounceMs?: number;
  /** The module filter ("" for every module), when the parent holds it (the preview's module selector sets it). */
  moduleId?: string;
  onModuleChange?: (moduleId: string) => void;
  /** The session's review comments, when lines can be commented on here. */
  review?: ReviewProps;
  /** Files the last update from the workspace left with conflict markers: the shown one's conflicts sit above its
   * diff, each with its pick. */
  conflicts?: string[];
}

export interface ReviewProps {
  comments: ReviewCommentView[];
  /** A turn (or setup) runs: nothing is sent meanwhile. */
  running: boolean;
  /** Archived, rejected or delivered: comments are shown, not changed. */
  closed: boolean;
}

const NONE: string[] = [];

/** A fetched diff and the filter it was fetched with ("" for every module). */
interface Loaded {
  moduleId: string;
  view: DiffView;
}

export function DiffPanel(props: DiffPanelProps) {
  const { sessionId, modules, refreshKey = 0, active = true, debounceMs = DIFF_REFRESH_MS } = props;
  const { backend } = useStore();
  const selectId = useId();
  const [ownModuleId, setOwnModuleId] = useState("");
  const moduleId = props.moduleId ?? ownModuleId;
  const setModuleId = props.onModuleChange ?? setOwnModuleId;
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<KilnError | null>(null);
  const [attempt, setAttempt] = useState(0);
  const [selected, setSelected] = useState<string | null>(null);
  // Groups that are not session modules, as the last unfiltered view had them.
  const [extraGroups, setExtraGroups] = useState<{ moduleId: string; group: DiffGroup }[]>([]);
  const [mode, setMode] = useState<DiffMode>("unified");
  const [lineSelection, setLineSelection] = useState<LineSelection | null>(null);
  const settledKey = useDebounced(refreshKey, debounceMs);
  // Answers that arrive after a newer request (a refetch racing a filter change) are dropped.
  const requestRef = useRef(0);

  useEffect(() => {
    if (!active) return;
    const request = ++requestRef.current;
    setLoading(true);
    backend
      .call("get_diff", moduleId ? { sessionId, moduleId } : { sessionId })
      .then((view) => {
        if (request !== requestRef.current) return;
        setLoaded({ moduleId, view });
        if (!moduleId) {
          setExtraGroups(
            view.modules.filter((m) => m.group !== "module").map((m) => ({ moduleId: m.moduleId, group: m.group })),
          );
        }
        setError(null);
      })
      .catch((e: unknown) => {
        if (request === requestRef.current) setError(toKilnError(e));
      })
      .finally(() => {
        if (request === requestRef.current) setLoading(false);
      });
  }, [backend, sessionId, moduleId, settledKey, active, attempt]);

  // Data fetched for another filter is not shown while this one loads.
  const current = loaded && loaded.moduleId === moduleId ? loaded.view : null;
  const files = diffFiles(current);
  const shown = files.find((f) => f.key === selected) ?? files[0] ?? null;
  useDiffFileShortcuts(
    files.map((f) => f.key),
    shown?.key ?? null,
    setSelected,
    active,
  );
  const commenting = useCommentingFor(
    sessionId,
    shown?.file.path ?? null,
    props.review,
    lineSelection,
    setLineSelection,
  );
  const conflicted = props.conflicts ?? NONE;
  // In a one-package repository there is nothing to filter by.
  const moduleWords = useModuleWords();
  const additions = files.reduce((n, f) => n + f.file.additions, 0);
  const deletions = files.reduce((n, f) => n + f.file.deletions, 0);

  let body: ReactNode;
  if (!current) {
    body = error ? null : <Loading label="Loading changes…" />;
  } else if (files.length === 0) {
    body = (
      <p className="diff-empty muted" data-testid="diff-empty">
        No changes yet
      </p>
    );
  } else {
    body = (
      <div className="diff-content">
        <DiffFileList files={files} selected={shown?.key ?? null} onSelect={setSelected} conflicted={conflicted} />
        <div className="diff-viewer" data-testid="diff-viewer">
          {shown && conflicted.includes(shown.file.path) && (
            <ConflictList
              sessionId={sessionId}
              path={shown.file.path}
              paths={conflicted}
              locked={(props.review?.running ?? false) || (props.review?.closed ?? false)}
              refresh={`${settledKey}:${attempt}`}
              onResolved={() => setAttempt((a) => a + 1)}
            />
          )}
          {shown && <FileDiffView key={shown.key} file={shown.file} mode={mode} commenting={commenting} />}
        </div>
      </div>
    );
  }

  return (
    <div className="diff-panel" data-testid="diff-panel" data-mode={mode} aria-busy={loading || undefined}>
      <div className="diff-toolbar">
        {moduleWords && (
          <label className="diff-filter" htmlFor={selectId}>
            <span className="muted small">Module</span>
            <select
              id={selectId}
              className="input"
              value={moduleId}
              onChange={(e) => setModuleId(e.target.value)}
              data-testid="diff-module"
            >
              <option value="">All modules</option>
              {modules.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.id}
                </option>
              ))}
              {extraGroups
                .filter((g) => !modules.some((m) => m.id === g.moduleId))
                .map((g) => (
                  <option key={g.moduleId} value={g.moduleId}>
                    {groupLabel(g.moduleId, g.group)}
                  </option>
                ))}
            </select>
          </label>
        )}
        {current && files.length > 0 && (
          <span className="diff-summary small" data-testid="diff-summary">
            {files.length} {files.length === 1 ? "file" : "files"} <span className="diff-add">+{additions}</span>{" "}
            <span className="diff-del">−{deletions}</span>
          </span>
        )}
        {loading && current && <span className="muted small diff-refreshing">Refreshing…</span>}
        <button
          type="button"
          className="btn btn-small diff-mode"
          aria-pressed={mode === "split"}
          onClick={() => setMode((m) => (m === "split" ? "unified" : "split"))}
          title="Show the old and the new side by side"
          data-testid="diff-mode"
        >
          Side by side
        </button>
      </div>
      {error && <ErrorMessage error={error} onRetry={() => setAttempt((a) => a + 1)} testId="diff-error" />}
      {props.review && (
        <ReviewCommentList
          sessionId={sessionId}
          comments={props.review.comments}
          running={props.review.running}
          closed={props.review.closed}
          onShow={(c) => {
            const file = files.find((f) => f.file.path === c.path);
            if (file) setSelected(file.key);
          }}
        />
      )}
      {body}
    </div>
  );
}

/** The shown file's commenting: its selection, marked lines, and what sits under its lines (comments, the form). */
function useCommentingFor(
  sessionId: string,
  path: string | null,
  review: ReviewProps | undefined,
  selection: LineSelection | null,
  setSelection: (s: LineSelection | null) => void,
): Commenting | undefined {
  const { add } = useReviewComments(sessionId);
  const { mutate, reset, isPending, error } = add;
  return useMemo(() => {
    if (!review || path === null) return undefined;
    const range = selection && selection.path === path ? rangeOf(selection) : null;
    const below = new Map<number, ReactNode>();
    for (const [line, comments] of commentsByEndLine(review.comments, path)) {
      below.set(
        line,
        <div className="diff-comments">
          {comments.map((c) => (
            <ReviewCommentCard key={c.id} sessionId={sessionId} comment={c} readOnly={review.closed} />
          ))}
        </div>,
      );
    }
    if (range && !review.closed) {
      const cancel = () => {
        reset();
        setSelection(null);
      };
      const form = (
        <div className="diff-comments">
          <CommentForm
            key={`${range.start}-${range.end}`}
            label={rangeLabel(range)}
            saving={isPending}
            autoFocus
            onSave={(body) => mutate({ path, startLine: range.start, endLine: range.end, body }, { onSuccess: cancel })}
            onCancel={cancel}
          />
          {error && <ErrorMessage error={toKilnError(error)} testId="comment-error" />}
        </div>
      );
      const at = below.get(range.end);
      below.set(
        range.end,
        at ? (
          <>
            {at}
            {form}
          </>
        ) : (
          form
        ),
      );
    }
    return {
      selection: range,
      commented: commentedLines(review.comments, path),
      onPick: (line: number, extend: boolean) => {
        reset();
        setSelection(pickLine(selection, path, line, extend));
      },
      below,
    };
  }, [sessionId, path, review, selection, setSelection, isPending, error, mutate, reset]);
}
