// One review comment: where it is (in the list), its state ("addressed?" after the turn that changed its lines), its
// words and why it is open again; Edit, Delete and Resolve (or Reopen). A comment out with a running turn is not changed.
import { useState } from "react";
import { toKilnError } from "../../api/backend";
import type { ReviewCommentState, ReviewCommentView } from "../../api/types";
import { ErrorMessage } from "../../components/ErrorMessage";
import { rangeLabel, STATE_LABEL } from "../../lib/lineSelection";
import { useReviewComments } from "../../state/useReviewComments";
import { CommentForm } from "./CommentForm";

const STATE_BADGE: Record<ReviewCommentState, string> = {
  open: "badge badge-info",
  sent: "badge badge-accent",
  addressed: "badge badge-warn",
  resolved: "badge badge-success",
};

export interface ReviewCommentCardProps {
  sessionId: string;
  comment: ReviewCommentView;
  /** The session is closed: nothing can change. */
  readOnly: boolean;
  /** Show its file and lines (the list does; the margin is beside them). */
  showWhere?: boolean;
  onShow?: (comment: ReviewCommentView) => void;
}

export function ReviewCommentCard({ sessionId, comment, readOnly, showWhere, onShow }: ReviewCommentCardProps) {
  const { update, remove, resolve } = useReviewComments(sessionId);
  const [editing, setEditing] = useState(false);
  const locked = readOnly || comment.state === "sent";
  const where = rangeLabel({ start: comment.startLine, end: comment.endLine });
  const error = update.error ?? remove.error ?? resolve.error;
  const busy = update.isPending || remove.isPending || resolve.isPending;
  return (
    <article
      className={`review-comment review-comment-${comment.state}`}
      data-testid="review-comment"
      data-comment-id={comment.id}
      data-state={comment.state}
      aria-label={`Comment on ${comment.path} ${where}`}
    >
      <header className="review-comment-head">
        {showWhere && (
          <button
            type="button"
            className="review-comment-where"
            onClick={() => onShow?.(comment)}
            title="Show it in the diff"
          >
            <code>{comment.path}</code> <span className="muted small">{where}</span>
          </button>
        )}
        <span className={STATE_BADGE[comment.state]} data-testid="review-comment-state">
          {STATE_LABEL[comment.state]}
        </span>
      </header>
      {editing ? (
        <CommentForm
          label={where}
          initial={comment.body}
          saving={update.isPending}
          saveLabel="Save"
          autoFocus
          onSave={(body) => update.mutate({ commentId: comment.id, body }, { onSuccess: () => setEditing(false) })}
          onCancel={() => setEditing(false)}
        />
      ) : (
        <p className="review-comment-body" data-testid="review-comment-body">
          {comment.body}
        </p>
      )}
      {comment.note && comment.state === "open" && (
        <p className="muted small review-comment-note" data-testid="review-comment-note">
          {comment.note}
        </p>
      )}
      {!editing && !locked && (
        <div className="review-comment-actions">
          <button type="button" className="btn btn-small" disabled={busy} onClick={() => setEditing(true)}>
            Edit
          </button>
          <button
            type="button"
            className="btn btn-small"
            disabled={busy}
            data-testid="review-comment-resolve"
            onClick={() => resolve.mutate({ commentId: comment.id, resolved: comment.state !== "resolved" })}
          >
            {comment.state === "resolved" ? "Reopen" : "Resolve"}
          </button>
          <button
            type="button"
            className="btn btn-small btn-danger-ghost"
            disabled={busy}
            data-testid="review-comment-delete"
            onClick={() => remove.mutate(comment.id)}
          >
            Delete
          </button>
        </div>
      )}
      {error && <ErrorMessage error={toKilnError(error)} testId="review-comment-error" />}
    </article>
  );
}
