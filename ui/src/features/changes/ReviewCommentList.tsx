// The session's review comments as a list (state, edit, delete, resolve) under "Send to agent (N)", which sends every
// open one to the agent as one turn (send_review).
import { toKilnError } from "../../api/backend";
import type { ReviewCommentView } from "../../api/types";
import { ErrorMessage } from "../../components/ErrorMessage";
import { openCount } from "../../lib/lineSelection";
import { useReviewComments } from "../../state/useReviewComments";
import { ReviewCommentCard } from "./ReviewCommentCard";

export interface ReviewCommentListProps {
  sessionId: string;
  comments: ReviewCommentView[];
  running: boolean;
  closed: boolean;
  onShow: (comment: ReviewCommentView) => void;
}

export function ReviewCommentList({ sessionId, comments, running, closed, onShow }: ReviewCommentListProps) {
  const { send } = useReviewComments(sessionId);
  const open = openCount(comments);
  const why = closed
    ? "The session is closed"
    : running
      ? "Wait for the running turn to end"
      : open === 0
        ? "Select lines in the diff to comment on them"
        : `Start a turn that carries the ${open} open ${open === 1 ? "comment" : "comments"}`;
  return (
    <section className="review-comments" aria-label="Review comments" data-testid="review-comments">
      <div className="review-comments-head">
        <h3 className="review-comments-title">
          Review comments <span className="muted small">{comments.length}</span>
        </h3>
        <button
          type="button"
          className="btn btn-small btn-primary"
          data-testid="send-review"
          disabled={open === 0 || running || closed || send.isPending}
          title={why}
          onClick={() => send.mutate({})}
        >
          {send.isPending ? "Sending…" : `Send to agent (${open})`}
        </button>
      </div>
      {send.error && <ErrorMessage error={toKilnError(send.error)} testId="send-review-error" />}
      {comments.length === 0 ? (
        <p className="muted small review-comments-empty">
          Click a line number to select it (Shift to extend, or drag), then write what the agent should change.
        </p>
      ) : (
        <ul className="review-comment-list">
          {comments.map((c) => (
            <li key={c.id}>
              <ReviewCommentCard sessionId={sessionId} comment={c} readOnly={closed} showWhere onShow={onShow} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
